import { constants } from "node:fs";
import {
  copyFile,
  link,
  lstat,
  mkdir,
  open,
  readdir,
  rename,
  stat,
  unlink,
} from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { sessionToResume } from "../app/sessions.js";
import { randomHex } from "../crypto.js";
import { ExportError, readForExport, writeExport } from "../export/export.js";
import { sessionsDir } from "../session/store.js";
import { stateHome } from "../state-home.js";
import { systemErrorMeaning } from "../system-errors.js";
import { visible } from "../visible.js";
import { type ExportArgs, exitCodes, UsageError } from "./args.js";

/**
 * `mini-agent export [ID] [--format html|md] [-o FILE] [--force]`: the newest session of this
 * folder (or ID) as one self-contained file. HTML goes to `exports/ID.html` in the state folder
 * (never the workspace, where it could be committed by accident; that copy is the export's own and
 * is replaced by the next export of the session) unless `-o` says where (`-` for stdout); Markdown
 * goes to stdout unless `-o` names a file. A file `-o` names is never replaced without `--force`;
 * the file appears whole or not at all (written beside it first, then moved into place), `0600`
 * like the session it comes from. Every refusal is one line, exit 2, before anything is written.
 */
export async function exportCommand(args: ExportArgs, workspace: string): Promise<number> {
  const { env, stdout, stderr } = process;
  const dir = sessionsDir(env, workspace);
  const path = args.id === undefined ? await newest(dir) : await sessionToResume(dir, args.id);
  const own = args.output === undefined && args.format === "html";
  const target = own ? await exportsFile(env, basename(path, ".jsonl")) : (args.output ?? "-");
  const file = target === "-" ? undefined : resolve(target);
  if (file === path) throw new UsageError("-o names the session file itself: choose another file");
  const force = args.force || own;
  if (file !== undefined) await checkTarget(file, force);
  const session = await asUsage(readForExport(path));
  const options = { format: args.format, env };
  if (file === undefined) {
    // A failing stdout is reported once, by the stdout error handler of the command (exit 1, or
    // 141 for a closed pipe): here it only ends the export.
    const failed = await writeExport(session, options, (text) => writeTo(stdout, text)).then(
      () => false,
      (error: unknown) => {
        if (error instanceof StdoutFailed) return true;
        throw error;
      },
    );
    return failed ? exitCodes.error : exitCodes.done;
  }
  const totals = await writeWhole(file, force, (write) => writeExport(session, options, write));
  const calls = `${totals.calls} tool call${totals.calls === 1 ? "" : "s"}`;
  stderr.write(
    `mini-agent: exported session ${session.header.id} (${calls}) to ${visible(file)}\n`,
  );
  return exitCodes.done;
}

/**
 * Where an HTML export goes without `-o`: `exports/ID.html` in the state folder, made private
 * (`0700`) when it is first needed.
 */
async function exportsFile(env: NodeJS.ProcessEnv, id: string): Promise<string> {
  const folder = join(stateHome(env), "exports");
  await mkdir(folder, { recursive: true, mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(
      `cannot write ${visible(folder)}: ${systemErrorMeaning(error.code ?? "")}`,
    );
  });
  return join(folder, `${id}.html`);
}

/**
 * The newest session file of the folder, ordered as `listSessions` orders them (last written,
 * then id) but without loading any: a session of any size is found at the cost of a `stat`.
 */
async function newest(dir: string): Promise<string> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  const files = await Promise.all(
    names
      .filter((name) => name.endsWith(".jsonl"))
      .map(async (name) => {
        const path = join(dir, name);
        const info = await stat(path).catch(() => undefined);
        return { path, id: basename(name, ".jsonl"), mtime: info?.isFile() ? info.mtimeMs : -1 };
      }),
  );
  const [first] = files
    .filter((file) => file.mtime >= 0)
    .sort((a, b) => b.mtime - a.mtime || b.id.localeCompare(a.id));
  if (!first) throw new UsageError("no session to export for this folder");
  return first.path;
}

/**
 * The folder must exist, and the file must not, unless `--force`; even then only a regular file
 * (or a symlink, which is replaced itself) is replaced: never a folder, nor a device node, FIFO or
 * socket, which a rename would swap for a regular file.
 */
async function checkTarget(file: string, force: boolean): Promise<void> {
  const shown = visible(file);
  const folder = await stat(dirname(file)).catch((error: NodeJS.ErrnoException) => error);
  if (folder instanceof Error || !folder.isDirectory()) {
    const why =
      folder instanceof Error && folder.code !== "ENOENT"
        ? systemErrorMeaning(folder.code ?? "")
        : "does not exist";
    throw new UsageError(`cannot write ${shown}: the folder ${visible(dirname(file))} ${why}`);
  }
  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory()) throw new UsageError(`cannot write ${shown}: it is a folder`);
  const own = await lstat(file).catch(() => undefined);
  if (own && !own.isFile() && !own.isSymbolicLink())
    throw new UsageError(
      `cannot write ${shown}: it is not a regular file (a device, FIFO or socket is never replaced)`,
    );
  if (existing && !force)
    throw new UsageError(
      `${shown} exists: choose another file with -o, or add --force to replace it`,
    );
}

/**
 * Writes through a temporary file beside `file`, then moves it into place: replacing only with
 * `force` (a rename), else linking, which fails if a file appeared meanwhile. A failure removes
 * the temporary file; an existing file is left as it was.
 */
async function writeWhole<T>(
  file: string,
  force: boolean,
  work: (write: (text: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  const temporary = join(dirname(file), `.${basename(file)}.${randomHex(4)}.tmp`);
  const handle = await open(temporary, "wx", 0o600).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot write ${visible(file)}: ${systemErrorMeaning(error.code ?? "")}`);
  });
  try {
    const result = await work(async (text) => {
      await handle.write(text);
    });
    await handle.close();
    if (force) await rename(temporary, file);
    else await placeNew(temporary, file);
    return result;
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(temporary).catch(() => {});
    throw error;
  }
}

/** Moves `temporary` to `file` unless `file` exists (a link where the file system has them). */
async function placeNew(temporary: string, file: string): Promise<void> {
  try {
    await link(temporary, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST")
      throw new UsageError(
        `${visible(file)} exists: choose another file with -o, or add --force to replace it`,
      );
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EXDEV") throw error;
    await copyFile(temporary, file, constants.COPYFILE_EXCL);
  }
  await unlink(temporary);
}

/** stdout refused the export; the stream's own error handler says why. */
class StdoutFailed extends Error {}

/** Resolves once the stream took the text: a slow reader holds the export back. */
function writeTo(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((done, failed) =>
    stream.write(text, (error) => (error ? failed(new StdoutFailed(error.message)) : done())),
  );
}

async function asUsage<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw error instanceof ExportError ? new UsageError(error.message) : error;
  }
}
