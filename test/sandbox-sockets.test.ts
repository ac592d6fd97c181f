import { execFileSync, spawn } from "node:child_process";
import { chmod, chown, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Server } from "node:net";
import { arch } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bashTool } from "../src/tools/bash.js";
import { bashInChild, nobodyCanRun } from "./support/bash-in-child.js";
import { realSandbox, useOutsideFolders } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

/**
 * Sockets from inside the sandbox. `/` is bound read-only, but `connect()` on a Unix socket file
 * ignores a read-only mount, and the network namespace isolates only abstract sockets: a docker,
 * D-Bus or ssh-agent socket anywhere on the host would answer. The sandbox's seccomp filter
 * refuses every socket family but IPv4, IPv6 and netlink (all three confined to the sandbox's own
 * network namespace), datagram socket pairs (a datagram socket can be re-addressed to any socket
 * file), io_uring (which opens sockets without the socket system call) and system calls of
 * another ABI.
 */

const tempDir = useTempDirs();
const outsideFolder = useOutsideFolders();
const sandboxed = await realSandbox();

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A "host daemon" on a Unix socket anyone may connect to, counting its connections. */
async function hostSocket(dir: string): Promise<{ path: string; connections: () => number }> {
  const path = join(dir, "host.sock");
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.on("error", () => {}).end("PWNED\n");
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  await chmod(path, 0o777);
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { path, connections: () => connections };
}

/** Folders outside /tmp for host sockets: under /var/tmp, and under /run where writable. */
async function socketFolders(): Promise<string[]> {
  const folders = [await outsideFolder("sock")];
  try {
    const run = await mkdtemp("/run/mini-agent-sock-");
    closers.push(() => rm(run, { recursive: true, force: true }));
    folders.push(run);
  } catch {
    // /run is not writable here: /var/tmp alone.
  }
  for (const folder of folders) await chmod(folder, 0o755);
  return folders;
}

/** Tries a Unix-socket connection to each path given, with Python and with Node. */
const probes = {
  "connect.py": `import socket, sys
for path in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        print(path + ": python connected")
    except OSError as e:
        print(path + ": python " + type(e).__name__ + " " + str(e.errno))
`,
  "connect.cjs": `const net = require("node:net");
(async () => {
  for (const path of process.argv.slice(2)) {
    await new Promise((done) => {
      const s = net.connect(path);
      s.on("connect", () => { console.log(path + ": node connected"); s.destroy(); done(); });
      s.on("error", (e) => { console.log(path + ": node " + e.code); done(); });
    });
  }
})();
`,
};

async function writeProbes(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) await writeFile(join(root, name), text);
}

describe.skipIf(!sandboxed)("sockets in the sandbox", () => {
  const bashIn = (root: string) => bashTool(root, { sandbox: { mode: "required" }, killGrace: 1 });

  it("cannot connect to a host Unix socket outside /tmp, and the daemon sees nothing", async () => {
    const root = await tempDir();
    await writeProbes(root, probes);
    const sockets = await Promise.all((await socketFolders()).map(hostSocket));
    const paths = sockets.map((socket) => socket.path).join(" ");
    const result = await bashIn(root).execute({
      command: `python3 connect.py ${paths}; node connect.cjs ${paths}`,
    });
    expect(result).toEqual({
      content: [
        ...sockets.map(({ path }) => `${path}: python PermissionError 13`),
        ...sockets.map(({ path }) => `${path}: node EACCES`),
        "[exit code 0]",
      ].join("\n"),
      isError: false,
    });
    expect(sockets.map((socket) => socket.connections())).toEqual(sockets.map(() => 0));
  });

  it("says in a last line that the sandbox refused a client's socket", async () => {
    const root = await tempDir();
    const [socket] = await Promise.all(
      [outsideFolder("curl")].map(async (dir) => hostSocket(await dir)),
    );
    const result = await bashIn(root).execute({
      command: `curl -sS --unix-socket ${socket?.path} http://daemon/ping`,
    });
    const [said, ...rest] = result.content.split("\n");
    expect(said).toMatch(/^curl: \(7\) .*Couldn't connect to server$/);
    expect({ rest, isError: result.isError }).toEqual({
      rest: [
        "[exit code 7]",
        "[sandbox: Unix sockets of the host and the network cannot be reached from the sandbox]",
      ],
      isError: true,
    });
    expect(socket?.connections()).toBe(0);
  });

  it("cannot send to a host datagram socket through a datagram socket pair", async () => {
    const root = await tempDir();
    const folder = await outsideFolder("dgram");
    await chmod(folder, 0o755);
    const path = join(folder, "host-dgram.sock");
    const receiver = spawn("python3", [
      "-c",
      `import socket, sys, os
r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
r.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); r.setblocking(False)
print("ready", flush=True); sys.stdin.readline()
got = []
while True:
    try: got.append(r.recv(100).decode())
    except BlockingIOError: break
print("received " + repr(got), flush=True)`,
      path,
    ]);
    let heard = "";
    receiver.stdout.on("data", (chunk: Buffer) => {
      heard += chunk.toString();
    });
    await until(() => heard.includes("ready"));
    await writeProbes(root, {
      "dgram.py": `import socket, sys
for kind in ("SOCK_DGRAM", "SOCK_RAW"):
    try:
        a, b = socket.socketpair(socket.AF_UNIX, getattr(socket, kind))
        a.sendto(b"via " + kind.encode(), sys.argv[1])
        print(kind + ": sent")
    except OSError as e:
        print(kind + ": " + type(e).__name__ + " " + str(e.errno))
`,
    });
    const result = await bashIn(root).execute({ command: `python3 dgram.py ${path}` });
    receiver.stdin.end("done\n");
    await new Promise((resolve) => receiver.on("close", resolve));
    expect(result).toEqual({
      content: "SOCK_DGRAM: PermissionError 13\nSOCK_RAW: PermissionError 13\n[exit code 0]",
      isError: false,
    });
    expect(heard).toBe("ready\nreceived []\n");
  });

  it("refuses other socket families and io_uring", async () => {
    const root = await tempDir();
    await writeProbes(root, {
      "families.py": `import ctypes, socket
for name in ("AF_VSOCK", "AF_ALG", "AF_PACKET"):
    try:
        socket.socket(getattr(socket, name), socket.SOCK_SEQPACKET if name == "AF_ALG" else socket.SOCK_DGRAM)
        print(name + ": opened")
    except OSError as e:
        print(name + ": " + type(e).__name__ + " " + str(e.errno))
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 8, params)
print("io_uring_setup: " + (str(ctypes.get_errno()) if fd < 0 else "ring"))
`,
    });
    expect(await bashIn(root).execute({ command: "python3 families.py" })).toEqual({
      content: [
        "AF_VSOCK: PermissionError 13",
        "AF_ALG: PermissionError 13",
        "AF_PACKET: PermissionError 13",
        "io_uring_setup: 38",
        "[exit code 0]",
      ].join("\n"),
      isError: false,
    });
  });

  it("keeps pipes, stream socket pairs, child processes and its own loopback working", async () => {
    const root = await tempDir();
    await writeProbes(root, {
      "works.py": `import socket
for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):
    a, b = socket.socketpair(socket.AF_UNIX, kind)
    a.send(b"pair"); print(b.recv(4).decode())
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
client = socket.create_connection(server.getsockname()); conn, _ = server.accept()
client.send(b"tcp"); print(conn.recv(3).decode())
server6 = socket.socket(socket.AF_INET6); server6.bind(("::1", 0)); server6.listen()
client6 = socket.create_connection(server6.getsockname()[:2]); conn6, _ = server6.accept()
client6.send(b"tcp6"); print(conn6.recv(4).decode())
`,
      "child.cjs": `require("node:child_process").exec("echo child | cat", (e, out) => process.stdout.write(out));`,
    });
    expect(
      await bashIn(root).execute({
        command:
          "echo pipe | tr a-z A-Z; python3 works.py; node child.cjs; ip -o link show lo | cut -d' ' -f2",
      }),
    ).toEqual({
      content: "PIPE\npair\npair\ntcp\ntcp6\nchild\nlo:\n[exit code 0]",
      isError: false,
    });
  });

  it.skipIf(arch() !== "x64")(
    "kills a process at its first 32-bit or x32 system call",
    async () => {
      const root = await tempDir();
      await writeProbes(root, {
        "abi.py": `import ctypes, mmap, os, signal
def i386_getpid():
    code = bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3])  # mov eax, 20; int 0x80; ret
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()
def x32_getpid():
    ctypes.CDLL(None).syscall(0x40000000 | 39)
for name, call in (("i386", i386_getpid), ("x32", x32_getpid)):
    pid = os.fork()
    if pid == 0:
        call()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print(name + ": " + (signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "exit " + str(os.WEXITSTATUS(status))))
`,
      });
      // Outside the sandbox the same calls run, unless the kernel has no 32-bit entry at all
      // (built without IA32 emulation): then \`int 0x80\` faults (SIGSEGV) before any filter
      // could see it, inside the sandbox as outside. Whatever the kernel does not refuse, the
      // sandbox must kill.
      const outside = execFileSync("python3", ["abi.py"], { cwd: root, encoding: "utf8" });
      expect(outside).toMatch(/^i386: (exit 0|SIGSEGV)\n/);
      const i386 = outside.startsWith("i386: SIGSEGV") ? "SIGSEGV" : "SIGSYS";
      expect(await bashIn(root).execute({ command: "python3 abi.py" })).toEqual({
        content: `i386: ${i386}\nx32: SIGSYS\n[exit code 0]`,
        isError: false,
      });
    },
  );
});

describe("what reaches a command besides its pipes", () => {
  it.each(["off", "required"] as const)(
    "with --sandbox %s, no file descriptor of the agent but stdin, stdout and stderr",
    async (mode) => {
      if (mode === "required" && !sandboxed) return;
      const root = await tempDir();
      const daemon = await hostSocket(await outsideFolder("fd"));
      const held = connect(daemon.path).on("error", () => {});
      await new Promise((resolve) => held.on("connect", resolve));
      closers.push(async () => {
        held.destroy();
      });
      const { result } = await bashInChild(root, mode, "ls /proc/$$/fd; exit", { extraFd: held });
      expect(result).toEqual({ content: "0\n1\n2\n[exit code 0]", isError: false });
    },
  );
});

const nobody = sandboxed && (await nobodyCanRun());

describe.skipIf(!nobody)("sockets in the sandbox, as nobody", () => {
  it("cannot connect to a host Unix socket that nobody may open", async () => {
    const root = await tempDir();
    await chown(root, 65534, 65534);
    await writeProbes(root, probes);
    const [daemon] = await Promise.all((await socketFolders()).map(hostSocket));
    if (!daemon) throw new Error("no host socket");
    const { result } = await bashInChild(
      root,
      "required",
      `id -u; python3 connect.py ${daemon.path}; node connect.cjs ${daemon.path}`,
      { asNobody: true },
    );
    expect(result).toEqual({
      content: `65534\n${daemon.path}: python PermissionError 13\n${daemon.path}: node EACCES\n[exit code 0]`,
      isError: false,
    });
    expect(daemon.connections()).toBe(0);
  });
});
