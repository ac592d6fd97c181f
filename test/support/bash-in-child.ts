import { execFile, spawn } from "node:child_process";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";

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
 * close-on-exec only up to the first gap after 15. With `watch`, the child then lists the
 * processes whose command line contains it, 200 ms after the tool returned and while it still
 * runs: once it has exited, any mini-agent starting on this machine may end them as orphans.
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
    import { readdirSync, readFileSync } from "node:fs";
    const { bashTool } = await import(${JSON.stringify(bashModule)});
    const bash = bashTool(${JSON.stringify(root)}, { sandbox: { mode: ${JSON.stringify(mode)} } });
    const result = await bash.execute({ command: ${JSON.stringify(command)} });
    const watch = ${JSON.stringify(watch ?? null)};
    const survivors = [];
    if (watch !== null) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (const pid of readdirSync("/proc").filter((name) => /^\\d+$/.test(name) && name !== String(process.pid))) {
        let line = "";
        try { line = readFileSync("/proc/" + pid + "/cmdline", "utf8").replace(/\\0$/, "").replaceAll("\\0", " "); } catch {}
        if (line.includes(watch)) survivors.push(pid + " " + line);
      }
    }
    process.stdout.write(JSON.stringify({ result, survivors }));
    process.exit(0);
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
        "ignore",
        "pipe",
        "inherit",
        ...(extraFd ? [...Array<"ignore">(37).fill("ignore"), extraFd] : []),
      ],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root },
    });
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", () => {
      try {
        resolve(JSON.parse(out));
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
