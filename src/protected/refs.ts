import type { Stats } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { whyByNames } from "./files.js";
import { type GitOutcome, runSafeGit, type SafeGit } from "./git.js";
import { dropIndexCaches, replaceFile } from "./objects.js";
import { bytesOf, type Found, identity, type RawPath, shownOf } from "./scan.js";

/**
 * What git's reference files held before a sandboxed command, to be settled after it.
 *
 * git's own files stay writable in the sandbox (objects, refs, reflogs, the index: `git commit`
 * needs them), so a command can make a commit holding a protected file and point a branch, a
 * tag, the stash, a replacement, a reflog entry (`HEAD@{1}`) or the index at it while the work
 * tree holds nothing protected: the user's own `git checkout`, `stash pop`, `reset --hard` or
 * `restore` would then write that file outside the sandbox. After the command, every commit a
 * reference file newly names that was not reachable from what they named before is looked at
 * (`git log --name-only`, run safely): one that writes a protected path is not reachable any
 * more when the settle is done. The commit stays in git's objects, named in the result.
 */
export interface RefsBefore {
  files: ReadonlyMap<RawPath, RefLook>;
  /** Each git folder's index as it was (bytes kept, compared only when it changed). */
  indexes: ReadonlyMap<RawPath, { identity: string; bytes: Buffer | undefined }>;
}

interface RefLook {
  gitFolder: RawPath;
  inner: string;
  identity: string;
  /** The object names (40 or 64 hex digits) the file holds. */
  names: ReadonlySet<string>;
  /** Its bytes, kept for a file that is not a reflog (small: one ref, a few lines). */
  bytes: Buffer | undefined;
}

/** Object names in reference files: sha-1 or sha-256, in either case (git reads both). */
const objectName = /\b[0-9a-f]{40}(?:[0-9a-f]{24})?\b/gi;

/** The object names in `text`, lower-cased; the null name (a ref's creation in a reflog) is none. */
function namesIn(text: string): string[] {
  return (text.match(objectName) ?? [])
    .map((name) => name.toLowerCase())
    .filter((name) => !/^0+$/.test(name));
}

/** The most bytes of a reference file (not a reflog) or of an index kept to put it back. */
const MOST_KEPT = 64 * 1024 * 1024;

/** How long one git run of the check may take. */
const GIT_MS = 5_000;

/** Tips looked at one by one; past this many, all at once (and all undone if one leads wrong). */
const ONE_BY_ONE = 16;

/** What was read of each reference file at the last look, by path: read again when it changed. */
const looked = new Map<RawPath, RefLook>();
/** The indexes' bytes as last read, by git folder. */
const indexesLooked = new Map<RawPath, { identity: string; bytes: Buffer | undefined }>();

async function look(
  path: RawPath,
  entry: { gitFolder: RawPath; inner: string; info: Stats },
): Promise<RefLook | undefined> {
  const id = identity(entry.info);
  const known = looked.get(path);
  if (known?.identity === id) return known;
  const bytes = await readFile(bytesOf(path)).catch(() => undefined);
  if (bytes === undefined) return undefined;
  const text = bytes.toString("latin1");
  const reflog = entry.inner.toLowerCase().startsWith("logs/");
  // A file holding one short hex word (`BISECT_START`, `MERGE_AUTOSTASH` take any revision): an
  // abbreviated name, which git resolves to whatever object has it; never a known one.
  const short = /^\s*[0-9a-f]{4,39}\s*$/i.test(text) ? [`~${text.trim().toLowerCase()}`] : [];
  // `BISECT_START` and `MERGE_AUTOSTASH` take any revision (`X^0`, `main:sub`): only a full
  // name or a plain branch name is one this check can follow.
  const revision = /^(?:bisect_start|merge_autostash)$/i.test(entry.inner) ? text.trim() : "";
  if (
    revision !== "" &&
    !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(revision) &&
    !/^(?!.*\.\.)[A-Za-z][A-Za-z0-9._/-]*$/.test(revision)
  )
    short.push(`~${revision}`);
  const kept: RefLook = {
    gitFolder: entry.gitFolder,
    inner: entry.inner,
    identity: id,
    names: new Set([...namesIn(text), ...short]),
    bytes: reflog || bytes.length > MOST_KEPT ? undefined : bytes,
  };
  looked.set(path, kept);
  return kept;
}

/** Reads git's reference files and indexes that `found` lists, before a command. */
export async function lookAtRefs(found: Found): Promise<RefsBefore> {
  const files = new Map<RawPath, RefLook>();
  const indexes = new Map<RawPath, { identity: string; bytes: Buffer | undefined }>();
  for (const [path, entry] of found.refFiles) {
    if (entry.inner.toLowerCase() === "index") {
      const id = identity(entry.info);
      const known = indexesLooked.get(entry.gitFolder);
      const kept =
        known?.identity === id
          ? known
          : {
              identity: id,
              bytes:
                entry.info.size > MOST_KEPT
                  ? undefined
                  : await readFile(bytesOf(path)).catch(() => undefined),
            };
      indexesLooked.set(entry.gitFolder, kept);
      indexes.set(entry.gitFolder, kept);
      continue;
    }
    const kept = await look(path, entry);
    if (kept !== undefined) files.set(path, kept);
  }
  for (const path of looked.keys()) if (!files.has(path)) looked.delete(path);
  for (const folder of indexesLooked.keys()) if (!indexes.has(folder)) indexesLooked.delete(folder);
  return { files, indexes };
}

/** Why a commit or tree leads to a protected file: the first such path it writes. */
interface Wrong {
  object: string;
  path: string;
  why: string;
}

/**
 * After the command: undoes what makes a protected file reachable for the user's git (see
 * `RefsBefore`). `shown` turns a raw path into the one the result names. One line per file undone.
 */
export async function settleRefs(
  before: RefsBefore,
  after: Found,
  git: SafeGit | undefined,
  shown: (path: RawPath) => string,
  had: HadBlob,
): Promise<string[]> {
  const folders = new Set<RawPath>();
  const changed = new Map<RawPath, RefLook>();
  // Each git folder's index that changed, by folder: its path.
  const indexes = new Map<RawPath, RawPath>();
  // Links among git's refs the command made: git reads a ref through one, whatever it leads to
  // later, so none is left.
  const links: RawPath[] = [];
  for (const [path, entry] of after.refFiles) {
    if (entry.inner.toLowerCase() === "index") {
      const was = before.indexes.get(entry.gitFolder);
      if (was?.identity === identity(entry.info)) continue;
      indexes.set(entry.gitFolder, path);
      folders.add(entry.gitFolder);
      continue;
    }
    const was = before.files.get(path);
    if (was?.identity === identity(entry.info)) continue;
    if (entry.info.isSymbolicLink()) {
      links.push(path);
      continue;
    }
    const now = await look(path, entry);
    if (now === undefined) continue;
    changed.set(path, now);
    folders.add(entry.gitFolder);
  }
  const lines: string[] = [];
  for (const path of links) {
    looked.delete(path);
    const failed = await rm(bytesOf(path), { force: true }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    const what = `${shown(path)}, a link the command made among git's refs, which git reads through`;
    if (failed !== undefined) lines.push(`could not remove ${what}: ${failed}`);
    else {
      const back = await putBackHidden(path, before);
      lines.push(`removed ${what}${back > 0 ? `, and put back the ${back} ref files it hid` : ""}`);
    }
  }
  if (folders.size === 0) return lines;
  for (const folder of folders) {
    const known = new Set<string>();
    for (const was of before.files.values())
      if (was.gitFolder === folder) for (const name of was.names) known.add(name);
    const mine = [...changed].filter(([, now]) => now.gitFolder === folder);
    const fresh = new Set<string>();
    for (const [, now] of mine) for (const name of now.names) if (!known.has(name)) fresh.add(name);
    if (fresh.size > 0) {
      const wrong = await examine(git, folder, fresh, known, had);
      for (const [, now] of mine)
        for (const name of replacing(now))
          if (fresh.has(name) && !wrong.has(name))
            wrong.set(name, { object: name, path: "", why: replaceWhy });
      if (wrong.size > 0) lines.push(...(await undo(mine, wrong, before, shown)));
    }
    const index = indexes.get(folder);
    if (index !== undefined) {
      const was = before.indexes.get(folder)?.bytes;
      lines.push(...(await dropIndexCaches(index, shown(index), was)));
      lines.push(...(await settleIndex(git, folder, index, before.indexes.get(folder), shown)));
    }
  }
  return lines;
}

const replaceWhy =
  "a replacement, which git reads in place of another object (git replace): this check does not follow them";

/**
 * The object names a reference file gives as replacements (`refs/replace/NAME`, loose or a line
 * of `packed-refs`): git reads each in place of the object its ref is named after, a blob of a
 * protected file's included, so none a command made is left.
 */
function replacing(look: RefLook): string[] {
  const inner = look.inner.toLowerCase();
  if (inner.startsWith("refs/replace/")) return [...look.names];
  if (inner !== "packed-refs") return [];
  return (look.bytes?.toString("latin1") ?? "")
    .split("\n")
    .filter((line) => / refs\/replace\//i.test(line))
    .flatMap(namesIn);
}

/**
 * Which of `fresh` (object names a reference file newly holds) lead to a protected file: a commit
 * (or a tag of one) through a commit not reachable from `known` that writes a protected path, or
 * a tree holding one. Where git cannot tell, every fresh name leads wrong: the cautious answer.
 */
async function examine(
  git: SafeGit | undefined,
  folder: RawPath,
  fresh: ReadonlySet<string>,
  known: ReadonlySet<string>,
  had: HadBlob,
): Promise<Map<string, Wrong>> {
  const all = (reason: string) =>
    new Map([...fresh].map((name) => [name, { object: name, path: "", why: reason }]));
  if (git === undefined) return all("no git outside the workspace to check it with");
  const gitDir = shownOf(folder);
  const wrong = new Map<string, Wrong>();
  for (const name of fresh)
    if (name.startsWith("~"))
      wrong.set(name, {
        object: name.slice(1),
        path: "",
        why: "a revision this check cannot follow: an abbreviated name or an expression",
      });
  // Each name peeled (a tag to what it tags, at any depth): `OBJECT TYPE`, or `NAME^{} missing`.
  const names = [...fresh].filter((name) => !name.startsWith("~"));
  const typed = await runSafeGit(
    git,
    gitDir,
    ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
    names.map((name) => `${name}^{}\n`).join(""),
    GIT_MS,
  );
  if (!typed.ok) return all(typed.reason);
  const tips: string[] = [];
  const answers = typed.out.toString("latin1").split("\n");
  for (const [at, name] of names.entries()) {
    const [object = "", type] = (answers[at] ?? "").split(" ");
    if (type === "commit") tips.push(name);
    else if (type === "tree") {
      const listed = await runSafeGit(
        git,
        gitDir,
        ["ls-tree", "-r", "--name-only", "-z", object],
        "",
        GIT_MS,
      );
      const found = listed.ok ? firstProtected(listed.out.toString("utf8").split("\0")) : undefined;
      if (!listed.ok) wrong.set(name, { object, path: "", why: listed.reason });
      else if (found !== undefined) wrong.set(name, { object, ...found });
    } else if (type !== "blob")
      // Missing, or not an object git knows: git wrote no such name; the cautious answer.
      wrong.set(name, { object: name, path: "", why: "no such object in the repository" });
  }
  const log = (from: string[]) =>
    runSafeGit(
      git,
      gitDir,
      [
        "log",
        "--root",
        "-m",
        "--no-renames",
        "--raw",
        "--no-abbrev",
        "-z",
        "--format=%x01%H",
        "--ignore-missing",
        "--stdin",
      ],
      [...from, ...[...known].map((name) => `^${name}`)].map((line) => `${line}\n`).join(""),
      GIT_MS,
    );
  const groups = tips.length <= ONE_BY_ONE ? tips.map((tip) => [tip]) : [tips];
  for (const group of groups) {
    const found = firstWrongCommit(await log(group), (path, blob) => had(folder, path, blob));
    if (found !== undefined) for (const tip of group) wrong.set(tip, found);
  }
  return wrong;
}

/**
 * Whether the work tree of the git folder held, before the command, the file at `path` (inside
 * the repository) with the bytes of `blob`: a commit that keeps the user's own protected file (a
 * stash of their edit to `.vscode/settings.json`) brings nothing new.
 */
export type HadBlob = (gitFolder: RawPath, path: string, blob: string) => boolean;

/**
 * The first commit of a `log --raw` run that writes a protected path with bytes the work tree did
 * not hold before (`had`), or that changes a submodule's commit (the check cannot read a
 * submodule's commits, which `git submodule update` checks out), or why the run failed.
 */
function firstWrongCommit(
  outcome: GitOutcome,
  had: (path: string, blob: string) => boolean,
): Wrong | undefined {
  if (!outcome.ok) return { object: "", path: "", why: outcome.reason };
  for (const record of outcome.out.toString("utf8").split("\x01")) {
    const end = record.indexOf("\0");
    if (end === -1) continue;
    const object = record.slice(0, end);
    const fields = record
      .slice(end + 1)
      .replace(/^\n/, "")
      .split("\0");
    for (let at = 0; at + 1 < fields.length; at += 2) {
      const [, , mode = "", , blob = "", status = ""] = (fields[at] ?? "").split(/[: ]/);
      const path = fields[at + 1] ?? "";
      if (status.startsWith("D")) continue;
      if (mode === "160000")
        return {
          object,
          path,
          why: "a submodule's commit, which this check cannot read and `git submodule update` checks out",
        };
      const why = whyByNames(path.split("/"), () => false);
      if (why !== undefined && !had(path, blob)) return { object, path, why };
    }
  }
  return undefined;
}

/** The first of `paths` (inside a repository, `/`-separated) that is protected, with why. */
function firstProtected(paths: string[]): { path: string; why: string } | undefined {
  for (const raw of paths) {
    const path = raw.replace(/^\n/, "");
    if (path === "") continue;
    const why = whyByNames(path.split("/"), () => false);
    if (why !== undefined) return { path, why };
  }
  return undefined;
}

/** What a line of the result says a wrong name leads to. */
function leadsTo(wrong: Wrong): string {
  if (wrong.path === "")
    return `it names ${wrong.object.slice(0, 12) || "commits"} that could not be checked (${wrong.why})`;
  return `it leads to ${wrong.object.slice(0, 12)}, which writes ${wrong.path} (${wrong.why}); that stays in git's objects`;
}

/**
 * Undoes each changed reference file of `folder` that names a wrong object: a reflog loses those
 * lines, `packed-refs` gets back its earlier line for each such ref (or loses it), any other file
 * gets back its earlier bytes (or is removed when it is new). A symbolic ref (`HEAD`) that now
 * names an undone ref is put back too.
 */
async function undo(
  mine: [RawPath, RefLook][],
  wrong: ReadonlyMap<string, Wrong>,
  before: RefsBefore,
  shown: (path: RawPath) => string,
): Promise<string[]> {
  const lines: string[] = [];
  const firstWrong = (names: ReadonlySet<string>) => {
    for (const name of names) {
      const found = wrong.get(name);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const undone = new Set<string>();
  const symbolic: [RawPath, RefLook][] = [];
  for (const [path, now] of mine) {
    const found = firstWrong(now.names);
    if (found === undefined) {
      if (now.bytes?.toString("latin1").startsWith("ref: ")) symbolic.push([path, now]);
      continue;
    }
    const was = before.files.get(path);
    const failed = await putRight(path, now, was, wrong).then(
      () => undefined,
      (error: Error) => error.message,
    );
    undone.add(now.inner);
    lines.push(
      failed === undefined
        ? `undid ${shown(path)}: ${leadsTo(found)}`
        : `could not undo ${shown(path)} (${failed}): ${leadsTo(found)}`,
    );
  }
  for (const [path, now] of symbolic) {
    const target = now.bytes?.toString("latin1").slice("ref: ".length).trim() ?? "";
    const was = before.files.get(path);
    // A new repository's HEAD naming a branch that is gone is an unborn branch: left.
    if (!undone.has(target) || (was === undefined && now.inner.toLowerCase() === "head")) continue;
    await putRight(path, now, was, wrong).catch(() => undefined);
    lines.push(`undid ${shown(path)}: it named ${target}, which was undone`);
  }
  return lines;
}

async function putRight(
  path: RawPath,
  now: RefLook,
  was: RefLook | undefined,
  wrong: ReadonlyMap<string, Wrong>,
): Promise<void> {
  const inner = now.inner.toLowerCase();
  const leads = (line: string) => namesIn(line).some((name) => wrong.has(name));
  if (inner.startsWith("logs/")) {
    const text = (await readFile(bytesOf(path))).toString("latin1");
    const kept = text.split("\n").filter((line) => !leads(line));
    const rest = kept.join("\n");
    if (rest.trim() === "" && was === undefined) await rm(bytesOf(path), { force: true });
    else await replaceFile(path, Buffer.from(rest, "latin1"));
    forget(path);
    return;
  }
  if (inner === "packed-refs") {
    const earlier = new Map<string, string[]>();
    let last: string[] | undefined;
    for (const line of (was?.bytes?.toString("latin1") ?? "").split("\n")) {
      if (line.startsWith("^") && last !== undefined) last.push(line);
      else if (!line.startsWith("#") && line.includes(" ")) {
        last = [line];
        earlier.set(line.slice(line.indexOf(" ") + 1), last);
      } else last = undefined;
    }
    const out: string[] = [];
    let dropping = false;
    for (const line of (await readFile(bytesOf(path))).toString("latin1").split("\n")) {
      if (line.startsWith("^")) {
        if (!dropping && !leads(line)) out.push(line);
        continue;
      }
      dropping = leads(line);
      if (!dropping) out.push(line);
      else out.push(...(earlier.get(line.slice(line.indexOf(" ") + 1)) ?? []));
    }
    await replaceFile(path, Buffer.from(out.join("\n"), "latin1"));
    forget(path);
    return;
  }
  if (was?.bytes !== undefined) await replaceFile(path, was.bytes);
  else await rm(bytesOf(path), { force: true });
  forget(path);
}

/**
 * Puts back the reference files that were at or below `link` before the command (a folder such
 * as `refs/` it replaced with a link), from the bytes kept of each (reflogs are not kept: they
 * stay lost); returns how many. `refs/` itself is made again: without it git finds no repository.
 */
async function putBackHidden(link: RawPath, before: RefsBefore): Promise<number> {
  let back = 0;
  for (const [path, was] of before.files) {
    if (path !== link && !path.startsWith(`${link}/`)) continue;
    if (was.bytes === undefined) continue;
    await mkdir(bytesOf(path.slice(0, path.lastIndexOf("/"))), { recursive: true });
    await replaceFile(path, was.bytes);
    forget(path);
    back++;
  }
  const entry = link.slice(link.lastIndexOf("/") + 1).toLowerCase();
  if (entry === "refs") await mkdir(bytesOf(link), { recursive: true });
  return back;
}

/** A file undone is read again at the next look. */
function forget(path: RawPath): void {
  looked.delete(path);
}

/**
 * An index that changed: its entries for protected paths are compared with the earlier index's
 * (listed from its kept bytes), and each one the command added or changed is put back (or taken
 * out), so the user's `git restore` or `checkout -- .` does not write it.
 */
async function settleIndex(
  git: SafeGit | undefined,
  folder: RawPath,
  index: RawPath,
  was: { identity: string; bytes: Buffer | undefined } | undefined,
  shown: (path: RawPath) => string,
): Promise<string[]> {
  if (git === undefined) return [`could not check ${shown(index)}: no git outside the workspace`];
  if (was !== undefined && was.bytes === undefined)
    return [`could not check ${shown(index)}: it was too big to keep before the command`];
  const gitDir = shownOf(folder);
  const now = await protectedEntries(git, gitDir, undefined);
  if (!now.ok) {
    // What git cannot list cannot be judged: the index from before the command, when kept.
    if (was?.bytes === undefined) return [`could not check ${shown(index)}: ${now.reason}`];
    await replaceFile(index, was.bytes);
    return [
      `put back ${shown(index)} as it was before the command: git could not list it (${now.reason})`,
    ];
  }
  let earlier = new Map<string, string[]>();
  if (was?.bytes !== undefined) {
    const scratch = await mkdtemp(join(tmpdir(), "mini-agent-index-"));
    try {
      await writeFile(join(scratch, "index"), was.bytes, { mode: 0o600 });
      const listed = await protectedEntries(git, gitDir, join(scratch, "index"));
      if (!listed.ok) return [`could not check ${shown(index)}: ${listed.reason}`];
      earlier = listed.entries;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }
  const fixes: string[] = [];
  const paths: string[] = [];
  for (const path of new Set([...now.entries.keys(), ...earlier.keys()])) {
    const was = earlier.get(path) ?? [];
    const is = now.entries.get(path) ?? [];
    if (was.join("\n") === is.join("\n")) continue;
    const width = (is[0] ?? was[0] ?? "").split(" ")[1]?.length ?? 40;
    fixes.push(`0 ${"0".repeat(width)}\t${path}`, ...was.map((line) => `${line}\t${path}`));
    paths.push(path);
  }
  if (fixes.length === 0) return [];
  const done = await runSafeGit(
    git,
    gitDir,
    ["update-index", "--index-info"],
    `${fixes.join("\n")}\n`,
    GIT_MS,
  );
  const whats = paths
    .map((path) => `${path} (${whyByNames(path.split("/"), () => false)})`)
    .join(", ");
  return done.ok
    ? [`undid ${shown(index)}: the command staged ${whats}`]
    : [`could not undo ${shown(index)}, where the command staged ${whats}: ${done.reason}`];
}

/** The index's entries for protected paths: path → its lines (`mode object stage`). */
async function protectedEntries(
  git: SafeGit,
  gitDir: string,
  indexFile: string | undefined,
): Promise<{ ok: true; entries: Map<string, string[]> } | { ok: false; reason: string }> {
  const listed = await runSafeGit(
    git,
    gitDir,
    ["ls-files", "--stage", "-z"],
    "",
    GIT_MS,
    indexFile === undefined ? {} : { GIT_INDEX_FILE: indexFile },
  );
  if (!listed.ok) return listed;
  const entries = new Map<string, string[]>();
  for (const record of listed.out.toString("utf8").split("\0")) {
    const tab = record.indexOf("\t");
    if (tab === -1) continue;
    const path = record.slice(tab + 1);
    if (whyByNames(path.split("/"), () => false) === undefined) continue;
    entries.set(path, [...(entries.get(path) ?? []), record.slice(0, tab)]);
  }
  return { ok: true, entries };
}
