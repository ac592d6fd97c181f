import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { listSessions } from "../session.js";
import { UsageError } from "./args.js";

/** `$MINI_AGENT_HOME` (default `~/.mini-agent`): the user's state, never inside the workspace. */
export function stateHome(env: NodeJS.ProcessEnv): string {
  return env.MINI_AGENT_HOME || join(homedir(), ".mini-agent");
}

/** One folder of sessions per workspace: `sessions/<name>-<hash of the real path>`. */
export function sessionsDir(env: NodeJS.ProcessEnv, workspace: string): string {
  const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 12);
  const name = basename(workspace).replace(/[^\w.-]/g, "_") || "root";
  return join(stateHome(env), "sessions", `${name}-${hash}`);
}

/** The file of the session to resume, from `--continue` or `--resume ID`. */
export async function sessionToResume(dir: string, resume: string | undefined): Promise<string> {
  if (resume !== undefined) {
    const path = join(dir, `${resume}.jsonl`);
    if (!/^[\w.-]+$/.test(resume) || !existsSync(path)) {
      throw new UsageError(
        `no session ${JSON.stringify(resume)} for this folder (mini-agent --sessions lists them)`,
      );
    }
    return path;
  }
  const [newest] = await listSessions(dir);
  if (!newest) throw new UsageError("no session to continue for this folder");
  return newest.path;
}
