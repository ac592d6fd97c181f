import { gitHidden, gitWithoutOptions, setHidden } from "./git.js";
import { hiddenByVariable, hiddenCode } from "./hidden-code.js";
import { foundPath, type Word } from "./script.js";
import { type WrapperOptions, wrappers } from "./wrapper-table.js";

/** A command that must be allowed: its words, and whether more arguments join at run time (`xargs`). */
export interface Run {
  words: Word[];
  openArgs: boolean;
}

/**
 * What one simple command really runs, seen through the programs that run another program:
 * `runs` are the commands an allow rule (or the read-only set) must cover, after wrappers that do
 * nothing by themselves (`timeout 60 npm test` runs `npm test`); `forms` are every spelling a
 * deny rule is matched against (the command, each wrapper peeled off, a full path's last part,
 * git without its global options); `hidden` says what may run a command no form shows (a shell,
 * `eval`, a program or wrapper option known only at run time); `blocked` says why no rule can
 * allow it although nothing is hidden (`sudo`, `env NAME=…`); `code` is shell code given as a
 * fixed string (`sh -c '…'`, `eval '…'`), which deny rules read as well.
 */
export interface CommandView {
  runs: Run[];
  forms: Word[][];
  hidden: string[];
  blocked: string[];
  code: string[];
}

/** Builtins that change what later commands mean (an alias, a trap, a lookup table). */
const shellChanging = new Set(["alias", "unalias", "shopt", "enable", "trap", "hash"]);

const shells = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash", "busybox"]);

/** Sees through the wrappers of one simple command (its words, without assignments). */
export function viewCommand(words: Word[]): CommandView {
  const view: CommandView = { runs: [], forms: [], hidden: [], blocked: [], code: [] };
  follow(words, false, view);
  return view;
}

/** What `xargs` adds at run time, or find's `{}`: words a deny rule may be looking for. */
const fromInput: Word = { kind: "dynamic", text: "(words from its input)" };

function follow(words: Word[], openArgs: boolean, view: CommandView): void {
  view.forms.push(words);
  // `echo push | xargs git` runs `git push`: the words to come may complete a deny rule.
  if (openArgs) view.forms.push([...words, fromInput]);
  const [program, ...args] = words;
  if (!program) return;
  if (program.kind === "dynamic") {
    view.hidden.push(`the program ${program.text}, known only when the shell runs`);
    view.runs.push({ words, openArgs });
    return;
  }
  const name = program.value.slice(program.value.lastIndexOf("/") + 1);
  if (name !== program.value) {
    view.forms.push([{ kind: "static", value: name }, ...args]);
    if (openArgs) view.forms.push([{ kind: "static", value: name }, ...args, fromInput]);
  }
  const wrapper = wrappers[name];
  if (wrapper && !(name === "command" && isLookup(args))) {
    followWrapper(name, wrapper, words, openArgs, view);
    return;
  }
  view.runs.push({ words, openArgs });
  if (shells.has(name)) shellCode(name, args, view);
  else if (name === "eval") {
    view.hidden.push("eval (it runs text as shell code)");
    if (args.every((arg) => arg.kind === "static"))
      view.code.push(args.map((arg) => (arg.kind === "static" ? arg.value : "")).join(" "));
  } else if (name === "source" || name === ".")
    view.hidden.push(`${name} (it runs the code of a file)`);
  else if (shellChanging.has(name))
    view.hidden.push(`${name} (it changes what later commands mean)`);
  else if (name === "set") {
    const changes = setHidden(args);
    if (changes) view.hidden.push(changes);
  } else if (name === "git") {
    view.forms.push(gitWithoutOptions([{ kind: "static", value: name }, ...args]));
    const runs = gitHidden(args);
    if (runs) view.hidden.push(runs);
  } else if (name === "find") findExec(args, view);
  const code = hiddenCode(name, args);
  if (code) view.hidden.push(code);
}

/** A wrapper's command: its options read, then what it runs followed, or why it cannot be. */
function followWrapper(
  name: string,
  wrapper: WrapperOptions,
  words: Word[],
  openArgs: boolean,
  view: CommandView,
): void {
  const args = words.slice(1);
  const inner = skipOptions(name, args, wrapper, view);
  if (/^(su|runuser)$/.test(name) && args.some((a) => /^(-s|--shell)/.test(textOf(a))))
    view.hidden.push(`${name} -s (it runs the program it names)`);
  const runsShell =
    wrapper.shell || (name === "runuser" && !args.some((a) => /^(-u|--user)/.test(textOf(a))));
  if (runsShell) {
    view.hidden.push(`${name} (it runs a shell, which reads its input)`);
    view.runs.push({ words, openArgs });
    return;
  }
  if (wrapper.notThrough) view.blocked.push(`${name} (${wrapper.notThrough})`);
  if (name === "coproc") view.hidden.push("coproc (the rules do not read what it runs)");
  const first = inner?.[0];
  if (first?.kind === "static" && wrapper.code?.includes(first.value))
    codeOption(name, first.value, inner?.[1], view);
  else if (wrapper.shellString) {
    view.hidden.push(`${name} (it runs its command as shell code)`);
    if (inner?.every((word) => word.kind === "static")) view.code.push(inner.map(textOf).join(" "));
    view.runs.push({ words, openArgs });
  } else if (inner && inner.length > 0) follow(inner, openArgs || name === "xargs", view);
  else view.runs.push({ words, openArgs });
}

const textOf = (word: Word) => (word.kind === "static" ? word.value : word.text);

/** `su -c '…'`, `flock file -c '…'`: shell code the allow rules do not read; deny rules read it. */
function codeOption(name: string, option: string, code: Word | undefined, view: CommandView): void {
  view.hidden.push(`${name} ${option} (it runs shell code the rules do not read)`);
  if (code?.kind === "static") view.code.push(code.value);
  else view.hidden.push(`${name} ${option} given code known only when the shell runs`);
}

/** `command -v NAME` only looks a program up. */
function isLookup(args: Word[]): boolean {
  const first = args[0];
  return first?.kind === "static" && (first.value === "-v" || first.value === "-V");
}

/**
 * The words after a wrapper's options (and its operands, such as `timeout`'s duration), or
 * `undefined` when they cannot be known: a dynamic word, an option the rules do not know.
 * `env`'s assignments and `xargs -I` are recorded as reasons no rule can allow the command.
 */
function skipOptions(
  name: string,
  args: Word[],
  wrapper: WrapperOptions,
  view: CommandView,
): Word[] | undefined {
  let operands = wrapper.operands ?? 0;
  let replace: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg) break;
    if (arg.kind === "dynamic") {
      view.hidden.push(`${name} given ${arg.text}, known only when the shell runs`);
      return undefined;
    }
    const value = arg.value;
    if (value === "--") return skipOperands(args.slice(i + 1), operands);
    if (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
      const variable = value.slice(0, value.indexOf("="));
      view.blocked.push(`env setting ${variable} for the command`);
      const hidden = hiddenByVariable(variable);
      if (hidden) view.hidden.push(hidden);
      continue;
    }
    if (name === "nice" && /^-\d+$/.test(value)) continue;
    const inert = (option: string) => {
      if (!wrapper.inert?.includes(option))
        view.blocked.push(`${name} ${option} (an option the rules do not know to be inert)`);
    };
    if (!value.startsWith("-") || (value === "-" && name !== "env")) {
      const inner = skipOperands(args.slice(i), operands);
      return replace === undefined ? inner : inner?.map((word) => replaced(word, replace ?? ""));
    }
    if (name === "xargs" && (value === "-i" || value.startsWith("--replace"))) {
      replace = value.startsWith("--replace=") ? value.slice("--replace=".length) : "{}";
      continue;
    }
    const [option, attached] = splitOption(value, wrapper.valued);
    if (wrapper.valued.includes(option)) {
      const given = attached ?? args[++i];
      if (given === undefined || (typeof given !== "string" && given.kind === "dynamic")) {
        view.hidden.push(`${name} ${option} given a value known only when the shell runs`);
        return undefined;
      }
      if (name === "xargs" && option === "-I")
        replace = typeof given === "string" ? given : given.value;
      inert(option);
    } else if (wrapper.code?.includes(option)) {
      codeOption(
        name,
        option,
        attached === undefined ? args[++i] : { kind: "static", value: attached },
        view,
      );
    } else if (wrapper.flags.includes(value) || wrapper.more?.includes(value)) inert(value);
    else if (wrapper.pattern?.test(value)) {
      if (!wrapper.patternInert) inert(value);
    } else {
      view.hidden.push(`${name} ${value}, an option the rules do not know`);
      return undefined;
    }
  }
  return [];

  function skipOperands(rest: Word[], count: number): Word[] | undefined {
    for (const operand of rest.slice(0, count)) if (operand.kind === "dynamic") return undefined;
    operands = 0;
    return rest.slice(count);
  }
}

/** `-uNAME`, `--unset=NAME` and `-u NAME` alike: the option, and the value when attached. */
function splitOption(value: string, valued: string[]): [string, string | undefined] {
  const equals = value.indexOf("=");
  if (value.startsWith("--") && equals > 0)
    return [value.slice(0, equals), value.slice(equals + 1)];
  const short = value.slice(0, 2);
  if (!value.startsWith("--") && value.length > 2 && valued.includes(short))
    return [short, value.slice(2)];
  return [value, undefined];
}

/** Under `xargs -I R`, every word holding R is replaced from stdin: known only at run time. */
function replaced(word: Word, replace: string): Word {
  return word.kind === "static" && word.value.includes(replace)
    ? { kind: "dynamic", text: word.value }
    : word;
}

/** `bash -c 'code'` runs code the allow rules do not read; deny rules read a fixed one. */
function shellCode(name: string, args: Word[], view: CommandView): void {
  view.hidden.push(`${name} (it runs shell code the rules do not read)`);
  const flag = args.findIndex((arg) => arg.kind === "static" && /^-[a-z]*c[a-z]*$/.test(arg.value));
  const code = flag >= 0 ? args[flag + 1] : undefined;
  if (code?.kind === "static") view.code.push(code.value);
}

/**
 * The commands `find -exec … ;` (and -execdir, -ok, -okdir) runs, each followed on its own: no
 * words join it but the found paths, each `{}` one (`foundPath`); a word holding `{}` with more
 * is known only at run time.
 */
function findExec(args: Word[], view: CommandView): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg?.kind !== "static" || !/^-(exec|execdir|ok|okdir)$/.test(arg.value)) continue;
    let end = i + 1;
    while (end < args.length) {
      const word = args[end];
      if (word?.kind === "static" && (word.value === ";" || word.value === "+")) break;
      end++;
    }
    // `{}` is a found path, known only at run time (`-name push -exec git {} ;`).
    const command = args
      .slice(i + 1, end)
      .map((word) =>
        word.kind !== "static" || !word.value.includes("{}")
          ? word
          : word.value === "{}"
            ? foundPath
            : fromInput,
      );
    follow(command, false, view);
    i = end;
  }
}
