import type { ReadOnlyProgram } from "./read-only-program.js";

/** git's read-only subcommands: what each shows, with the options vetted for it. */

const any = Number.POSITIVE_INFINITY;

/** Configuration keys `git config --get` may show: no secret and no program in their values. */
export const shownConfigKeys =
  /^(user\.(name|email)|init\.defaultbranch|core\.(bare|filemode|ignorecase|autocrlf|eol|symlinks|quotepath|abbrev|repositoryformatversion|logallrefupdates)|pull\.(rebase|ff)|push\.default|merge\.ff|branch\.[\w./-]+\.(remote|merge|rebase))$/i;

const gitDiff: ReadOnlyProgram = {
  short: "puRawbzWs",
  shortValued: "SG",
  shortOptional: "UMCBl",
  long: [
    ...["--patch", "--no-patch", "--raw", "--patch-with-raw", "--minimal", "--patience"],
    ...["--histogram", "--compact-summary", "--numstat", "--shortstat", "--summary"],
    ...["--name-only", "--name-status", "--check", "--full-index", "--binary", "--no-renames"],
    ...["--text", "--ignore-space-at-eol", "--ignore-space-change", "--ignore-all-space"],
    ...["--ignore-blank-lines", "--ignore-cr-at-eol", "--function-context", "--exit-code"],
    ...["--quiet", "--no-ext-diff", "--no-textconv", "--no-color", "--no-prefix", "--cached"],
    ...["--staged", "--merge-base", "--find-copies-harder", "--pickaxe-all", "--pickaxe-regex"],
  ],
  longOptional: [
    ...["--color", "--word-diff", "--color-words", "--dirstat", "--find-renames", "--stat"],
    ...["--find-copies", "--break-rewrites", "--abbrev", "--relative", "--color-moved"],
  ],
  longValued: ["--diff-algorithm", "--diff-filter", "--unified", "--inter-hunk-context"],
  operands: any,
  writes: { long: ["--output"] },
  runs: { long: ["--ext-diff", "--textconv"] },
};

/**
 * A `--format` or `--pretty` of `git log` that runs nothing: a built-in format, or a format
 * string without `%G` (the signature placeholders verify the signature: they run gpg, or
 * whatever `gpg.program` names). Any other name may be a `pretty.<name>` alias of the config,
 * which can hold `%G`.
 */
const prettyFormat = (value: string) =>
  ["oneline", "short", "medium", "full", "fuller", "reference", "email", "raw", "mboxrd"].includes(
    value,
  ) ||
  (value.includes("%") && !value.includes("%G"));

/** A ref listing's `--format` without the `signature` atoms, which verify signatures: gpg runs. */
const refFormat = (value: string) => !value.includes("%(signature");

const gitLog: ReadOnlyProgram = {
  ...gitDiff,
  values: { "--format": prettyFormat, "--pretty": prettyFormat },
  shortValued: "SGnL",
  numeric: true,
  long: [
    ...(gitDiff.long ?? []),
    ...["--oneline", "--graph", "--all", "--branches", "--tags", "--remotes", "--no-decorate"],
    ...["--abbrev-commit", "--no-abbrev-commit", "--reverse", "--first-parent", "--merges"],
    ...["--no-merges", "--follow", "--topo-order", "--date-order", "--author-date-order"],
    ...["--relative-date", "--left-right", "--cherry-pick", "--cherry-mark", "--boundary"],
    ...["--source", "--full-history", "--ancestry-path", "--no-walk", "--parents"],
    ...["--children", "--no-notes"],
  ],
  longOptional: [...(gitDiff.longOptional ?? []), "--decorate", "--pretty"],
  runs: { long: ["--ext-diff", "--textconv", "--show-signature"] },
  longValued: [
    ...(gitDiff.longValued ?? []),
    ...["--format", "--date", "--since", "--until", "--after", "--before", "--author"],
    ...["--committer", "--grep", "--max-count", "--skip"],
  ],
};

/** The git subcommands of the read-only set, `git` followed by the subcommand at once. */
export const gitPrograms: Record<string, ReadOnlyProgram> = {
  status: {
    short: "sbvz",
    shortOptional: "u",
    long: [
      ...["--short", "--branch", "--long", "--verbose", "--no-renames", "--renames"],
      ...["--show-stash", "--ahead-behind", "--no-ahead-behind", "--no-column"],
    ],
    longOptional: ["--porcelain", "--untracked-files", "--ignored", "--column"],
    operands: any,
  },
  diff: gitDiff,
  log: gitLog,
  show: gitLog,
  // listing only: a name would make a branch, unless --list makes it a pattern (not -l: before
  // git 2.20 it was --create-reflog)
  branch: {
    short: "arvl",
    long: ["--all", "--remotes", "--verbose", "--list", "--show-current", "--no-color"],
    longOptional: ["--color", "--merged", "--no-merged", "--contains", "--no-contains"],
    longValued: ["--sort", "--format", "--points-at"],
    values: { "--format": refFormat },
    operands: 0,
    patternsWith: ["--list"],
    // under a rule: make and delete branches (not -m, -c, -u: they rewrite .git/config; not
    // --edit-description: it runs an editor)
    rule: { short: "dDf", long: ["--delete", "--force"], operands: any },
    runs: { long: ["--edit-description"] },
  },
  // listing only, as branch: not -d, -v (runs gpg), -s, -a, -f, -m
  tag: {
    short: "l",
    shortOptional: "n",
    long: ["--list", "--ignore-case", "--no-column", "--omit-empty"],
    longOptional: ["--color", "--merged", "--no-merged", "--contains", "--no-contains"],
    longValued: ["--sort", "--format", "--points-at"],
    values: { "--format": refFormat },
    operands: 0,
    patternsWith: ["-l", "--list"],
    // under a rule: make and delete tags, with a message given (not -a alone or -e: they run an
    // editor; not -s, -u, -v: they run gpg)
    rule: {
      short: "df",
      shortValued: "mF",
      long: ["--delete", "--force"],
      longValued: ["--message", "--file"],
      operands: any,
    },
    runs: { short: "suve", long: ["--sign", "--local-user", "--verify", "--edit"] },
  },
  // the names of the remotes only: `-v` shows their URLs, which may hold a password
  remote: { operands: 0, rule: { short: "v", long: ["--verbose"] } },
  blame: {
    short: "bltsenfwpc",
    shortValued: "L",
    shortOptional: "MC",
    long: [
      ...["--root", "--show-stats", "--porcelain", "--line-porcelain", "--incremental"],
      ...["--show-name", "--show-number", "--show-email", "--minimal", "--first-parent"],
      ...["--no-progress"],
    ],
    longOptional: ["--abbrev", "--color-lines", "--color-by-age"],
    longValued: ["--date", "--since", "--reverse", "--encoding"],
    operands: any,
  },
  "rev-parse": {
    short: "q",
    long: [
      ...["--show-toplevel", "--git-dir", "--absolute-git-dir", "--git-common-dir", "--verify"],
      ...["--quiet", "--symbolic", "--symbolic-full-name", "--is-inside-work-tree"],
      ...["--is-inside-git-dir", "--is-bare-repository", "--is-shallow-repository"],
      ...["--show-prefix", "--show-cdup", "--show-object-format", "--all", "--not"],
      ...["--show-superproject-working-tree", "--shared-index-path", "--local-env-vars"],
    ],
    longOptional: ["--short", "--abbrev-ref", "--branches", "--tags", "--remotes"],
    longValued: ["--git-path", "--default", "--since", "--until", "--prefix"],
    operands: any,
  },
  "ls-files": {
    short: "cdoisukmztvf",
    shortValued: "xX",
    long: [
      ...["--cached", "--deleted", "--others", "--ignored", "--stage", "--unmerged"],
      ...["--killed", "--modified", "--directory", "--no-empty-directory", "--eol"],
      ...["--full-name", "--error-unmatch", "--exclude-standard", "--deduplicate", "--sparse"],
      ...["--resolve-undo", "--debug"],
    ],
    longOptional: ["--abbrev"],
    longValued: ["--exclude", "--exclude-from", "--exclude-per-directory", "--with-tree"],
    operands: any,
  },
  // not -O/--open-files-in-pager (runs a program), --textconv
  grep: {
    runs: { short: "O", long: ["--open-files-in-pager", "--textconv"] },
    short: "iIvwnhHlLcoqzEGFPaWp",
    shortValued: "efABCm",
    numeric: true,
    long: [
      ...["--cached", "--untracked", "--no-index", "--ignore-case", "--text", "--invert-match"],
      ...["--word-regexp", "--line-number", "--column", "--full-name", "--extended-regexp"],
      ...["--basic-regexp", "--fixed-strings", "--perl-regexp", "--files-with-matches"],
      ...["--name-only", "--files-without-match", "--null", "--count", "--break", "--heading"],
      ...["--show-function", "--function-context", "--all-match", "--quiet", "--and", "--or"],
      ...["--not", "--no-color", "--exclude-standard", "--no-exclude-standard"],
      ...["--only-matching", "--no-textconv"],
    ],
    longOptional: ["--color"],
    longValued: [
      ...["--max-depth", "--context", "--after-context", "--before-context", "--threads"],
      ...["--max-count"],
    ],
    operands: any,
  },
  // not --dirty or --broken: they refresh the index or run another git
  describe: {
    long: [
      ...["--tags", "--all", "--long", "--always", "--exact-match", "--contains"],
      ...["--first-parent", "--debug"],
    ],
    longOptional: ["--abbrev"],
    longValued: ["--candidates", "--match", "--exclude"],
    operands: any,
    // under a rule: they refresh the index or run git again, which changes nothing of the user's
    rule: { longOptional: ["--dirty", "--broken"] },
  },
  shortlog: {
    short: "nsec",
    shortOptional: "w",
    long: [
      ...["--numbered", "--summary", "--email", "--committer", "--all", "--branches", "--tags"],
      ...["--remotes", "--no-merges", "--merges", "--first-parent", "--reverse"],
    ],
    longValued: [
      ...["--group", "--since", "--until", "--after", "--before", "--author", "--grep"],
      ...["--max-count", "--format"],
    ],
    values: { "--format": prettyFormat },
    operands: any,
  },
};
