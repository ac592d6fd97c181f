import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readOwnJson } from "../src/own-json.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "own-json-"));
  dirs.push(dir);
  return dir;
}

describe("readOwnJson", () => {
  it("reads a private JSON file of the user's own, and believes nothing else", () => {
    const dir = folder();
    const good = join(dir, "good.json");
    writeFileSync(good, '{"version":1}', { mode: 0o600 });
    const writable = join(dir, "writable.json");
    writeFileSync(writable, '{"version":1}');
    chmodSync(writable, 0o620);
    const big = join(dir, "big.json");
    writeFileSync(big, JSON.stringify({ pad: "x".repeat(100) }), { mode: 0o600 });
    const broken = join(dir, "broken.json");
    writeFileSync(broken, '{"version":', { mode: 0o600 });
    const link = join(dir, "link.json");
    symlinkSync(good, link);
    const fifo = join(dir, "fifo.json");
    execFileSync("mkfifo", [fifo]);
    const read = (name: string) => readOwnJson(join(dir, name), 64)?.value;
    expect(
      ["good", "writable", "big", "broken", "link", "fifo", "missing"].map((name) =>
        read(`${name}.json`),
      ),
    ).toEqual([{ version: 1 }, undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});
