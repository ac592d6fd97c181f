import { sedOptions } from "./read-only.js";
import { gitPrograms, type ReadOnlyProgram, readOnlyPrograms } from "./read-only-table.js";
import type { Word } from "./script.js";
import type { Run } from "./wrappers.js";

/**
 * Which words of a read-only program name the files it reads: the positive model the rules use
 * without the sandbox, where every such path must lead inside the workspace. `pattern`: the first
 * operand is a pattern or a script, not a file, unless one of `patternFrom` gives it. `pathValued`:
 * options whose value is a file read. `follows`: options that follow links while they walk a
 * folder, which no check of the named paths can vouch for. `listed`: options that read the
 * names of more files from a file (known only at run time). `folder`: with no path operand the
 * program reads the current folder (with none, it reads its input or nothing). `filesOnly`: given
 * two folders, the program opens the entries in them, links followed, so its paths must be no
 * folders.
 */
interface PathModel {
  spec: ReadOnlyProgram;
  pattern?: { patternFrom: string[] };
  pathValued?: string[];
  follows?: string[];
  listed?: string[];
  folder?: true;
  filesOnly?: true;
}

/**
 * What a run reads: `paths` (or the current folder, `folder`), all files when `filesOnly`;
 * `repository`: the git repository git finds from the current folder.
 */
export interface ReadPaths {
  paths: Word[];
  folder: boolean;
  filesOnly: boolean;
  repository?: true;
}

const table = (name: string): ReadOnlyProgram => readOnlyPrograms[name] as ReadOnlyProgram;

const files = (name: string, more: Omit<PathModel, "spec"> = {}): PathModel => ({
  spec: table(name),
  ...more,
});

const grepModel: Omit<PathModel, "spec"> = {
  pattern: { patternFrom: ["-e", "--regexp", "-f", "--file"] },
  pathValued: ["-f", "--file", "--exclude-from"],
  follows: ["-R", "--dereference-recursive"],
  folder: true,
};

const checksum = (name: string) => files(name, { listed: ["-c", "--check"] });

/**
 * Programs that read nothing: they print their fixed words or the current folder's name. Those
 * that read the system (`which` and `type` search `PATH`, `env` and `printenv` show the
 * environment, `uname`, `id`, `whoami`) read outside the workspace: they ask.
 */
const noFiles = new Set(["echo", "true", "false", "pwd", "seq", "tr", "basename", "dirname"]);

const models: Record<string, PathModel> = {
  cat: files("cat"),
  head: files("head"),
  tail: files("tail"),
  nl: files("nl"),
  tac: files("tac"),
  rev: files("rev"),
  cut: files("cut"),
  uniq: files("uniq"),
  cmp: files("cmp", { filesOnly: true }),
  comm: files("comm"),
  xxd: files("xxd"),
  od: files("od"),
  hexdump: files("hexdump"),
  strings: files("strings"),
  md5sum: checksum("md5sum"),
  sha1sum: checksum("sha1sum"),
  sha256sum: checksum("sha256sum"),
  sha512sum: checksum("sha512sum"),
  realpath: files("realpath", { pathValued: ["--relative-to", "--relative-base"] }),
  readlink: files("readlink"),
  stat: files("stat"),
  wc: files("wc", { listed: ["--files0-from"] }),
  sort: files("sort", { pathValued: ["--random-source"], listed: ["--files0-from"] }),
  file: files("file", { pathValued: ["-m", "--magic-file"], listed: ["-f", "--files-from"] }),
  diff: files("diff", {
    pathValued: ["-X", "--exclude-from"],
    follows: ["-r", "--recursive"],
    filesOnly: true,
  }),
  ls: files("ls", { folder: true, follows: ["-L", "--dereference"] }),
  du: files("du", {
    folder: true,
    pathValued: ["-X", "--exclude-from"],
    follows: ["-L", "--dereference"],
    listed: ["--files0-from"],
  }),
  tree: files("tree", { folder: true, follows: ["-l"] }),
  grep: files("grep", grepModel),
  egrep: files("egrep", grepModel),
  fgrep: files("fgrep", grepModel),
  rg: files("rg", {
    folder: true,
    pattern: { patternFrom: ["-e", "--regexp", "-f", "--file", "--files", "--type-list"] },
    pathValued: ["-f", "--file"],
    follows: ["-L", "--follow"],
  }),
  sed: {
    spec: sedOptions,
    pattern: { patternFrom: ["-e", "--expression"] },
  },
};

/**
 * The paths `run` reads (an empty list: none, or the current folder, as `reads` says), or
 * `undefined` when the rules cannot tell which words are paths, or an option follows links.
 * `run` is one the read-only set allows, so its options are known to its table.
 */
export function readPaths(run: Run): ReadPaths | undefined {
  const [program, ...args] = run.words;
  if (program?.kind !== "static" || run.openArgs) return undefined;
  // `echo $HOME`: a word known only at run time may show the environment
  if (noFiles.has(program.value))
    return args.every((arg) => arg.kind === "static")
      ? { paths: [], folder: false, filesOnly: false }
      : undefined;
  if (args.length === 1 && args[0]?.kind === "static" && /^--(version|help)$/.test(args[0].value))
    return { paths: [], folder: false, filesOnly: false };
  if (program.value === "find") return findPaths(args);
  if (program.value === "git") return gitPaths(args);
  const model = models[program.value];
  if (!model) return undefined;
  const { options, operands } = splitWords(model.spec, args);
  const asks = [...(model.follows ?? []), ...(model.listed ?? [])];
  if (options.some(({ name }) => asks.includes(name))) return undefined;
  const paths = options
    .filter(({ name }) => model.pathValued?.includes(name))
    .map(({ value }) => value);
  if (paths.some((path) => path === undefined)) return undefined;
  const given = options.some(({ name }) => model.pattern?.patternFrom.includes(name));
  const named = model.pattern && !given ? operands.slice(1) : operands;
  if (model.pattern && !given && operands.length === 0) return undefined;
  const folder = named.length === 0 && model.folder === true;
  return { paths: [...(paths as Word[]), ...named], folder, filesOnly: model.filesOnly === true };
}

interface Option {
  name: string;
  value?: Word;
}

/**
 * The options (each short letter of a cluster on its own, `-x`) and operands of `args` as the
 * program's table reads them: a valued option takes the rest of its word or the next word.
 */
function splitWords(spec: ReadOnlyProgram, args: Word[]): { options: Option[]; operands: Word[] } {
  const options: Option[] = [];
  const operands: Word[] = [];
  let afterDashes = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as Word;
    const text = arg.kind === "static" ? arg.value : undefined;
    if (afterDashes || text === undefined || text === "-" || !text.startsWith("-")) {
      operands.push(arg);
      continue;
    }
    if (text === "--") {
      afterDashes = true;
      continue;
    }
    const next = args[i + 1];
    if (text.startsWith("--")) {
      const equals = text.indexOf("=");
      const name = equals > 0 ? text.slice(0, equals) : text;
      if (equals > 0)
        options.push({ name, value: { kind: "static", value: text.slice(equals + 1) } });
      else if (spec.longValued?.includes(name)) {
        options.push({ name, ...(next && { value: next }) });
        i++;
      } else options.push({ name });
      continue;
    }
    if (spec.numeric && /^-\d+$/.test(text)) continue;
    for (let j = 1; j < text.length; j++) {
      const letter = text[j] ?? "";
      const name = `-${letter}`;
      if (spec.shortOptional?.includes(letter)) {
        options.push({ name });
        break;
      }
      if (spec.shortValued?.includes(letter)) {
        const attached = text.slice(j + 1);
        if (attached !== "") options.push({ name, value: { kind: "static", value: attached } });
        else {
          options.push({ name, ...(next && { value: next }) });
          i++;
        }
        break;
      }
      options.push({ name });
    }
  }
  return { options, operands };
}

/** find's primaries whose value is a file it reads (its times, its inode). */
const findPathValued = new Set(["-newer", "-anewer", "-cnewer", "-samefile"]);

/**
 * `find [paths] [expression]`: the start points and the files the expression compares with; no
 * `-H`, `-L` or `-follow` (they follow links while walking). With no start point, the current
 * folder. A command of `-exec` is a run of its own, with the found path as a word known only at
 * run time: it asks.
 */
function findPaths(args: Word[]): ReadPaths | undefined {
  const texts: string[] = [];
  for (const arg of args) {
    if (arg.kind !== "static") return undefined;
    texts.push(arg.value);
  }
  if (texts.some((text) => text === "-H" || text === "-L" || text === "-follow")) return undefined;
  const start = texts.findIndex((text) => /^[-()!]/.test(text));
  const starts = start < 0 ? texts : texts.slice(0, start);
  const compared = texts.flatMap((text, i) =>
    findPathValued.has(text) && i + 1 < texts.length ? [texts[i + 1] as string] : [],
  );
  const paths = [...starts, ...compared].map((value): Word => ({ kind: "static", value }));
  return { paths, folder: starts.length === 0, filesOnly: false };
}

/** Options of git's read-only subcommands that read a file, by subcommand. */
const gitPathValued: Record<string, string[]> = {
  grep: ["-f"],
  "ls-files": ["-X", "--exclude-from"],
};

/**
 * A read-only git subcommand reads the repository git finds from the current folder (which must
 * lie inside the workspace: `repository`), and the files its options name. Its operands are
 * revisions and pathspecs, which git keeps inside the repository (`git log -- /etc/passwd` fails),
 * so they name no path of their own; `git grep --no-index` reads the folder as plain files: it
 * asks.
 */
function gitPaths(args: Word[]): ReadPaths | undefined {
  const [sub, ...rest] = args;
  if (sub?.kind !== "static") return undefined;
  if (rest.some((word) => word.kind !== "static" || word.value === "--no-index")) return undefined;
  const spec = sub.value === "config" ? { operands: 2, long: ["--get", "--get-all"] } : undefined;
  const table = spec ?? gitPrograms[sub.value];
  if (table === undefined) return undefined;
  const { options } = splitWords(table, rest);
  const valued = gitPathValued[sub.value] ?? [];
  const paths: Word[] = [];
  for (const { name, value } of options) {
    if (!valued.includes(name)) continue;
    if (value === undefined) return undefined;
    paths.push(value);
  }
  return { paths, folder: false, filesOnly: false, repository: true };
}
