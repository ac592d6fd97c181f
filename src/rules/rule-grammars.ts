import { awkWords } from "./awk-program.js";
import { findPrimaries, jqWords, readWords, sedOptions, type WordsVerdict } from "./read-only.js";
import type { ReadOnlyProgram } from "./read-only-program.js";
import { ruleOnlyPrograms } from "./rule-table.js";
import type { Word } from "./script.js";
import { sedEffect } from "./sed-script.js";

/**
 * What an allow rule grants of the programs whose words follow a grammar of their own (sed's
 * scripts, find's expression, awk's and jq's programs, git config, sqlite3's SQL and dot
 * commands, tmux's commands, tar's old-style options): the same answer as `readWords`, the files
 * written or why not. A positive model each: what is known inert passes, anything else asks.
 */

const no = (why: string): WordsVerdict => ({ ok: false, why });
const ok = (writes: Word[] = []): WordsVerdict => ({ ok: true, writes });
const statics = (args: Word[]): string[] | undefined =>
  args.every((arg) => arg.kind === "static")
    ? args.map((arg) => (arg.kind === "static" ? arg.value : ""))
    : undefined;
const runTime = "a word known only when the shell runs, where the rules must read the command";

/** sed's options under a rule: the read-only ones, `-i` (the files become writes), `-b`. */
const sedRuleOptions: ReadOnlyProgram = {
  ...sedOptions,
  rule: { short: "b", shortOptional: "i", long: ["--follow-symlinks", "--binary"] },
  // the script in a file is not read
  runs: { short: "f", long: ["--file"] },
};

/**
 * sed under a rule: options known, every script (each `-e`, else the first operand) fixed text
 * with no `e` (it runs a command) and no `w` (it writes a file the rules do not place); with
 * `-i` its files are writes.
 */
export function sedUnderRule(args: Word[], said: number): WordsVerdict {
  const options = readWords(sedRuleOptions, args, { said });
  if (!options.ok) return options;
  const scripts: Word[] = [];
  const operands: Word[] = [];
  let inPlace = false;
  let afterDashes = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as Word;
    const text = arg.kind === "static" ? arg.value : undefined;
    if (afterDashes || text === undefined || text === "-" || !text.startsWith("-")) {
      operands.push(arg);
      continue;
    }
    if (text === "--") afterDashes = true;
    else if (text.startsWith("--expression="))
      scripts.push({ kind: "static", value: text.slice("--expression=".length) });
    else if (text === "--expression" || text === "--line-length") {
      if (text === "--expression" && args[i + 1]) scripts.push(args[i + 1] as Word);
      i++;
    } else if (text.startsWith("--in-place")) inPlace = true;
    else if (!text.startsWith("--"))
      for (let j = 1; j < text.length; j++) {
        const letter = text[j];
        // -i takes the rest of its word as a suffix (`-ie` keeps backups ending in e)
        if (letter === "i") {
          inPlace = true;
          break;
        }
        if (letter === "e" || letter === "l") {
          const attached = text.slice(j + 1);
          const value: Word | undefined =
            attached !== "" ? { kind: "static", value: attached } : args[++i];
          if (letter === "e" && value) scripts.push(value);
          break;
        }
      }
  }
  if (scripts.length === 0 && operands[0]) scripts.push(operands.shift() as Word);
  for (const script of scripts) {
    if (script.kind !== "static") return no(`a sed script known only when the shell runs`);
    const effect = sedEffect(script.value);
    if (effect === "runs") return no("a sed script that may run a command (its e command)");
    if (effect === "writes")
      return no("a sed script that writes a file the rules do not place (its w command)");
  }
  return ok(inPlace ? operands : []);
}

/**
 * find under a rule: start points, then the read-only set's tests and actions, `-exec`,
 * `-execdir`, `-ok`, `-okdir` (the command is a run of its own, which must be allowed by itself)
 * and `-fprint`, `-fprint0`, `-fprintf`, `-fls` (their file is a write). Not `-delete`.
 */
export function findUnderRule(args: Word[]): WordsVerdict {
  const text = (i: number) => {
    const word = args[i];
    return word?.kind === "static" ? word.value : undefined;
  };
  const writes: Word[] = [];
  let i = 0;
  while (/^-[HLP]$/.test(text(i) ?? "")) i++;
  while (i < args.length && !/^[-()!]/.test(text(i) ?? "x")) i++;
  while (i < args.length) {
    const primary = text(i);
    if (primary === undefined) return no(runTime);
    if (/^-(exec|execdir|ok|okdir)$/.test(primary)) {
      const end = args.findIndex((_, j) => j > i && (text(j) === ";" || text(j) === "+"));
      if (end < i + 2) return no(`${primary} without its end`);
      i = end + 1;
      continue;
    }
    if (primary === "-delete") return no("-delete removes what it finds");
    const writing = { "-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2 }[primary];
    if (writing !== undefined) {
      const file = args[i + 1];
      if (!file || i + writing >= args.length) return no(`${primary} without its file`);
      writes.push(file);
      i += 1 + writing;
      continue;
    }
    const arity = findPrimaries[primary];
    if (arity === undefined) return no(`${primary} is not a test or action known to be inert`);
    if (i + arity >= args.length) return no(`${primary} without its value`);
    i += 1 + arity;
  }
  return ok(writes);
}

export function awkUnderRule(args: Word[]): WordsVerdict {
  const fixed = statics(args);
  return fixed && awkWords(fixed)
    ? ok()
    : no("an awk program that may run a command or write a file (only printing is known)");
}

export function jqUnderRule(args: Word[]): WordsVerdict {
  const fixed = statics(args);
  return fixed && jqWords(fixed, { "-f": 1, "--from-file": 1, "-L": 1 })
    ? ok()
    : no("a jq option not known to be inert");
}

/** git config's options that read: a rule for it grants showing, never setting. */
const configReading = new Set(
  ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l"].concat([
    "--get-color",
    "--get-colorbool",
  ]),
);
const configInert = new Set([
  ...["--show-origin", "--show-scope", "--name-only", "-z", "--null", "--local", "--global"],
  ...["--system", "--worktree", "--includes", "--no-includes", "--bool", "--int", "--path"],
  ...["--bool-or-int", "--expiry-date", "--all", "--regexp"],
]);
const configValued = new Set(["--type", "--default", "-f", "--file", "--blob", "--value", "--url"]);

/**
 * git config under a rule: only the forms that show (`--get`, `--get-all`, `--get-regexp`,
 * `--list`, `get`, `list`); any form that sets, unsets or edits writes git's configuration, a
 * protected file (or one outside the workspace), and `-e` runs an editor.
 */
export function gitConfigUnderRule(args: Word[]): WordsVerdict {
  const fixed = statics(args);
  if (!fixed) return no(runTime);
  let reading = fixed.find((word) => !word.startsWith("-")) === "get";
  reading ||= fixed.find((word) => !word.startsWith("-")) === "list";
  for (let i = 0; i < fixed.length; i++) {
    const word = fixed[i] ?? "";
    if (!word.startsWith("-")) continue;
    const name = word.split("=")[0] ?? "";
    if (configReading.has(name)) reading = true;
    else if (configValued.has(name)) i += word.includes("=") ? 0 : 1;
    else if (!configInert.has(name))
      return no(
        /^(-e|--edit)$/.test(name)
          ? `${name} runs an editor`
          : `${name} changes git's configuration, a protected file`,
      );
  }
  return reading
    ? ok()
    : no("git config that sets a value writes git's configuration, a protected file");
}

const sqliteInert = new Set([
  ...["-bail", "-batch", "-box", "-column", "-csv", "-echo", "-header", "-noheader", "-html"],
  ...["-json", "-line", "-list", "-markdown", "-quote", "-table", "-tabs", "-readonly", "-safe"],
  ...["-stats", "-ascii", "-nofollow", "-version", "-help", "-memtrace"],
]);
const sqliteValued = new Set(["-nullvalue", "-separator", "-newline"]);
/** Dot commands that only show or set how results are shown. */
const sqliteDots = new Set([
  ...["tables", "schema", "indexes", "indices", "headers", "header", "mode", "databases"],
  ...["dbinfo", "dump", "fullschema", "help", "show", "width", "separator", "nullvalue"],
  ...["print", "timer", "changes", "echo", "eqp", "explain", "stats", "bail", "version", "quit"],
  ...["exit"],
]);
/** SQL that can write a file of its choosing or load code, in the sqlite3 program. */
const sqliteGuarded =
  /attach|vacuum|load_extension|writefile|\bedit\b|fts3_tokenizer|zipfile|readfile/i;

/**
 * `sqlite3 [options] DATABASE SQL…` under a rule: the database is a file it writes; each SQL
 * word is SQL without what writes a file of its choosing or loads code (`ATTACH`, `VACUUM INTO`,
 * `load_extension`, `writefile`, `edit`), or a dot command that only shows (`.tables`,
 * `.schema`, `.mode`…; not `.shell`, `.system`, `.output`, `.once`, `.load`, `.read`, `.backup`).
 * With no SQL it reads its commands from its input, which the rules do not see.
 */
export function sqliteUnderRule(args: Word[]): WordsVerdict {
  const fixed = statics(args);
  if (!fixed) return no(runTime);
  const operands: string[] = [];
  let info = false;
  for (let i = 0; i < fixed.length; i++) {
    const word = fixed[i] ?? "";
    if (!word.startsWith("-") || word === "-") {
      operands.push(word);
      continue;
    }
    const name = word.replace(/^--/, "-");
    if (name === "-version" || name === "-help") info = true;
    if (sqliteValued.has(name)) i++;
    else if (name === "-cmd" || name === "-init")
      return no(`${word} runs commands the rules do not read`);
    else if (!sqliteInert.has(name)) return no(`${word} is not an option known to be inert`);
  }
  const [database, ...commands] = operands;
  if (database === undefined && info) return ok();
  if (database === undefined || commands.length === 0)
    return no("sqlite3 with no SQL reads its commands from its input");
  if (/^file:/i.test(database)) return no("a database named by a URI");
  for (const command of commands) {
    const dot = /^\s*\.(\w*)/.exec(command)?.[1];
    if (dot !== undefined && !sqliteDots.has(dot))
      return no(`.${dot} is not a dot command known to be inert`);
    if (dot === undefined && sqliteGuarded.test(command))
      return no("SQL that may write a file of its choosing or load code");
  }
  return ok(
    database === ":memory:" || database === "" ? [] : [{ kind: "static", value: database }],
  );
}

/** tmux commands that list, show, select or end what is there; they start no program. */
const tmuxInert = new Set([
  ...["list-sessions", "ls", "list-windows", "lsw", "list-panes", "lsp", "list-clients", "lsc"],
  ...["list-buffers", "lsb", "list-keys", "lsk", "list-commands", "lscm", "has-session", "has"],
  ...["capture-pane", "capturep", "show-options", "show", "show-window-options", "showw"],
  ...["show-buffer", "showb", "show-environment", "showenv", "show-messages", "showmsgs"],
  ...["display-message", "display", "kill-session", "kill-server", "kill-window", "killw"],
  ...["kill-pane", "killp", "select-window", "selectw", "select-pane", "selectp"],
  ...["rename-session", "rename", "rename-window", "renamew", "resize-pane", "resizep"],
  ...["detach-client", "detach", "clear-history", "clearhist"],
]);

/**
 * tmux under a rule: `-2`, `-u`, `-L NAME`, then commands (split at `;`) that list, show, select
 * or end (`ls`, `capture-pane`, `kill-session`…), with no format that runs a command (`#(…)`).
 * With no command it starts a session (a shell); `new`, `neww`, `split-window`, `run-shell`,
 * `send-keys`, `source-file` and `-f`, `-c` run programs.
 */
export function tmuxUnderRule(args: Word[]): WordsVerdict {
  const fixed = statics(args);
  if (!fixed) return no(runTime);
  let i = 0;
  for (; i < fixed.length && fixed[i]?.startsWith("-"); i++) {
    const word = fixed[i] ?? "";
    if (word === "-L") i++;
    else if (!/^-[2uV]+$/.test(word)) return no(`tmux ${word} is not an option known to be inert`);
  }
  if (i >= fixed.length) return no("tmux with no command starts a session, which runs a shell");
  let start = true;
  for (const word of fixed.slice(i)) {
    if (word === ";") {
      start = true;
      continue;
    }
    if (word.includes(";")) return no("a tmux word that may end a command");
    if (word.includes("#(")) return no("a tmux format with #(…), which runs a command");
    if (start && !tmuxInert.has(word))
      return no(`tmux ${word} may start a program (only listing, showing and ending are known)`);
    start = false;
  }
  return ok();
}

/** screen under a rule: its table (`-ls`, `-v`, `-wipe`); with no option it starts a shell. */
export function screenUnderRule(args: Word[], said: number): WordsVerdict {
  if (args.length === 0) return no("screen with no option starts a session, which runs a shell");
  return readWords(ruleOnlyPrograms.screen as ReadOnlyProgram, args, { said });
}

const tar = ruleOnlyPrograms.tar as ReadOnlyProgram;
/** tar when it reads an archive: `-f` names a file it reads, not one it writes. */
const tarReading: ReadOnlyProgram = {
  ...tar,
  shortValued: `${tar.shortValued ?? ""}f`,
  longValued: [...(tar.longValued ?? []), "--file"],
  writes: { short: "Cg", long: (tar.writes?.long ?? []).filter((option) => option !== "--file") },
};
const tarMaking = /^--(create|append|update|catenate|concatenate|delete)$|^-[a-zA-Z]*[cruA]/;

/**
 * tar under a rule: its table (`rule-table.ts`), with an old-style first word (`tar czf x.tgz`)
 * read as options; `-f` is a write when it makes or changes an archive, and never `HOST:FILE`,
 * which tar opens through a remote shell.
 */
export function tarUnderRule(args: Word[], said: number): WordsVerdict {
  const [first, ...rest] = args;
  let words = args;
  if (first?.kind === "static" && /^[A-Za-z]+$/.test(first.value)) {
    const valued = [...first.value].filter((letter) => "fCgbHNTXLVKIF".includes(letter));
    if (valued.length > 1 || (valued.length === 1 && !first.value.endsWith(valued[0] ?? "")))
      return no("an old-style tar word with more than one value");
    words = [{ kind: "static", value: `-${first.value}` }, ...rest];
  }
  const making = words.some((word) => word.kind === "static" && tarMaking.test(word.value));
  const archive = tarArchive(words);
  if (
    archive?.kind === "static" &&
    /^[^/]*:/.test(archive.value) &&
    !hasWord(words, "--force-local")
  )
    return no("tar opens HOST:FILE through a remote shell");
  return readWords(making ? tar : tarReading, words, { said });
}

const hasWord = (words: Word[], text: string) =>
  words.some((word) => word.kind === "static" && word.value === text);

/** The archive tar's `-f` or `--file` names, if one does. */
function tarArchive(words: Word[]): Word | undefined {
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (word?.kind !== "static") continue;
    if (word.value.startsWith("--file=")) return { kind: "static", value: word.value.slice(7) };
    if (word.value === "--file") return words[i + 1];
    const short = /^-[a-zA-Z]*f(.*)$/.exec(word.value);
    if (short && !word.value.startsWith("--"))
      return short[1] !== "" ? { kind: "static", value: short[1] ?? "" } : words[i + 1];
  }
  return undefined;
}
