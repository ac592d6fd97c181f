import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { describe, expect, it } from "vitest";
import { makeCodeCache, requireWithCodeCache } from "../src/cli/code-cache.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const bundle = fileURLToPath(new URL("../dist/bundle/", import.meta.url));

/** A CommonJS file that requires a neighbour and a builtin, and says where it runs. */
async function commonJs(dir: string): Promise<string> {
  await writeFile(join(dir, "near.cjs"), "module.exports = 'near';\n");
  const file = join(dir, "main.cjs");
  await writeFile(
    file,
    [
      "const { basename } = require('node:path');",
      "exports.near = require('./near.cjs');",
      "exports.where = basename(__filename) + ' in ' + basename(__dirname);",
      "exports.twice = (n) => n * 2;",
    ].join("\n"),
  );
  return file;
}

const exported = (value: unknown) => {
  const { near, where, twice } = value as { near: string; where: string; twice(n: number): number };
  return { near, where, four: twice(2) };
};

describe("loading a CommonJS bundle with V8's code cache", () => {
  it("runs the file as CommonJS, with or without its cache, and with a cache V8 rejects", async () => {
    const dir = await tempDir();
    const file = await commonJs(dir);
    const expected = { near: "near", where: `main.cjs in ${dir.split("/").at(-1)}`, four: 4 };
    expect(exported(requireWithCodeCache(file, join(dir, "missing.cache")))).toEqual(expected);

    makeCodeCache(file, join(dir, "main.cache"));
    expect(readFileSync(join(dir, "main.cache")).length).toBeGreaterThan(0);
    expect(exported(requireWithCodeCache(file, join(dir, "main.cache")))).toEqual(expected);

    await writeFile(join(dir, "bad.cache"), "not V8's code at all");
    expect(exported(requireWithCodeCache(file, join(dir, "bad.cache")))).toEqual(expected);
  });

  it("ships the turn under its content's hash, with a cache the building Node accepts", () => {
    const names = readdirSync(bundle);
    const turns = names.filter((name) => /^turn-[0-9a-f]{16}\.cjs$/.test(name));
    expect(turns).toHaveLength(1);
    const turn = join(bundle, turns[0] ?? "");
    const source = readFileSync(turn, "utf8");
    const hash = createHash("sha256").update(source).digest("hex").slice(0, 16);
    expect(turns[0]).toBe(`turn-${hash}.cjs`);
    const script = new Script(
      `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
      { filename: turn, cachedData: readFileSync(`${turn}.cache`) },
    );
    expect(script.cachedDataRejected).toBe(false);
    expect(names).toContain("package.json");
    expect(JSON.parse(readFileSync(join(bundle, "package.json"), "utf8"))).toEqual({
      type: "commonjs",
    });
  });
});
