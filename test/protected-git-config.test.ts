import { mkdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { protectedWhy } from "../src/protected/files.js";
import { gitConfigFiles } from "../src/protected/git-config.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

describe("what the repository's own configuration makes code", () => {
  it("protects the core.hooksPath folder and the files include.path and includeIf name, inside the workspace only", async () => {
    const ws = await workspace();
    const root = await realpath(ws.root);
    await mkdir(join(root, ".git"));
    await mkdir(join(root, ".githooks"));
    await writeFile(
      join(root, ".git/config"),
      [
        "[core]",
        "\tbare = false",
        '\thooksPath = ".githooks" ; the team\'s hooks',
        "[include]",
        "\tpath = ../team.gitconfig",
        '[includeIf "gitdir:~/work/"]',
        "\tpath = /etc/elsewhere.gitconfig",
        '[INCLUDEIF "onbranch:main"]',
        "\tPath = ../conf/main.gitconfig",
        "",
      ].join("\n"),
    );
    const files = await gitConfigFiles(root);
    expect([...files.keys()].sort()).toEqual([
      join(root, ".githooks"),
      join(root, "conf/main.gitconfig"),
      join(root, "team.gitconfig"),
    ]);
    // Every writer asks the same set: a file made later in the hooks folder is in it too.
    for (const path of [".githooks/pre-commit", ".githooks/post-checkout", "team.gitconfig"])
      expect(await protectedWhy(root, join(root, path), files), path).toBeDefined();
    expect(await protectedWhy(root, join(root, "src/a.ts"), files)).toBeUndefined();
    expect(await protectedWhy(root, join(root, ".githooksx"), files)).toBeUndefined();
  });

  it("finds nothing without a repository of the workspace's own", async () => {
    const ws = await workspace();
    expect((await gitConfigFiles(await realpath(ws.root))).size).toBe(0);
  });
});
