import { awkWords } from "./awk-program.js";
import { shownConfigKeys } from "./read-only-git.js";
import type { OptionTable } from "./read-only-program.js";
import { gitPrograms, type ReadOnlyProgram, readOnlyPrograms } from "./read-only-table.js";
import { foundPath, type Word } from "./script.js";
import { sedPrintsOnly } from "./sed-script.js";
import { versionOnly } from "./version.js";
import type { Run } from "./wrappers.js";

/** The name of the read-only entry that covers `run` (`ls`, `git status`), if one does. */
export function readOnlyEntry(run: Run): string | undefined {
  const [program, ...args] = run.words;
  if (program?.kind !== "static") return undefined;
  const name = program.value;
  const only = args.length === 1 && args[0]?.kind === "static" ? args[0].value : undefined;
  if (!run.openArgs && only !== undefined && versionOnly(name, [only])) return `${name} ${only}`;
  if (name === "git") return gitEntry(args, run.openArgs);
  if (name === "sed") return !run.openArgs && sedPrints(args) ? name : undefined;
  const spec = readOnlyPrograms[name];
  if (spec) {
    if (run.openArgs && !spec.openArgs) return undefined;
    return spec.anyWords || allowedWords(spec, args) ? name : undefined;
  }
  if (run.openArgs) return undefined;
  const fixed = staticValues(args);
  if (!fixed) return undefined;
  const check = special[name];
  return check?.(fixed) ? name : undefined;
}

function gitEntry(args: Word[], openArgs: boolean): string | undefined {
  const [sub, ...rest] = args;
  if (openArgs || sub?.kind !== "static") return undefined;
  if (sub.value === "config") return configGet(rest) ? "git config --get" : undefined;
  const spec = gitPrograms[sub.value];
  return spec && allowedWords(spec, rest) ? `git ${sub.value}` : undefined;
}

/**
 * `git config --get KEY` (or `--get-all`) of a key that holds no secret and names no program:
 * who the author is, a few settings. Any other key may hold a password (`remote.*.url`,
 * `http.*.extraheader`), and `--list` shows them all: they ask.
 */
function configGet(args: Word[]): boolean {
  const [option, key, ...more] = args;
  return (
    more.length === 0 &&
    option?.kind === "static" &&
    (option.value === "--get" || option.value === "--get-all") &&
    key?.kind === "static" &&
    shownConfigKeys.test(key.value)
  );
}

/** sed's options that only print, and `-e`'s and `-l`'s values; no `-i`, `-f`, `--follow-symlinks`. */
export const sedOptions: ReadOnlyProgram = {
  short: "nErsuz",
  shortValued: "el",
  long: [
    ...["--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered"],
    ...["--null-data", "--zero-terminated", "--posix", "--debug", "--sandbox"],
  ],
  longValued: ["--expression", "--line-length"],
  operands: Number.POSITIVE_INFINITY,
};

/**
 * `sed` whose options only print and whose every script (each `-e`, `--expression`, else the
 * first operand, which must then be fixed text) only prints (`sedPrintsOnly`).
 */
function sedPrints(args: Word[]): boolean {
  if (!allowedWords(sedOptions, args)) return false;
  const scripts: string[] = [];
  let first: Word | undefined;
  let afterDashes = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as Word;
    const next = args[i + 1];
    const text = arg.kind === "static" ? arg.value : undefined;
    if (afterDashes || text === undefined || text === "-" || !text.startsWith("-")) {
      first ??= arg;
      continue;
    }
    if (text === "--") afterDashes = true;
    else if (text.startsWith("--expression=")) scripts.push(text.slice("--expression=".length));
    else if (text === "--expression" || text === "--line-length") {
      if (text === "--expression" && next?.kind === "static") scripts.push(next.value);
      i++;
    } else if (!text.startsWith("--")) {
      // a cluster: `-n`, `-ne SCRIPT`, `-eSCRIPT`, `-l 80`
      const valued = text.slice(1).search(/[el]/);
      if (valued < 0) continue;
      const attached = text.slice(valued + 2);
      const value = attached !== "" ? attached : next?.kind === "static" ? next.value : undefined;
      if (attached === "") i++;
      if (text[valued + 1] === "e" && value !== undefined) scripts.push(value);
    }
  }
  if (scripts.length === 0) {
    if (first?.kind !== "static") return false;
    scripts.push(first.value);
  }
  return scripts.every(sedPrintsOnly);
}

/**
 * True when every word is an allowed option (with its value) or an operand, and the operands are
 * no more than allowed. A word known only at run time is an operand only where it cannot be an
 * option: after `--`, or a glob or brace word that starts with plain text (`src/*.ts`); and only
 * for a program that takes any number of operands, since it may be several words or none.
 */
export function allowedWords(spec: ReadOnlyProgram, args: Word[]): boolean {
  return readWords(spec, args).ok;
}

/**
 * What a table makes of a command's arguments: `ok` with the files its options and operands
 * write, or why not. Without `rule`, the read-only set's reading (`allowedWords`). Under an allow
 * rule (`rule`), the table's `rule` options and operands count too, and its `writes` options and
 * `writesOperand` name files written; the first `rule.said` arguments are the rule's own words,
 * granted whatever they are.
 */
export type WordsVerdict = { ok: true; writes: Word[] } | { ok: false; why: string };

export function readWords(
  spec: ReadOnlyProgram,
  args: Word[],
  rule?: { said: number },
): WordsVerdict {
  const table = rule ? withRule(spec) : spec;
  const limit = rule ? (spec.rule?.operands ?? spec.operands) : spec.operands;
  const operands: Word[] = [];
  const writes: Word[] = [];
  let afterDashes = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as Word;
    if (arg === foundPath) {
      if (limit !== Number.POSITIVE_INFINITY) return no("a found path where it may be written");
      continue;
    }
    if (arg.kind === "dynamic") {
      const operand = afterDashes ? !/[`]/.test(arg.text) : /^[\w./~+@%:,][^$`]*$/.test(arg.text);
      if (!operand || limit !== Number.POSITIVE_INFINITY)
        return no(`${arg.text}, known only when the shell runs, may be an option`);
      continue;
    }
    const value = arg.value;
    if (afterDashes || value === "-" || !value.startsWith("-")) operands.push(arg);
    else if (value === "--") afterDashes = true;
    else {
      const written = rule ? writeOption(spec, table, value, args[i + 1]) : undefined;
      if (written) {
        writes.push(written.file);
        i += written.used - 1;
        continue;
      }
      const used = optionWords(table, value, args[i + 1]);
      if (rule && i < rule.said) {
        i += Math.max(used, 1) - 1;
        continue;
      }
      if (used === 0)
        return no(
          rule && runsOption(spec, value)
            ? `${runsOption(spec, value)} runs a program`
            : `${value} is not an option known to be inert`,
        );
      if (!valueAllowed(spec, value, args[i + 1], used))
        return no(`${value} is given a value that may run a program`);
      i += used - 1;
    }
  }
  const patterns = spec.patternsWith?.some((option) =>
    args.some((arg) => arg.kind === "static" && arg.value === option),
  );
  if (!patterns && operands.length > limit)
    return no(limit === 0 ? "an operand" : `more than ${limit} operand${limit === 1 ? "" : "s"}`);
  const output = rule && spec.writesOperand ? operands[spec.writesOperand - 1] : undefined;
  return { ok: true, writes: output ? [...writes, output] : writes };
}

const no = (why: string): WordsVerdict => ({ ok: false, why });

/** The table's options and, under a rule, its `rule` options too. */
function withRule(spec: ReadOnlyProgram): OptionTable {
  const more = spec.rule;
  if (!more) return spec;
  const join = (a?: string, b?: string) => (a ?? "") + (b ?? "");
  const list = (a?: string[], b?: string[]) => [...(a ?? []), ...(b ?? [])];
  return {
    short: join(spec.short, more.short),
    shortValued: join(spec.shortValued, more.shortValued),
    shortOptional: join(spec.shortOptional, more.shortOptional),
    long: list(spec.long, more.long),
    longValued: list(spec.longValued, more.longValued),
    longOptional: list(spec.longOptional, more.longOptional),
    words: list(spec.words, more.words),
    wordsValued: list(spec.wordsValued, more.wordsValued),
    numeric: spec.numeric === true || more.numeric === true,
  };
}

/**
 * The file an option of `spec.writes` names (`-o FILE`, `-oFILE`, `-uo FILE`, `--output=FILE`,
 * `--output FILE`, `-out FILE`), and how many words it took; `undefined` when `value` is no such
 * option. A cluster counts only when the letters before are inert.
 */
function writeOption(
  spec: ReadOnlyProgram,
  table: OptionTable,
  value: string,
  next: Word | undefined,
): { file: Word; used: number } | undefined {
  const writes = spec.writes;
  if (!writes) return undefined;
  const missing: Word = { kind: "dynamic", text: `${value} (its file missing)` };
  if (writes.words?.includes(value)) return { file: next ?? missing, used: 2 };
  if (value.startsWith("--")) {
    const equals = value.indexOf("=");
    const name = equals > 0 ? value.slice(0, equals) : value;
    if (!writes.long?.includes(name)) return undefined;
    if (equals > 0) return { file: { kind: "static", value: value.slice(equals + 1) }, used: 1 };
    return { file: next ?? missing, used: 2 };
  }
  for (let j = 1; j < value.length; j++) {
    const letter = value[j] ?? "";
    if (writes.short?.includes(letter)) {
      const attached = value.slice(j + 1);
      return attached !== ""
        ? { file: { kind: "static", value: attached }, used: 1 }
        : { file: next ?? missing, used: 2 };
    }
    if (!table.short?.includes(letter)) return undefined;
  }
  return undefined;
}

/** The option of `spec.runs` that `value` is or abbreviates (`--compress-prog`), if one. */
function runsOption(spec: ReadOnlyProgram, value: string): string | undefined {
  const runs = spec.runs;
  if (!runs) return undefined;
  if (runs.words?.includes(value)) return value;
  if (value.startsWith("--")) {
    const name = value.split("=")[0] ?? "";
    return runs.long?.find((option) => name.length > 3 && option.startsWith(name));
  }
  const letter = [...value.slice(1)].find((char) => runs.short?.includes(char));
  return letter && `-${letter}`;
}

/** Whether the value the option `option` was given (in its word or the next) passes its check. */
function valueAllowed(
  spec: ReadOnlyProgram,
  option: string,
  next: Word | undefined,
  used: number,
): boolean {
  if (spec.values === undefined || !option.startsWith("--")) return true;
  const equals = option.indexOf("=");
  const name = equals > 0 ? option.slice(0, equals) : option;
  const check = spec.values[name];
  if (check === undefined) return true;
  const value =
    equals > 0
      ? option.slice(equals + 1)
      : used === 2 && next?.kind === "static"
        ? next.value
        : undefined;
  return value === undefined || check(value);
}

/** How many words the option `value` takes (1, or 2 with its value), or 0 when not allowed. */
function optionWords(spec: OptionTable, value: string, next: Word | undefined): number {
  const withValue = next?.kind === "static" ? 2 : 0;
  if (spec.words?.includes(value)) return 1;
  if (spec.wordsValued?.includes(value)) return withValue;
  if (value.startsWith("--")) {
    const equals = value.indexOf("=");
    const name = equals > 0 ? value.slice(0, equals) : value;
    if (equals < 0 && (spec.long?.includes(name) || spec.longOptional?.includes(name))) return 1;
    if (equals > 0 && (spec.longValued?.includes(name) || spec.longOptional?.includes(name)))
      return 1;
    return equals < 0 && spec.longValued?.includes(name) ? withValue : 0;
  }
  if (spec.numeric && /^-\d+$/.test(value)) return 1;
  for (let j = 1; j < value.length; j++) {
    const letter = value[j] ?? "";
    if (spec.shortOptional?.includes(letter)) return 1;
    if (spec.shortValued?.includes(letter)) return j + 1 < value.length ? 1 : withValue;
    if (!spec.short?.includes(letter)) return 0;
  }
  return 1;
}

type Check = (args: string[]) => boolean;

/** `test`'s and `[`'s operators; any other word that starts with `-` asks (`-v` evaluates code). */
const testOperators = new Set([
  ...["-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w"],
  ...["-x", "-G", "-L", "-N", "-O", "-S", "-z", "-n", "-o", "-eq", "-ne", "-lt", "-le", "-gt"],
  ...["-ge", "-nt", "-ot", "-ef", "=", "==", "!=", "<", ">", "!", "(", ")"],
]);

const testWords: Check = (args) =>
  args.every((arg) => testOperators.has(arg) || !arg.startsWith("-"));

/** `find` primaries that only test or print, with how many values each takes. */
export const findPrimaries: Record<string, number> = Object.fromEntries([
  ...[
    ...["-print", "-print0", "-ls", "-prune", "-quit", "-true", "-false", "-empty", "-readable"],
    ...["-writable", "-executable", "-nouser", "-nogroup", "-depth", "-xdev", "-mount"],
    ...["-follow", "-daystart", "-noleaf", "-not", "-a", "-and", "-o", "-or", "!", "(", ")"],
  ].map((primary) => [primary, 0]),
  ...[
    ...["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname"],
    ...["-regex", "-iregex", "-regextype", "-type", "-xtype", "-maxdepth", "-mindepth", "-size"],
    ...["-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-newer", "-anewer", "-cnewer"],
    ...["-used", "-user", "-group", "-uid", "-gid", "-perm", "-links", "-inum", "-samefile"],
    ...["-fstype", "-printf"],
  ].map((primary) => [primary, 1]),
]);

/**
 * `find [-H|-L|-P] [paths] [expression]`, the expression made of the primaries above and
 * `-exec`/`-execdir COMMAND ;` or `… {} +`, whose command the rules follow as a command of its
 * own (it must be allowed by itself). The command ends at the first `;` or `+`, as the rules read
 * it, and a `+` must come right after `{}`, as find reads it. No start point starts with `-`,
 * `(` or `!`, so a found path is never an option.
 */
const findWords: Check = (args) => {
  let i = 0;
  while (/^-[HLP]$/.test(args[i] ?? "")) i++;
  while (i < args.length && !/^[-()!]/.test(args[i] ?? "")) i++;
  while (i < args.length) {
    if (args[i] === "-exec" || args[i] === "-execdir") {
      const end = args.findIndex((arg, j) => j > i && (arg === ";" || arg === "+"));
      if (end < i + 2 || (args[end] === "+" && args[end - 1] !== "{}")) return false;
      i = end + 1;
      continue;
    }
    const arity = findPrimaries[args[i] ?? ""];
    if (arity === undefined || i + arity >= args.length) return false;
    i += 1 + arity;
  }
  return true;
};

/** jq's options: none writes a file; the named ones take one value or two (`--arg NAME VALUE`). */
const jqFlags = new Set([
  ...["--tab", "--args", "--jsonargs", "--seq", "--stream", "--stream-errors", "--slurp"],
  ...["--raw-input", "--null-input", "--compact-output", "--color-output", "--raw-output"],
  ...["--monochrome-output", "--ascii-output", "--sort-keys", "--join-output", "--raw-output0"],
  ...["--exit-status", "--unbuffered"],
]);
const jqValued: Record<string, number> = {
  "--indent": 1,
  "--arg": 2,
  "--argjson": 2,
  "--slurpfile": 2,
  "--rawfile": 2,
};

/**
 * `jq [options] FILTER [files]`: its flags, and the options that read a file or take a value;
 * `more`: options that take values too (under an allow rule, `-f FILE` and `-L DIR`: jq code,
 * which runs no program and writes no file).
 */
export const jqWords = (args: string[], more: Record<string, number> = {}): boolean => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    // jq versions differ on `--`: every word after it is still read as an option could be
    if (arg === "--" || !arg.startsWith("-") || arg === "-") continue;
    const valued = jqValued[arg] ?? more[arg];
    if (valued !== undefined) i += valued;
    else if (!jqFlags.has(arg) && !/^-[ncrjaCMSseRh]+$/.test(arg)) return false;
    if (i >= args.length) return false;
  }
  return true;
};

/** Programs whose words follow a grammar of their own; every word must be fixed text. */
const special: Record<string, Check> = {
  test: testWords,
  "[": testWords,
  find: findWords,
  jq: (args) => jqWords(args),
  awk: awkWords,
  gawk: awkWords,
  mawk: awkWords,
  env: (args) => args.length === 0,
  command: (args) =>
    (args[0] === "-v" || args[0] === "-V") && args.slice(1).every((a) => !a.startsWith("-")),
};

function staticValues(words: Word[]): string[] | undefined {
  const values: string[] = [];
  for (const word of words) {
    if (word.kind === "dynamic") return undefined;
    values.push(word.value);
  }
  return values;
}
