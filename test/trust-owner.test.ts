import { chmod, chown } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTrust, trustFile } from "../src/trust/trust.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A trust record another user could have written trusts nothing: one that others may write, in a
 * folder others may write, or owned by someone else (as root, the test hands it to nobody).
 */

const tempDir = useTempDirs();
const entry = { kind: "mcp" as const, name: "local", hash: "a".repeat(64) };

async function recorded() {
  const state = await tempDir();
  const root = await tempDir();
  await (await loadTrust(state, root)).trust([entry]);
  const file = trustFile(state, root);
  expect((await loadTrust(state, root)).isTrusted(entry.kind, entry.name, entry.hash)).toBe(true);
  return { state, root, file };
}

async function expectDistrusted(state: string, root: string, why: RegExp) {
  const trust = await loadTrust(state, root);
  expect(trust.isTrusted(entry.kind, entry.name, entry.hash)).toBe(false);
  expect(trust.warning).toMatch(why);
}

describe("a trust record others could have written", () => {
  it("trusts nothing when others may write the record", async () => {
    const { state, root, file } = await recorded();
    await chmod(file, 0o666);
    await expectDistrusted(state, root, /writable by others/);
  });

  it("trusts nothing when others may write its folder", async () => {
    const { state, root, file } = await recorded();
    await chmod(join(file, ".."), 0o777);
    await expectDistrusted(state, root, /writable by others/);
  });

  it.skipIf(process.getuid?.() !== 0)("trusts nothing when another user owns it", async () => {
    const { state, root, file } = await recorded();
    await chown(file, 65534, 65534);
    await expectDistrusted(state, root, /owned by another user/);
  });
});
