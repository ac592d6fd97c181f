import { basename } from "node:path";
import { sessionToResume } from "../app/sessions.js";
import type { Stopper } from "../app/signals.js";
import { applyRewind } from "../rewind/apply.js";
import {
  type FileAction,
  type FileOutcome,
  planRewind,
  RewindError,
  type RewindPlan,
} from "../rewind/rewind.js";
import { lockSession } from "../session/lock.js";
import type {
  FileRestoreRecord,
  RewindEndRecord,
  RewindRecord,
  RewindStartRecord,
} from "../session/records.js";
import { listSessions, readSession, Session } from "../session/session.js";
import { sessionsDir, stateHome } from "../session/store.js";
import { headOf } from "../text.js";
import { visible } from "../visible.js";
import { exitCodes, UsageError } from "./args.js";
import type { RewindArgs } from "./commands.js";

/**
 * `mini-agent rewind [ID] --to N [--files-only | --conversation-only] [--dry-run]`: in the
 * newest session of this folder (or ID), the files the agent changed from the user's prompt N on
 * put back as they were just before it (see `planRewind`), and the conversation taken back there,
 * the later records kept in the file as a branch (`--continue` goes on from that point). Every
 * path gets one line (and a refused one a short diff) on stdout, what bash changed too; what
 * is not known of bash calls is said once per cause. The session is held as its one writer meanwhile: one a running
 * mini-agent writes is refused. Exit 0 when everything was (or would be) done, 1 when a file was
 * refused or failed, 2 for a bad ID or N.
 */
export async function rewindCommand(
  args: RewindArgs,
  workspace: string,
  stopper?: Stopper,
): Promise<number> {
  const { env, stdout } = process;
  const dir = sessionsDir(env, workspace);
  if (args.id === undefined && (await listSessions(dir)).length === 0)
    throw new UsageError("no session to rewind for this folder");
  const path = await sessionToResume(dir, args.id, {
    verb: "rewind",
    choose: "mini-agent rewind ID --to N",
  });
  const id = basename(path, ".jsonl");
  const held = await holdSession(path, id, args.dryRun);
  // Ctrl-C stops before the next file: what was put back is told, and how to finish.
  const signal = stopper?.beginTurn();
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
    const { record } = held;
    const write = (lines: string[]) => stdout.write(lines.map((line) => `${line}\n`).join(""));
    write([heading(id, plan, args)]);
    let outcomes: FileOutcome[] = [];
    if (args.files) {
      if (!record) outcomes = wouldBeAll(plan.actions);
      else {
        await record({
          type: "rewind_start",
          to: args.to,
          files: true,
          conversation: args.conversation,
        });
        const each = (outcome: FileOutcome) => write(outcomeLines(plan, outcome, false));
        outcomes = await applyRewind(plan, record, { ...(signal && { signal }), each });
      }
      if (signal?.aborted) {
        const left = plan.actions.length - outcomes.length;
        process.stderr.write(
          `mini-agent: rewind interrupted: ${left} file${left === 1 ? "" : "s"} not reached; \`mini-agent rewind ${id} --to ${args.to}${args.conversation ? "" : " --files-only"}\` finishes it\n`,
        );
        return exitCodes.interrupted;
      }
      write(fileLines(plan, record ? [] : outcomes, args.dryRun, outcomes.length === 0));
    }
    // Files first: a kill in between leaves the conversation as it was, the files told as put back.
    if (args.conversation && !plan.again) await record?.({ type: "rewind", to: args.to });
    if (args.files) await record?.({ type: "rewind_end", to: args.to });
    write(conversationLines(plan, args));
    const refused = outcomes.some((o) => o.kind === "refused" || o.kind === "failed");
    return refused ? exitCodes.error : exitCodes.done;
  } finally {
    stopper?.endTurn();
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
      record: (record: FileRestoreRecord | RewindRecord | RewindStartRecord | RewindEndRecord) =>
        session.record(record),
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
  if (action.kind === "remove-folder") return { kind: "removed", path };
  return action.kind === "delete" ? { kind: "deleted", path } : { kind: "restored", path };
}

/** What a dry run tells: each action's outcome, a folder made again told once. */
function wouldBeAll(actions: FileAction[]): FileOutcome[] {
  return actions.filter((a) => !(a.kind === "folder-mode" && a.quiet)).map(wouldBe);
}

/** The first line: what is rewound, of which session, to just before which prompt. */
function heading(id: string, plan: RewindPlan, args: RewindArgs): string {
  const { dryRun, files, conversation } = args;
  const prompt = visible(headOf(plan.prompt.split("\n")[0] ?? "", 60));
  const what =
    files && conversation
      ? "the files and the conversation"
      : files
        ? "the files"
        : "the conversation";
  return `${dryRun ? "would rewind" : "rewinding"} ${what} of session ${id} to just before prompt ${plan.to} ("${prompt}"):`;
}

/** The last lines: where the conversation goes on, and that a dry run changed nothing. */
function conversationLines(plan: RewindPlan, args: RewindArgs): string[] {
  const { dryRun, conversation } = args;
  const lines: string[] = [];
  if (conversation && plan.again)
    lines.push(`the conversation already went back to just before prompt ${plan.to}`);
  else if (conversation) {
    const later =
      plan.to === plan.prompts ? `prompt ${plan.to}` : `prompts ${plan.to} to ${plan.prompts}`;
    lines.push(
      dryRun
        ? `would take the conversation back to just before prompt ${plan.to}; ${later} would stay in the session file as a branch`
        : `the conversation goes on from just before prompt ${plan.to} (mini-agent --continue); ${later} ${plan.to === plan.prompts ? "stays" : "stay"} in the session file as a branch`,
    );
  }
  if (dryRun) lines.push("dry run: nothing was changed");
  return lines;
}

/** The line of one file's outcome, and the short diff of a refused one. */
function outcomeLines(plan: RewindPlan, outcome: FileOutcome, dryRun: boolean): string[] {
  const verb = (done: string, would: string) => (dryRun ? would : done);
  const path = visible(outcome.path);
  if (outcome.kind === "restored") {
    const note = outcome.note === undefined ? "" : ` (${visible(outcome.note)})`;
    return [`${verb("restored", "would restore")} ${path}${note}`];
  }
  if (outcome.kind === "deleted")
    return [`${verb("deleted", "would delete")} ${path} (the agent created it)`];
  if (outcome.kind === "removed")
    return [`${verb("removed", "would remove")} ${path} (the agent made the folder)`];
  const not =
    outcome.kind === "failed" ? "failed to restore" : verb("not restored", "would not restore");
  const action = plan.actions.find((a) => a.path === outcome.path);
  const diff = action?.kind === "refuse" ? action.diff : [];
  return [
    `${not} ${path}: ${visible(outcome.reason)}`,
    ...diff.map((line) => `    ${visible(line)}`),
  ];
}

/**
 * A line per file (with the diff of a refused one), then what bash may have changed; `none`: no
 * file had anything to do.
 */
export function fileLines(
  plan: RewindPlan,
  outcomes: FileOutcome[],
  dryRun: boolean,
  none = outcomes.length === 0,
): string[] {
  const lines = outcomes.flatMap((outcome) => outcomeLines(plan, outcome, dryRun));
  // With files bash changed, their line says what is left as it is.
  if (none && plan.bash.paths.length === 0)
    lines.push(
      `nothing to rewind: every file the agent changed from prompt ${plan.to} on is as it was then`,
    );
  lines.push(...bashLines(plan));
  return lines;
}

/** The most files named on the line of what bash changed; a count of all follows. */
const MOST_NAMED = 10;

/**
 * What bash changed from prompt `to` on that is not put back, as the session tells it, one line
 * per cause and each call counted once: files named by sessions made before the snapshot, calls
 * whose snapshot was skipped, and calls with no record at all (cut off, or never run).
 */
function bashLines(plan: RewindPlan): string[] {
  const { bash, bashCalls, to } = plan;
  const lines: string[] = [];
  const commands = (n: number) => `${n} bash command${n === 1 ? "" : "s"}`;
  const total = bash.paths.length + bash.more;
  if (total > 0) {
    const named = bash.paths.slice(0, MOST_NAMED).map((path) => visible(path));
    const count = total > named.length ? ` and ${total - named.length} more (${total} files)` : "";
    lines.push(`changed by bash, not restored: ${named.join(", ")}${count}`);
  }
  for (const { path, why } of bash.leftOut.slice(0, MOST_NAMED))
    lines.push(
      `note: what bash changed in ${visible(path)}/ from prompt ${to} on is not known (${visible(why)}); it is not restored`,
    );
  if (bash.leftOut.length > MOST_NAMED)
    lines.push(
      `note: and in ${bash.leftOut.length - MOST_NAMED} more folders the snapshot left out; they are not restored`,
    );
  if (bash.skipped > 0)
    lines.push(
      `note: what ${commands(bash.skipped)} changed from prompt ${to} on is not known (${visible(bash.reason ?? "")}); ${bash.skipped === 1 ? "it is" : "they are"} not restored`,
    );
  const unknown = bashCalls - bash.denied - bash.tracked - bash.skipped;
  if (unknown > 0)
    lines.push(
      `note: ${commands(unknown)} from prompt ${to} on ${unknown === 1 ? "has" : "have"} no record of what ${unknown === 1 ? "it" : "they"} changed (mini-agent ended while ${unknown === 1 ? "it" : "they"} ran, or ${unknown === 1 ? "it" : "they"} never ran); nothing of ${unknown === 1 ? "it" : "them"} is restored`,
    );
  return lines;
}
