import { lstat, readdir, unlink } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { contentHash } from "../crypto.js";
import type { FileRestoreRecord } from "../session/records.js";
import { systemErrorMeaning } from "../system-errors.js";
import { writeAtomic } from "../tools/files.js";
import type { Resolved } from "../tools/path.js";
import { removeFolder } from "./folders.js";
import {
  clear,
  folderMode,
  linkBack,
  makeFolder,
  makeLink,
  realParent,
  stillAsPlanned,
} from "./nodes.js";
import type { FileState } from "./read-state.js";
import { AT_ONCE, type FileAction, type FileOutcome, type RewindPlan } from "./rewind.js";

export interface ApplyOptions {
  /** Stops before the next file (the files not reached are left out of the outcomes). */
  signal?: AbortSignal;
  /** Told each file's outcome as soon as it is known. */
  each?: (outcome: FileOutcome) => void;
}

/**
 * Does what the plan says, file by file: each file is checked again right before it is replaced
 * or removed (it must still hold what the plan saw), replaced atomically (a temporary file
 * beside it, then a rename), and a file that fails is told and the others go on. Each file put
 * back is then recorded through `record` (the session), so a later rewind starts from it.
 */
export async function applyRewind(
  plan: RewindPlan,
  record?: (restore: FileRestoreRecord) => Promise<void>,
  options: ApplyOptions = {},
): Promise<FileOutcome[]> {
  const outcomes: FileOutcome[] = [];
  await sweepTemporaryFiles(plan);
  const tell = (outcome: FileOutcome) => {
    outcomes.push(outcome);
    options.each?.(outcome);
  };
  const { actions } = plan;
  for (let at = 0; at < actions.length; ) {
    if (options.signal?.aborted) break;
    // Files and links a few at once (each is its own path), told in order; folders one by one.
    const batch: FileAction[] = [];
    for (let next = actions[at]; next && batch.length < AT_ONCE && alone(next) === false; ) {
      batch.push(next);
      next = actions[++at];
    }
    const first = actions[at];
    if (batch.length === 0 && first) {
      batch.push(first);
      at++;
    }
    // Each file is put back before its record, and the records keep the plan's order.
    const done = await Promise.all(batch.map((action) => applyOne(plan, action)));
    for (const { outcome, restore } of done) {
      if (restore) await record?.(restore);
      if (outcome) tell(outcome);
    }
  }
  return outcomes;
}

/**
 * An action that runs by itself: a folder made, removed or given its mode, and what replaces a
 * folder (after what the folder held is removed).
 */
function alone(action: FileAction): boolean {
  if (action.kind === "refuse" || action.kind === "delete") return false;
  if (action.kind === "restore" || action.kind === "make-link")
    return action.expect.node === "folder";
  return true;
}

/**
 * Does one action: its outcome (none for the mode of a folder made again, said already) and the
 * record of what it put back, for the caller to write.
 */
async function applyOne(
  plan: RewindPlan,
  action: FileAction,
): Promise<{ outcome?: FileOutcome; restore?: FileRestoreRecord }> {
  const { path } = action;
  if (action.kind === "refuse")
    return { outcome: { kind: "refused", path, reason: action.reason } };
  try {
    if (action.kind === "remove-folder") {
      await removeFolder(plan.realRoot, action.target);
      return { outcome: { kind: "removed", path } };
    }
    if (action.kind === "delete") {
      await stillAsPlanned(action.target, action.expect);
      await realParent(action.target);
      await clear(action.target, action.expect);
      const restore = restored(plan.to, action, { hash: null, mode: null });
      return { outcome: { kind: "deleted", path }, restore };
    }
    if (action.kind === "make-folder") {
      await makeFolder(action.target, action.expect);
      return { outcome: { kind: "restored", path } };
    }
    if (action.kind === "folder-mode") {
      await folderMode(action.target, action.mode);
      const now = { hash: null, mode: action.mode, node: "folder" as const };
      const restore = restored(plan.to, action, now);
      return action.quiet ? { restore } : { outcome: { kind: "restored", path }, restore };
    }
    if (action.kind === "make-link") {
      await makeLink(action.target, action.link, action.expect);
      const now = { hash: null, mode: null, node: "link" as const, target: action.link };
      return { outcome: { kind: "restored", path }, restore: restored(plan.to, action, now) };
    }
    // A folder bash left where the file was is empty by now (what it held was removed first).
    if (action.expect.node === "folder") {
      await stillAsPlanned(action.target, action.expect);
      await clear(action.target, action.expect);
    }
    const expect = action.expect.node === "folder" ? { hash: null, mode: null } : action.expect;
    const { bytes, mode } = action;
    const rename = {
      beforeRename: () => stillAsPlanned(action.target, expect),
      tempPrefix: plan.tempPrefix,
    };
    // The owner and group it had; a file that cannot have them loses setuid and setgid, said.
    let note: string | undefined;
    const setuid = (mode & 0o6000) !== 0;
    const refused = (why: string) => {
      note = setuid ? `${why}: it is restored without setuid and setgid` : why;
    };
    const owner = action.owner && { ...action.owner, refused };
    if (Buffer.isBuffer(bytes))
      await writeAtomic(action.target, [bytes], { mode, ...rename, ...(owner && { owner }) });
    else await linkBack(action.target, bytes.linked, mode, rename);
    const hash = Buffer.isBuffer(bytes) ? contentHash(bytes) : bytes.hash;
    const left = note === undefined ? mode : mode & ~0o6000;
    return {
      outcome: { kind: "restored", path, ...(note !== undefined && { note }) },
      restore: restored(plan.to, action, { hash, mode: left }),
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const verb = action.kind === "restore" ? "written" : "removed";
    const reason =
      code === undefined
        ? (error as Error).message
        : `it could not be ${verb} (${systemErrorMeaning(code)})`;
    return { outcome: { kind: "failed", path, reason } };
  }
}

/**
 * Removes what a killed rewind of this session left beside the files this one restores: the
 * temporary files named with the plan's prefix (regular files only; a folder that is now a link
 * was refused by the plan).
 */
async function sweepTemporaryFiles(plan: RewindPlan): Promise<void> {
  const folders = new Set(
    plan.actions.flatMap((a) => (a.kind === "restore" ? [dirname(a.target.path)] : [])),
  );
  for (const folder of folders) {
    const names = await readdir(folder).catch(() => []);
    for (const name of names) {
      if (!name.startsWith(plan.tempPrefix) || !name.endsWith(".tmp")) continue;
      const path = join(folder, name);
      const info = await lstat(path).catch(() => undefined);
      if (info?.isFile()) await unlink(path).catch(() => {});
    }
  }
}

function restored(to: number, action: { target: Resolved; expect?: FileState }, now: FileState) {
  const path = relative(action.target.realRoot, action.target.path);
  return {
    type: "file_restore",
    to,
    path,
    before: action.expect?.hash ?? null,
    after: now.hash,
    mode: now.mode,
    ...(now.node === "folder" || now.node === "link" ? { node: now.node } : {}),
    ...(now.target !== undefined && { target: now.target }),
  } as const;
}
