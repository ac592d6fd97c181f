import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { makeCodeCache, requireWithCodeCache } from "../src/cli/code-cache.js";
import { bin } from "./support/cli.js";
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
    expect(
      exported(requireWithCodeCache(file, join(dir, "missing.cache"), createRequire(file))),
    ).toEqual(expected);

    makeCodeCache(file, join(dir, "main.cache"), createRequire(file));
    expect(readFileSync(join(dir, "main.cache")).length).toBeGreaterThan(0);
    expect(
      exported(requireWithCodeCache(file, join(dir, "main.cache"), createRequire(file))),
    ).toEqual(expected);

    await writeFile(join(dir, "bad.cache"), "not V8's code at all");
    expect(
      exported(requireWithCodeCache(file, join(dir, "bad.cache"), createRequire(file))),
    ).toEqual(expected);
  });

  it("ships the turn under its content's hash, and the CLI loads it with the cache accepted", async () => {
    const names = readdirSync(bundle);
    const turns = names.filter((name) => /^turn-[0-9a-f]{16}\.cjs$/.test(name));
    expect(turns).toHaveLength(1);
    const source = readFileSync(join(bundle, turns[0] ?? ""));
    const hash = createHash("sha256").update(source).digest("hex").slice(0, 16);
    expect(turns[0]).toBe(`turn-${hash}.cjs`);
    expect(JSON.parse(readFileSync(join(bundle, "package.json"), "utf8"))).toEqual({
      type: "commonjs",
    });

    // A real run of the bin, told by a preload what V8 said of each cache it was given.
    const dir = await tempDir();
    const hook = join(dir, "hook.cjs");
    await writeFile(
      hook,
      [
        "const vm = require('node:vm');",
        "const Script = vm.Script;",
        "vm.Script = class extends Script {",
        "  constructor(source, options) {",
        "    super(source, options);",
        "    if (options && options.cachedData) process._rawDebug('cache rejected: ' + this.cachedDataRejected);",
        "  }",
        "};",
      ].join("\n"),
    );
    const run = spawnSync(process.execPath, ["--require", hook, bin, "rules", "explain", "ls"], {
      cwd: dir,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: dir, MINI_AGENT_HOME: dir },
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("cache rejected: false\n");
  }, 20_000);
});
