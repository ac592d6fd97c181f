import { chmod, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createWorkspaceTools } from "../src/tools/index.js";
import type { Tool } from "../src/types.js";
import { realSandbox } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();

async function setup() {
  const workspace = await tempDir();
  const home = await tempDir();
  const state = join(home, "state");
  const skill = join(state, "skills", "pdf");
  await mkdir(join(skill, "references"), { recursive: true });
  await writeFile(join(skill, "SKILL.md"), "---\nname: pdf\ndescription: x\n---\nbody\n");
  await writeFile(join(skill, "references", "x.md"), "reference text\n");
  await writeFile(join(state, "secret.txt"), "session secrets\n");
  await symlink(join(state, "secret.txt"), join(skill, "escape.md"));
  const roots: string[] = [skill];
  const tools = createWorkspaceTools(workspace, { stateDir: state, readOnlyRoots: () => roots });
  const run = (name: string, input: Record<string, unknown>) =>
    (tools.find((tool) => tool.spec.name === name) as Tool).execute(input);
  return { workspace, skill, state, run, roots };
}

describe("skill folders as read-only roots of the file tools", () => {
  it("read, ls, find and grep open a registered skill folder, shown by absolute path", async () => {
    const { skill, run } = await setup();
    expect(await run("read", { path: join(skill, "references", "x.md") })).toEqual({
      content: "reference text",
    });
    expect(await run("ls", { path: skill })).toEqual({
      content: "SKILL.md\nescape.md@\nreferences/",
    });
    expect(await run("find", { path: skill, pattern: "*.md" })).toEqual({
      content: [
        join(skill, "SKILL.md"),
        join(skill, "escape.md"),
        join(skill, "references", "x.md"),
      ].join("\n"),
    });
    expect(await run("grep", { path: skill, pattern: "reference" })).toEqual({
      content: `${join(skill, "references", "x.md")}:1: reference text\n[skipped 1 entry: 1 link outside the workspace]`,
    });
  });

  it("write and edit refuse them, and a link out of a skill folder is refused", async () => {
    const { skill, state, run, roots } = await setup();
    expect(await run("write", { path: join(skill, "SKILL.md"), content: "taken over" })).toEqual({
      content: "path escapes workspace",
      isError: true,
    });
    expect(await run("read", { path: join(skill, "escape.md") })).toEqual({
      content: "path escapes workspace",
      isError: true,
    });
    expect(await run("read", { path: join(state, "secret.txt") })).toMatchObject({ isError: true });
    roots.length = 0;
    expect(await run("read", { path: join(skill, "SKILL.md") })).toEqual({
      content: "path escapes workspace",
      isError: true,
    });
  });

  it("a skill folder outside the state folder: write refuses it as outside the workspace", async () => {
    const workspace = await tempDir();
    const skill = await tempDir();
    await writeFile(join(skill, "SKILL.md"), "x\n");
    const tools = createWorkspaceTools(workspace, { readOnlyRoots: () => [skill] });
    const run = (name: string, input: Record<string, unknown>) =>
      (tools.find((tool) => tool.spec.name === name) as Tool).execute(input);
    expect(await run("read", { path: join(skill, "SKILL.md") })).toEqual({ content: "x" });
    const refused = { content: "path escapes workspace", isError: true };
    expect(await run("write", { path: join(skill, "new.md"), content: "y" })).toEqual(refused);
    expect(
      await run("edit", { path: join(skill, "SKILL.md"), oldText: "x", newText: "y" }),
    ).toEqual(refused);
  });

  it("bash runs a skill's scripts/x.sh in the sandbox, though the state folder holding it is hidden", async () => {
    if (!(await realSandbox())) return;
    const { workspace, skill, state } = await setup();
    await mkdir(join(skill, "scripts"));
    await writeFile(
      join(skill, "scripts", "x.sh"),
      '#!/bin/sh\necho skill script ran\ntouch "$0.new"\n',
    );
    await chmod(join(skill, "scripts", "x.sh"), 0o755);
    const env = { PATH: process.env.PATH, HOME: join(state, ".."), MINI_AGENT_HOME: state };
    const bash = (roots: string[]) =>
      (
        createWorkspaceTools(workspace, {
          bash: { env, sandbox: { mode: "required", readable: () => roots } },
        }).find((tool) => tool.spec.name === "bash") as Tool
      ).execute({ command: join(skill, "scripts", "x.sh") });
    expect(await bash([skill])).toEqual({
      content: `skill script ran\ntouch: cannot touch '${join(skill, "scripts", "x.sh")}.new': Read-only file system\n[exit code 1]\n[sandbox: only the workspace is writable; the rest of the file system is read-only]`,
      isError: true,
    });
    expect(await bash([])).toMatchObject({
      content: expect.stringContaining("No such file or directory"),
    });
  });
});
