// A rewind over a long run of edits: 1,000 edits of a 1 MB file over 10 prompts, made through the
// tracked tools and the session runner with a scripted model, then `planRewind` and `applyRewind`
// back to just before prompt 1. Beside it, a floor: Node reading the kept bytes and putting them
// in place with a rename, nothing checked. The row also says how many pre-images were kept.

import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const PROMPTS = 10;
const EDITS = 100;

export async function rewindBench({ row, ms, median, scratch, root, runs }) {
  const dist = (path) => import(pathToFileURL(join(root, "dist", path)).href);
  const { FileChanges } = await dist("rewind/changes.js");
  const { applyRewind, planRewind } = await dist("rewind/rewind.js");
  const { Journal } = await dist("runner/journal.js");
  const { SessionRunner } = await dist("runner/runner.js");
  const { Session } = await dist("session/session.js");
  const { SessionStore } = await dist("session/store.js");
  const { call, done, FakeClient, text } = await dist("testing/fake-client.js");
  const { createWorkspaceTools } = await dist("tools/index.js");

  const workspace = join(scratch, "rewind-workspace");
  const state = join(scratch, "rewind-state");
  const sessions = join(state, "sessions");
  mkdirSync(workspace, { recursive: true });
  const file = join(workspace, "big.txt");
  const body = `${"x".repeat(63)}\n`.repeat(16 * 1024);
  writeFileSync(file, `${body}v=0\n`);

  const rounds = [];
  for (let prompt = 0; prompt < PROMPTS; prompt++) {
    const calls = prompt === 0 ? [call("read", "read", { path: "big.txt", limit: 1 })] : [];
    for (let i = 0; i < EDITS; i++) {
      const n = prompt * EDITS + i;
      const input = { path: "big.txt", oldText: `v=${n}\n`, newText: `v=${n + 1}\n` };
      calls.push(call(`e${n}`, "edit", input));
    }
    rounds.push([...calls, done], [text("done"), done]);
  }
  const store = new SessionStore(state, () =>
    Session.create({ dir: sessions, workspace, model: "m", id: "bench" }),
  );
  const journal = new Journal(store);
  const changes = new FileChanges({ root: workspace, stateDir: state });
  const tools = changes.wrap(createWorkspaceTools(workspace, { stateDir: state }));
  const runner = new SessionRunner({
    client: new FakeClient(rounds),
    journal,
    changes,
    turn: async () => ({ system: "s", tools: tools }),
    info: { model: "m", workspace, sandbox: "off" },
    maxTurns: 5,
  });
  for (let prompt = 1; prompt <= PROMPTS; prompt++) await runner.runTurn(`prompt ${prompt}`);
  await journal.close();
  const blobs = join(sessions, "bench.blobs");
  const kept = readdirSync(blobs);
  const final = readFileSync(file);
  if (final.toString().endsWith(`v=${PROMPTS * EDITS}\n`) === false)
    throw new Error("rewind bench: the edits did not all run");

  const session = join(sessions, "bench.jsonl");
  const ours = [];
  const floor = [];
  for (let i = 0; i < runs; i++) {
    writeFileSync(file, final);
    let start = performance.now();
    const outcomes = await applyRewind(await planRewind({ session, workspace, to: 1 }));
    ours.push(performance.now() - start);
    if (outcomes.length !== 1 || outcomes[0].kind !== "restored")
      throw new Error(`rewind bench: ${JSON.stringify(outcomes)}`);
    writeFileSync(file, final);
    start = performance.now();
    writeFileSync(`${file}.tmp`, readFileSync(join(blobs, kept[0])));
    renameSync(`${file}.tmp`, file);
    floor.push(performance.now() - start);
  }
  const sessionMb = (statSync(session).size / 2 ** 20).toFixed(1);
  row(
    `rewind: 1,000 edits of a 1 MB file over 10 prompts (session ${sessionMb} MB), back to prompt 1: plan and restore`,
    `${ms(median(ours))}, ${kept.length} pre-images kept`,
    ms(median(floor)),
    `${(median(ours) / median(floor)).toFixed(2)}×`,
    "< 1 s; at most 10 pre-images",
  );
}
