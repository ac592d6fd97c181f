import type { ReadOnlyProgram } from "./read-only-program.js";

/**
 * Programs outside the read-only set that an allow rule grants only with the options known to be
 * inert (issue 51, item 3): the same model as the read-only set's tables (`ReadOnlyProgram`), in
 * which every option listed is inert, `writes` name a file written (granted as a redirect is) and
 * `runs` run a program or load code. Any option not listed asks under a plain rule; `PROGRAM ...`
 * grants every one. sqlite3, tmux and the programs with a grammar of their own are read in
 * `granted.ts`.
 */

const any = Number.POSITIVE_INFINITY;

export const ruleOnlyPrograms: Record<string, ReadOnlyProgram> = {
  fd: {
    short: "HIusiFaLlp01qg",
    shortValued: "dteEScoj",
    long: [
      ...["--hidden", "--no-hidden", "--no-ignore", "--ignore", "--no-ignore-vcs", "--ignore-vcs"],
      ...["--no-ignore-parent", "--unrestricted", "--case-sensitive", "--ignore-case", "--glob"],
      ...["--regex", "--fixed-strings", "--absolute-path", "--relative-path", "--list-details"],
      ...["--follow", "--no-follow", "--full-path", "--print0", "--quiet", "--show-errors"],
      ...["--one-file-system", "--prune", "--no-require-git", "--require-git"],
    ],
    longOptional: ["--strip-cwd-prefix", "--hyperlink"],
    longValued: [
      ...["--max-depth", "--min-depth", "--exact-depth", "--type", "--extension", "--exclude"],
      ...["--size", "--changed-within", "--changed-before", "--newer", "--older", "--owner"],
      ...["--threads", "--max-results", "--base-directory", "--path-separator", "--search-path"],
      ...["--ignore-file", "--color", "--format", "--and", "--batch-size"],
    ],
    operands: any,
    runs: { short: "xX", long: ["--exec", "--exec-batch"] },
  },
  // -f is the key file: a key made is written there (a fingerprint read from it asks too when it
  // lies outside the workspace). Not -D or -w (they load a library), -O, -K, -R, -H, -s, -Y, -A.
  "ssh-keygen": {
    short: "lvyqBeiLcp",
    shortValued: "EtbCNPamFZ",
    operands: 0,
    writes: { short: "f" },
    runs: { short: "Dw" },
  },
  iconv: {
    short: "csl",
    shortValued: "ft",
    long: ["--silent", "--verbose", "--list"],
    longValued: ["--from-code", "--to-code"],
    operands: any,
    writes: { short: "o", long: ["--output"] },
  },
  // `+command` words are asked about as code (`hidden-code.ts`)
  less: {
    short: "aABcCdeEfFgGiIJKmMnNqQrRsSuUVwWX~",
    shortValued: "bhjpPtTxyz#",
    long: [
      ...["--quit-if-one-screen", "--no-init", "--RAW-CONTROL-CHARS", "--raw-control-chars"],
      ...["--chop-long-lines", "--LINE-NUMBERS", "--line-numbers", "--ignore-case"],
      ...["--IGNORE-CASE", "--squeeze-blank-lines", "--quiet", "--silent", "--status-column"],
      ...["--long-prompt", "--mouse", "--quit-at-eof", "--QUIT-AT-EOF"],
    ],
    longValued: ["--pattern", "--prompt", "--tabs", "--shift", "--tag"],
    operands: any,
    writes: { short: "oO", long: ["--log-file", "--LOG-FILE"] },
    runs: { short: "k", long: ["--lesskey-file", "--lesskey-src"] },
  },
  // one table for every subcommand (the first operand); options are words with one dash
  openssl: {
    words: [
      ...["-noout", "-text", "-subject", "-issuer", "-dates", "-enddate", "-startdate", "-serial"],
      ...["-fingerprint", "-hash", "-modulus", "-pubkey", "-nodes", "-noenc", "-new", "-x509"],
      ...["-verify", "-e", "-d", "-a", "-A", "-base64", "-pbkdf2", "-salt", "-nosalt", "-hex"],
      ...["-binary", "-r", "-c", "-sha1", "-sha256", "-sha384", "-sha512", "-md5", "-pubin"],
      ...["-pubout", "-check", "-noverify", "-brief", "-quiet", "-help", "-v", "-p", "-P"],
      ...["-aes-128-cbc", "-aes-192-cbc", "-aes-256-cbc", "-aes-128-gcm", "-aes-256-gcm"],
      ...["-aes128", "-aes192", "-aes256", "-des3", "-chacha20", "-nocert", "-nokeys"],
    ],
    wordsValued: [
      ...["-in", "-inform", "-outform", "-days", "-subj", "-key", "-newkey", "-pass", "-passin"],
      ...["-passout", "-md", "-iter", "-keyform", "-certform", "-CAfile", "-CA", "-CAkey"],
      ...["-set_serial", "-extensions", "-extfile", "-addext", "-sigopt", "-pkeyopt"],
      ...["-algorithm", "-cipher", "-digest", "-K", "-iv", "-S", "-k", "-kfile", "-nameopt"],
      ...["-certopt", "-checkend", "-signature", "-prverify", "-keyalg", "-name"],
    ],
    operands: any,
    writes: { words: ["-out", "-keyout", "-writerand", "-CAserial"] },
    runs: {
      words: ["-engine", "-provider", "-provider-path", "-config", "-keygen_engine", "-propquery"],
    },
  },
  // patch [ORIGFILE [PATCHFILE]]: ORIGFILE is written; -r writes the rejects; -g runs a version
  // control tool; -d changes the folder the patch's names are read from
  patch: {
    short: "bcelnNRstTuvEfZ",
    shortValued: "pFiVYzD",
    long: [
      ...["--backup", "--context", "--ed", "--normal", "--forward", "--reverse", "--silent"],
      ...["--quiet", "--batch", "--force", "--unified", "--verbose", "--dry-run", "--posix"],
      ...["--ignore-whitespace", "--remove-empty-files", "--set-time", "--set-utc", "--binary"],
      ...["--no-backup-if-mismatch", "--backup-if-mismatch"],
    ],
    longValued: [
      ...["--strip", "--fuzz", "--input", "--version-control", "--suffix", "--quoting-style"],
      ...["--reject-format", "--ifdef"],
    ],
    operands: 2,
    writesOperand: 1,
    writes: { short: "or", long: ["--output", "--reject-file"] },
    runs: { short: "g", long: ["--get"] },
  },
  // -f (the archive, when it makes one) and -C (the folder it extracts into) name what it
  // writes; not -P (paths out of the folder), -U and --remove-files (they delete), -I, -F,
  // --to-command and the other options that run a program
  tar: {
    short: "cxtruAdzjJavkmOpsSwWhMiBRlnZ",
    shortValued: "bHNTXLVK",
    long: [
      ...["--create", "--extract", "--get", "--list", "--append", "--update", "--catenate"],
      ...["--concatenate", "--diff", "--compare", "--delete", "--gzip", "--gunzip", "--bzip2"],
      ...["--xz", "--lzma", "--lzip", "--lzop", "--zstd", "--compress", "--auto-compress"],
      ...["--verbose", "--keep-old-files", "--skip-old-files", "--keep-newer-files"],
      ...["--touch", "--to-stdout", "--preserve-permissions", "--same-permissions"],
      ...["--no-same-permissions", "--same-owner", "--no-same-owner", "--numeric-owner"],
      ...["--dereference", "--hard-dereference", "--one-file-system", "--ignore-zeros"],
      ...["--null", "--no-null", "--recursion", "--no-recursion", "--wildcards"],
      ...["--no-wildcards", "--anchored", "--no-anchored", "--totals", "--exclude-vcs"],
      ...["--exclude-vcs-ignores", "--exclude-backups", "--exclude-caches", "--sparse"],
      ...["--verify", "--interactive", "--overwrite", "--overwrite-dir", "--no-overwrite-dir"],
      ...["--show-transformed-names"],
      ...["--ignore-case", "--no-ignore-case", "--full-time", "--utc", "--force-local"],
      ...["--check-links", "--restrict", "--delay-directory-restore", "--selinux", "--acls"],
      ...["--xattrs", "--no-selinux", "--no-acls", "--no-xattrs"],
    ],
    longValued: [
      ...["--exclude", "--exclude-from", "--files-from", "--strip-components", "--owner"],
      ...["--group", "--mode", "--mtime", "--sort", "--format", "--newer", "--after-date"],
      ...["--newer-mtime", "--warning", "--label", "--transform", "--xform", "--record-size"],
      ...["--exclude-tag", "--exclude-tag-all", "--exclude-tag-under"],
      ...["--starting-file", "--tape-length", "--quoting-style", "--blocking-factor"],
      ...["--owner-map", "--group-map", "--hole-detection", "--suffix"],
    ],
    longOptional: ["--backup", "--checkpoint", "--occurrence"],
    operands: any,
    writes: {
      short: "fCg",
      long: ["--file", "--directory", "--listed-incremental", "--index-file", "--volno-file"],
    },
    runs: {
      short: "IF",
      long: [
        ...["--use-compress-program", "--to-command", "--checkpoint-action", "--info-script"],
        ...["--new-volume-script", "--rsh-command", "--rmt-command"],
      ],
    },
  },
  screen: {
    words: ["-ls", "-list", "-v", "-version", "-wipe", "--version"],
    operands: 0,
  },
};
