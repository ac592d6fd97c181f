/**
 * The options a read-only program is allowed with, and how many operands: an allowlist. `short`
 * letters stand alone and bundle (`-la`), `shortValued` take a value (`-n 5`, `-n5`),
 * `shortOptional` take one only in the same word (`-uno`); `long` and `longValued` (`--lines=5`,
 * `--lines 5`) and `longOptional` (`--color`, `--color=never`) are spelled in full. `numeric`
 * allows `-5`. `anyWords`: no word is anything but text to print. `openArgs`: every option the
 * program has only reads, so words `xargs` adds at run time are fine. `values`: an option whose
 * value is allowed only when its check says so (`git log --format`, where `%G…` runs gpg).
 * `patternsWith`: with one of these options the operands are patterns to list, any number
 * (`git tag -l 'v1*'`); without, `operands` holds (`git tag v1` would make a tag).
 */
export interface ReadOnlyProgram {
  short?: string;
  shortValued?: string;
  shortOptional?: string;
  long?: string[];
  longValued?: string[];
  longOptional?: string[];
  numeric?: boolean;
  operands: number;
  anyWords?: boolean;
  openArgs?: boolean;
  values?: Record<string, (value: string) => boolean>;
  patternsWith?: string[];
}
