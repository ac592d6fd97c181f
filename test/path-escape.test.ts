import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workspacePath } from "../src/tools/path.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

async function attackSurface() {
  const ws = await workspace();
  const evil = `${ws.root}-evil`;
  await mkdir(evil);
  await writeFile(join(evil, "file.txt"), "evil\n");
  await ws.files({ "sub/file.txt": "inside\n" });
  await symlink(ws.outside, join(ws.root, "out"));
  await symlink(join(ws.outside, "secret.txt"), join(ws.root, "secret-link"));
  await symlink(join(ws.outside, "new-file.txt"), join(ws.root, "dangling"));
  await symlink(join(ws.outside, "no-dir"), join(ws.root, "dangling-dir"));
  await symlink("out", join(ws.root, "chain"));
  await symlink("../outside", join(ws.root, "rel-up"));
  await symlink("../../outside", join(ws.root, "sub", "up-two"));
  await symlink("sub", join(ws.root, "inner"));
  return { ws, evil };
}

describe("path boundary", () => {
  it("lets no tool escape the workspace in any of these attempts, and creates nothing outside", async () => {
    const { ws, evil } = await attackSurface();
    const o = ws.outside;
    const attempts: [string, Record<string, unknown>][] = [
      ["read", { path: "../outside/secret.txt" }],
      ["read", { path: join(o, "secret.txt") }],
      ["read", { path: "~/.bashrc" }],
      ["read", { path: "~" }],
      ["read", { path: "sub/../../outside/secret.txt" }],
      ["read", { path: "out/secret.txt" }],
      ["read", { path: "secret-link" }],
      ["read", { path: "chain/secret.txt" }],
      ["read", { path: "rel-up/secret.txt" }],
      ["read", { path: "sub/up-two/secret.txt" }],
      ["read", { path: "../ws-evil/file.txt" }],
      ["read", { path: join(evil, "file.txt") }],
      ["read", { path: "/etc/passwd" }],
      ["write", { path: "../outside/new.txt", content: "x" }],
      ["write", { path: "out/new.txt", content: "x" }],
      ["write", { path: "dangling", content: "x" }],
      ["write", { path: "dangling-dir/deeper/new.txt", content: "x" }],
      ["write", { path: "rel-up/new.txt", content: "x" }],
      ["write", { path: "~/new.txt", content: "x" }],
      ["write", { path: join(o, "new.txt"), content: "x" }],
      ["write", { path: "../ws-evil/new.txt", content: "x" }],
      ["edit", { path: "secret-link", oldText: "outside", newText: "pwned" }],
      ["edit", { path: "out/secret.txt", oldText: "outside", newText: "pwned" }],
      ["edit", { path: "chain/secret.txt", oldText: "outside", newText: "pwned" }],
      ["ls", { path: ".." }],
      ["ls", { path: "out" }],
      ["ls", { path: o }],
      ["find", { pattern: "*", path: ".." }],
      ["find", { pattern: "*", path: "rel-up" }],
      ["grep", { pattern: "secret", path: ".." }],
      ["grep", { pattern: "secret", path: "out" }],
      ["grep", { pattern: "outside", path: "secret-link" }],
      ["grep", { pattern: "evil", path: "../ws-evil" }],
    ];
    const results = [];
    for (const [tool, input] of attempts) results.push([tool, input, await ws.run(tool, input)]);
    expect(results).toEqual(
      attempts.map(([tool, input]) => [
        tool,
        input,
        { content: "path escapes workspace", isError: true },
      ]),
    );
    expect(attempts.length).toBeGreaterThanOrEqual(25);
    expect(await readdir(ws.outside)).toEqual(["secret.txt"]);
    expect(await readFile(join(ws.outside, "secret.txt"), "utf8")).toBe("outside secret\n");
    expect(await readdir(evil)).toEqual(["file.txt"]);
  });

  it("shows no outside content when searching the whole workspace", async () => {
    const { ws } = await attackSurface();
    expect(await ws.run("grep", { pattern: "secret|evil" })).toEqual({
      content:
        "no matches for secret|evil\n[skipped 7 entries: 2 dangling links, 5 links outside the workspace]",
    });
    const found = await ws.run("find", { pattern: "*.txt" });
    expect(found.content.split("\n")).toEqual(["sub/file.txt"]);
  });

  it("keeps links that stay inside working", async () => {
    const { ws } = await attackSurface();
    expect(await ws.run("read", { path: "inner/file.txt" })).toEqual({ content: "inside" });
    expect(await ws.run("read", { path: join(ws.root, "sub/file.txt") })).toEqual({
      content: "inside",
    });
    expect(await ws.run("write", { path: "inner/made.txt", content: "ok" })).toEqual({
      content: "created sub/made.txt (2 bytes)",
    });
    expect(await ws.run("grep", { pattern: "inside", path: "inner" })).toEqual({
      content: "sub/file.txt:1: inside\n[skipped 1 entry: 1 link outside the workspace]",
    });
    expect(await ws.run("grep", { pattern: "inside", path: "inner/file.txt" })).toEqual({
      content: "sub/file.txt:1: inside",
    });
  });

  it("keeps names that merely start with two dots, and resolves below a file as a path inside", async () => {
    const { ws } = await attackSurface();
    await ws.files({ "..notes": "dots\n" });
    expect(await ws.run("read", { path: "..notes" })).toEqual({ content: "dots" });
    expect(await workspacePath(ws.root, "sub/file.txt/below")).toBe(
      join(ws.root, "sub/file.txt/below"),
    );
    expect(await ws.run("read", { path: "sub/file.txt/below" })).toEqual({
      content: "read failed: a part of the path is not a folder",
      isError: true,
    });
  });

  it("reports a symlink loop plainly", async () => {
    const { ws } = await attackSurface();
    await symlink("loop-b", join(ws.root, "loop-a"));
    await symlink("loop-a", join(ws.root, "loop-b"));
    expect(await ws.run("read", { path: "loop-a" })).toEqual({
      content: "read failed: too many links in the path",
      isError: true,
    });
  });

  it("resolves paths that do not exist yet by their deepest existing ancestor", async () => {
    const { ws } = await attackSurface();
    expect(await workspacePath(ws.root, "a/b/c.txt")).toBe(join(ws.root, "a/b/c.txt"));
    expect(await workspacePath(ws.root, "inner/x/y")).toBe(join(ws.root, "sub/x/y"));
    await expect(workspacePath(ws.root, "dangling-dir/x")).rejects.toThrow(
      "path escapes workspace",
    );
    await expect(workspacePath(ws.root, "a\0b")).rejects.toThrow("path contains a NUL byte");
  });
});
