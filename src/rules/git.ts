import type { Word } from "./script.js";

const textOf = (word: Word) => (word.kind === "static" ? word.value : word.text);

/** git's global options that take the next word as their value. */
const gitValued = new Set([
  "-c",
  "-C",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--exec-path",
  "--super-prefix",
  "--list-cmds",
  "--attr-source",
]);

/** `git -c x=y -C dir push` as a deny rule sees it: `git push`. */
export function gitWithoutOptions(words: Word[]): Word[] {
  return [words[0] as Word, ...words.slice(gitSubcommandAt(words))];
}

/** Where git's subcommand stands in `words` (`git` first), after its global options. */
export function gitSubcommandAt(words: Word[]): number {
  let i = 1;
  while (i < words.length) {
    const word = words[i];
    if (word?.kind !== "static" || !word.value.startsWith("-")) break;
    i += gitValued.has(word.value) ? 2 : 1;
  }
  return i;
}

/**
 * Configuration keys that only change how git shows things: any other key given with `-c` may
 * make git run a program (`core.fsmonitor`, `core.pager`, `diff.external`, `gpg.program`,
 * `core.editor`, `alias.*`…).
 */
const inertKeys =
  /^(color\.[\w.-]+|advice\.[\w-]+|core\.(quotepath|abbrev|autocrlf|safecrlf|filemode)|user\.(name|email)|init\.defaultbranch|safe\.directory|log\.(date|decorate)|diff\.(renames|algorithm)|status\.(short|branch)|column\.ui)=/i;

/** Subcommand options that run a command: `git grep -O`, `git rebase -x`, `git difftool -x`. */
const runningSubcommands: Record<string, RegExp> = {
  grep: /^(-O|--open-files-in-pager|--open)/,
  rebase: /^(-x|--exec|--ex(=|$))/,
  difftool: /^(-x|--extcmd|--ex(=|$))/,
  bisect: /^run$/,
  // the program run on the other side of a local or ssh remote, a command of the caller's
  fetch: /^--upload-pack/,
  pull: /^--upload-pack/,
  "ls-remote": /^(-u|--upload-pack)/,
  clone: /^(-u|--upload-pack|-c|--config|--template)/,
  archive: /^--exec/,
  push: /^(--receive-pack|--exec)/,
  "send-email": /^--(sendmail-cmd|smtp-server|to-cmd|cc-cmd|header-cmd)/,
  submodule: /^foreach$/,
  "filter-branch": /^/,
};

/**
 * Why a git command may run a program a deny rule cannot see, if it may: a `-c` key that is not
 * known to be inert (or known only at run time), `--config-env`, `--exec-path`, or a subcommand
 * option that runs a command.
 */
export function gitHidden(args: Word[]): string | undefined {
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i] as Word;
    const text = textOf(arg);
    if (arg.kind === "dynamic") return `git given ${text}, known only when the shell runs`;
    if (!text.startsWith("-")) break;
    const [option, attached] = text.startsWith("--")
      ? [
          text.split("=")[0] ?? "",
          text.includes("=") ? text.slice(text.indexOf("=") + 1) : undefined,
        ]
      : [text.slice(0, 2), text.length > 2 ? text.slice(2) : undefined];
    if (option === "--config-env" || option === "--exec-path")
      return `git ${option} (it may make git run a program)`;
    if (option === "-c") {
      const value = attached ?? args[++i];
      const key = typeof value === "string" ? value : value?.kind === "static" ? value.value : "";
      if (!inertKeys.test(key))
        return `git -c ${key.split("=")[0]} (it may make git run a program)`;
    } else if (gitValued.has(option) && attached === undefined) i++;
  }
  const sub = args[i];
  const running = sub?.kind === "static" ? runningSubcommands[sub.value] : undefined;
  if (running && args.slice(i + 1).some((arg) => running.test(textOf(arg))))
    return `git ${textOf(sub as Word)} given an option that runs a command`;
  if (sub?.kind === "static" && sub.value === "filter-branch")
    return "git filter-branch (it runs commands)";
  return undefined;
}

/** `set` options that do not change what later words mean (`-k` does: NAME=value words become variables). */
const inertSet =
  /^([-+][euxvfCnbahmBPTE]*o?|--?)$|^(errexit|nounset|xtrace|pipefail|verbose|noglob|noclobber|noexec|notify|allexport|hashall|monitor|braceexpand|physical|functrace|errtrace)$/;

/** Why `set` with these words changes what later commands mean, if it does. */
export function setHidden(args: Word[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const text = textOf(args[i] as Word);
    if (text === "--" || text === "-") return undefined;
    if (!/^[-+]/.test(text)) {
      // after -o/+o comes an option name; else positional parameters begin
      const previous = textOf(args[i - 1] ?? { kind: "static", value: "" });
      if (/^[-+][a-zA-Z]*o$/.test(previous) && !inertSet.test(text))
        return `set -o ${text} (it changes what later commands mean)`;
      if (!/^[-+][a-zA-Z]*o$/.test(previous)) return undefined;
      continue;
    }
    if (args[i]?.kind === "dynamic" || !inertSet.test(text))
      return `set ${text} (it changes what later commands mean)`;
  }
  return undefined;
}
