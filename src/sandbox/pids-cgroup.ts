import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { kill, running } from "./reaper.js";

/**
 * A pids cgroup for one sandboxed command: the kernel refuses a fork beyond `pids.max`. It is
 * the only process bound that holds for root, whom the kernel exempts from RLIMIT_NPROC even in
 * a user namespace. Made beside mini-agent's own cgroup when that is writable (root with cgroup
 * v1, or a cgroup v2 tree where the pids controller reaches the new folder); else none.
 */
export interface PidsGroup {
  /** The `cgroup.procs` file a process writes its pid to, to join. */
  procs: string;
  /** SIGKILLs every process in the group, until none is left (a few rounds at most). */
  kill(): void;
  /** Removes the folder once its processes are gone; retries for a second, then gives up. */
  remove(): Promise<void>;
}

const PREFIX = "mini-agent-";
let made = 0;

/** A new pids cgroup limited to `max` tasks, or `undefined` where none can be made. */
export function createPidsGroup(max: number): PidsGroup | undefined {
  const parent = pidsParent();
  if (parent === undefined) return undefined;
  removeStale(parent);
  const dir = join(parent, `${PREFIX}${process.pid}-${++made}`);
  try {
    mkdirSync(dir);
  } catch {
    return undefined;
  }
  try {
    writeFileSync(join(dir, "pids.max"), String(max));
  } catch {
    tryRemove(dir);
    return undefined;
  }
  const procs = join(dir, "cgroup.procs");
  return {
    procs,
    kill() {
      for (let round = 0; round < 5; round++) {
        const pids = members(procs);
        if (pids.length === 0) return;
        for (const pid of pids) kill(pid);
      }
    },
    async remove() {
      for (let tries = 0; !tryRemove(dir) && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

let parentFolder: string | null | undefined;

/** The folder of mini-agent's own pids cgroup (v1 `pids` hierarchy, or v2), found once. */
function pidsParent(): string | undefined {
  if (parentFolder === undefined) parentFolder = findPidsParent() ?? null;
  return parentFolder ?? undefined;
}

function findPidsParent(): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync("/proc/self/cgroup", "utf8").trim().split("\n");
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [id, controllers = "", path = ""] = line.split(":");
    const folder = controllers.split(",").includes("pids")
      ? join("/sys/fs/cgroup/pids", path)
      : id === "0" && existsSync("/sys/fs/cgroup/cgroup.controllers")
        ? join("/sys/fs/cgroup", path)
        : undefined;
    if (folder !== undefined && existsSync(folder)) return folder;
  }
  return undefined;
}

/** Removes groups left by an agent that was killed before it could remove them. */
function removeStale(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent).filter((name) => name.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const owner = Number(name.slice(PREFIX.length).split("-")[0]);
    if (owner !== process.pid && !running(owner)) tryRemove(join(parent, name));
  }
}

function members(procs: string): number[] {
  try {
    return readFileSync(procs, "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function tryRemove(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}
