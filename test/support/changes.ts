import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { FileChanges } from "../../src/rewind/changes.js";
import { Journal } from "../../src/runner/journal.js";
import { SessionRunner } from "../../src/runner/runner.js";
import { parseLine, type SessionRecord } from "../../src/session/records.js";
import { Session } from "../../src/session/session.js";
import { SessionStore, sessionsDir } from "../../src/session/store.js";
import { FakeClient, type ScriptRound } from "../../src/testing/fake-client.js";
import { createWorkspaceTools } from "../../src/tools/index.js";

/**
 * A session runner over the workspace `home/ws` whose write and edit are tracked, writing the
 * session `s1` where the CLI looks for it (`MINI_AGENT_HOME` is `home/state`), driven by a script
 * of rounds. With `resume`, the session file is opened again and goes on (what `--continue` does).
 */
export async function trackedRunner(
  home: string,
  rounds: ScriptRound[],
  options: { fileCap?: number; blobCap?: number; maxTurns?: number; resume?: boolean } = {},
) {
  const workspace = join(home, "ws");
  const state = join(home, "state");
  const sessions = sessionsDir({ MINI_AGENT_HOME: state }, workspace);
  const path = join(sessions, "s1.jsonl");
  await mkdir(workspace, { recursive: true });
  const resumed = options.resume ? await Session.open(path) : undefined;
  const store = new SessionStore(
    state,
    () => Session.create({ dir: sessions, workspace, model: "m", id: "s1", now: new Date(0) }),
    resumed?.session,
  );
  const journal = new Journal(store);
  const changes = new FileChanges({ root: workspace, stateDir: state, ...options });
  const runner = new SessionRunner({
    client: new FakeClient(rounds),
    tools: changes.wrap(createWorkspaceTools(workspace, { stateDir: state })),
    journal,
    changes,
    system: async () => "s",
    info: { model: "m", workspace, sandbox: "off" },
    ...(resumed && { history: resumed.messages }),
    ...(options.maxTurns !== undefined && { maxTurns: options.maxTurns }),
  });
  return { workspace, state, runner, journal, path, blobs: join(sessions, "s1.blobs") };
}

export function recordsOf(path: string): SessionRecord[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .flatMap((line) => parseLine(line).records);
}
