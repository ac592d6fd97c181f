import { awkWords } from "./awk-program.js";
import { foundPath, type Word } from "./script.js";
import { sedMayRun } from "./sed-script.js";

/**
 * Programs that run code given as text, a language other than the shell: the rules cannot read
 * it, so a deny rule cannot tell what it runs. Each names the options that take program text.
 */
const interpreters: Record<string, RegExp> = {
  python: /^-[a-zA-Z]*c/,
  python2: /^-[a-zA-Z]*c/,
  python3: /^-[a-zA-Z]*c/,
  perl: /^-[a-zA-Z]*[eE]/,
  ruby: /^-[a-zA-Z]*e/,
  node: /^(-[a-zA-Z]*[ep]|--eval|--print)|data:/,
  nodejs: /^(-[a-zA-Z]*[ep]|--eval|--print)|data:/,
  deno: /^(eval|-e)|data:/,
  bun: /^(-e|--eval|-p|--print)|data:/,
  php: /^-[a-zA-Z]*[rBRE]/,
  lua: /^-[a-zA-Z]*e/,
  Rscript: /^-e/,
  tclsh: /^-/,
  wish: /^-/,
  osascript: /^-e/,
  expect: /^-[a-zA-Z]*c/,
};

/**
 * How an interpreter names its program file: options that stand alone (`flags`) and options that
 * take the next word (`valued`). With no file, or `-`, or a path of its standard input, it reads
 * its program from its input (`python3 <<< …`, `… | perl`). An option not listed may take the
 * next word, which is then not counted as the file.
 */
const programFiles: Record<string, { flags: RegExp; valued: string[] }> = {
  python: { flags: /^-[bBdEhiIOqsSuvVxRP]+$|^--(version|help)$/, valued: ["-W", "-X", "-Q"] },
  perl: { flags: /^-([acnpsStTuUvwWl0-9]+|[IMmx].+|i.*|C\d*|d)$/, valued: [] },
  ruby: {
    flags: /^-[acdlnpsSvwWyU]+$|^--(version|help|disable-\S+|enable-\S+)$/,
    valued: ["-I", "-r", "-C", "-E", "-x"],
  },
  node: {
    flags:
      /^--[a-z][a-z0-9-]*=|^--(no-warnings|no-deprecation|trace-warnings|enable-source-maps|expose-gc|inspect|inspect-brk|experimental-[a-z-]+|harmony|preserve-symlinks|frozen-intrinsics|abort-on-uncaught-exception)$/,
    valued: [
      "-r",
      "--require",
      "--import",
      "--loader",
      "--experimental-loader",
      "-C",
      "--conditions",
      "--title",
      "--input-type",
      "--env-file",
    ],
  },
  php: { flags: /^-[aCHhinqsvw]+$/, valued: ["-c", "-d", "-z"] },
  lua: { flags: /^-[iEvW]+$/, valued: ["-l"] },
  tclsh: { flags: /^$/, valued: ["-encoding"] },
  wish: { flags: /^$/, valued: ["-encoding"] },
  Rscript: { flags: /^--[a-z-]+(=.*)?$/, valued: [] },
};
const interpreterFiles: Record<string, string> = {
  python2: "python",
  python3: "python",
  nodejs: "node",
  bun: "node",
};

/** `-`, `/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`: a file name that is the standard input. */
const stdinPath = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/(self|thread-self|\d+)\/fd\/\d+)$/;

/** True when the interpreter reads its program from its input: no file named, or stdin named. */
function programOnStdin(name: string, texts: string[]): boolean {
  const table = programFiles[interpreterFiles[name] ?? name];
  if (!table) return false;
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i] ?? "";
    if (stdinPath.test(text)) return true;
    if (/^(--version|--help|-V|-h)$/.test(text)) return false;
    if (!text.startsWith("-")) return false;
    if (text === "--") return stdinPath.test(texts[i + 1] ?? "-");
    if (text === "-m") return false;
    if (!table.flags.test(text)) i++;
  }
  return true;
}

const awks = new Set(["awk", "gawk", "mawk", "nawk"]);

/** Builtins that assign to, or look up, a variable named by a plain word (an array element too). */
const namingBuiltins = new Set([
  "test",
  "[",
  "printf",
  "read",
  "unset",
  "let",
  "mapfile",
  "readarray",
  "wait",
  "getopts",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
]);

/** A short option (alone or in a bundle, `-xIf`) whose letter is one of `letters`. */
const short = (letters: string) => new RegExp(`^-[a-zA-Z0-9]*[${letters}]`);
/** One of `names` or its abbreviation (`--to-c` for `--to-command`), alone or `=value`. */
const long =
  (...names: string[]) =>
  (text: string) => {
    const name = text.split("=")[0] ?? "";
    return name.length > 3 && names.some((option) => option.startsWith(name));
  };
const vimFamily = (text: string) => /^(\+|-[a-zA-Z]*[cSsuU]|--cmd)/.test(text);

/**
 * Options with which a program runs a command or program text of the caller's choosing:
 * `tar --to-command`, `rsync -e`, `ssh -o ProxyCommand=`, `man -P`, `less +!…`, `vim -c`,
 * `compgen -C`, `mapfile -C`, `make --eval`.
 */
const runningOptions: Record<string, (text: string, first: boolean) => boolean> = {
  tar: (text, first) =>
    short("IF").test(text) ||
    (first && /^[a-zA-Z]*[IF]/.test(text)) ||
    long("--to-command", "--checkpoint-action", "--use-compress-program", "--info-script")(text) ||
    long("--new-volume-script", "--rsh-command", "--rmt-command")(text),
  zip: (text) => /^-[a-zA-Z]*TT/.test(text) || long("--unzip-command")(text),
  rsync: (text) => short("e").test(text) || long("--rsh", "--rsync-path")(text),
  ssh: (text) => short("oF").test(text),
  scp: (text) => short("oFS").test(text),
  sftp: (text) => short("oFSD").test(text),
  man: (text) => short("PH").test(text) || long("--pager", "--html")(text),
  less: (text) => /^(\+|-[a-zA-Z]*k|--lesskey)/.test(text),
  more: (text) => text.startsWith("+"),
  vi: vimFamily,
  vim: vimFamily,
  nvim: vimFamily,
  view: vimFamily,
  vimdiff: vimFamily,
  ex: vimFamily,
  emacs: (text) =>
    /^(-l|-f|-batch|--batch|--script|-x)$/.test(text) ||
    long("--eval", "--load", "--funcall")(text),
  compgen: (text) => short("CFW").test(text),
  complete: (text) => short("CF").test(text),
  mapfile: (text) => short("C").test(text),
  readarray: (text) => short("C").test(text),
  make: (text) => short("E").test(text) || long("--eval")(text),
  rg: (text) => long("--pre", "--pre-glob", "--hostname-bin")(text),
  gdb: (text) => /^--?(ex|iex|x|ix|eval-command|init-eval-command|command)(=|$)/.test(text),
};

/** Programs that run shell code from their input or a file: the rules read neither. */
const inputShells = new Set(["at", "batch"]);

const textOf = (word: Word) => (word.kind === "static" ? word.value : word.text);

/**
 * Why a command runs code a deny rule cannot read, if it does: an interpreter given program text
 * (`python3 -c`, `perl -e`, `node --import=data:…`) or reading it from its input, an awk program
 * that can run commands, a sed script with its `e` command, an option that runs a program
 * (`tar --to-command`), `make -f /dev/stdin`, or a builtin given a variable name with an array
 * subscript, which bash evaluates as arithmetic, substitutions included, even from a quoted word
 * (`test -v 'a[$(cmd)]'`).
 */
export function hiddenCode(name: string, args: Word[]): string | undefined {
  const texts = args.map(textOf);
  const code = interpreters[name];
  if (code && texts.some((text) => code.test(text)))
    return `${name} given program text (the rules do not read it)`;
  if (name === "let") return "let (it evaluates arithmetic, which runs code a variable may hold)";
  if (programOnStdin(name, texts)) return `${name} reading its program from its input`;
  if (inputShells.has(name)) return `${name} (it runs shell code from its input or a file)`;
  const running = runningOptions[name];
  if (running && texts.some((text, i) => running(text, i === 0)))
    return `${name} given an option that runs a command`;
  if (name === "make" && makefileOnStdin(texts)) return "make reading its makefile from its input";
  if (awks.has(name) && !printsOnly(args)) {
    const runs = args.some(
      (arg) =>
        arg.kind === "dynamic" ||
        /system|\||getline|@/.test(arg.value) ||
        /^-(-?[fEil]|-exec|-include|-load|-file)/.test(arg.value),
    );
    if (runs) return `${name} with a program that may run commands`;
  }
  if (name === "sed" && sedRuns(args))
    return "sed with a script that may run commands (its e command)";
  // the grammar may split such a word in two (`a[\$\(cmd\ x\)]`): read the words together
  const dynamicSubscript = args.some((arg) => arg.kind === "dynamic" && arg.text.includes("["));
  // any subscript: bash evaluates it as arithmetic, and a name in it (`a[_]`) evaluates its value
  if (namingBuiltins.has(name) && (dynamicSubscript || texts.some((text) => text.includes("["))))
    return `${name} given a name with an array subscript, which bash evaluates`;
  return undefined;
}

/** An awk command whose every word is fixed text and whose program only prints. */
function printsOnly(args: Word[]): boolean {
  return args.every((arg) => arg.kind === "static") && awkWords(args.map(textOf));
}

function makefileOnStdin(texts: string[]): boolean {
  return texts.some((text, i) => {
    const value = /^(-f|--file|--makefile)$/.test(text)
      ? texts[i + 1]
      : /^(-f|--file=|--makefile=)(.+)$/.exec(text)?.[2];
    return value !== undefined && stdinPath.test(value);
  });
}

/**
 * Whether sed may run a command: a script known only at run time or in a file (`-f`), an option
 * the rules do not know, or a script (each `-e`, `--expression`, else the first operand) with its
 * `e` command.
 */
function sedRuns(args: Word[]): boolean {
  const scripts: string[] = [];
  let named = false;
  let operand: string | undefined;
  // a path `find -exec` gives is a file, unless it comes first and no -e names the script
  let foundFirst = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as Word;
    if (arg === foundPath) {
      foundFirst ||= operand === undefined;
      operand ??= "";
      continue;
    }
    if (arg.kind === "dynamic") return true;
    const value = arg.value;
    if (value === "--" || !value.startsWith("-") || value === "-") {
      operand ??= value === "--" ? textOf(args[i + 1] ?? arg) : value;
      if (value === "--") break;
      continue;
    }
    if (/^--(expression|file)(=|$)/.test(value)) {
      if (value.startsWith("--file")) return true;
      const script = value.includes("=") ? value.slice(value.indexOf("=") + 1) : args[++i];
      if (script === undefined) return true;
      scripts.push(typeof script === "string" ? script : textOf(script));
      named = true;
      continue;
    }
    if (
      /^--(posix|debug|sandbox|quiet|silent|regexp-extended|separate|unbuffered|null-data|follow-symlinks|binary|in-place(=.*)?|line-length=\d+)$/.test(
        value,
      )
    )
      continue;
    if (value.startsWith("--")) return true;
    for (let j = 1; j < value.length; j++) {
      const letter = value[j] ?? "";
      if ("nErsuzb".includes(letter)) continue;
      if (letter === "i") break;
      if (letter === "f") return true;
      if (letter === "l" || letter === "e") {
        const rest = value.slice(j + 1);
        const given = rest !== "" ? rest : textOf(args[++i] ?? { kind: "dynamic", text: "" });
        if (letter === "e") {
          scripts.push(given);
          named = true;
        }
        break;
      }
      return true;
    }
  }
  if (!named && foundFirst) return true;
  if (!named && operand !== undefined) scripts.push(operand);
  return scripts.some(sedMayRun);
}

/**
 * Variables that make a program run a command of their choosing: git's configuration
 * (`GIT_CONFIG_*` can define an alias), pagers, editors, `BASH_ENV`, `LD_PRELOAD`, `PATH`.
 */
const commandVariables =
  /^(GIT_\w*|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|BASH_ENV|ENV|LD_\w+|PATH|SHELL|PROMPT_COMMAND|\w*ASKPASS|BROWSER)$/;

/** Why setting `name` for a command may run code a deny rule cannot read, if it may. */
export function hiddenByVariable(name: string): string | undefined {
  return commandVariables.test(name)
    ? `${name} set for the command (it may make the command run another)`
    : undefined;
}
