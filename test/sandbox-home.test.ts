import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sandboxedArgv } from "../src/sandbox/bwrap.js";
import { homeInSandbox } from "../src/sandbox/home.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { bashTool } from "../src/tools/bash.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";

/** A HOME under /tmp, which the sandbox replaces with a private tmpfs: kept read-only, or told. */

const tempDir = useTempDirs();

describe("a HOME under /tmp in the sandbox's mounts", () => {
  it("binds a HOME under /tmp read-only over the private /tmp, before the workspace", async () => {
    const home = join(await tempDir(), "home");
    await mkdir(home);
    const workspace = await tempDir();
    const { argv } = sandboxedArgv("bwrap", workspace, "true", {}, { HOME: home });
    const tmpfs = argv.indexOf("/tmp");
    const bind = argv.findIndex((arg, i) => arg === "--ro-bind" && argv[i + 1] === home);
    expect(argv.slice(tmpfs - 1, tmpfs + 1)).toEqual(["--tmpfs", "/tmp"]);
    expect(bind).toBeGreaterThan(tmpfs);
    expect(bind).toBeLessThan(argv.indexOf(workspace));
    expect(homeInSandbox({ HOME: home }, workspace)).toEqual({ kind: "read-only" });
  });

  it("says why a HOME of /tmp itself cannot be kept read-only, and leaves other homes alone", async () => {
    const workspace = await tempDir();
    expect(homeInSandbox({ HOME: "/tmp" }, workspace)).toEqual({
      kind: "private",
      reason:
        "HOME is /tmp, which the sandbox replaces with a private, empty /tmp: bash sees an empty HOME there, and what it writes in it is discarded, not refused",
    });
    const { argv } = sandboxedArgv("bwrap", workspace, "true", {}, { HOME: "/tmp" });
    expect(argv.filter((arg) => arg === "/tmp")).toEqual(["/tmp"]);
    expect(homeInSandbox({ HOME: "/home/someone" }, workspace)).toEqual({ kind: "read-only" });
    expect(homeInSandbox({}, workspace)).toEqual({ kind: "read-only" });
    // A HOME inside the workspace is the workspace's: writable, as the rest of it.
    expect(homeInSandbox({ HOME: join(workspace, "h") }, workspace)).toEqual({ kind: "workspace" });
  });
});

const sandboxed = await realSandbox();

describe.skipIf(!sandboxed)("bash in the sandbox with HOME under /tmp", () => {
  it("reads HOME but cannot write it, while the workspace stays writable", async () => {
    const home = join(await tempDir(), "home");
    await mkdir(home);
    await writeFile(join(home, ".profile-note"), "hello\n");
    const workspace = await tempDir();
    const bash = bashTool(workspace, {
      sandbox: { mode: "required" },
      env: { ...process.env, HOME: home },
    });
    const read = await bash.execute({ command: 'cat "$HOME/.profile-note"' });
    expect(read).toEqual({ content: "hello\n[exit code 0]", isError: false });
    const write = await bash.execute({ command: 'touch "$HOME/probe"' });
    expect(write.isError).toBe(true);
    expect(write.content).toContain("Read-only file system");
    expect(await readdir(home)).toEqual([".profile-note"]);
    const inside = await bash.execute({ command: "touch made && ls" });
    expect(inside).toEqual({ content: "made\n[exit code 0]", isError: false });
  });

  it("with HOME=/tmp, writes there are private and discarded, as the notice says", async () => {
    const workspace = await tempDir();
    const bash = bashTool(workspace, {
      sandbox: { mode: "required" },
      env: { ...process.env, HOME: "/tmp" },
    });
    const marker = `mini-agent-home-probe-${process.pid}-${Date.now()}`;
    const write = await bash.execute({
      command: `touch "$HOME/${marker}" && ls "$HOME/${marker}"`,
    });
    expect(write).toEqual({ content: `/tmp/${marker}\n[exit code 0]`, isError: false });
    expect((await readdir("/tmp")).includes(marker)).toBe(false);
  });
});

const setup = useCliSetup();

describe.skipIf(!sandboxed)("the run with HOME=/tmp", () => {
  it("says in one line why HOME is not read-only in the sandbox", async () => {
    const { options } = await setup([
      stream(turn({ text: ["Hi."] })),
      stream(turn({ text: ["Hi."] })),
    ]);
    const run = await runBin(["--allow-bash", "hello"], {
      ...options,
      env: { ...options.env, HOME: "/tmp" },
    });
    expect(run.code).toBe(0);
    expect(run.stderr.split("\n").filter((line) => line.includes("HOME"))).toEqual([
      "mini-agent: note: HOME is /tmp, which the sandbox replaces with a private, empty /tmp: bash sees an empty HOME there, and what it writes in it is discarded, not refused",
    ]);
    const elsewhere = await runBin(["--allow-bash", "hello"], options);
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stderr).not.toContain("HOME");
  });
});
