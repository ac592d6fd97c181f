import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { cp, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getHeapSpaceStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { makeCodeCache, requireWithCodeCache, wrapCommonJs } from "../src/cli/code-cache.js";
import { bin } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";
import { sampleEvery } from "./support/until.js";

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
      "exports.word = 'naïve ✓';",
    ].join("\n"),
  );
  return file;
}

const exported = (value: unknown) => {
  const { near, where, twice, word } = value as {
    near: string;
    where: string;
    twice(n: number): number;
    word: string;
  };
  return { near, where, four: twice(2), word };
};

describe("loading a CommonJS bundle with V8's code cache", () => {
  it("runs the file as CommonJS, with or without its cache, and with a cache V8 rejects", async () => {
    const dir = await tempDir();
    const file = await commonJs(dir);
    const where = `main.cjs in ${dir.split("/").at(-1)}`;
    const expected = { near: "near", where, four: 4, word: "naïve ✓" };
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

  // The turn is a megabyte of ASCII, which Node reads into an external string (off V8's heap). Put
  // inside the wrapper at load, it was copied onto the heap whole: a collection at start-up.
  it("compiles a file the build wrapped as it reads it, without copying its text onto V8's heap", async () => {
    const dir = await tempDir();
    const body = `/*${"x".repeat(4 * 2 ** 20)}*/\nexports.one = () => 1;\n`;
    const grownLoading = async (name: string, text: string) => {
      const file = join(dir, name);
      await writeFile(file, text);
      const before = largeObjectBytes();
      const loaded = requireWithCodeCache(file, join(dir, "none.cache"), createRequire(file));
      const grown = largeObjectBytes() - before;
      expect((loaded as { one(): number }).one()).toBe(1); // Keeps the script, and its text, alive.
      return grown;
    };
    expect(await grownLoading("plain.cjs", body)).toBeGreaterThan(4 * 2 ** 20);
    expect(await grownLoading("wrapped.cjs", wrapCommonJs(body))).toBeLessThan(2 ** 20);
  });

  it("ships the entry and the turn under their content's hash, and the CLI loads both with their caches accepted", async () => {
    const names = readdirSync(bundle);
    const hashed = (file: string) =>
      createHash("sha256")
        .update(readFileSync(join(bundle, file)))
        .digest("hex")
        .slice(0, 16);
    for (const kind of ["cli", "turn"]) {
      const files = names.filter((name) => new RegExp(`^${kind}-[0-9a-f]{16}\\.cjs$`).test(name));
      expect(files).toEqual([`${kind}-${hashed(files[0] ?? "")}.cjs`]);
      // Written as the function it is compiled as, so its text is not copied to be wrapped.
      const text = readFileSync(join(bundle, files[0] ?? ""), "latin1");
      expect(wrapCommonJs(text)).toBe(text);
    }
    expect(JSON.parse(readFileSync(join(bundle, "package.json"), "utf8"))).toEqual({
      type: "commonjs",
    });

    // A real run of the bin, told by a preload what V8 said of each cache it was given.
    const run = await runTurn(bin);
    expect(run).toEqual({ ...explained, stderr: "cache rejected: false\n".repeat(2) });
  }, 20_000);

  // V8 checks a cache's version, flags and source hash, but not its bytes (release builds): code
  // flipped in the middle is run as it is, and kills the process. The cache is handed to V8 only
  // when it is a regular file of a plausible size whose checksum is the one the build recorded.
  const spoiled: [string, (cache: string) => Promise<void>][] = [
    ["has a few bytes flipped in the middle", (cache) => flipMiddle(cache)],
    ["is cut in half", async (cache) => truncate(cache, Math.floor(statSync(cache).size / 2))],
    ["is empty", (cache) => writeFile(cache, "")],
    ["is random bytes", (cache) => writeFile(cache, randomBytes(statSync(cache).size))],
    ["is a link to /dev/zero", (cache) => replaceWith(cache, () => symlink("/dev/zero", cache))],
    ["is a FIFO nobody writes", (cache) => replaceWith(cache, async () => mkfifo(cache))],
    ["is a sparse 1 GiB file", (cache) => truncate(cache, 2 ** 30)],
  ];
  it.each(spoiled)(
    "runs a turn's command, compiled without the caches, when each cache %s",
    async (_, spoil) => {
      const dir = await tempDir();
      await cp(bundle, join(dir, "bundle"), { recursive: true });
      const main = join(dir, "bundle", "main.js");
      const caches = readdirSync(join(dir, "bundle")).filter((name) => name.endsWith(".cjs.cache"));
      expect(caches).toHaveLength(2); // The entry's and the turn's.
      for (const cache of caches) await spoil(join(dir, "bundle", cache));
      const run = await runTurn(main);
      expect(run).toEqual({ ...explained, stderr: "" });
    },
    20_000,
  );
});

/** Bytes in V8's spaces for large objects, young and old. */
function largeObjectBytes(): number {
  return getHeapSpaceStatistics()
    .filter((space) => space.space_name.endsWith("large_object_space"))
    .reduce((sum, space) => sum + space.space_used_size, 0);
}

/** What `rules explain ls` answers, the command used here because it loads the turn. */
const explained = {
  code: 0,
  stdout:
    'allow: read-only set: ls\nwhy: allowed by the read-only set (ls)\noutside the sandbox (outside_sandbox: true): ask, every time (with no one to ask: deny); "always" would save: allow-unsandboxed ls (exactly)\n(code mode; bash runs in the sandbox, the boundary: what no deny rule matches runs)\n',
  peakOver: false,
};

/** Above this the run is stopped: the real cache is under 1 MB, the whole run about 60 MB. */
const rssLimit = 400 * 2 ** 20;

/**
 * Runs `rules explain ls` with the bin `main`, preloading a hook that writes to stderr what V8
 * said of each cache it was given. Its resident memory is read every 20 ms: over `rssLimit`, it
 * is killed and `peakOver` is true. Killed after 10 s too.
 */
async function runTurn(
  main: string,
): Promise<{ code: number | null; stdout: string; stderr: string; peakOver: boolean }> {
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
  const child = spawn(process.execPath, ["--require", hook, main, "rules", "explain", "ls"], {
    cwd: dir,
    // The state folder beside the folder the command runs in (the state folder is no workspace).
    env: { PATH: process.env.PATH, HOME: dir, MINI_AGENT_HOME: join(dir, "state") },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 10_000,
    killSignal: "SIGKILL",
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let peakOver = false;
  const stop = sampleEvery(20, () => {
    let status = "";
    try {
      status = readFileSync(`/proc/${child.pid}/status`, "utf8");
    } catch {
      return; // Gone already.
    }
    const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
    if (rss > rssLimit) {
      peakOver = true;
      child.kill("SIGKILL");
    }
  });
  const [code] = (await once(child, "close")) as [number | null];
  stop();
  return { code, stdout, stderr, peakOver };
}

/** Flips one byte in every 64 of the 4 KiB in the middle of `file` (64 bytes in all). */
async function flipMiddle(file: string): Promise<void> {
  const bytes = readFileSync(file);
  const middle = Math.floor(bytes.length / 2);
  for (let i = middle; i < middle + 4096; i += 64) bytes[i] = (bytes[i] ?? 0) ^ 0xff;
  await writeFile(file, bytes);
}

async function replaceWith(file: string, make: () => Promise<void>): Promise<void> {
  await rm(file);
  await make();
}

function mkfifo(file: string): void {
  const made = spawnSync("mkfifo", [file]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
}
