import { chmod, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CommandToResolve, resolveCommand } from "../src/trust/command-files.js";
import { useTempDirs } from "./support/temp.js";

/**
 * What a command line runs and loads from the workspace, found as the program finds it: each row
 * of the round-4 table (`node srv`, `NODE_OPTIONS=--require ./pre`, a `bin/node` on the entry's
 * `PATH`, `sh -c`, `node -e`, a name in another case), and what cannot be known said in words.
 */

const tempDir = useTempDirs();

async function workspaceWith(files: Record<string, string>): Promise<string> {
  const workspace = await tempDir();
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(workspace, name)), { recursive: true });
    await writeFile(join(workspace, name), text);
  }
  return workspace;
}

/** The files found, relative to the workspace (`-` marks one tried and absent), and the words. */
async function resolved(
  workspace: string,
  line: Partial<CommandToResolve> & { command: string },
): Promise<{ files: string[]; unknown: string[] }> {
  const { files, unknown } = await resolveCommand(
    {
      args: [],
      env: {},
      inherited: { PATH: process.env.PATH },
      cwd: workspace,
      ...line,
    },
    { root: workspace, workspace },
  );
  return {
    files: files.map(
      (file) => `${file.present ? "" : "-"}${file.path.slice(workspace.length + 1)}`,
    ),
    unknown,
  };
}

describe("what a command line runs from the workspace", () => {
  it("finds the script node runs for a name without its extension, and what would run first", async () => {
    const workspace = await workspaceWith({ "srv.js": "", "srv.mjs": "" });
    expect(await resolved(workspace, { command: "node", args: ["srv", "stdio"] })).toEqual({
      files: ["-srv", "srv.js"],
      unknown: [],
    });
  });

  it("finds a folder's package.json main, else its index.js", async () => {
    const workspace = await workspaceWith({
      "app/package.json": '{"main": "lib/main"}',
      "app/lib/main.js": "",
      "tool/index.js": "",
    });
    expect((await resolved(workspace, { command: "node", args: ["app"] })).files).toEqual([
      "-app.js",
      "-app.json",
      "-app.node",
      "-app.mjs",
      "-app.cjs",
      "app/package.json",
      "-app/lib/main",
      "app/lib/main.js",
    ]);
    expect((await resolved(workspace, { command: "node", args: ["tool"] })).files).toContain(
      "tool/index.js",
    );
  });

  it("finds the modules NODE_OPTIONS preloads, from the entry's env or the inherited one", async () => {
    const workspace = await workspaceWith({ "pre.js": "", "hostile.mjs": "", "loader.mjs": "" });
    const entry = await resolved(workspace, {
      command: "node",
      args: ["hostile.mjs"],
      env: { NODE_OPTIONS: "--require ./pre --loader=./loader.mjs" },
    });
    expect(entry).toEqual({ files: ["-pre", "pre.js", "loader.mjs", "hostile.mjs"], unknown: [] });
    const inherited = await resolved(workspace, {
      command: "node",
      args: ["hostile.mjs"],
      inherited: { PATH: process.env.PATH, NODE_OPTIONS: "-r ./pre.js" },
    });
    expect(inherited.files).toEqual(["pre.js", "hostile.mjs"]);
  });

  it("finds each preload spelling in argv: -r VALUE, -rVALUE, --import=VALUE, --experimental-loader VALUE", async () => {
    const workspace = await workspaceWith({ "a.js": "", "b.js": "", "c.mjs": "", "d.mjs": "" });
    const args = [
      "-r",
      "./a.js",
      "-r./b.js",
      "--import=./c.mjs",
      "--experimental-loader",
      "./d.mjs",
    ];
    expect(await resolved(workspace, { command: "node", args })).toEqual({
      files: ["a.js", "b.js", "c.mjs", "d.mjs"],
      unknown: [],
    });
  });

  it("finds the program a workspace folder on the entry's PATH supplies, and notes one that could", async () => {
    const workspace = await workspaceWith({ "bin/node": "#!/bin/sh\nexit 0\n", "srv.mjs": "" });
    await chmod(join(workspace, "bin/node"), 0o755);
    const env = { PATH: `bin:${process.env.PATH}` };
    expect(await resolved(workspace, { command: "node", args: ["srv.mjs"], env })).toEqual({
      files: ["bin/node", "srv.mjs"],
      unknown: [],
    });
    const empty = await workspaceWith({ "srv.mjs": "" });
    await mkdir(join(empty, "bin"));
    expect(
      (await resolved(empty, { command: "node", args: ["srv.mjs"], env: { PATH: env.PATH } }))
        .files,
    ).toEqual(["-bin/node", "srv.mjs"]);
  });

  it("says in words that a shell's -c text is not followed, and still covers the files it names", async () => {
    const workspace = await workspaceWith({ "srv.mjs": "" });
    expect(await resolved(workspace, { command: "sh", args: ["-c", "node srv.mjs"] })).toEqual({
      files: ["srv.mjs"],
      unknown: ["sh runs the text of its -c option, which mini-agent does not follow"],
    });
    // A shell given a script file runs that file.
    expect(await resolved(workspace, { command: "bash", args: ["srv.mjs"] })).toEqual({
      files: ["srv.mjs"],
      unknown: [],
    });
  });

  it("says in words that node -e, -p and a bare preload are not followed", async () => {
    const workspace = await workspaceWith({ "pre.js": "" });
    const code = await resolved(workspace, {
      command: "node",
      args: ["-e", "require('./pre.js')"],
    });
    expect(code.unknown).toEqual([
      "node runs the code of its -e option, which mini-agent does not follow",
    ]);
    const printed = await resolved(workspace, { command: "node", args: ["--print=1"] });
    expect(printed.unknown).toEqual([
      "node runs the code of its --print option, which mini-agent does not follow",
    ]);
    const bare = await resolved(workspace, { command: "node", args: ["--import", "tsx", "x.ts"] });
    expect(bare.unknown).toEqual([
      'node loads "tsx" (--import) from node_modules, which mini-agent does not follow',
    ]);
  });

  it("says in words that an interpreter it does not follow is not followed", async () => {
    const workspace = await workspaceWith({ "srv.py": "" });
    expect(await resolved(workspace, { command: "python3", args: ["srv.py"] })).toEqual({
      files: ["srv.py"],
      unknown: ["python3 runs what it finds itself, which mini-agent does not follow"],
    });
  });

  it("takes a name as the file system has it: SRV.MJS is not srv.mjs where case matters", async () => {
    const workspace = await workspaceWith({ "srv.mjs": "" });
    const { files } = await resolved(workspace, { command: "node", args: ["SRV.MJS"] });
    expect(files[0]).toBe("-SRV.MJS");
    expect(files).not.toContain("srv.mjs");
  });
});
