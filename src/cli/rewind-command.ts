import { basename } from "node:path";
import {
  applyRewind,
  type FileAction,
  type FileOutcome,
  planRewind,
  RewindError,
  type RewindPlan,
} from "../rewind/rewind.js";
import { lockSession } from "../session/lock.js";
import type { FileRestoreRecord } from "../session/records.js";
import { listSessions, readSession, Session } from "../session/session.js";
import { sessionsDir, stateHome } from "../session/store.js";
import { headOf } from "../text.js";
import { visible } from "../visible.js";
import { exitCodes, UsageError } from "./args.js";
import type { RewindArgs } from "./commands.js";
import { sessionToResume } from "./store.js";

/**
 * `mini-agent rewind [ID] --to N --files-only [--dry-run]`: the files the agent changed from the
 * user's prompt N on, in the newest session of this folder (or ID), put back as they were just
 * before it (see `planRewind`). Every file gets one line (and a refused one a short diff) on
 * stdout; bash calls since are counted, as what they changed is not tracked. The session's lock is
 * held meanwhile: a session a running mini-agent writes is refused. Exit 0 when every file was
 * (or would be) put back, 1 when one was refused or failed, 2 for a bad ID or N.
 */
export async function rewindCommand(args: RewindArgs, workspace: string): Promise<number> {
  const { env, stdout } = process;
  const dir = sessionsDir(env, workspace);
  if (args.id === undefined && (await listSessions(dir)).length === 0)
    throw new UsageError("no session to rewind for this folder");
  const path = await sessionToResume(dir, args.id);
  const id = basename(path, ".jsonl");
  const held = await holdSession(path, id, args.dryRun);
  try {
    const plan = await planRewind({
      session: path,
      workspace,
      stateDir: stateHome(env),
      to: args.to,
    }).catch((error: unknown) => {
      throw error instanceof RewindError
        ? new UsageError(`session ${id}: ${error.message}`)
        : error;
    });
    const outcomes = held.record ? await applyRewind(plan, held.record) : plan.actions.map(wouldBe);
    stdout.write(report(id, plan, outcomes, args.dryRun).join(""));
    const refused = outcomes.some((o) => o.kind === "refused" || o.kind === "failed");
    return refused ? exitCodes.error : exitCodes.done;
  } finally {
    await held.release();
  }
}

/**
 * The session held as its one writer while files change: opened for appending (each file put
 * back is recorded), or for a dry run only locked and read, so nothing is written. A damaged
 * file, a newer format or a session a running mini-agent holds is refused here.
 */
async function holdSession(path: string, id: string, dryRun: boolean) {
  if (!dryRun) {
    const { session } = await Session.open(path);
    return {
      record: (restore: FileRestoreRecord) => session.record(restore),
      release: () => session.close(),
    };
  }
  const lock = lockSession(`${path.slice(0, -".jsonl".length)}.lock`, id);
  try {
    await readSession(path);
  } catch (error) {
    lock.release();
    throw error;
  }
  return { record: undefined, release: async () => lock.release() };
}

/** What a dry run tells of an action: the outcome it would have, if nothing changes meanwhile. */
function wouldBe(action: FileAction): FileOutcome {
  const { path } = action;
  if (action.kind === "refuse") return { kind: "refused", path, reason: action.reason };
  return action.kind === "delete" ? { kind: "deleted", path } : { kind: "restored", path };
}

/** The lines the command prints, each ending with a newline. */
function report(id: string, plan: RewindPlan, outcomes: FileOutcome[], dryRun: boolean): string[] {
  const prompt = visible(headOf(plan.prompt.split("\n")[0] ?? "", 60));
  const lines = [
    `${dryRun ? "would rewind" : "rewinding"} the files of session ${id} to just before prompt ${plan.to} ("${prompt}"):`,
  ];
  const verb = (done: string, would: string) => (dryRun ? would : done);
  const diffs = new Map(plan.actions.map((a) => [a.path, a.kind === "refuse" ? a.diff : []]));
  for (const outcome of outcomes) {
    const path = visible(outcome.path);
    if (outcome.kind === "restored" || outcome.kind === "deleted") {
      lines.push(
        outcome.kind === "restored"
          ? `${verb("restored", "would restore")} ${path}`
          : `${verb("deleted", "would delete")} ${path} (the agent created it)`,
      );
    } else {
      const not =
        outcome.kind === "failed" ? "failed to restore" : verb("not restored", "would not restore");
      lines.push(`${not} ${path}: ${visible(outcome.reason)}`);
      for (const line of diffs.get(outcome.path) ?? []) lines.push(`    ${visible(line)}`);
    }
  }
  if (outcomes.length === 0)
    lines.push(
      `nothing to rewind: every file the agent changed from prompt ${plan.to} on is as it was then`,
    );
  if (plan.bashCalls > 0) {
    const commands = `${plan.bashCalls} bash command${plan.bashCalls === 1 ? "" : "s"}`;
    lines.push(
      `note: ${commands} ran from prompt ${plan.to} on; what bash changed is not tracked and not restored`,
    );
  }
  if (dryRun) lines.push("dry run: nothing was changed");
  return lines.map((line) => `${line}\n`);
}
