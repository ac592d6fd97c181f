import { readFileSync } from "node:fs";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FileChanges } from "../../src/rewind/changes.js";
import { Journal } from "../../src/runner/journal.js";
import { SessionRunner } from "../../src/runner/runner.js";
import { parseLine, type SessionRecord } from "../../src/session/records.js";
import { Session } from "../../src/session/session.js";
import { SessionStore, sessionsDir } from "../../src/session/store.js";
import { call, done, FakeClient, type ScriptRound, text } from "../../src/testing/fake-client.js";
import { createWorkspaceTools } from "../../src/tools/index.js";
import { planTool } from "../../src/tools/plan.js";

/**
 * A session runner over the workspace `home/ws` whose write and edit are tracked, writing the
 * session `s1` where the CLI looks for it (`MINI_AGENT_HOME` is `home/state`), driven by a script
 * of rounds. With `resume`, the session file is opened again and goes on (what `--continue` does).
 */
export async function trackedRunner(
  home: string,
  rounds: ScriptRound[],
  options: {
    fileCap?: number;
    blobCap?: number;
    maxTurns?: number;
    resume?: boolean;
    /** Adds the `plan` tool, as the CLI does. */
    plan?: boolean;
  } = {},
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
  const client = new FakeClient(rounds);
  const tools = [
    ...changes.wrap(createWorkspaceTools(workspace, { stateDir: state })),
    ...(options.plan ? [planTool()] : []),
  ];
  const runner = new SessionRunner({
    client,
    journal,
    changes,
    turn: async () => ({ system: "s", tools: tools }),
    info: { model: "m", workspace, sandbox: "off" },
    ...(resumed && { history: resumed.messages }),
    ...(options.maxTurns !== undefined && { maxTurns: options.maxTurns }),
  });
  return { workspace, state, runner, client, journal, path, blobs: join(sessions, "s1.blobs") };
}

export function recordsOf(path: string): SessionRecord[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .flatMap((line) => parseLine(line).records);
}

/** "café\n" in Latin-1: not UTF-8. */
export const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]);

/**
 * A session of two prompts over four kinds of file: the first edits a CRLF file, a file with a
 * BOM and an executable script, replaces a Latin-1 file and creates `made/new.txt`; the second
 * edits the CRLF file again.
 */
export async function fourKinds(home: string) {
  const session = await trackedRunner(home, [
    [
      call("r1", "read", { path: "crlf.txt" }),
      call("r2", "read", { path: "bom.txt" }),
      call("r3", "read", { path: "latin1.txt" }),
      call("r4", "read", { path: "run.sh" }),
      call("e1", "edit", { path: "crlf.txt", oldText: "two", newText: "2" }),
      call("e2", "edit", { path: "bom.txt", oldText: "hello", newText: "bye" }),
      call("w1", "write", { path: "latin1.txt", content: "cafe\n" }),
      call("e3", "edit", { path: "run.sh", oldText: "echo hi", newText: "echo bye" }),
      call("w2", "write", { path: "made/new.txt", content: "new\n" }),
      done,
    ],
    [text("first done"), done],
    [call("e4", "edit", { path: "crlf.txt", oldText: "one", newText: "1" }), done],
    [text("second done"), done],
  ]);
  const { workspace } = session;
  await writeFile(join(workspace, "crlf.txt"), "one\r\ntwo\r\n");
  await writeFile(join(workspace, "bom.txt"), "\uFEFFhello\n");
  await writeFile(join(workspace, "latin1.txt"), latin1);
  await writeFile(join(workspace, "run.sh"), "#!/bin/sh\necho hi\n");
  await chmod(join(workspace, "run.sh"), 0o755);
  await session.runner.runTurn("first");
  await session.runner.runTurn("second");
  await session.journal.close();
  return session;
}
