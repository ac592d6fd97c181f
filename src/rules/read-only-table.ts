import type { ReadOnlyProgram } from "./read-only-program.js";

export type { ReadOnlyProgram };

const any = Number.POSITIVE_INFINITY;

export { gitPrograms } from "./read-only-git.js";

const grep: ReadOnlyProgram = {
  short: "EFGPiyvwxclLoqsbHhnTZzaIrRU",
  shortValued: "efmABCdD",
  numeric: true,
  long: [
    ...["--extended-regexp", "--fixed-strings", "--basic-regexp", "--perl-regexp"],
    ...["--ignore-case", "--no-ignore-case", "--invert-match", "--word-regexp", "--line-regexp"],
    ...["--count", "--files-with-matches", "--files-without-match", "--only-matching"],
    ...["--quiet", "--silent", "--no-messages", "--byte-offset", "--with-filename"],
    ...["--no-filename", "--line-number", "--initial-tab", "--null", "--null-data", "--text"],
    ...["--recursive", "--dereference-recursive", "--line-buffered", "--binary"],
  ],
  longOptional: ["--color", "--colour"],
  longValued: [
    ...["--regexp", "--file", "--max-count", "--after-context", "--before-context"],
    ...["--context", "--include", "--exclude", "--exclude-from", "--exclude-dir", "--label"],
    ...["--directories", "--devices", "--binary-files"],
  ],
  operands: any,
  openArgs: true,
};

const checksum: ReadOnlyProgram = {
  short: "bctwz",
  long: ["--binary", "--check", "--tag", "--text", "--zero", "--ignore-missing", "--quiet"],
  operands: any,
  openArgs: true,
};

/**
 * The read-only set: programs that only read and print, each with the options and operand
 * counts vetted for it (GNU coreutils, grep, ripgrep); allowed without a question when bash runs
 * in the sandbox. Not here, so asking: `sort -o`/`-T`/`--compress-program`, `uniq`'s output
 * operand, `tail -f`, `diff -l` (it runs `pr`), `rg --pre`/`-z` (they run programs), `df
 * --output`, and every option nobody listed.
 */
export const readOnlyPrograms: Record<string, ReadOnlyProgram> = {
  ls: {
    short: "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
    shortValued: "ITw",
    long: [
      ...["--all", "--almost-all", "--author", "--escape", "--ignore-backups", "--directory"],
      ...["--dired", "--classify", "--file-type", "--full-time", "--group-directories-first"],
      ...["--no-group", "--human-readable", "--si", "--dereference-command-line", "--inode"],
      ...["--kibibytes", "--dereference", "--numeric-uid-gid", "--literal", "--reverse"],
      ...["--hide-control-chars", "--show-control-chars", "--quote-name", "--recursive"],
      ...["--size", "--context", "--zero"],
    ],
    longOptional: ["--color", "--hyperlink", "--classify"],
    longValued: [
      ...["--block-size", "--format", "--hide", "--indicator-style", "--ignore"],
      ...["--quoting-style", "--sort", "--time", "--time-style", "--tabsize", "--width"],
    ],
    operands: any,
    openArgs: true,
  },
  cat: {
    short: "AbeEnstTuv",
    long: [
      ...["--show-all", "--number-nonblank", "--show-ends", "--number", "--squeeze-blank"],
      ...["--show-tabs", "--show-nonprinting"],
    ],
    operands: any,
    openArgs: true,
  },
  head: {
    short: "qvz",
    shortValued: "nc",
    numeric: true,
    long: ["--quiet", "--silent", "--verbose", "--zero-terminated"],
    longValued: ["--bytes", "--lines"],
    operands: any,
    openArgs: true,
  },
  tail: {
    short: "qvz",
    shortValued: "nc",
    numeric: true,
    long: ["--quiet", "--silent", "--verbose", "--zero-terminated"],
    longValued: ["--bytes", "--lines"],
    operands: any,
    // under a rule: following a file never ends, but it only reads
    rule: {
      short: "fF",
      long: ["--retry"],
      longOptional: ["--follow"],
      longValued: ["--pid", "--sleep-interval", "--max-unchanged-stats"],
    },
  },
  wc: {
    short: "cmlLw",
    long: ["--bytes", "--chars", "--lines", "--max-line-length", "--words"],
    longValued: ["--files0-from", "--total"],
    operands: any,
    openArgs: true,
  },
  pwd: { short: "LP", operands: 0 },
  echo: { operands: any, anyWords: true },
  true: { operands: any, anyWords: true },
  false: { operands: any, anyWords: true },
  basename: {
    short: "az",
    shortValued: "s",
    long: ["--multiple", "--zero"],
    longValued: ["--suffix"],
    operands: any,
  },
  dirname: { short: "z", long: ["--zero"], operands: any },
  realpath: {
    short: "eLmPqsz",
    long: [
      ...["--canonicalize-existing", "--canonicalize-missing", "--logical", "--physical"],
      ...["--quiet", "--strip", "--no-symlinks", "--zero"],
    ],
    longValued: ["--relative-to", "--relative-base"],
    operands: any,
  },
  readlink: {
    short: "femnqsvz",
    long: [
      ...["--canonicalize", "--canonicalize-existing", "--canonicalize-missing"],
      ...["--no-newline", "--quiet", "--silent", "--verbose", "--zero"],
    ],
    operands: any,
  },
  stat: {
    short: "LfSt",
    shortValued: "c",
    long: ["--dereference", "--file-system", "--terse"],
    longValued: ["--format", "--printf", "--cached"],
    operands: any,
  },
  du: {
    short: "0abcDhHklLmPsSx",
    shortValued: "BdtX",
    long: [
      ...["--null", "--all", "--apparent-size", "--bytes", "--total", "--dereference-args"],
      ...["--human-readable", "--si", "--dereference", "--no-dereference", "--separate-dirs"],
      ...["--summarize", "--one-file-system", "--count-links"],
    ],
    longOptional: ["--time"],
    longValued: [
      ...["--block-size", "--max-depth", "--threshold", "--time-style", "--exclude"],
      ...["--exclude-from", "--files0-from"],
    ],
    operands: any,
  },
  df: {
    short: "ahHiklPT",
    shortValued: "Btx",
    long: [
      ...["--all", "--human-readable", "--si", "--inodes", "--local", "--no-sync", "--sync"],
      ...["--portability", "--print-type", "--total"],
    ],
    longValued: ["--block-size", "--type", "--exclude-type"],
    operands: any,
  },
  which: { short: "a", operands: any },
  whoami: { operands: 0 },
  id: {
    short: "agGnruzZ",
    long: ["--group", "--groups", "--name", "--real", "--user", "--zero", "--context"],
    operands: any,
  },
  uname: {
    short: "asnrvmpio",
    long: [
      ...["--all", "--kernel-name", "--nodename", "--kernel-release", "--kernel-version"],
      ...["--machine", "--processor", "--hardware-platform", "--operating-system"],
    ],
    operands: 0,
  },
  grep,
  egrep: grep,
  fgrep: grep,
  cut: {
    short: "nsz",
    shortValued: "bcfd",
    long: ["--complement", "--only-delimited", "--zero-terminated"],
    longValued: ["--bytes", "--characters", "--fields", "--delimiter", "--output-delimiter"],
    operands: any,
    openArgs: true,
  },
  tr: {
    short: "cCdst",
    long: ["--complement", "--delete", "--squeeze-repeats", "--truncate-set1"],
    operands: 2,
  },
  nl: {
    short: "p",
    shortValued: "bdfhilnsvw",
    long: ["--no-renumber"],
    longValued: [
      ...["--body-numbering", "--section-delimiter", "--footer-numbering"],
      ...["--header-numbering", "--line-increment", "--join-blank-lines", "--number-format"],
      ...["--number-separator", "--starting-line-number", "--number-width"],
    ],
    operands: any,
  },
  rev: { operands: any, openArgs: true },
  tac: {
    short: "br",
    shortValued: "s",
    long: ["--before", "--regex"],
    longValued: ["--separator"],
    operands: any,
  },
  cmp: {
    short: "bls",
    shortValued: "in",
    long: ["--print-bytes", "--verbose", "--quiet", "--silent"],
    longValued: ["--ignore-initial", "--bytes"],
    operands: 4,
  },
  comm: {
    short: "123z",
    long: ["--check-order", "--nocheck-order", "--total", "--zero-terminated"],
    longValued: ["--output-delimiter"],
    operands: 2,
  },
  diff: {
    short: "abBcdeEfHiNnpqrstTuwyZ",
    shortValued: "CUxXSIFDW",
    long: [
      ...["--normal", "--brief", "--report-identical-files", "--ed", "--rcs", "--side-by-side"],
      ...["--left-column", "--suppress-common-lines", "--show-c-function", "--expand-tabs"],
      ...["--initial-tab", "--suppress-blank-empty", "--new-file", "--unidirectional-new-file"],
      ...["--ignore-case", "--ignore-file-name-case", "--no-ignore-file-name-case"],
      ...["--ignore-tab-expansion", "--ignore-trailing-space", "--ignore-space-change"],
      ...["--ignore-all-space", "--ignore-blank-lines", "--text", "--strip-trailing-cr"],
      ...["--recursive", "--minimal", "--speed-large-files"],
    ],
    longOptional: ["--context", "--unified", "--color"],
    longValued: [
      ...["--exclude", "--exclude-from", "--starting-file", "--ignore-matching-lines"],
      ...["--show-function-line", "--ifdef", "--width", "--tabsize", "--label"],
    ],
    operands: 2,
    runs: { short: "l", long: ["--paginate"] },
  },
  md5sum: checksum,
  sha1sum: checksum,
  sha256sum: checksum,
  sha512sum: checksum,
  type: { short: "afptP", operands: any },
  printenv: { short: "0", long: ["--null"], operands: any },
  seq: {
    short: "w",
    shortValued: "fs",
    numeric: true,
    long: ["--equal-width"],
    longValued: ["--format", "--separator"],
    operands: 3,
  },
  sort: {
    short: "bdfgiMhnRrVcCmsuz",
    shortValued: "ktS",
    long: [
      ...["--ignore-leading-blanks", "--dictionary-order", "--ignore-case"],
      ...["--general-numeric-sort", "--ignore-nonprinting", "--month-sort"],
      ...["--human-numeric-sort", "--numeric-sort", "--random-sort", "--reverse"],
      ...["--version-sort", "--merge", "--stable", "--unique", "--zero-terminated"],
    ],
    longOptional: ["--check"],
    longValued: [
      ...["--key", "--field-separator", "--buffer-size", "--parallel", "--sort"],
      ...["--random-source", "--files0-from", "--batch-size"],
    ],
    operands: any,
    // -T: its temporary files go in that folder
    writes: { short: "oT", long: ["--output", "--temporary-directory"] },
    runs: { long: ["--compress-program"] },
  },
  // uniq [INPUT [OUTPUT]]: one operand at most (`-` counts), so never the output file
  uniq: {
    short: "cdDiuz",
    shortValued: "fsw",
    long: ["--count", "--repeated", "--ignore-case", "--unique", "--zero-terminated"],
    longOptional: ["--all-repeated", "--group"],
    longValued: ["--skip-fields", "--skip-chars", "--check-chars"],
    operands: 1,
    rule: { operands: 2 },
    writesOperand: 2,
  },
  // not -z/-Z (may run decompressors), -p (sets the file's access time back), -C (compiles a
  // magic file into the folder)
  file: {
    short: "bchiklLNrs0E",
    shortValued: "Fmf",
    long: [
      ...["--brief", "--mime", "--mime-type", "--mime-encoding", "--dereference"],
      ...["--no-dereference", "--keep-going", "--raw", "--no-pad", "--print0"],
      ...["--special-files", "--extension", "--apple"],
    ],
    longValued: ["--separator", "--magic-file", "--files-from"],
    operands: any,
    runs: { short: "zZ", long: ["--uncompress", "--uncompress-noreport"] },
  },
  // xxd [IN [OUT]]: one operand at most (the second is a file it writes), and not -r
  xxd: {
    short: "abCeEiupd",
    shortValued: "cglosnR",
    operands: 1,
    // -r turns a dump back into bytes: the second operand is the file it writes
    rule: { short: "r", operands: 2 },
    writesOperand: 2,
  },
  od: {
    short: "abcdfilosxv",
    shortValued: "AjNSt",
    shortOptional: "w",
    long: ["--output-duplicates", "--traditional"],
    longOptional: ["--strings", "--width"],
    longValued: ["--address-radix", "--skip-bytes", "--read-bytes", "--format"],
    operands: any,
  },
  hexdump: {
    short: "bcCdovx",
    shortValued: "efns",
    operands: any,
  },
  strings: {
    short: "adfwo",
    shortValued: "nteTs",
    long: ["--all", "--data", "--print-file-name", "--include-all-whitespace"],
    longValued: ["--bytes", "--radix", "--encoding", "--target", "--output-separator"],
    operands: any,
  },
  // not -o (writes its output to a file), -R (writes 00Tree.html in every folder), -H (HTML)
  tree: {
    short: "adlfxqNQpugshDFvtcUrCnAiSXJ",
    shortValued: "LPI",
    long: [
      ...["--noreport", "--dirsfirst", "--filesfirst", "--du", "--si", "--prune", "--matchdirs"],
      ...["--ignore-case", "--gitignore", "--inodes", "--device", "--metafirst", "--nolinks"],
    ],
    longValued: ["--charset", "--filelimit", "--timefmt", "--sort"],
    operands: any,
    // -H prints HTML (to its output, unless -R writes a page in every folder)
    rule: { shortValued: "HT" },
    writes: { short: "o" },
  },
  rg: {
    short: "iSswxvnNlcoFUPHILua0bqp",
    shortValued: "jmABCefgtTMErd",
    long: [
      ...["--ignore-case", "--smart-case", "--case-sensitive", "--word-regexp", "--line-regexp"],
      ...["--invert-match", "--line-number", "--no-line-number", "--files-with-matches"],
      ...["--files-without-match", "--count", "--count-matches", "--only-matching"],
      ...["--fixed-strings", "--multiline", "--multiline-dotall", "--pcre2", "--with-filename"],
      ...["--no-filename", "--no-ignore", "--no-ignore-vcs", "--no-ignore-parent", "--hidden"],
      ...["--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude", "--follow", "--text"],
      ...["--null", "--null-data", "--byte-offset", "--quiet", "--pretty", "--heading"],
      ...["--no-heading", "--column", "--no-column", "--json", "--vimgrep", "--files"],
      ...["--type-list", "--stats", "--trim", "--passthru", "--unrestricted", "--no-messages"],
      ...["--no-config", "--one-file-system", "--line-buffered", "--crlf", "--binary"],
    ],
    longValued: [
      ...["--threads", "--max-count", "--after-context", "--before-context", "--context"],
      ...["--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--type-add"],
      ...["--max-columns", "--encoding", "--replace", "--max-depth", "--max-filesize"],
      ...["--color", "--colors", "--sort", "--sortr", "--engine", "--path-separator"],
    ],
    operands: any,
    runs: { short: "z", long: ["--pre", "--pre-glob", "--hostname-bin", "--search-zip"] },
  },
};
