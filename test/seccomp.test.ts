import { describe, expect, it } from "vitest";
import { seccompFilter, seccompUnsupported } from "../src/sandbox/seccomp.js";

/**
 * The seccomp program, run here by a small classic-BPF interpreter on `struct seccomp_data`
 * made by hand: the kernel tests (sandbox-sockets) exercise it on this machine's architecture
 * only, this one checks both encodings and the branches no kernel test reaches (another ABI).
 */

const ALLOW = 0x7fff0000;
const EACCES = 0x00050000 | 13;
const ENOSYS = 0x00050000 | 38;
const KILL = 0x80000000;

/** Runs `filter` on one system call; returns the action and data it answers. */
function verdict(filter: Buffer, arch: number, nr: number, args: bigint[] = []): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch, 4);
  for (const [index, value] of args.entries()) data.writeBigUInt64LE(value, 16 + 8 * index);
  let a = 0;
  for (let pc = 0; pc * 8 < filter.length; ) {
    const at = pc * 8;
    const [code, yes, no, k] = [
      filter.readUInt16LE(at),
      filter.readUInt8(at + 2),
      filter.readUInt8(at + 3),
      filter.readUInt32LE(at + 4),
    ];
    pc++;
    if (code === 0x20) a = data.readUInt32LE(k);
    else if (code === 0x54) a = (a & k) >>> 0;
    else if (code === 0x15) pc += a === k ? yes : no;
    else if (code === 0x35) pc += a >= k ? yes : no;
    else if (code === 0x06) return k;
    else throw new Error(`unknown instruction ${code}`);
  }
  throw new Error("ran off the end of the program");
}

const AF_UNIX = 1n;
const AF_INET = 2n;
const AF_INET6 = 10n;
const AF_NETLINK = 16n;
const AF_VSOCK = 40n;
const SOCK_STREAM = 1n;
const SOCK_DGRAM = 2n;
const SOCK_RAW = 3n;
const SOCK_SEQPACKET = 5n;
const SOCK_NONBLOCK = 0x800n;
const SOCK_CLOEXEC = 0x80000n;

const abis = [
  { arch: "x64", audit: 0xc000003e, foreign: 0x40000003, socket: 41, socketpair: 53, read: 0 },
  { arch: "arm64", audit: 0xc00000b7, foreign: 0x40000028, socket: 198, socketpair: 199, read: 63 },
] as const;

describe("the seccomp filter", () => {
  it.each(abis)("on $arch refuses what leaves the sandbox and allows the rest", (abi) => {
    const filter = seccompFilter(abi.arch);
    const call = (nr: number, ...args: bigint[]) => verdict(filter, abi.audit, nr, args);
    expect({
      unix: call(abi.socket, AF_UNIX, SOCK_STREAM),
      unixHighWordSet: call(abi.socket, AF_UNIX | (1n << 32n), SOCK_STREAM),
      vsock: call(abi.socket, AF_VSOCK, SOCK_STREAM),
      inet: call(abi.socket, AF_INET, SOCK_STREAM),
      inet6: call(abi.socket, AF_INET6, SOCK_DGRAM),
      netlink: call(abi.socket, AF_NETLINK, SOCK_RAW),
      streamPair: call(abi.socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC),
      seqpacketPair: call(abi.socketpair, AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK),
      datagramPair: call(abi.socketpair, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC),
      rawPair: call(abi.socketpair, AF_UNIX, SOCK_RAW),
      beforeIoUring: call(424),
      ioUringSetup: call(425),
      ioUringRegister: call(427),
      afterIoUring: call(428),
      read: call(abi.read),
      otherAbi: verdict(filter, abi.foreign, abi.read),
    }).toEqual({
      unix: EACCES,
      unixHighWordSet: EACCES,
      vsock: EACCES,
      inet: ALLOW,
      inet6: ALLOW,
      netlink: ALLOW,
      streamPair: ALLOW,
      seqpacketPair: ALLOW,
      datagramPair: EACCES,
      rawPair: EACCES,
      beforeIoUring: ALLOW,
      ioUringSetup: ENOSYS,
      ioUringRegister: ENOSYS,
      afterIoUring: ALLOW,
      read: ALLOW,
      otherAbi: KILL,
    });
  });

  it("on x86_64 kills an x32 system call, and leaves -1 (no system call) to the kernel", () => {
    const filter = seccompFilter("x64");
    expect(verdict(filter, 0xc000003e, 0x40000000 | 41, [AF_INET])).toBe(KILL);
    expect(verdict(filter, 0xc000003e, 0x40000000)).toBe(KILL);
    expect(verdict(filter, 0xc000003e, -1)).toBe(ALLOW);
  });

  it("exists for little-endian x86_64 and aarch64 only", () => {
    expect(seccompUnsupported("x64", "LE")).toBeUndefined();
    expect(seccompUnsupported("arm64", "LE")).toBeUndefined();
    expect(seccompUnsupported("ia32", "LE")).toBe(
      "the sandbox's seccomp filter exists for x86_64 and aarch64 only, not ia32 (LE)",
    );
    expect(seccompUnsupported("arm64", "BE")).toBe(
      "the sandbox's seccomp filter exists for x86_64 and aarch64 only, not arm64 (BE)",
    );
    expect(() => seccompFilter("riscv64")).toThrow("not riscv64");
  });
});
