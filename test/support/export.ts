import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Session } from "../../src/session/session.js";
import { sessionsDir } from "../../src/session/store.js";
import { type CliRun, runBin } from "./cli.js";
import { useTempDirs } from "./temp.js";

/** A workspace and a state folder for export tests, and the environment the CLI gets. */
export interface ExportSetup {
  workspace: string;
  home: string;
  env: NodeJS.ProcessEnv;
  /** The folder the CLI keeps this workspace's sessions in. */
  dir: string;
  /** Writes a session through `Session` (nothing redacted on the way: `env` is empty). */
  session(
    id: string,
    write: (session: Session) => Promise<void>,
    sandbox?: string,
  ): Promise<string>;
  /** Writes a session file as it is, one line per record (or raw text for a line). */
  raw(id: string, lines: (object | string)[]): Promise<string>;
  /** Runs `mini-agent export …` in the workspace. */
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<CliRun>;
}

export const header = (id: string, extra: object = {}) => ({
  type: "session",
  version: 1,
  id,
  createdAt: "2026-11-30T12:00:00.000Z",
  workspace: "/work/project",
  model: "claude-sonnet-5-5",
  ...extra,
});

export function useExportSetup(): () => Promise<ExportSetup> {
  const tempDir = useTempDirs();
  return async () => {
    const workspace = await tempDir();
    const home = await tempDir();
    const env = { PATH: process.env.PATH, HOME: home, MINI_AGENT_HOME: join(home, "state") };
    const dir = sessionsDir(env, workspace);
    return {
      workspace,
      home,
      env,
      dir,
      async session(id, write, sandbox = "bwrap") {
        const session = await Session.create({
          dir,
          workspace: "/work/project",
          model: "claude-sonnet-5-5",
          sandbox,
          id,
          env: {},
          now: new Date("2026-11-30T12:00:00.000Z"),
        });
        await write(session);
        await session.close();
        return session.path;
      },
      async raw(id, lines) {
        await mkdir(dir, { recursive: true });
        const path = join(dir, `${id}.jsonl`);
        const text = lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line)));
        await writeFile(path, text.map((line) => `${line}\n`).join(""));
        return path;
      },
      run: (args, extra = {}) =>
        runBin(["export", ...args], { cwd: workspace, env: { ...env, ...extra } }),
    };
  };
}
