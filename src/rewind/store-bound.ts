import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Bytes all sessions' snapshot stores of one user keep together, unless set otherwise. */
export const USER_SNAPSHOT_CAP = 4 * 2 ** 30;

/** What a dropped store leaves beside its session: `<id>.snapshot-dropped`, saying why. */
export const DROPPED = ".snapshot-dropped";

const STORE = ".snapshot";
const HASH = /^[0-9a-f]{64}$/;

interface Store {
  /** `<folder>/<id>`: the session file is this plus `.jsonl`, the store this plus `.snapshot`. */
  stem: string;
  bytes: number;
  /** When its session was last written; undefined when the session file is gone. */
  written: number | undefined;
}

/**
 * Keeps the snapshot stores of every session under `sessionsRoot` (`<folder>/<id>.snapshot/`)
 * within `cap` bytes together: a store whose session file is gone goes with it, then the stores
 * of the sessions written longest ago go first, never the one of `keep` (a session file). A
 * store's bytes are its copies, and of the files it keeps by a hard link those the workspace no
 * longer holds (a link the workspace shares costs nothing). Each store dropped leaves
 * `<id>.snapshot-dropped` with why, which `--sessions` shows and a rewind names. Returns the
 * session files whose stores were dropped.
 */
export function boundSnapshots(sessionsRoot: string, keep: string, cap: number): string[] {
  const stores = storesUnder(sessionsRoot);
  let total = stores.reduce((sum, store) => sum + store.bytes, 0);
  const dropped: string[] = [];
  const oldestFirst = [...stores].sort(
    (a, b) => (a.written ?? Number.NEGATIVE_INFINITY) - (b.written ?? Number.NEGATIVE_INFINITY),
  );
  for (const store of oldestFirst) {
    const session = `${store.stem}.jsonl`;
    if (session === keep) continue;
    const gone = store.written === undefined;
    if (!gone && total <= cap) break;
    const why = gone
      ? "its session file is gone"
      : `the snapshots of all sessions passed their bound of ${cap / 2 ** 30} GiB, and this session was written longest ago`;
    try {
      rmSync(`${store.stem}${STORE}`, { recursive: true, force: true });
    } catch {
      continue;
    }
    total -= store.bytes;
    if (gone) continue;
    dropped.push(session);
    try {
      const when = new Date().toISOString().slice(0, 10);
      writeFileSync(`${store.stem}${DROPPED}`, `${when}: ${why}\n`, { mode: 0o600 });
    } catch {}
  }
  return dropped;
}

/** Why the session's snapshot store was dropped (its `.snapshot-dropped`), when it was. */
export function droppedWhy(sessionPath: string): string | undefined {
  const stem = sessionPath.replace(/\.jsonl$/, "");
  try {
    return readFileSync(`${stem}${DROPPED}`, "utf8").trim().slice(0, 500);
  } catch {
    return undefined;
  }
}

function storesUnder(root: string): Store[] {
  const stores: Store[] = [];
  for (const folder of namesIn(root)) {
    const dir = join(root, folder);
    const names = namesIn(dir);
    for (const name of names) {
      if (!name.endsWith(STORE)) continue;
      const stem = join(dir, name.slice(0, -STORE.length));
      const written = mtimeOf(`${stem}.jsonl`);
      stores.push({ stem, bytes: storeBytes(`${stem}${STORE}`), written });
    }
  }
  return stores;
}

/** The bytes a store takes that nothing else holds: its copies, and links only it still has. */
function storeBytes(dir: string): number {
  let bytes = 0;
  for (const [folder, shared] of [
    [dir, false],
    [join(dir, "linked"), true],
  ] as const)
    for (const name of namesIn(folder)) {
      if (!HASH.test(name)) continue;
      try {
        const info = lstatSync(join(folder, name));
        if (info.isFile() && (!shared || info.nlink === 1)) bytes += info.size;
      } catch {}
    }
  return bytes;
}

function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function mtimeOf(path: string): number | undefined {
  try {
    return lstatSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}
