import { execFile, spawn } from "node:child_process";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { survivors } from "./processes.js";

const bashModule = fileURLToPath(new URL("../../dist/tools/bash.js", import.meta.url));

export interface ChildRun {
  /** What the tool returned. */
  result: unknown;
  /** `"<pid> <command line>"` of each process matching `watch`, after the tool returned. */
  survivors: string[];
}

/**
 * Runs the built bash tool in a child Node process, optionally as `nobody` through `setpriv`,
 * with `extraFd` (a connected Unix socket) as its descriptor 40: Node marks what it inherits
 * close-on-exec only up to the first gap after 15. With `watch`, the processes whose command
 * line contains it are listed once the tool has returned and they had time to end (`survivors`),
 * while the child still runs: once it has exited, any mini-agent starting on this machine may
 * end them as orphans.
 */
export function bashInChild(
  root: string,
  mode: "required" | "off",
  command: string,
  {
    asNobody = false,
    extraFd,
    watch,
  }: { asNobody?: boolean; extraFd?: Socket; watch?: string } = {},
): Promise<ChildRun> {
  const code = `
    const { bashTool } = await import(${JSON.stringify(bashModule)});
    const bash = bashTool(${JSON.stringify(root)}, { sandbox: { mode: ${JSON.stringify(mode)} } });
    const result = await bash.execute({ command: process.env.COMMAND });
    process.stdout.write(JSON.stringify(result) + "\\n");
    // Runs on until the test has looked at what is left.
    process.stdin.on("data", () => {});
    process.stdin.on("end", () => process.exit(0));
  `;
  const node = [process.execPath, "--input-type=module", "-e", code];
  const argv = asNobody
    ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...node]
    : node;
  const [file = "", ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: root,
      stdio: [
        "pipe",
        "pipe",
        "inherit",
        ...(extraFd ? [...Array<"ignore">(37).fill("ignore"), extraFd] : []),
      ],
      // The command comes through the environment: on the command line, the child would be one
      // of the processes its marker finds.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, COMMAND: command },
    });
    let out = "";
    let left: Promise<string[]> | undefined;
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (left !== undefined || !out.includes("\n")) return;
      left = watch === undefined ? Promise.resolve([]) : survivors([watch]);
      void left.finally(() => child.stdin?.end());
    });
    child.on("error", reject);
    child.on("close", async () => {
      try {
        resolve({ result: JSON.parse(out), survivors: await (left ?? []) });
      } catch {
        reject(new Error(`no result from the child: ${out}`));
      }
    });
  });
}

/** Whether `nobody` can run the built tool here (setpriv present, the checkout readable). */
export function nobodyCanRun(): Promise<boolean> {
  if (process.getuid?.() !== 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    execFile(
      "setpriv",
      ["--reuid=65534", "--regid=65534", "--clear-groups", "test", "-r", bashModule],
      (error) => resolve(error === null),
    );
  });
}
