import type { Word } from "./script.js";
import type { Run } from "./wrappers.js";

/**
 * The built-in read-only set: commands that only read and print, allowed without a question when
 * bash runs in the sandbox (which keeps what they could still reach, a workspace's own git
 * configuration say, inside the workspace). A program here takes any arguments, variables and
 * globs included, except where an option writes or runs something: then every argument must be
 * fixed text (a glob could expand to a file named `-delete`), and none may be such an option,
 * a long one abbreviated included.
 */
const anyArguments = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "pwd",
  "echo",
  "true",
  "false",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "stat",
  "du",
  "df",
  "which",
  "whoami",
  "id",
  "uname",
  "grep",
  "egrep",
  "fgrep",
  "cut",
  "tr",
  "nl",
  "rev",
  "tac",
  "cmp",
  "comm",
  "diff",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "sha512sum",
  "type",
  "printenv",
  "seq",
]);

type Check = (args: string[]) => boolean;

const none = (args: string[], bad: RegExp) => !args.some((arg) => bad.test(arg));

/**
 * True when an argument is one of the long options `excluded`, spelled in full, abbreviated (GNU
 * and git accept any unambiguous prefix: `--out` is `--output`), or with a value (`--output=F`).
 */
function longOption(arg: string, excluded: string[]): boolean {
  if (!arg.startsWith("--") || arg.length < 3) return false;
  const equals = arg.indexOf("=");
  const name = equals > 0 ? arg.slice(0, equals) : arg;
  if (name.length < 3) return false;
  return excluded.some((option) => option.startsWith(name) || name.startsWith(option));
}

const noLong = (args: string[], excluded: string[]) =>
  !args.some((arg) => longOption(arg, excluded));

const gitListing =
  /^(-a|--all|-r|--remotes|-v|-vv|--verbose|-l|--list|--show-current|--no-color|--color(=.*)?|--(no-)?merged(=.*)?|--(no-)?contains(=.*)?|--sort=.*|--format=.*|--points-at=.*)$/;

/** Programs read-only unless given an option that writes, deletes or runs a program. */
const checked: Record<string, Check> = {
  find: (args) => none(args, /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/),
  sort: (args) => none(args, /^-[^-]*o/) && noLong(args, ["--output", "--compress-program"]),
  uniq: (args) => args.filter((arg) => !arg.startsWith("-")).length <= 1,
  rg: (args) => noLong(args, ["--pre", "--pre-glob", "--hostname-bin"]),
  // `-v NAME` and `-R NAME` evaluate an array subscript in NAME: `test -v 'a[$(cmd)]'` runs cmd
  test: (args) => !args.some((arg) => arg === "-v" || arg === "-R"),
  "[": (args) => !args.some((arg) => arg === "-v" || arg === "-R"),
  env: (args) => args.length === 0,
  command: (args) => args[0] === "-v" || args[0] === "-V",
};

const gitReading: Record<string, Check> = {
  status: (args) => noLong(args, ["--output"]),
  diff: (args) => noLong(args, ["--output", "--ext-diff"]),
  log: (args) => noLong(args, ["--output", "--ext-diff"]),
  show: (args) => noLong(args, ["--output", "--ext-diff"]),
  branch: (args) => args.every((arg) => gitListing.test(arg)),
};

/** The name of the read-only entry that covers `run` (`ls`, `git status`), if one does. */
export function readOnlyEntry(run: Run): string | undefined {
  const [program, ...args] = run.words;
  if (program?.kind !== "static") return undefined;
  const name = program.value;
  if (anyArguments.has(name)) return name;
  const fixed = run.openArgs ? undefined : staticValues(args);
  if (fixed === undefined) return undefined;
  const check = checked[name];
  if (check) return check(fixed) ? name : undefined;
  const [sub, ...rest] = fixed;
  const git = name === "git" && sub !== undefined ? gitReading[sub] : undefined;
  return git?.(rest) ? `git ${sub}` : undefined;
}

function staticValues(words: Word[]): string[] | undefined {
  const values: string[] = [];
  for (const word of words) {
    if (word.kind === "dynamic") return undefined;
    values.push(word.value);
  }
  return values;
}

/** The read-only set as docs/rules.md and `rules explain` list it. */
export const readOnlySet = [
  ...anyArguments,
  "test, [ (fixed words, without -v, -R)",
  "find (without -exec, -execdir, -ok, -okdir, -delete, -fprint*, -fls)",
  "sort (without -o, --output, --compress-program)",
  "uniq (with at most one file)",
  "rg (without --pre, --pre-glob, --hostname-bin)",
  "env (no arguments)",
  "command -v",
  "git status, diff, log, show (without --output, --ext-diff)",
  "git branch (listing options only)",
];
