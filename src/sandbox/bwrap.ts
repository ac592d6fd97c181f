import type { ChildProcess, ChildProcessByStdio } from "node:child_process";
import { existsSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { strictlyWithin, within } from "../paths.js";
import type { MoreProtected } from "../protected/files.js";
import { type HidingMounts, hidingMounts } from "./hide.js";
import { homeMounts } from "./home.js";
import {
  type KeptReadOnly,
  keptReadOnlyMounts,
  lastMounts,
  shallowestFirst,
} from "./kept-read-only.js";
import { cachedWorks, forgetWorks, probeKey, rememberWorks } from "./probe-cache.js";
import { protectedMounts } from "./project-files.js";
import { seccompFilter, seccompUnsupported } from "./seccomp.js";

/**
 * Bash in a bubblewrap sandbox: the whole file system read-only except the workspace, a private
 * /tmp, no network (a new network namespace, and a seccomp filter refusing Unix sockets), its own
 * PID namespace, no capabilities, the credential stores hidden, and dying with mini-agent.
 *
 * - `auto`: sandbox when bwrap works here, else run plainly (the CLI warns once).
 * - `required`: never run a command outside the sandbox.
 * - `off`: run plainly, by explicit choice.
 */
export type SandboxMode = "auto" | "required" | "off";

export interface SandboxOptions {
  mode: SandboxMode;
  /** The bwrap binary; default `bwrap` from `PATH`. */
  bwrap?: string;
  /** Paths kept read-only even inside the workspace (outside it everything is read-only). */
  readOnly?: string[];
  /**
   * Paths hidden inside the sandbox besides the credential stores under `$HOME` and
   * `$MINI_AGENT_HOME` (see `credentialStores`): a folder shows empty, a file reads empty.
   */
  hide?: string[];
  /** Bounds on what a command may use inside the sandbox; each field defaults as `defaultLimits`. */
  limits?: SandboxLimits;
  /**
   * Folders outside the workspace mounted read-only even where a hidden folder holds them (the
   * registered skill folders, so a skill's `scripts/` can run), asked for each command.
   */
  readable?: () => readonly string[];
  /**
   * The state folder, where bwrap's "it works here" is kept per machine (`probe-cache.ts`), so
   * later runs need not start bwrap to know it. Without it bwrap is run once per process.
   */
  probeCache?: string;
}

/**
 * What one sandboxed command may use. `processes` (tasks, threads included) is RLIMIT_NPROC set
 * inside the sandbox's user namespace, where the kernel counts only the sandbox's processes, and
 * a pids cgroup where mini-agent can make one: the kernel exempts root from RLIMIT_NPROC.
 * `memoryBytes` is RLIMIT_DATA for each process: the writable memory it may map. Not
 * RLIMIT_AS, which counts reserved address space and breaks WebAssembly and the JVM.
 * `fileBytes` is RLIMIT_FSIZE: the largest file a process may write (a write past it fails, and
 * the process gets SIGXFSZ), so one command cannot fill the disk with one file.
 */
export interface SandboxLimits {
  processes?: number;
  memoryBytes?: number;
  fileBytes?: number;
}

/** Enough for a parallel build; a fork bomb, a runaway allocation or a runaway file stops here. */
export const defaultLimits: Required<SandboxLimits> = {
  processes: 4096,
  memoryBytes: 8 * 2 ** 30,
  fileBytes: 4 * 2 ** 30,
};

/** What is in force: commands run in bwrap, run plainly, or are refused (`required`, no bwrap). */
export type SandboxState =
  | { kind: "bwrap"; bwrap: string }
  | { kind: "off" }
  | { kind: "unavailable"; mode: "auto" | "required"; reason: string };

/**
 * How a session's header names where bash ran: `bwrap`, `off`, `unavailable`,
 * `required-unavailable`, or `unused (bash denied)` when bash could not run at all.
 */
export function sandboxName(state: SandboxState | undefined): string {
  if (state === undefined) return "unused (bash denied)";
  if (state.kind !== "unavailable") return state.kind;
  return state.mode === "required" ? "required-unavailable" : "unavailable";
}

const probes = new Map<string, Promise<string | undefined>>();

/**
 * Decides once per bwrap binary whether it can build the sandbox here (namespaces may be denied),
 * from the state folder's kept answer when `probeCache` names one and the answer still fits.
 */
export async function resolveSandbox(options: SandboxOptions): Promise<SandboxState> {
  if (options.mode === "off") return { kind: "off" };
  const bwrap = options.bwrap ?? "bwrap";
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = answer(bwrap, options.probeCache);
    probes.set(bwrap, probe);
  }
  const problem = await probe;
  return problem === undefined
    ? { kind: "bwrap", bwrap }
    : { kind: "unavailable", mode: options.mode, reason: problem };
}

/** An answer taken from the state folder: `check` is set once a command has tested it. */
interface KeptAnswer {
  state: string;
  check?: Promise<string | undefined>;
}
const kept = new Map<string, KeptAnswer>();

async function answer(bwrap: string, state: string | undefined): Promise<string | undefined> {
  const unsupported = seccompUnsupported();
  if (unsupported !== undefined) return unsupported;
  const key = state === undefined ? undefined : probeKey(bwrap);
  if (state === undefined || key === undefined) return probeBwrap(bwrap);
  if (cachedWorks(state, key)) {
    kept.set(bwrap, { state });
    return undefined;
  }
  const problem = await probeBwrap(bwrap);
  if (problem === undefined) unwritten.set(bwrap, { state, key });
  return problem;
}

/** Positive answers of this process's probes, not yet kept in the state folder. */
const unwritten = new Map<string, { state: string; key: string }>();

/**
 * Keeps this process's positive probe answers in the state folder, for the next run. Called when
 * a run ends, not when the probe answers: a run refused before it starts (a bad configuration, a
 * state folder it cannot write) creates nothing. Failing to keep one costs the next run a probe.
 */
export function keepSandboxAnswers(): void {
  for (const { state, key } of unwritten.values()) rememberWorks(state, key);
  unwritten.clear();
}

/**
 * For bash, before a command: the sentence refusing it when `bwrap` was taken to work from the
 * state folder and has since been found not to (`settleKeptAnswer`); undefined otherwise.
 */
export async function staleSandbox(bwrap: string): Promise<string | undefined> {
  return kept.get(bwrap)?.check;
}

/**
 * For bash, after a sandboxed command ended (`failed`: with an exit code other than 0). A kept
 * answer is tested by the first command: one that succeeds confirms it for this process; one that
 * fails runs bwrap's probe again, and when that fails too, the kept answer is dropped (the next
 * run decides afresh) and the returned sentence says so: from then on this process refuses bash
 * rather than run it outside the sandbox its system prompt promised.
 */
export function settleKeptAnswer(bwrap: string, failed: boolean): Promise<string | undefined> {
  const answer = kept.get(bwrap);
  if (!answer) return Promise.resolve(undefined);
  answer.check ??= failed
    ? probeBwrap(bwrap).then((problem) => {
        if (problem === undefined) return undefined;
        forgetWorks(answer.state);
        return `the sandbox cannot be created here any more (${problem}), though bwrap worked here before: the kept answer is dropped and bash will not run in this process; start mini-agent again to decide afresh`;
      })
    : Promise.resolve(undefined);
  return answer.check;
}

async function probeBwrap(bwrap: string): Promise<string | undefined> {
  // Synchronous where Node has it: the entry starts the probe just before it loads the turn, so
  // bwrap runs meanwhile; an `await import` here would start it only after the turn has loaded.
  const { spawn } =
    process.getBuiltinModule?.("node:child_process") ?? (await import("node:child_process"));
  return new Promise((resolve) => {
    const child = spawn(bwrap, [...isolation("/"), "true"], {
      stdio: ["ignore", "ignore", "pipe", "pipe"],
    }) as ChildProcessByStdio<null, null, Readable>;
    feedFilter(child);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", (error: NodeJS.ErrnoException) =>
      resolve(
        error.code === "ENOENT"
          ? "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
          : error.message,
      ),
    );
    child.on("close", (code) =>
      resolve(code === 0 ? undefined : `bwrap cannot create the sandbox here: ${stderr.trim()}`),
    );
  });
}

/**
 * The namespaces and mounts every sandboxed command gets. A user namespace mapping the uid and
 * gid that started mini-agent onto themselves, with every capability dropped and no new
 * privileges (bwrap always sets `no_new_privs`): root outside is a plain uid 0 inside, so it can
 * neither remount `/` writable nor make device nodes. `--disable-userns` stops a nested user
 * namespace from handing the capabilities back; `--new-session` stops TIOCSTI typing into the
 * agent's terminal; `--die-with-parent` ends the sandbox when bwrap's parent dies, even by SIGKILL.
 * `--seccomp` loads the filter of `seccomp.ts` from `FILTER_FD` (see `feedFilter`).
 */
function isolation(
  workspace: string,
  hiding: HidingMounts = { before: [], after: [] },
  home: string[] = [],
): string[] {
  const uid = String(process.getuid?.() ?? 0);
  const gid = String(process.getgid?.() ?? 0);
  // biome-ignore format: each flag beside its values
  return [
    "--unshare-user", "--uid", uid, "--gid", gid,
    "--disable-userns",
    "--cap-drop", "ALL",
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/tmp",
    ...home,
    ...hiding.before,
    "--bind", workspace, workspace,
    ...hiding.after,
    "--unshare-net",
    "--unshare-pid",
    "--unshare-ipc",
    "--new-session",
    "--die-with-parent",
    "--seccomp", String(FILTER_FD),
  ];
}

/** The descriptor bwrap reads the seccomp filter from: the fourth of its stdio. */
export const FILTER_FD = 3;

/**
 * Writes the seccomp filter to a bwrap spawned with a pipe as stdio `FILTER_FD`, and closes it:
 * bwrap reads it to the end before it builds the sandbox. A bwrap that fails before reading it
 * closes the pipe; that error is bwrap's to report.
 */
export function feedFilter(child: ChildProcess): void {
  const pipe = child.stdio[FILTER_FD] as Writable | null | undefined;
  if (!pipe) return;
  pipe.on("error", () => {});
  pipe.end(seccompFilter());
}

/**
 * Shell code that closes every descriptor but 0, 1 and 2 before the command runs. Node marks the
 * descriptors it inherited close-on-exec only up to the first gap after 15: a higher one (a
 * socket the agent's own parent left open) would reach the command. Without /proc (macOS) it
 * does nothing.
 */
export const CLOSE_INHERITED =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
  'for fd in /proc/$$/fd/*; do fd=${fd##*/}; case $fd in 0|1|2|*[!0-9]*) ;; *) eval "exec $fd>&-" ;; esac; done; ';

/** The limits in force: the options' over `defaultLimits`. */
export function sandboxLimits(
  options: Pick<SandboxOptions, "limits"> = {},
): Required<SandboxLimits> {
  return { ...defaultLimits, ...options.limits };
}

/**
 * The argv that runs `command` with bash inside the sandbox, in `workspace`. `env` is the
 * environment the tool was given: its `HOME` and `MINI_AGENT_HOME` say what to hide. With
 * `cgroupProcs`, bwrap starts inside that pids cgroup. The process must be spawned with a pipe
 * as stdio `FILTER_FD`, given to `feedFilter`: bwrap waits for the filter there. The project's
 * protected files stay read-only (`protectedMounts`, with the session's own, `more`), and so does what `kept` names for this
 * command; `made` lists the mount points bwrap will make for them, to remove with
 * `removeMountPoints` once the command is over.
 */
export function sandboxedArgv(
  bwrap: string,
  workspace: string,
  command: string,
  options: Omit<SandboxOptions, "mode" | "bwrap">,
  env: NodeJS.ProcessEnv,
  call: { cgroupProcs?: string | undefined; kept?: KeptReadOnly; more?: MoreProtected } = {},
): { argv: string[]; made: string[] } {
  const protect = (options.readOnly ?? [])
    .filter((path) => strictlyWithin(workspace, path) && existsSync(path))
    .flatMap((path) => ["--ro-bind", path, path]);
  const project = protectedMounts(workspace, call.more);
  const hiding = hidingMounts(workspace, env, options.hide);
  const kept = call.kept ?? { whole: false, paths: [] };
  const inside = shallowestFirst([
    ...project.args,
    ...protect,
    ...keptReadOnlyMounts(workspace, kept),
  ]);
  hiding.after.unshift(...inside);
  hiding.after.push(...lastMounts(workspace, kept, inside));
  // Bound after the hiding tmpfs (still writable, so bwrap can make the mount point), before it
  // is made read-only; a folder inside the workspace is the workspace's to show.
  const readable = (options.readable?.() ?? [])
    .filter((path) => !within(workspace, path) && existsSync(path))
    .flatMap((path) => ["--ro-bind", path, path]);
  hiding.before.push(...readable);
  const { processes, memoryBytes, fileBytes } = sandboxLimits(options);
  // Setting a limit fails only above the hard limit already in force, which then bounds it.
  // bash counts `-d` and `-f` in KiB.
  const kib = (bytes: number) => Math.ceil(bytes / 1024);
  const limit = `${CLOSE_INHERITED}ulimit -u ${processes} 2>/dev/null; ulimit -d ${kib(memoryBytes)} 2>/dev/null; ulimit -f ${kib(fileBytes)} 2>/dev/null; exec bash -c "$1"`;
  const home = homeMounts(env, workspace);
  const argv = [bwrap, ...isolation(workspace, hiding, home), "--chdir", workspace];
  const { cgroupProcs } = call;
  const join = cgroupProcs ? ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroupProcs] : [];
  return { argv: [...join, ...argv, "bash", "-c", limit, "bash", command], made: project.made };
}

/** A plain sentence for the model when the sandbox is the likely cause of a failure. */
export function sandboxHint(output: string): string | undefined {
  if (/Read-only file system/i.test(output)) {
    return "[sandbox: only the workspace is writable; the rest of the file system is read-only]";
  }
  if (
    /Couldn't connect to server|Error connecting to agent|connect to the Docker daemon/i.test(
      output,
    )
  ) {
    return "[sandbox: Unix sockets of the host and the network cannot be reached from the sandbox]";
  }
  if (
    /Network is unreachable|Could not resolve|Temporary failure in name resolution|getaddrinfo|Connection refused/i.test(
      output,
    )
  ) {
    return "[sandbox: there is no network inside the sandbox]";
  }
  return undefined;
}
