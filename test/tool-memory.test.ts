import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const dist = fileURLToPath(new URL("../dist/tools/index.js", import.meta.url));

/**
 * Runs one tool call in a fresh Node (the built package) and returns how far its peak resident
 * memory rose above what it held before the call, in MB (Linux: `clear_refs` resets the peak).
 */
const MEASURE = `
const { readFileSync, writeFileSync } = require("node:fs");
const [dist, root, action, megabytes] = process.argv.slice(1);
const status = (field) => Number(new RegExp(field + ":\\\\s+(\\\\d+)").exec(readFileSync("/proc/self/status", "utf8"))[1]);
import(dist).then(async ({ createWorkspaceTools }) => {
  const tools = Object.fromEntries(createWorkspaceTools(root).map((tool) => [tool.spec.name, tool]));
  let content = JSON.parse(JSON.stringify("abcdefghi\\n".repeat(megabytes * 100000)));
  let input = { path: "big.txt", content };
  if (action === "edit") {
    writeFileSync(root + "/big.txt", content + "XYZ");
    content = undefined;
    input = { path: "big.txt", oldText: "XYZ", newText: "START" };
    // edit replaces only what the agent has seen.
    if ((await tools.read.execute({ path: "big.txt", limit: 1 })).isError) throw new Error("read");
  }
  global.gc(); global.gc();
  writeFileSync("/proc/self/clear_refs", "5");
  const before = status("VmRSS");
  const result = await tools[action].execute(input);
  if (result.isError) throw new Error(result.content);
  console.log(Math.round((status("VmHWM") - before) / 1024));
});
`;

function peakAbove(action: "write" | "edit", megabytes: number, root: string): number {
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "-e", MEASURE, dist, root, action, String(megabytes)],
    { encoding: "utf8" },
  );
  return Number(out.trim());
}

describe("memory of write and edit", () => {
  it("writes 50 MB and edits 10 MB with little more memory than the content itself", async () => {
    const peaks = {
      write: peakAbove("write", 50, await tempDir()),
      edit: peakAbove("edit", 10, await tempDir()),
    };
    expect(peaks.write).toBeLessThan(20);
    expect(peaks.edit).toBeLessThan(25);
  });
});
