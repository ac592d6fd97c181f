import { endianness } from "node:os";

/**
 * The seccomp filter of every sandboxed command: a classic BPF program, as bwrap loads it with
 * `--seccomp FD`. It closes the ways out that the namespaces leave open:
 *
 * - `socket()` of any family but IPv4, IPv6 and netlink fails with EACCES. Those three are
 *   confined to the sandbox's own network namespace (its loopback only). A Unix socket is not:
 *   `connect()` to a socket file (a docker, D-Bus, ssh-agent socket) ignores the read-only
 *   mount, and the network namespace isolates only abstract names. Nor is vsock.
 * - `socketpair()` of any type but stream and seqpacket fails with EACCES: a datagram socket,
 *   even one of a pair, can send to any socket file with `sendto()`. Stream pairs keep pipes
 *   between processes working.
 * - `io_uring_setup` (and its two siblings) fail with ENOSYS: io_uring opens and connects
 *   sockets without the socket system call. Programs fall back to plain system calls.
 * - A system call of another ABI (32-bit x86 or ARM, x32) kills the process: the numbers above
 *   hold for the native ABI only, and a 32-bit `socketcall` hides its arguments from the filter.
 *
 * Supported on little-endian x86_64 and aarch64; elsewhere there is no filter and the sandbox
 * is unavailable.
 */

interface Abi {
  /** `AUDIT_ARCH_*`, the `arch` field of `struct seccomp_data`. */
  audit: number;
  socket: number;
  socketpair: number;
  /** x86_64 also accepts x32 system calls, numbered from `X32_BIT`, under the same `arch`. */
  x32: boolean;
}

const abis: Partial<Record<NodeJS.Architecture, Abi>> = {
  x64: { audit: 0xc000003e, socket: 41, socketpair: 53, x32: true },
  arm64: { audit: 0xc00000b7, socket: 198, socketpair: 199, x32: false },
};

/** io_uring_setup, io_uring_enter, io_uring_register: the same numbers on both. */
const IO_URING_FIRST = 425;
const IO_URING_LAST = 427;
const X32_BIT = 0x40000000;

const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
/** The type bits of a socket type; the rest are `SOCK_NONBLOCK` and `SOCK_CLOEXEC`. */
const SOCK_TYPE_MASK = 0xf;
const EACCES = 13;
const ENOSYS = 38;

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;

/** Offsets in `struct seccomp_data`; an argument's low word comes first (little-endian). */
const NR = 0;
const ARCH = 4;
const arg = (index: number) => 16 + 8 * index;

/** One instruction before its jumps are resolved: targets are labels, none means the next one. */
type Step =
  | { load: number }
  | { and: number }
  | { jump: "eq" | "ge"; k: number; yes?: string; no?: string }
  | { ret: number }
  | { label: string };

/** Why no filter can be built here, or `undefined` when one can. */
export function seccompUnsupported(
  arch: string = process.arch,
  order: string = endianness(),
): string | undefined {
  if (order === "LE" && arch in abis) return undefined;
  return `the sandbox's seccomp filter exists for x86_64 and aarch64 only, not ${arch} (${order})`;
}

/** The filter for `arch`, encoded as bwrap reads it: `struct sock_filter` after another. */
export function seccompFilter(arch: string = process.arch): Buffer {
  const abi = abis[arch as NodeJS.Architecture];
  if (!abi || seccompUnsupported(arch) !== undefined) {
    throw new Error(seccompUnsupported(arch));
  }
  return encode(steps(abi));
}

function steps(abi: Abi): Step[] {
  // biome-ignore format: one instruction a line
  return [
    { load: ARCH },
    { jump: "eq", k: abi.audit, no: "kill" },
    { load: NR },
    ...(abi.x32
      ? [
          { jump: "ge", k: X32_BIT, no: "native" } as const,
          // -1 is no system call at all (a tracer skipping one): the kernel answers ENOSYS.
          { jump: "eq", k: 0xffffffff, yes: "allow", no: "kill" } as const,
          { label: "native" },
        ]
      : []),
    { jump: "eq", k: abi.socket, yes: "socket" },
    { jump: "eq", k: abi.socketpair, yes: "socketpair" },
    { jump: "ge", k: IO_URING_FIRST, no: "allow" },
    { jump: "ge", k: IO_URING_LAST + 1, yes: "allow" },
    { ret: RET_ERRNO | ENOSYS },
    { label: "socket" },
    { load: arg(0) },
    { jump: "eq", k: AF_INET, yes: "allow" },
    { jump: "eq", k: AF_INET6, yes: "allow" },
    { jump: "eq", k: AF_NETLINK, yes: "allow", no: "deny" },
    { label: "socketpair" },
    { load: arg(1) },
    { and: SOCK_TYPE_MASK },
    { jump: "eq", k: SOCK_STREAM, yes: "allow" },
    { jump: "eq", k: SOCK_SEQPACKET, yes: "allow", no: "deny" },
    { label: "deny" },
    { ret: RET_ERRNO | EACCES },
    { label: "allow" },
    { ret: RET_ALLOW },
    { label: "kill" },
    { ret: RET_KILL_PROCESS },
  ];
}

const BPF_LD_W_ABS = 0x20;
const BPF_ALU_AND_K = 0x54;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_RET_K = 0x06;

/** Resolves the labels into forward jump offsets and writes the 8-byte instructions. */
function encode(program: Step[]): Buffer {
  const labels = new Map<string, number>();
  const code: Exclude<Step, { label: string }>[] = [];
  for (const step of program) {
    if ("label" in step) labels.set(step.label, code.length);
    else code.push(step);
  }
  const out = Buffer.alloc(code.length * 8);
  code.forEach((step, at) => {
    const offset = (label: string | undefined) => {
      if (label === undefined) return 0;
      const target = labels.get(label);
      if (target === undefined || target <= at || target - at - 1 > 255) {
        throw new Error(`seccomp: bad jump to ${label}`);
      }
      return target - at - 1;
    };
    let op: number;
    let k: number;
    let yes = 0;
    let no = 0;
    if ("load" in step) [op, k] = [BPF_LD_W_ABS, step.load];
    else if ("and" in step) [op, k] = [BPF_ALU_AND_K, step.and];
    else if ("ret" in step) [op, k] = [BPF_RET_K, step.ret];
    else {
      [op, k] = [step.jump === "eq" ? BPF_JMP_JEQ_K : BPF_JMP_JGE_K, step.k];
      [yes, no] = [offset(step.yes), offset(step.no)];
    }
    out.writeUInt16LE(op, at * 8);
    out.writeUInt8(yes, at * 8 + 2);
    out.writeUInt8(no, at * 8 + 3);
    out.writeUInt32LE(k >>> 0, at * 8 + 4);
  });
  return out;
}
