import {
  accessSync,
  type BigIntStats,
  constants,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { release, version } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { readOwnJson } from "../own-json.js";

/**
 * bwrap's "it works here", kept per machine in the state folder (`cache/sandbox.json`), so a run
 * need not start bwrap to learn what the last run learned. Only that positive answer is kept:
 * a failure is probed again each run, so fixing the machine is noticed at once.
 *
 * The answer is tied to what could change it (`probeKey`): bwrap's file (real path, device,
 * inode, size, mode, owner, mtime and ctime), the kernel (release and build), the uid and gid,
 * the architecture, the namespace limits and switches of `/proc/sys`, the namespaces this
 * process runs in and whether it runs under seccomp or `no_new_privs` (a container). Any of them
 * different, and bwrap is run again. A forged or stale "works" can only make commands fail, never
 * run them outside the sandbox: bwrap still builds the sandbox for every command, and a command
 * that fails after a cached answer makes the caller probe again and drop the answer
 * (`staleSandbox` in `bwrap.ts`).
 */

/** Files of `/proc` whose content decides whether bwrap can make its namespaces. */
const procFiles = [
  "/proc/sys/kernel/unprivileged_userns_clone",
  "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
  "/proc/sys/user/max_user_namespaces",
  "/proc/sys/user/max_mnt_namespaces",
  "/proc/sys/user/max_pid_namespaces",
  "/proc/sys/user/max_net_namespaces",
  "/proc/sys/user/max_ipc_namespaces",
  "/proc/sys/kernel/seccomp/actions_avail",
];
const namespaces = ["/proc/self/ns/user", "/proc/self/ns/mnt", "/proc/self/ns/pid"];

/**
 * Everything the answer for `bwrap` (a path, or a name looked up in `PATH` as spawning it would)
 * depends on, as one string; undefined when there is no such executable (the probe then says so).
 */
export function probeKey(bwrap: string, path = process.env.PATH ?? ""): string | undefined {
  const file = executable(bwrap, path);
  if (file === undefined) return undefined;
  let info: BigIntStats;
  try {
    info = statSync(file, { bigint: true });
  } catch {
    return undefined; // Gone since it was found: the probe says what is wrong.
  }
  const proc = procFiles.map((name) => readOrNone(() => readFileSync(name, "utf8").trim()));
  const spaces = namespaces.map((name) => readOrNone(() => readlinkSync(name)));
  const status = readOrNone(() => readFileSync("/proc/self/status", "utf8"));
  const confined = status
    .split("\n")
    .filter((line) => /^(Seccomp|NoNewPrivs):/.test(line))
    .map((line) => line.replace(/\s+/g, " "));
  return JSON.stringify([
    file,
    `${info.dev}:${info.ino}:${info.size}:${info.mode}:${info.uid}:${info.mtimeNs}:${info.ctimeNs}`,
    release(),
    version(),
    process.arch,
    process.getuid?.() ?? -1,
    process.getgid?.() ?? -1,
    ...proc,
    ...spaces,
    ...confined,
  ]);
}

/** The file spawning `bwrap` would run: a path as it is, a bare name from `PATH`'s folders. */
function executable(bwrap: string, path: string): string | undefined {
  const candidates = bwrap.includes("/")
    ? [resolve(bwrap)]
    : path.split(delimiter).map((dir) => resolve(dir || ".", bwrap));
  for (const candidate of candidates) {
    try {
      // Most folders of PATH lack it: asked without an error made and thrown for each.
      if (!statSync(candidate, { throwIfNoEntry: false })?.isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

function readOrNone(read: () => string): string {
  try {
    return read();
  } catch {
    return "-";
  }
}

/** Where the answer is kept in the state folder `state`. */
export function probeCacheFile(state: string): string {
  return join(state, "cache", "sandbox.json");
}

/** The largest cache file read: one key is under 1 KB. */
const MAX_BYTES = 64 * 1024;

/**
 * Whether the state folder says bwrap worked under exactly `key`. A file that is not the user's
 * own, that others may write, that is not a regular file or that is damaged says nothing.
 */
export function cachedWorks(state: string, key: string): boolean {
  const value = readOwnJson(probeCacheFile(state), MAX_BYTES)?.value;
  return (
    typeof value === "object" &&
    value !== null &&
    "works" in value &&
    value.works === key &&
    "version" in value &&
    value.version === 1
  );
}

/** Keeps "bwrap works under `key`" (mode 0600, written whole and renamed into place). */
export function rememberWorks(state: string, key: string): void {
  const file = probeCacheFile(state);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, JSON.stringify({ version: 1, works: key }), {
      flag: "wx",
      mode: 0o600,
    });
    renameSync(temporary, file);
  } catch {
    // An answer that cannot be kept costs the next run a probe, nothing else.
    try {
      rmSync(temporary, { force: true });
    } catch {}
  }
}

/** Drops the kept answer: the next run probes again. */
export function forgetWorks(state: string): void {
  try {
    rmSync(probeCacheFile(state), { force: true });
  } catch {}
}
