import { existsSync } from "node:fs";
import { readdir, readFile, stat, symlink } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSandbox } from "../src/sandbox/bwrap.js";
import { homeInSandbox } from "../src/sandbox/home.js";
import { bashTool } from "../src/tools/bash.js";
import { survivors } from "./support/processes.js";
import { realSandbox, useOutsideFolders } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

const tempDir = useTempDirs();
const outsideFolder = useOutsideFolders();

const sandboxed = await realSandbox();

describe.skipIf(!sandboxed)("bash in the bubblewrap sandbox", () => {
  const bashIn = (root: string) => bashTool(root, { sandbox: { mode: "required" }, killGrace: 1 });

  it("writes inside the workspace but not outside it, and says why", async () => {
    const root = await tempDir();
    const outside = await outsideFolder("outside");
    const bash = bashIn(root);
    expect(await bash.execute({ command: "echo inside > made.txt && cat made.txt" })).toEqual({
      content: "inside\n[exit code 0]",
      isError: false,
    });
    expect(await readFile(join(root, "made.txt"), "utf8")).toBe("inside\n");
    const blocked = await bash.execute({ command: `echo x > ${outside}/escaped.txt` });
    expect(blocked.isError).toBe(true);
    expect(blocked.content).toContain("Read-only file system");
    expect(
      blocked.content.endsWith(
        "[exit code 1]\n[sandbox: only the workspace is writable; the rest of the file system is read-only]",
      ),
    ).toBe(true);
    await expect(stat(join(outside, "escaped.txt"))).rejects.toThrow(/ENOENT/);
  });

  it("keeps /tmp private and home read-only", async () => {
    const root = await tempDir();
    const bash = bashIn(root);
    const marker = `mini-agent-private-${process.pid}-${Date.now()}`;
    await bash.execute({ command: `echo leak > /tmp/${marker}` });
    expect((await readdir("/tmp")).includes(marker)).toBe(false);
    const home = await bash.execute({ command: 'touch "$HOME/mini-agent-sandbox-probe"' });
    // HOME=/tmp cannot be kept read-only: it is the private /tmp, and the run says so.
    if (homeInSandbox(process.env, root).kind === "private") {
      expect(home.isError).toBe(false);
      expect(existsSync(join(process.env.HOME ?? "", "mini-agent-sandbox-probe"))).toBe(false);
    } else expect(home.isError).toBe(true);
  });

  it("cannot reach a loopback server started by the test", async () => {
    const root = await tempDir();
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const plain = bashTool(root, { sandbox: { mode: "off" } });
      expect(
        (await plain.execute({ command: `echo hi > /dev/tcp/127.0.0.1/${port}` })).isError,
      ).toBe(false);
      expect(connections).toBe(1);
      const result = await bashIn(root).execute({
        command: `echo hi > /dev/tcp/127.0.0.1/${port}`,
      });
      expect(result.isError).toBe(true);
      expect(result.content.endsWith("[sandbox: there is no network inside the sandbox]")).toBe(
        true,
      );
      expect(connections).toBe(1);
    } finally {
      server.close();
    }
  });

  it("kills everything started inside at the timeout and on abort", async () => {
    const root = await tempDir();
    const bash = bashIn(root);
    const timedOut = await bash.execute({
      command: "trap '' TERM; sleep 331 & sleep 332",
      timeout: 1,
    });
    expect(timedOut.content).toBe(
      "[timed out after 1 s: the command and its processes were killed]",
    );
    const controller = new AbortController();
    const running = bash.execute(
      { command: "touch begun; sleep 333 & sleep 334" },
      controller.signal,
    );
    // Aborted once the command has begun, however long the sandbox took to start.
    await until(() => existsSync(join(root, "begun")));
    controller.abort();
    const aborted = await running;
    expect(aborted.content).toBe("[aborted: the command and its processes were killed]");
    expect(await survivors(["sleep 331", "sleep 332", "sleep 333", "sleep 334"])).toEqual([]);
  });

  it("ends a process that left the group with setsid when the command returns", async () => {
    const root = await tempDir();
    const result = await bashIn(root).execute({
      command: "setsid sleep 335 > /dev/null 2>&1 & echo started",
    });
    expect(result).toEqual({ content: "started\n[exit code 0]", isError: false });
    expect(await survivors(["sleep 335"])).toEqual([]);
  });

  it("keeps a read-only path read-only even inside the workspace", async () => {
    const root = await tempDir();
    const state = join(root, "state");
    await bashTool(root, { sandbox: { mode: "off" } }).execute({ command: "mkdir state" });
    const bash = bashTool(root, { sandbox: { mode: "required", readOnly: [state] } });
    expect((await bash.execute({ command: "echo x > state/file" })).isError).toBe(true);
    expect((await bash.execute({ command: "echo x > other" })).isError).toBe(false);
  });
});

describe("without bubblewrap", () => {
  it("refuses bash under required, and runs it plainly under auto", async () => {
    const root = await tempDir();
    const missing = join(root, "no-such-bwrap");
    const required = bashTool(root, { sandbox: { mode: "required", bwrap: missing } });
    expect(await required.execute({ command: "echo hi" })).toEqual({
      content:
        "bash refused: the sandbox is required but unavailable: bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)",
      isError: true,
    });
    const auto = bashTool(root, { sandbox: { mode: "auto", bwrap: missing } });
    expect(await auto.execute({ command: "echo hi" })).toEqual({
      content: "hi\n[exit code 0]",
      isError: false,
    });
  });

  it("reports a bwrap that cannot build the sandbox as unavailable", async () => {
    const root = await tempDir();
    const fake = join(root, "false-bwrap");
    await symlink("/bin/false", fake);
    expect(await resolveSandbox({ mode: "auto", bwrap: fake })).toEqual({
      kind: "unavailable",
      mode: "auto",
      reason: "bwrap cannot create the sandbox here: ",
    });
  });
});
