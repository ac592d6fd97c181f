import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { canonicalJson, loadTrust, trustFile } from "../src/trust/trust.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const hash = (text: string) => contentHash(text);

describe("the workspace trust record", () => {
  it("hashes JSON canonically: key order and layout do not change the hash", () => {
    const a = { command: "node", args: ["s.js"], env: { B: "2", A: "1" } };
    const b = JSON.parse('{"env":{"A":"1","B":"2"},  "args":["s.js"],"command":"node"}');
    expect(canonicalJson(a)).toBe('{"args":["s.js"],"command":"node","env":{"A":"1","B":"2"}}');
    expect(contentHash(canonicalJson(a))).toBe(contentHash(canonicalJson(b)));
    expect(contentHash(canonicalJson({ ...a, args: ["t.js"] }))).not.toBe(
      contentHash(canonicalJson(a)),
    );
  });

  it("trusts nothing at first, then exactly what was trusted, by content", async () => {
    const [state, root] = [await tempDir(), await tempDir()];
    const trust = await loadTrust(state, root);
    expect(trust.warning).toBeUndefined();
    expect(trust.isTrusted("mcp", "github", hash("one"))).toBe(false);
    await trust.trust([
      { kind: "mcp", name: "github", hash: hash("one") },
      { kind: "config", name: "config.json", hash: hash("cfg") },
    ]);
    expect(trust.isTrusted("mcp", "github", hash("one"))).toBe(true);
    expect(trust.isTrusted("mcp", "github", hash("changed"))).toBe(false);
    expect(trust.isTrusted("skill", "github", hash("one"))).toBe(false);
    const again = await loadTrust(state, root);
    expect(again.entries()).toEqual([
      { kind: "mcp", name: "github", hash: hash("one") },
      { kind: "config", name: "config.json", hash: hash("cfg") },
    ]);
    expect((await loadTrust(state, await tempDir())).entries()).toEqual([]);
  });

  it("does not take a name from the object prototype as trusted", async () => {
    const trust = await loadTrust(await tempDir(), await tempDir());
    expect(trust.isTrusted("mcp", "__proto__", hash("x"))).toBe(false);
    expect(trust.isTrusted("mcp", "constructor", hash("x"))).toBe(false);
  });

  it("writes a 0600 file atomically, leaving no temporary file", async () => {
    const [state, root] = [await tempDir(), await tempDir()];
    const trust = await loadTrust(state, root);
    await trust.trust([{ kind: "skill", name: "release", hash: hash("s") }]);
    await trust.trust([{ kind: "skill", name: "deploy", hash: hash("d") }]);
    const file = trustFile(state, root);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(file, ".."))).toEqual([file.split("/").at(-1)]);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      version: 1,
      root,
      mcp: {},
      config: {},
      skill: { release: hash("s"), deploy: hash("d") },
    });
  });

  it("revokes named entries, or everything", async () => {
    const [state, root] = [await tempDir(), await tempDir()];
    const trust = await loadTrust(state, root);
    await trust.trust([
      { kind: "mcp", name: "a", hash: hash("a") },
      { kind: "mcp", name: "b", hash: hash("b") },
    ]);
    await trust.revoke([{ kind: "mcp", name: "a" }]);
    expect((await loadTrust(state, root)).entries()).toEqual([
      { kind: "mcp", name: "b", hash: hash("b") },
    ]);
    await trust.revoke();
    expect((await loadTrust(state, root)).entries()).toEqual([]);
  });

  for (const [what, content] of [
    ["not JSON", "{ torn"],
    ["not a record", '{"version": 1, "root": 3}'],
    ["a record whose hash is not a sha256", '{"version":1,"mcp":{"a":"x"},"config":{},"skill":{}}'],
  ] as const) {
    it(`trusts nothing, with a one-line warning, when the file is ${what}`, async () => {
      const [state, root] = [await tempDir(), await tempDir()];
      const file = trustFile(state, root);
      await mkdir(join(file, ".."), { recursive: true });
      await writeFile(file, content);
      const trust = await loadTrust(state, root);
      expect(trust.entries()).toEqual([]);
      expect(trust.warning).toMatch(
        /^the trust record .* is damaged \(.*\): nothing in this project is trusted until you trust it again$/,
      );
      expect(trust.warning).not.toContain("\n");
      await trust.trust([{ kind: "mcp", name: "a", hash: hash("a") }]);
      expect((await loadTrust(state, root)).warning).toBeUndefined();
    });
  }

  it("says a record that cannot be read is unreadable, not damaged (a link loop on its path)", async () => {
    const [state, root] = [await tempDir(), await tempDir()];
    const file = trustFile(state, root);
    // The records' folder a link to itself: looking at the record fails with ELOOP.
    await symlink(join(state, "trust"), join(state, "trust"));
    const trust = await loadTrust(state, root);
    expect(trust.entries()).toEqual([]);
    expect(trust.warning).toBe(
      `the trust record ${file} cannot be read (too many links in the path, ELOOP): nothing in this project is trusted until it can be`,
    );
  });

  it("does not read a FIFO in place of the record (it would block)", async () => {
    const [state, root] = [await tempDir(), await tempDir()];
    const file = trustFile(state, root);
    await mkdir(join(file, ".."), { recursive: true });
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [file]);
    const trust = await loadTrust(state, root);
    expect(trust.warning).toContain("(not a regular file)");
  });

  it("refuses a record copied from another project root", async () => {
    const [state, root, other] = [await tempDir(), await tempDir(), await tempDir()];
    await (await loadTrust(state, other)).trust([{ kind: "mcp", name: "a", hash: hash("a") }]);
    await mkdir(join(trustFile(state, root), ".."), { recursive: true });
    await writeFile(trustFile(state, root), await readFile(trustFile(state, other)));
    const trust = await loadTrust(state, root);
    expect(trust.isTrusted("mcp", "a", hash("a"))).toBe(false);
    expect(trust.warning).toContain("(it names another project root)");
  });
});
