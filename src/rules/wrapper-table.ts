/**
 * How a wrapper takes its options: `valued` take a value (`-n 10`, `-n10`, `--adjustment=10`),
 * `flags` (and `more`) stand alone, `pattern` matches further options that carry their value in
 * the same word; `operands` come before the command (`timeout`'s duration, `flock`'s file);
 * `code` options take shell code (`su -c '…'`), `shellString` joins the command into shell code
 * (`watch`), `shell` runs a shell whatever its operands (`script`). Any other option is one the
 * rules do not know. Deny rules look through every known option; allow rules (and the read-only
 * set) only through the `inert` ones (`patternInert`: the `pattern` ones too), which change how
 * the command runs (its time, priority, buffers) but not what runs or what it writes, and never
 * through a wrapper that is `notThrough` (the reason: it runs the command as another user, under
 * another root, or creates a file).
 */
export interface WrapperOptions {
  valued: string[];
  flags: string[];
  more?: string[];
  pattern?: RegExp;
  operands?: number;
  code?: string[];
  shellString?: boolean;
  shell?: boolean;
  inert?: string[];
  patternInert?: boolean;
  notThrough?: string;
}

const otherUser = "it runs the command as another user";

/** Options that take a value, per wrapper; any other option of a wrapper is a flag on its own. */
export const wrappers: Record<string, WrapperOptions> = {
  env: {
    valued: ["-u", "--unset", "-C", "--chdir"],
    flags: ["-i", "-0", "--ignore-environment", "--null", "-"],
    inert: ["-i", "-0", "--ignore-environment", "--null", "-"],
  },
  sudo: {
    valued: [
      "-u",
      "--user",
      "-g",
      "--group",
      "-C",
      "--close-from",
      "-D",
      "--chdir",
      "-h",
      "--host",
      "-p",
      "--prompt",
      "-r",
      "--role",
      "-t",
      "--type",
      "-T",
      "--command-timeout",
      "-U",
      "--other-user",
    ],
    flags: [
      "-A",
      "-b",
      "-E",
      "-H",
      "-n",
      "-P",
      "-S",
      "-i",
      "-s",
      "-k",
      "--askpass",
      "--background",
      "--preserve-env",
      "--set-home",
      "--non-interactive",
      "--stdin",
      "--login",
      "--shell",
      "--reset-timestamp",
    ],
    notThrough: otherUser,
  },
  timeout: {
    valued: ["-s", "--signal", "-k", "--kill-after"],
    flags: ["--preserve-status", "--foreground", "-v", "--verbose"],
    operands: 1,
    inert: [
      ...["-s", "--signal", "-k", "--kill-after", "--preserve-status", "--foreground", "-v"],
      "--verbose",
    ],
  },
  nice: { valued: ["-n", "--adjustment"], flags: [], inert: ["-n", "--adjustment"] },
  nohup: { valued: [], flags: [] },
  builtin: { valued: [], flags: [] },
  command: { valued: [], flags: ["-p"], inert: ["-p"] },
  exec: {
    valued: ["-a"],
    flags: ["-c", "-l", "-cl", "-lc"],
    inert: ["-a", "-c", "-l", "-cl", "-lc"],
  },
  time: { valued: [], flags: ["-p"], inert: ["-p"] },
  stdbuf: {
    valued: ["-i", "--input", "-o", "--output", "-e", "--error"],
    flags: [],
    inert: ["-i", "--input", "-o", "--output", "-e", "--error"],
  },
  xargs: {
    valued: [
      "-I",
      "-L",
      "-n",
      "-P",
      "-d",
      "-E",
      "-s",
      "-a",
      "--arg-file",
      "--delimiter",
      "--max-args",
      "--max-procs",
      "--max-chars",
      "--process-slot-var",
      "--eof",
      "--max-lines",
    ],
    flags: [
      "-0",
      "-r",
      "-t",
      "-p",
      "-x",
      "-o",
      "--null",
      "--no-run-if-empty",
      "--verbose",
      "--interactive",
      "--exit",
      "--open-tty",
    ],
    inert: [
      ...["-I", "-i", "--replace", "-L", "-n", "-P", "-d", "-E", "-s", "-a", "--arg-file"],
      ...["--delimiter", "--max-args", "--max-procs", "--max-chars", "--eof", "--max-lines"],
      ...["-0", "-r", "-t", "-p", "-x", "-o", "--null", "--no-run-if-empty", "--verbose"],
      ...["--interactive", "--exit", "--open-tty"],
    ],
  },
  setsid: {
    valued: [],
    flags: ["-c", "--ctty", "-f", "--fork", "-w", "--wait"],
    inert: ["-c", "--ctty", "-f", "--fork", "-w", "--wait"],
  },
  flock: {
    valued: ["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"],
    flags: ["-s", "--shared", "-x", "-e", "--exclusive", "-u", "--unlock", "-n", "--nb"],
    more: ["--nonblock", "-o", "--close", "-F", "--no-fork", "--verbose"],
    code: ["-c", "--command"],
    operands: 1,
    notThrough: "it creates its lock file",
  },
  ionice: {
    valued: ["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"],
    flags: ["-t", "--ignore"],
    inert: ["-c", "--class", "-n", "--classdata", "-t", "--ignore"],
  },
  chrt: {
    valued: ["-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"],
    flags: ["-a", "--all-tasks", "-b", "--batch", "-d", "--deadline", "-f", "--fifo", "-i"],
    more: ["--idle", "-o", "--other", "-r", "--rr", "-R", "--reset-on-fork", "-v", "--verbose"],
    operands: 1,
    inert: [
      ...["-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline", "-b"],
      ...["--batch", "-d", "--deadline", "-f", "--fifo", "-i", "--idle", "-o", "--other", "-r"],
      ...["--rr", "-R", "--reset-on-fork", "-v", "--verbose"],
    ],
  },
  taskset: {
    valued: [],
    flags: ["-a", "--all-tasks", "-c", "--cpu-list"],
    operands: 1,
    inert: ["-c", "--cpu-list"],
  },
  strace: {
    valued: ["-e", "-o", "--output", "-p", "-s", "--string-limit", "-u", "--user", "-E", "-a"],
    flags: ["-f", "-ff", "-c", "-C", "-d", "-D", "-F", "-i", "-k", "-q", "-qq", "-r", "-t"],
    more: ["-tt", "-ttt", "-T", "-v", "-w", "-x", "-xx", "-y", "-yy", "-z", "-Z", "--follow-forks"],
    // not -o (a file, or `|cmd`), -E (the environment), -p (another process), -u, -e (inject=)
    inert: [
      ...["-s", "--string-limit", "-a", "-f", "-ff", "-c", "-C", "-d", "-D", "-F", "-i", "-k"],
      ...["-q", "-qq", "-r", "-t", "-tt", "-ttt", "-T", "-v", "-w", "-x", "-xx", "-y", "-yy"],
      ...["-z", "-Z", "--follow-forks"],
    ],
  },
  ltrace: {
    valued: ["-e", "-o", "--output", "-p", "-s", "-u", "-a", "-A", "-D", "-F", "-l", "-n"],
    flags: ["-b", "-c", "-C", "-f", "-i", "-r", "-S", "-t", "-tt", "-ttt", "-T"],
    inert: [
      ...["-s", "-a", "-A", "-n", "-e", "-l", "-b", "-c", "-C", "-f", "-i", "-r", "-S", "-t"],
      ...["-tt", "-ttt", "-T"],
    ],
  },
  prlimit: {
    valued: ["-p", "--pid", "-o", "--output"],
    flags: ["--noheadings", "--raw", "--verbose"],
    pattern: /^(--[a-z]+=[^=]+|-[cdefilmnqrstvxyFHLPS]\S+)$/,
    inert: ["-o", "--output", "--noheadings", "--raw", "--verbose"],
    patternInert: true,
  },
  unshare: {
    valued: ["-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"],
    flags: [],
    pattern: /^(--[a-z-]+(=[^=]+)?|-[imnpuUCTrfc]+)$/,
    notThrough: "it runs the command in new namespaces",
  },
  nsenter: {
    valued: ["-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd"],
    flags: [],
    pattern: /^(--[a-z-]+(=[^=]+)?|-[muinpUCTFrwaZ]+)$/,
    notThrough: "it runs the command in another process's namespaces",
  },
  doas: { valued: ["-u", "-C"], flags: ["-n", "-L"], notThrough: otherUser },
  pkexec: {
    valued: ["--user"],
    flags: ["--disable-internal-agent", "--keep-cwd"],
    notThrough: otherUser,
  },
  "systemd-run": {
    valued: ["--unit", "-u", "--description", "--slice", "--uid", "--gid", "--nice"],
    flags: ["--user", "--scope", "--wait", "-W", "--pipe", "-P", "-t", "--pty", "-q", "--quiet"],
    more: ["--collect", "-G", "--no-block", "-d", "--same-dir"],
    notThrough: "it runs the command as a service of the system",
  },
  su: {
    valued: ["-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w"],
    flags: ["-", "-l", "--login", "-m", "-p", "--preserve-environment", "-P", "--pty", "-f"],
    code: ["-c", "--command", "--session-command"],
    notThrough: otherUser,
    shell: true,
  },
  runuser: {
    valued: ["-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w"],
    flags: ["-", "-l", "--login", "-m", "-p", "--preserve-environment", "-P", "--pty", "-f"],
    code: ["-c", "--command", "--session-command"],
    notThrough: otherUser,
  },
  script: {
    valued: ["-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T"],
    flags: ["-a", "--append", "-e", "--return", "-f", "--flush", "-q", "--quiet"],
    code: ["-c", "--command"],
    shell: true,
  },
  chroot: {
    valued: ["--userspec", "--groups"],
    flags: ["--skip-chdir"],
    operands: 1,
    notThrough: "it runs the command under another root folder",
  },
  setpriv: {
    valued: [],
    flags: ["-d", "--dump", "--nnp", "--no-new-privs", "--clear-groups", "--keep-groups"],
    more: ["--init-groups", "--reset-env"],
    pattern: /^--[a-z-]+=[^=]+$/,
    notThrough: "it runs the command with other privileges",
  },
  watch: {
    valued: ["-n", "--interval", "-q", "--equexit"],
    flags: ["-b", "--beep", "-c", "--color", "-C", "--no-color", "-d", "--differences"],
    more: ["-e", "--errexit", "-g", "--chgexit", "-p", "--precise", "-t", "--no-title", "-w"],
    shellString: true,
  },
  parallel: {
    valued: ["-j", "--jobs", "--halt", "--delay", "--timeout", "-n", "--max-args"],
    flags: ["-k", "--keep-order", "--dry-run", "--tag", "-v", "--verbose", "-0", "--null"],
    more: ["--will-cite", "--bar", "--eta", "--progress", "-u", "--ungroup", "--lb"],
    shellString: true,
  },
  coproc: { valued: [], flags: [] },
};
