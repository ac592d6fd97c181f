import { Branch } from "../session/branch.js";
import { fileLines } from "../session/lines.js";
import { parseLine, type SessionRecord } from "../session/records.js";
import { headOf } from "../text.js";
import { fileState, sameState } from "./changes.js";
import type { FileState } from "./read-state.js";

/** What the agent did to one file from prompt N on, as the session's records tell it. */
export interface FileHistory {
  /** Relative to the workspace. */
  path: string;
  /** The file just before prompt N: the first change's `before`, and whether its bytes were kept. */
  original: FileState & { unkept?: string };
  /** What the agent's last change left; undefined when that call was cut off (a crash). */
  left: FileState | undefined;
  /** The call that was cut off, when `left` is unknown. */
  cutOff?: string;
  /**
   * The first of the agent's calls that found the file other than the agent (or a rewind) had
   * left it: someone else changed it in between, and putting it back would lose that change.
   */
  changedBefore?: string;
}

export interface SessionHistory {
  /** The workspace the session was made in, as its header names it. */
  workspace?: string;
  /** The user's prompts in the file, 1 for the first. */
  prompts: number;
  /** The text of prompt N, when there is one. */
  prompt?: string;
  /** Files changed from prompt N on, by path. */
  files: FileHistory[];
  /** bash calls made from prompt N on (denied ones too). */
  bashCalls: number;
  /**
   * N is the prompt the last rewind took the conversation back to, and none came since: N counts
   * as before that rewind, and running it again finishes it (the files of the prompts it left).
   */
  again: boolean;
  /** What those calls changed, as far as it is known. */
  bash: BashHistory;
  /** Folders `write` made from prompt N on (for the files it created), each once, by path. */
  folders: string[];
}

/** What bash changed from prompt N on that a rewind cannot put back, from its records. */
export interface BashHistory {
  /**
   * The files named by records of sessions made before the snapshot (git's list, no states):
   * sorted, each once (at most 1,000 per call; the rest counted in `more`). Listed, not restored.
   */
  paths: string[];
  more: number;
  /** Calls with a record (a snapshot's or an older one). */
  tracked: number;
  /** Calls whose snapshot was skipped, and the first one's reason. */
  skipped: number;
  reason?: string;
  /**
   * Folders whose contents the snapshot did not keep and a call could change (`leftOut` of the
   * records), each once, by path, with the first reason: what bash changed there is not known.
   */
  leftOut: { path: string; why: string }[];
  /** Calls the user or a rule denied: they ran nothing. */
  denied: number;
}

/**
 * Reads the session file once, line by line, and gathers what `write` and `edit` changed (and
 * what earlier rewinds put back) from prompt `to` of the current branch on (a `rewind` record
 * moves the branch back; `prompts` counts along it, and the caller checks `to` against it). A
 * `file_before` opens a change and the `file_change` of the same call closes it; one left open
 * is a call a crash cut off. Lines that hold no record are passed over.
 */
export async function sessionHistory(path: string, to: number): Promise<SessionHistory> {
  const branch = new Branch();
  const prompts = new Map<number, string>();
  /**
   * The file records and each round's bash calls, with their ordinals (which of them follow
   * prompt `to` is known only at the end); the messages themselves are not held.
   */
  const kept: { at: number; record: SessionRecord | undefined; bash: number }[] = [];
  let ordinal = 0;
  let workspace: string | undefined;
  for await (const line of fileLines(path)) {
    if (!line.bytes || line.bytes.length === 0) continue;
    for (const record of parseLine(line.bytes.toString("utf8")).records) {
      const at = ordinal++;
      if (at > 0) branch.add(at, record);
      if (record.type === "session") workspace ??= record.workspace;
      if (record.type === "message" && record.message.role === "user")
        prompts.set(at, headOf(record.message.content, 200));
      const denied = record.type === "approval" && record.tool === "bash" && !record.approved;
      if (record.type.startsWith("file_") || record.type === "bash_change" || denied)
        kept.push({ at, record, bash: 0 });
      else if (record.type === "message" && record.message.role === "assistant") {
        const bash = record.message.toolCalls.filter((call) => call.name === "bash").length;
        if (bash > 0) kept.push({ at, record: undefined, bash });
      }
    }
  }
  const { lastCut } = branch;
  const again = lastCut?.to === to && to === branch.promptCount + 1;
  const from = (again ? lastCut?.ordinal : branch.promptOrdinal(to)) ?? Number.POSITIVE_INFINITY;
  const files = new Map<string, FileHistory>();
  let bashCalls = 0;
  const bashHistory: BashHistory = {
    paths: [],
    more: 0,
    tracked: 0,
    skipped: 0,
    denied: 0,
    leftOut: [],
  };
  const leftOut = new Map<string, string>();
  const bashPaths = new Set<string>();
  const folders = new Set<string>();
  for (const { at, record, bash } of kept) {
    if (at < from) continue;
    // What the hooks after a call changed counts as one more command, tracked or skipped.
    bashCalls += record?.type === "bash_change" && record.hook !== undefined ? 1 : bash;
    if (record?.type === "file_change")
      for (const folder of record.folders ?? []) folders.add(folder);
    if (record?.type === "approval") bashHistory.denied++;
    else if (record?.type !== "bash_change") {
      if (record) follow(files, record);
    } else if (record.skipped !== undefined && record.readOnly) {
      // The workspace was read-only for the call: it changed nothing there.
      bashHistory.tracked++;
    } else if (record.skipped !== undefined) {
      bashHistory.skipped++;
      bashHistory.reason ??= record.skipped;
    } else if (record.files !== undefined) {
      bashHistory.tracked++;
      for (const { path, why } of record.leftOut ?? [])
        if (!leftOut.has(path)) leftOut.set(path, why);
      for (const file of record.files) {
        const { path, unkept } = file;
        opened(files, path, record.toolCallId, fileState(file.before), unkept);
        closed(files, path, record.toolCallId, fileState(file.after));
      }
    } else {
      bashHistory.tracked++;
      bashHistory.more += record.more ?? 0;
      for (const changed of record.paths) bashPaths.add(changed);
    }
  }
  bashHistory.paths = [...bashPaths].sort(byPath);
  bashHistory.leftOut = [...leftOut]
    .sort(([a], [b]) => byPath(a, b))
    .map(([path, why]) => ({ path, why }));
  const sorted = [...files.values()].sort((a, b) => byPath(a.path, b.path));
  const prompt = prompts.get(from);
  return {
    ...(workspace !== undefined && { workspace }),
    prompts: branch.promptCount,
    ...(prompt !== undefined && { prompt }),
    files: sorted,
    bashCalls,
    bash: bashHistory,
    again,
    folders: [...folders].sort(byPath),
  };
}

export { sameState };

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** One file record taken into the files' histories. */
function follow(files: Map<string, FileHistory>, record: SessionRecord): void {
  if (record.type === "file_before") {
    const { path, before, mode, unkept, toolCallId } = record;
    opened(files, path, toolCallId, { hash: before, mode }, unkept);
  } else if (record.type === "file_change") {
    closed(files, record.path, record.toolCallId, { hash: record.after, mode: record.mode });
  } else if (record.type === "file_restore") {
    const { node, target } = record;
    const left = {
      hash: record.after,
      mode: record.mode,
      ...(node !== undefined && { node }),
      ...(target !== undefined && { target }),
    };
    closed(files, record.path, undefined, left);
  }
}

/** A call is about to change the path, which it found as `found`: the change is open. */
function opened(
  files: Map<string, FileHistory>,
  path: string,
  toolCallId: string,
  found: FileState,
  unkept: string | undefined,
): void {
  const known = files.get(path);
  const original = known?.original ?? { ...found, ...(unkept !== undefined && { unkept }) };
  const changedBefore =
    known?.changedBefore ??
    (known?.left !== undefined && !sameState(known.left, found) ? toolCallId : undefined);
  files.set(path, {
    path,
    original,
    left: undefined,
    cutOff: toolCallId,
    ...(changedBefore !== undefined && { changedBefore }),
  });
}

/**
 * What the call left at the path (a change closes its own call's open change), or what a rewind
 * put back (`toolCallId` undefined): the path's latest state.
 */
function closed(
  files: Map<string, FileHistory>,
  path: string,
  toolCallId: string | undefined,
  left: FileState,
): void {
  const known = files.get(path);
  if (!known || (toolCallId !== undefined && known.cutOff !== toolCallId)) return;
  const { changedBefore } = known;
  files.set(path, {
    path,
    original: known.original,
    left,
    ...(changedBefore !== undefined && { changedBefore }),
  });
}

/** One prompt of the current branch, as `/rewind` lists it. */
export interface BranchPrompt {
  /** 1 for the first. */
  number: number;
  /** Its start, at most 200 characters. */
  text: string;
  /** The paths `write`, `edit` and `bash` changed in its turn, in the order first changed. */
  files: string[];
}

/**
 * The prompts of the session's current branch, each with the files its turn changed (a change
 * belongs to the prompt before it in the file; changes of prompts off the branch are left out).
 */
export async function branchPrompts(path: string): Promise<BranchPrompt[]> {
  const branch = new Branch();
  const prompts = new Map<number, { text: string; files: Set<string> }>();
  let ordinal = 0;
  let last: number | undefined;
  for await (const line of fileLines(path)) {
    if (!line.bytes || line.bytes.length === 0) continue;
    for (const record of parseLine(line.bytes.toString("utf8")).records) {
      const at = ordinal++;
      if (at > 0) branch.add(at, record);
      if (record.type === "message" && record.message.role === "user") {
        prompts.set(at, { text: headOf(record.message.content, 200), files: new Set() });
        last = at;
      } else if (record.type === "file_before" && last !== undefined)
        prompts.get(last)?.files.add(record.path);
      else if (record.type === "bash_change" && last !== undefined)
        for (const path of record.files?.map((file) => file.path) ?? record.paths)
          prompts.get(last)?.files.add(path);
    }
  }
  const listed: BranchPrompt[] = [];
  for (let number = 1; number <= branch.promptCount; number++) {
    const prompt = prompts.get(branch.promptOrdinal(number) ?? -1);
    if (prompt) listed.push({ number, text: prompt.text, files: [...prompt.files] });
  }
  return listed;
}
