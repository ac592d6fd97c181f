import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bashTool } from "../src/tools/bash.js";
import { realSandbox } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Processes and memory are bounded inside the sandbox. Never a real fork bomb: the loops below
 * stop by themselves after a few hundred processes, under a limit lowered by the option.
 */

const tempDir = useTempDirs();

const sandboxed = await realSandbox();

/** Starts `sleep 30` up to 400 times, stopping at the first failure; prints how far it got. */
const spawnMany = `
const { spawn } = require("node:child_process");
let started = 0;
function next() {
  if (started === 400) return finish("all 400 started");
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  child.on("error", (error) => finish(\`\${started} started, then \${error.code}\`));
  child.on("spawn", () => { started++; next(); });
}
function finish(line) { console.log(line); process.exit(0); }
next();
`;

describe.skipIf(!sandboxed)("limits inside the sandbox", () => {
  it("refuses new processes beyond the process limit, for root too", async () => {
    const root = await tempDir();
    await writeFile(join(root, "spawn.cjs"), spawnMany);
    const bash = bashTool(root, {
      sandbox: { mode: "required", limits: { processes: 200 } },
      killGrace: 1,
    });
    const result = await bash.execute({ command: `"${process.execPath}" spawn.cjs` });
    const match = /^(\d+) started, then EAGAIN\n\[exit code 0\]$/.exec(result.content);
    expect(result.content).toMatch(/^\d+ started, then EAGAIN\n\[exit code 0\]$/);
    // Node's own threads and bash count too, so the last spawn fails a little before 200.
    expect(Number(match?.[1])).toBeGreaterThan(150);
    expect(Number(match?.[1])).toBeLessThan(200);
    expect(await bash.execute({ command: "echo still here" })).toEqual({
      content: "still here\n[exit code 0]",
      isError: false,
    });
  });

  it("fails an allocation beyond the memory limit inside, and the agent lives on", async () => {
    const root = await tempDir();
    const bash = bashTool(root, {
      sandbox: { mode: "required", limits: { memoryBytes: 512 * 2 ** 20 } },
    });
    const allocate = `"${process.execPath}" -e 'try { Buffer.allocUnsafe(2 ** 30); console.log("allocated 1 GiB") } catch (error) { console.log(error.message) }'`;
    expect(await bash.execute({ command: allocate })).toEqual({
      content: "Array buffer allocation failed\n[exit code 0]",
      isError: false,
    });
    expect(await bash.execute({ command: "echo still here" })).toEqual({
      content: "still here\n[exit code 0]",
      isError: false,
    });
  });

  it("sets 4096 processes and 8 GiB of data per process by default, which bash cannot raise", async () => {
    const root = await tempDir();
    const bash = bashTool(root, { sandbox: { mode: "required" } });
    expect(await bash.execute({ command: "ulimit -u; ulimit -d; ulimit -Hu; ulimit -Hd" })).toEqual(
      { content: "4096\n8388608\n4096\n8388608\n[exit code 0]", isError: false },
    );
    for (const command of ["ulimit -u 100000", "ulimit -d unlimited"]) {
      const raise = await bash.execute({ command });
      expect(raise.isError).toBe(true);
      expect(raise.content).toContain("cannot modify limit");
    }
  });

  it("stops a file at the file size limit (RLIMIT_FSIZE), and writes a smaller one", async () => {
    const root = await tempDir();
    const bash = bashTool(root, {
      sandbox: { mode: "required", limits: { fileBytes: 1024 * 1024 } },
    });
    const result = await bash.execute({
      command: "head -c 2M /dev/zero > big; echo $?; head -c 1M /dev/zero > fits; echo $?",
    });
    expect(result.content).toMatch(/^(?:.*File size limit exceeded.*\n)?153\n0\n\[exit code 0\]$/s);
    expect((await stat(join(root, "big"))).size).toBe(1024 * 1024);
    expect((await stat(join(root, "fits"))).size).toBe(1024 * 1024);
  });

  it("bounds a file at 4 GiB unless told otherwise", async () => {
    const root = await tempDir();
    const bash = bashTool(root, { sandbox: { mode: "required" } });
    expect(await bash.execute({ command: "ulimit -f" })).toEqual({
      content: `${4 * 1024 * 1024}\n[exit code 0]`,
      isError: false,
    });
  });
});
