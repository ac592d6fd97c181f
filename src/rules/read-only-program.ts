/**
 * The options a program is allowed with, and how many operands: an allowlist, one per program,
 * read by the read-only set and by the allow rules alike. `short` letters stand alone and bundle
 * (`-la`), `shortValued` take a value (`-n 5`, `-n5`), `shortOptional` take one only in the same
 * word (`-uno`); `long` and `longValued` (`--lines=5`, `--lines 5`) and `longOptional` (`--color`,
 * `--color=never`) are spelled in full. `numeric` allows `-5`. `anyWords`: no word is anything but
 * text to print. `openArgs`: every option the program has only reads, so words `xargs` adds at
 * run time are fine. `values`: an option whose value is allowed only when its check says so
 * (`git log --format`, where `%G…` runs gpg). `patternsWith`: with one of these options the
 * operands are patterns to list, any number (`git tag -l 'v1*'`); without, `operands` holds (`git
 * tag v1` would make a tag).
 *
 * What an allow rule for the program grants beyond the read-only set (issue 51, item 3): `rule`,
 * more options known to be inert, and more operands (`tail -f`, `git branch NAME`); `writes`,
 * options whose value is a file the program writes (`sort -o`, `git log --output`), granted as a
 * redirect is (inside the workspace, never a protected file); `writesOperand`, the operand (from 1)
 * that is a file it writes (`uniq IN OUT`: 2); `runs`, options that run a program or load code,
 * named so the question can say so (they ask under a plain rule, as every option not listed does).
 */
export interface ReadOnlyProgram extends OptionTable {
  operands: number;
  anyWords?: boolean;
  openArgs?: boolean;
  values?: Record<string, (value: string) => boolean>;
  patternsWith?: string[];
  rule?: OptionTable & { operands?: number };
  writes?: { short?: string; long?: string[]; words?: string[] };
  writesOperand?: number;
  runs?: { short?: string; long?: string[]; words?: string[] };
}

/** Options by kind, as `ReadOnlyProgram` reads them. */
export interface OptionTable {
  short?: string;
  shortValued?: string;
  shortOptional?: string;
  long?: string[];
  longValued?: string[];
  longOptional?: string[];
  /** Options that are whole words with one dash (`-noout`, `-in FILE`: openssl, sqlite3). */
  words?: string[];
  wordsValued?: string[];
  numeric?: boolean;
}
