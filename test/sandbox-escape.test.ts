import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bashTool } from "../src/tools/bash.js";
import { realSandbox, useOutsideFolders } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The model tries to leave the sandbox with the powers of the uid that started mini-agent
 * (root here and in CI): capabilities, remounts, device nodes, new privileges.
 */

const tempDir = useTempDirs();
const outsideFolder = useOutsideFolders();

const sandboxed = await realSandbox();

describe.skipIf(!sandboxed)("escaping the sandbox", () => {
  it("runs with no capabilities and no new privileges", async () => {
    const root = await tempDir();
    const bash = bashTool(root, { sandbox: { mode: "required" } });
    const status = await bash.execute({
      command: "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status",
    });
    expect(status).toEqual({
      content: [
        "CapInh:\t0000000000000000",
        "CapPrm:\t0000000000000000",
        "CapEff:\t0000000000000000",
        "CapBnd:\t0000000000000000",
        "CapAmb:\t0000000000000000",
        "NoNewPrivs:\t1",
        "[exit code 0]",
      ].join("\n"),
      isError: false,
    });
  });

  it("cannot remount / or the state folder writable, nor write outside the workspace", async () => {
    const root = await tempDir();
    const outside = await outsideFolder("escape");
    const state = join(outside, "state");
    await mkdir(state);
    const bash = bashTool(root, { sandbox: { mode: "required", readOnly: [state] } });
    const remountRoot = await bash.execute({
      command: `mount -o remount,bind,rw / && touch ${outside}/escaped`,
    });
    expect(remountRoot.isError).toBe(true);
    const remountState = await bash.execute({
      command: `mount -o remount,bind,rw ${state} && touch ${state}/escaped`,
    });
    expect(remountState.isError).toBe(true);
    const freshMount = await bash.execute({
      command: `mount -t tmpfs none ${outside} && echo mounted`,
    });
    expect(freshMount.isError).toBe(true);
    expect(await readdir(outside)).toEqual(["state"]);
    expect(await readdir(state)).toEqual([]);
  });

  it("cannot make device nodes, even in the workspace", async () => {
    const root = await tempDir();
    const bash = bashTool(root, { sandbox: { mode: "required" } });
    const result = await bash.execute({ command: "mknod disk b 8 0" });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("Operation not permitted");
    expect(await readdir(root)).toEqual([]);
  });

  it("runs as the uid that started mini-agent, and cannot create user namespaces", async () => {
    const root = await tempDir();
    const bash = bashTool(root, { sandbox: { mode: "required" } });
    expect(await bash.execute({ command: "id -u; id -g" })).toEqual({
      content: `${process.getuid?.()}\n${process.getgid?.()}\n[exit code 0]`,
      isError: false,
    });
    const nested = await bash.execute({ command: "unshare --user --map-root-user true" });
    expect(nested.isError).toBe(true);
  });
});
