import type { Word } from "./script.js";

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
  node: /^(-[a-zA-Z]*[ep]|--eval|--print)/,
  nodejs: /^(-[a-zA-Z]*[ep]|--eval|--print)/,
  deno: /^(eval|-e)/,
  bun: /^(-e|--eval|-p|--print)/,
  php: /^-[a-zA-Z]*[rB]/,
  lua: /^-[a-zA-Z]*e/,
  Rscript: /^-e/,
  tclsh: /^-/,
  osascript: /^-e/,
};

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

const textOf = (word: Word) => (word.kind === "static" ? word.value : word.text);

/**
 * Why a command runs code a deny rule cannot read, if it does: an interpreter given program text
 * (`python3 -c`, `perl -e`), an awk program that can run commands, a sed script with its `e`
 * command, or a builtin given a variable name with an array subscript, which bash evaluates as
 * arithmetic, substitutions included, even from a quoted word (`test -v 'a[$(cmd)]'`).
 */
export function hiddenCode(name: string, args: Word[]): string | undefined {
  const texts = args.map(textOf);
  const code = interpreters[name];
  if (code && texts.some((text) => code.test(text)))
    return `${name} given program text (the rules do not read it)`;
  if (awks.has(name)) {
    const runs = args.some(
      (arg) =>
        arg.kind === "dynamic" ||
        /system|\||getline|@/.test(arg.value) ||
        /^-(-?[fEil]|-exec|-include|-load|-file)/.test(arg.value),
    );
    if (runs) return `${name} with a program that may run commands`;
  }
  if (name === "sed") {
    const runs = args.some(
      (arg) =>
        arg.kind === "dynamic" ||
        /^-(-?f|-file|[a-zA-Z]*f)/.test(arg.value) ||
        (!arg.value.startsWith("-") && /([;{}\n!\d$/,]\s*|^\s*)e|\/[a-zA-Z0-9]*e/.test(arg.value)),
    );
    if (runs) return "sed with a script that may run commands (its e command)";
  }
  // the grammar may split such a word in two (`a[\$\(cmd\ x\)]`): read the words together
  const dynamicSubscript = args.some((arg) => arg.kind === "dynamic" && arg.text.includes("["));
  if (namingBuiltins.has(name) && (dynamicSubscript || /\[[\s\S]*[$`]/.test(texts.join(" "))))
    return `${name} given a name with an array subscript, which bash evaluates`;
  return undefined;
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
