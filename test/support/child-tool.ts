import { execFile } from "node:child_process";
import type { ToolResult } from "../../src/types.js";

const distIndex = new URL("../../dist/index.js", import.meta.url).href;

/**
 * Runs `code` (an ES module body) in a child Node process and returns what it printed as JSON,
 * or `"killed"` when it had not exited after `killAfterMs`. A tool that blocks the event loop
 * would freeze the test runner itself; in a child it only gets killed.
 */
export function runInChild(code: string, killAfterMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", code],
      { timeout: killAfterMs, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => {
        if (error && (error as { killed?: boolean }).killed) resolve("killed");
        else if (error) reject(error);
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

export interface ChildToolRun {
  result: ToolResult;
  /** Milliseconds from the abort to the tool's return; 0 when it returned before the abort. */
  afterAbortMs: number;
}

/**
 * Runs one built-in tool of the workspace `root` in a child process (the built package) with a
 * signal that aborts after `abortAfterMs`.
 */
export async function runToolInChild(
  root: string,
  tool: string,
  input: unknown,
  { abortAfterMs = 200, killAfterMs = 25_000 } = {},
): Promise<ChildToolRun | "killed"> {
  const code = `
    import { createWorkspaceTools } from ${JSON.stringify(distIndex)};
    const tool = createWorkspaceTools(${JSON.stringify(root)}).find((t) => t.spec.name === ${JSON.stringify(tool)});
    const controller = new AbortController();
    let abortedAt;
    setTimeout(() => { abortedAt = performance.now(); controller.abort(); }, ${abortAfterMs});
    const result = await tool.execute(${JSON.stringify(input)}, controller.signal);
    const afterAbortMs = abortedAt === undefined ? 0 : performance.now() - abortedAt;
    process.stdout.write(JSON.stringify({ result, afterAbortMs }));
    process.exit(0);
  `;
  return (await runInChild(code, killAfterMs)) as ChildToolRun | "killed";
}
