import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { FileChanges } from "../../src/rewind/changes.js";
import { Journal } from "../../src/runner/journal.js";
import { SessionRunner } from "../../src/runner/runner.js";
import { parseLine, type SessionRecord } from "../../src/session/records.js";
import { Session } from "../../src/session/session.js";
import { SessionStore } from "../../src/session/store.js";
import { FakeClient, type ScriptRound } from "../../src/testing/fake-client.js";
import { createWorkspaceTools } from "../../src/tools/index.js";

/**
 * A session runner over a fresh workspace (`home/ws`) whose write and edit are tracked, the
 * session `s1` in `home/state/sessions`, driven by a script of rounds.
 */
export async function trackedRunner(
  home: string,
  rounds: ScriptRound[],
  options: { fileCap?: number; blobCap?: number; maxTurns?: number } = {},
) {
  const workspace = join(home, "ws");
  const sessions = join(home, "state", "sessions");
  await mkdir(workspace);
  const store = new SessionStore(join(home, "state"), () =>
    Session.create({ dir: sessions, workspace, model: "m", id: "s1", now: new Date(0) }),
  );
  const journal = new Journal(store);
  const changes = new FileChanges({ root: workspace, stateDir: join(home, "state"), ...options });
  const runner = new SessionRunner({
    client: new FakeClient(rounds),
    tools: changes.wrap(createWorkspaceTools(workspace, { stateDir: join(home, "state") })),
    journal,
    changes,
    system: async () => "s",
    info: { model: "m", workspace, sandbox: "off" },
    ...(options.maxTurns !== undefined && { maxTurns: options.maxTurns }),
  });
  const path = join(sessions, "s1.jsonl");
  return { workspace, runner, journal, path, blobs: join(sessions, "s1.blobs") };
}

export function recordsOf(path: string): SessionRecord[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .flatMap((line) => parseLine(line).records);
}
