import { constants, type Stats } from "node:fs";
import { lstat, open, realpath, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { within } from "../paths.js";
import { foldersDown, projectRoot } from "../project/root.js";
import { headOf } from "../text.js";
import { firstInvalidUtf8, wholeCharacters } from "../tools/utf8.js";

/** The names read in each folder: `AGENTS.md`, or `CLAUDE.md` in a folder without one. */
export const instructionNames = ["AGENTS.md", "CLAUDE.md"] as const;

/**
 * All files together give the model at most this many characters (UTF-16 units), each file's
 * `Contents of PATH:` heading and the blank line before it included; the files past it are
 * only counted.
 */
export const instructionLimit = 32 * 1024;

/** One instruction file: its path relative to the workspace (`AGENTS.md`, `../AGENTS.md`). */
export type InstructionFile =
  | {
      path: string;
      /** Its size in bytes. */
      bytes: number;
      /** What the model gets of it, cut between code points when over the limit. */
      text: string;
      /** Bytes left out by the limit; 0 when whole. */
      cut: number;
    }
  | { path: string; skipped: string };

/** What the project tells the agent, read afresh for every turn. */
export interface ProjectInstructions {
  /** The files, outermost folder first. */
  files: InstructionFile[];
  /** The git repository root holding the workspace, relative to it (`.`, `..`), if any. */
  gitRoot: string | undefined;
  /** Instruction files past the limit: found, not read, counted in one note. */
  notRead: number;
}

export interface InstructionBounds {
  /** The user's home: no folder above it is ever looked at. */
  home: string;
  /** The state folder: nothing inside it is ever read. */
  state: string;
}

/**
 * The project's instruction files, from the top folder down to the workspace. The top is the
 * project root (`projectRoot`: the root of a git repository the user owns holding the
 * workspace, since a repository's instructions apply to all of it, else the workspace itself),
 * so a stray file in a folder that holds the user's home (`/`, `/home`) or in a shared folder
 * (`/tmp`) is never read; nothing in the state folder is either. A file that is not UTF-8 text
 * (a NUL byte, an invalid sequence), which `read` would refuse, is skipped.
 *
 * A file is read only when it is a regular file (a FIFO, a device or a folder is skipped without
 * being opened) whose real path lies inside the top folder: a symlink `AGENTS.md -> CLAUDE.md`
 * is followed, one leading elsewhere is skipped. What was opened is checked to be what was
 * looked at. Skipped files are named with the reason, never silently dropped.
 */
export async function readInstructions(
  workspace: string,
  bounds: InstructionBounds,
): Promise<ProjectInstructions> {
  const home = await realOrResolved(bounds.home);
  const state = await realOrResolved(bounds.state);
  const root = await projectRoot(workspace, { home });
  const chain = foldersDown(workspace, root.path, state);
  const top = chain[0] ?? workspace;
  const gitRoot = root.repository ? relative(workspace, top) || "." : undefined;
  const files: InstructionFile[] = [];
  let left = instructionLimit;
  let notRead = 0;
  for (const folder of chain) {
    for (const name of instructionNames) {
      const path = join(folder, name);
      const shown = relative(workspace, path);
      const room = left - overhead(shown);
      if (room <= 0) {
        if ((await lstat(path).catch(() => undefined)) === undefined) continue;
        notRead++;
        break;
      }
      const file = await readFile(path, { top, state, left: room });
      if (file === "absent") continue;
      if ("skipped" in file) files.push({ path: shown, skipped: file.skipped });
      else files.push({ path: shown, ...file });
      left = room - ("text" in file ? file.text.length : 0);
      break;
    }
  }
  return { files, gitRoot, notRead };
}

/** What precedes a file's text in the prompt. */
const heading = (path: string) => `Contents of ${path}:\n\n`;

/** What a file costs of the limit besides its text: its heading and the blank line before it. */
const overhead = (path: string) => heading(path).length + 2;

type Read = "absent" | { skipped: string } | { bytes: number; text: string; cut: number };

/** Each UTF-16 unit takes at most 3 bytes of UTF-8: this many bytes always fill the limit. */
const readLimit = instructionLimit * 3;

async function readFile(
  path: string,
  where: { top: string; state: string; left: number },
): Promise<Read> {
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch {
    return "absent";
  }
  let real = path;
  if (stats.isSymbolicLink()) {
    try {
      real = await realpath(path);
      stats = await stat(real);
    } catch {
      return { skipped: "a dangling link" };
    }
    if (!within(where.top, real)) return { skipped: "a link leading outside the project" };
  }
  if (within(where.state, real)) return { skipped: "inside the state folder" };
  if (!stats.isFile()) return { skipped: kindOf(stats) };
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return { skipped: `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== stats.ino || opened.dev !== stats.dev)
      return { skipped: "changed while it was read" };
    const buffer = Buffer.alloc(Math.min(opened.size, readLimit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, bytesRead);
    const refused = notText(bytes, bytesRead < opened.size);
    if (refused !== undefined) return { skipped: refused };
    const whole = new TextDecoder().decode(bytes);
    const text = headOf(whole, Math.max(0, where.left));
    const cut = text === whole && bytesRead === opened.size ? 0 : opened.size - byteLength(text);
    return { bytes: opened.size, text, cut: Math.max(0, cut) };
  } catch (error) {
    return { skipped: `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  } finally {
    await handle.close();
  }
}

/** Why `bytes` (the head of a file when `cut`) is not text `read` would show, if it is not. */
function notText(bytes: Uint8Array, cut: boolean): string | undefined {
  if (bytes.includes(0)) return "a binary file";
  const checked = cut ? bytes.subarray(0, wholeCharacters(bytes)) : bytes;
  return firstInvalidUtf8(checked) === -1 ? undefined : "not UTF-8 text";
}

const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a folder";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

async function realOrResolved(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

/**
 * The instructions as the system prompt carries them, outermost first, each under its path;
 * a file cut by the limit ends with `[instructions cut: N more bytes in PATH]`. Empty when
 * there are none.
 */
export function instructionsPrompt(instructions: ProjectInstructions): string {
  const parts = instructions.files.flatMap((file) =>
    "skipped" in file
      ? []
      : [
          `${heading(file.path)}${file.text}${file.cut > 0 ? `\n[instructions cut: ${file.cut} more bytes in ${file.path}]` : ""}`,
        ],
  );
  if (instructions.notRead > 0)
    parts.push(`[${instructions.notRead} more instruction files not read: the limit is reached]`);
  if (parts.length === 0) return "";
  return [
    "Project instructions (AGENTS.md or CLAUDE.md, outermost folder first; a deeper file is more specific):",
    ...parts,
  ].join("\n\n");
}

/**
 * The one line shown at start: `instructions: AGENTS.md (812 bytes), pkg/AGENTS.md (skipped: a
 * FIFO)`. Paths pass through `show` (the terminal's `visible`). Empty when there are no files.
 */
export function instructionsLine(
  instructions: ProjectInstructions,
  show: (text: string) => string,
): string {
  if (instructions.files.length === 0 && instructions.notRead === 0) return "";
  const items = instructions.files.map((file) => {
    if ("skipped" in file) return `${show(file.path)} (skipped: ${file.skipped})`;
    const cut = file.cut > 0 ? `, the last ${file.cut} cut` : "";
    return `${show(file.path)} (${file.bytes} bytes${cut})`;
  });
  if (instructions.notRead > 0) items.push(`${instructions.notRead} more files not read`);
  return `instructions: ${items.join(", ")}`;
}
