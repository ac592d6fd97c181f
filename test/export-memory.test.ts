import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { header, useExportSetup } from "./support/export.js";

/**
 * A big session exports as it streams: with a JavaScript heap far smaller than the session, an
 * export that held the file or the page whole would die; this one finishes with the whole page.
 */

const setup = useExportSetup();

/** A session of about `megabytes`, of rounds that each read a 15 KB file. */
async function bigSession(dir: string, megabytes: number): Promise<{ rounds: number }> {
  await mkdir(dir, { recursive: true });
  const out = createWriteStream(join(dir, "big.jsonl"));
  const line = (record: object) => `${JSON.stringify(record)}\n`;
  out.write(line(header("big")));
  const content = `${"x".repeat(60)}\n`.repeat(256);
  let size = 0;
  let rounds = 0;
  for (; size < megabytes * 2 ** 20; rounds++) {
    const id = `c${rounds}`;
    const chunk = [
      { type: "message", message: { role: "user", content: `prompt ${rounds}` } },
      { type: "usage", inputTokens: 1000, outputTokens: 10 },
      {
        type: "message",
        message: {
          role: "assistant",
          content: "",
          toolCalls: [{ id, name: "read", input: { path: `f${rounds}.ts` } }],
        },
      },
      { type: "approval", toolCallId: id, tool: "read", approved: true, by: "default-policy" },
      { type: "message", message: { role: "tool", toolCallId: id, content, isError: false } },
    ]
      .map(line)
      .join("");
    size += chunk.length;
    if (!out.write(chunk)) await once(out, "drain");
  }
  out.end();
  await once(out, "close");
  return { rounds };
}

describe("a big session", () => {
  it("exports 64 MB with a 24 MB JavaScript heap, whole", { timeout: 120_000 }, async () => {
    const s = await setup();
    const { rounds } = await bigSession(s.dir, 64);
    const file = join(s.workspace, "big.html");
    const run = await s.run(["big", "-o", file], { NODE_OPTIONS: "--max-old-space-size=24" });
    expect(run).toEqual({
      code: 0,
      stdout: "",
      stderr: `mini-agent: exported session big (${rounds} tool calls) to ${file}\n`,
    });
    expect((await stat(file)).size).toBeGreaterThan(60 * 2 ** 20);
    const handle = await open(file);
    const tail = Buffer.alloc(4096);
    const { size } = await handle.stat();
    await handle.read(tail, 0, tail.length, size - tail.length);
    await handle.close();
    const end = tail.toString("utf8");
    expect(end).toContain(
      `<dt>Tool calls</dt><dd>${rounds.toLocaleString("en-US")} (0 denied, 0 failed)</dd>`,
    );
    expect(end.endsWith("</html>\n")).toBe(true);
  });

  it("finds the newest session without loading it: 64 MB with a 24 MB heap, no id given", {
    timeout: 120_000,
  }, async () => {
    const s = await setup();
    const { rounds } = await bigSession(s.dir, 64);
    const run = await s.run([], { NODE_OPTIONS: "--max-old-space-size=24" });
    const file = join(s.env.MINI_AGENT_HOME ?? "", "exports", "big.html");
    expect(run).toEqual({
      code: 0,
      stdout: "",
      stderr: `mini-agent: exported session big (${rounds} tool calls) to ${file}\n`,
    });
  });
});
