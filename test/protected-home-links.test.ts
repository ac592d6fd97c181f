import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { protectedWhy } from "../src/protected/files.js";
import { homeLinksInto } from "../src/protected/home-links.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

describe("a dotfiles repository the home folder links into", () => {
  it("protects the workspace files the home folder's start-up and configuration links lead to", async () => {
    const ws = await workspace();
    const top = await realpath(ws.root);
    const home = join(top, "home");
    const root = join(top, "dotfiles");
    for (const folder of ["bash", "nvim", "scripts", "notes"])
      await mkdir(join(root, folder), { recursive: true });
    await mkdir(join(home, ".config"), { recursive: true });
    await mkdir(join(home, ".local/bin"), { recursive: true });
    await writeFile(join(root, "bash/.bashrc"), "# mine\n");
    await writeFile(join(root, "scripts/tool"), "#!/bin/sh\n");
    await writeFile(join(root, "notes/todo.md"), "x\n");
    await symlink(join(root, "bash/.bashrc"), join(home, ".bashrc"));
    await symlink(join(root, "nvim"), join(home, ".config/nvim"));
    await symlink(join(root, "scripts/tool"), join(home, ".local/bin/tool"));
    await symlink(join(root, "notes"), join(home, "notes"));
    const was = process.env.HOME;
    process.env.HOME = home;
    try {
      const links = homeLinksInto(root);
      expect([...links.keys()].sort()).toEqual([
        join(root, "bash/.bashrc"),
        join(root, "nvim"),
        join(root, "scripts/tool"),
      ]);
      for (const path of ["bash/.bashrc", "nvim/init.lua", "scripts/tool"])
        expect(await protectedWhy(root, join(root, path), links), path).toBeDefined();
      expect(await protectedWhy(root, join(root, "notes/todo.md"), links)).toBeUndefined();
    } finally {
      process.env.HOME = was;
    }
  });
});
