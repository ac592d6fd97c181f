import { execFile } from "node:child_process";
import { cp, mkdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "./support/temp.js";

/**
 * How another project depends on mini-agent (docs/library.md): a tarball from `npm pack`, or a
 * git dependency, which npm fetches by cloning, installing and packing (its `prepare` builds).
 * And `prepare` builds dist/ only when it is not already the build of the sources.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));
const tempDir = useTempDirs();
const quiet = { ...process.env, npm_config_loglevel: "error", npm_config_fund: "false" };

/** Unpacks a tarball into `app/node_modules/mini-agent`, its dependencies linked beside it. */
async function install(tarball: string, app: string): Promise<void> {
  const installed = join(app, "node_modules", "mini-agent");
  await mkdir(installed, { recursive: true });
  await run("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"]);
  const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const dependency of Object.keys(pkg.dependencies)) {
    const link = join(app, "node_modules", dependency);
    await mkdir(join(link, ".."), { recursive: true });
    await symlink(join(root, "node_modules", dependency), link);
  }
}

/** What a project that installed the package gets: the library and both bins. */
async function uses(app: string): Promise<string[]> {
  await writeFile(
    join(app, "probe.mjs"),
    'import { runAgent } from "mini-agent"; import { FakeClient } from "mini-agent/testing";\n' +
      "console.log(typeof runAgent, typeof FakeClient);\n",
  );
  const library = await run(process.execPath, ["probe.mjs"], { cwd: app });
  const pkg = join(app, "node_modules", "mini-agent");
  const version = await run(process.execPath, [join(pkg, "dist/bundle/main.js"), "--version"]);
  const testing = await run(process.execPath, [join(pkg, "dist/testing/cli.js"), "--help"]);
  return [library.stdout, version.stdout, testing.stdout.split("\n")[0] ?? ""];
}

const expected = [
  "function function\n",
  `${JSON.parse(await readFile(join(root, "package.json"), "utf8")).version}\n`,
  "usage: mini-agent-testing serve --script ROUNDS.json [--port N] [--protocol anthropic|openai]",
];

describe("depending on mini-agent", () => {
  it("npm pack of an up-to-date clone packs dist/ as it is, without rebuilding it", async () => {
    const dir = await tempDir();
    const before = (await stat(join(root, "dist/bundle/main.js"))).mtimeMs;
    const { stdout, stderr } = await run("npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: root,
      env: quiet,
    });
    expect(stderr).toContain("mini-agent: dist/ is up to date with the sources, not rebuilt");
    expect((await stat(join(root, "dist/bundle/main.js"))).mtimeMs).toBe(before);
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    expect(packed?.files.map((file) => file.path)).toEqual(
      expect.arrayContaining(["dist/bundle/main.js", "dist/testing/cli.js", "dist/index.js"]),
    );
    const app = join(dir, "app");
    await install(join(dir, packed?.filename ?? ""), app);
    expect(await uses(app)).toEqual(expected);
  }, 60_000);

  it("a git dependency builds in its clone and packs what a project needs", async () => {
    const dir = await tempDir();
    const clone = join(dir, "clone");
    await run("git", ["clone", "--quiet", "--depth", "1", `file://${root}`, clone]);
    // npm installs the clone's dependencies before its prepare; here they are the repo's own.
    await symlink(join(root, "node_modules"), join(clone, "node_modules"));
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: clone,
      env: quiet,
    });
    const [packed] = JSON.parse(stdout) as { filename: string }[];
    const app = join(dir, "app");
    await install(join(dir, packed?.filename ?? ""), app);
    expect(await uses(app)).toEqual(expected);
  }, 180_000);
});

describe("prepare", () => {
  /** A project with the real prepare script and a build that notes each run in dist/builds. */
  async function project(): Promise<string> {
    const dir = await tempDir();
    await mkdir(join(dir, "scripts"));
    await mkdir(join(dir, "src"));
    await cp(join(root, "scripts/prepare.mjs"), join(dir, "scripts/prepare.mjs"));
    await writeFile(join(dir, "src/a.ts"), "export const a = 1;\n");
    await writeFile(
      join(dir, "build.mjs"),
      `import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
       for (const d of ["dist/testing", "dist/bundle"]) mkdirSync(d, { recursive: true });
       for (const f of ["dist/index.js", "dist/testing/index.js", "dist/testing/cli.js", "dist/bundle/main.js"]) writeFileSync(f, "");
       appendFileSync("dist/builds", "built\\n");`,
    );
    const build =
      "node scripts/prepare.mjs --unstamp && node build.mjs && node scripts/prepare.mjs --stamp";
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({ name: "p", version: "1.0.0", scripts: { build } }),
    );
    return dir;
  }

  const prepare = async (dir: string) => {
    const { stderr } = await run(process.execPath, ["scripts/prepare.mjs"], {
      cwd: dir,
      env: quiet,
    });
    const builds = await readFile(join(dir, "dist/builds"), "utf8").catch(() => "");
    return {
      builds: builds.split("\n").filter(Boolean).length,
      skipped: stderr.includes("up to date"),
    };
  };

  it("builds a fresh clone, then only when a source, the lock or an output changed", async () => {
    const dir = await project();
    expect(await prepare(dir)).toEqual({ builds: 1, skipped: false });
    expect(await prepare(dir)).toEqual({ builds: 1, skipped: true });
    await writeFile(join(dir, "src/a.ts"), "export const a = 2;\n");
    expect(await prepare(dir)).toEqual({ builds: 2, skipped: false });
    await writeFile(join(dir, "package-lock.json"), "{}");
    expect(await prepare(dir)).toEqual({ builds: 3, skipped: false });
    await rm(join(dir, "dist/testing/cli.js"));
    expect(await prepare(dir)).toEqual({ builds: 4, skipped: false });
    expect(await prepare(dir)).toEqual({ builds: 4, skipped: true });
  });

  it("rebuilds after a build that did not finish", async () => {
    const dir = await project();
    await prepare(dir);
    await run(process.execPath, ["scripts/prepare.mjs", "--unstamp"], { cwd: dir });
    expect(await prepare(dir)).toEqual({ builds: 2, skipped: false });
  });

  it("leaves the repository's own up-to-date dist/ alone", async () => {
    const before = (await stat(join(root, "dist/bundle/main.js"))).mtimeMs;
    const { stderr } = await run(process.execPath, ["scripts/prepare.mjs"], { cwd: root });
    expect(stderr).toBe(
      "mini-agent: dist/ is up to date with the sources, not rebuilt (npm run build rebuilds it)\n",
    );
    expect((await stat(join(root, "dist/bundle/main.js"))).mtimeMs).toBe(before);
  });
});
