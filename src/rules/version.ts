import { closeSync, openSync, readSync, realpathSync } from "node:fs";
import { basename, delimiter, isAbsolute, join } from "node:path";

/**
 * Programs whose `--version` and `--help` print and exit before reading any configuration of the
 * workspace. Launchers and version managers are not here: they read the workspace's files to
 * choose what to run (yarn, pnpm, npm and npx read `package.json` or `.npmrc`, corepack its
 * `packageManager`, cargo and rustc through rustup `rust-toolchain.toml`, go `go.mod`'s
 * toolchain, mvn and gradle their wrappers and settings), and so do the shims of asdf, mise,
 * pyenv, rbenv, nodenv and volta, whatever name they stand under.
 */
const vetted = new Set([
  ...["node", "python3", "python", "git", "gcc", "g++", "cc", "c++", "clang", "clang++"],
  ...["grep", "sed", "awk", "gawk", "jq", "rg", "tree", "make", "cmake", "perl"],
]);

/**
 * True for `PROGRAM --version` or `PROGRAM --help` alone, of a vetted program that is itself
 * (not a shim): the file `PATH` finds for it is a compiled program (ELF) whose real name holds
 * the program's name (`python3` → `python3.12`; a mise or volta shim is a link to `mise` or
 * `volta-shim`, the others are scripts).
 */
export function versionOnly(name: string, args: string[], path = process.env.PATH): boolean {
  if (args.length !== 1 || (args[0] !== "--version" && args[0] !== "--help")) return false;
  if (!vetted.has(name)) return false;
  const found = onPath(name, path ?? "");
  return found !== undefined && basename(found).includes(name) && isElf(found);
}

/**
 * The real path of the file bash finds for `name` on `path`; `undefined` when none, or when a
 * folder before it is relative (`.`, an empty entry): bash would look in the workspace first.
 */
function onPath(name: string, path: string): string | undefined {
  for (const folder of path.split(delimiter)) {
    if (!isAbsolute(folder)) return undefined;
    try {
      return realpathSync(join(folder, name));
    } catch {}
  }
  return undefined;
}

function isElf(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const head = Buffer.alloc(4);
    readSync(fd, head, 0, 4, 0);
    return head.toString("latin1") === "\x7fELF";
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
