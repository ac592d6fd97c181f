// npm's `prepare` (after `npm ci`, `npm install` of a path or git dependency, `npm pack`, `npx`
// of a folder): builds dist/ unless it is already the build of these sources. The build records
// what it was built from in dist/.built-from (a digest of every input and the Node version, whose
// V8 the code cache belongs to); anything else, or nothing, means a build.
//   node scripts/prepare.mjs            build unless dist/ is up to date
//   node scripts/prepare.mjs --unstamp  forget what dist/ was built from (a build starts)
//   node scripts/prepare.mjs --stamp    record it (a build ended)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const stamp = join("dist", ".built-from");
/** What the build reads: the sources, the build scripts and configuration, the locked dependencies. */
const inputs = [
  "src",
  "scripts/bundle.mjs",
  "scripts/train-code-cache.cjs",
  "bench/mock-server.mjs",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "package-lock.json",
];
/** What the build writes that a run needs; any of them missing means a build. */
const outputs = [
  "dist/index.js",
  "dist/testing/index.js",
  "dist/testing/cli.js",
  "dist/bundle/main.js",
];

function files(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

function digest() {
  const hash = createHash("sha256").update(`node ${process.version}\n`);
  for (const file of inputs.flatMap(files).sort()) {
    hash.update(`${file}\n`).update(readFileSync(file)).update("\n");
  }
  return hash.digest("hex");
}

const upToDate = () =>
  outputs.every((file) => existsSync(file)) &&
  existsSync(stamp) &&
  readFileSync(stamp, "utf8").trim() === digest();

const mode = process.argv[2];
if (mode === "--unstamp") rmSync(stamp, { force: true });
else if (mode === "--stamp") writeFileSync(stamp, `${digest()}\n`);
else if (mode !== undefined) {
  process.stderr.write(`prepare: unknown option ${mode} (--stamp, --unstamp or none)\n`);
  process.exitCode = 2;
} else if (upToDate()) {
  process.stderr.write(
    "mini-agent: dist/ is up to date with the sources, not rebuilt (npm run build rebuilds it)\n",
  );
} else {
  const build = spawnSync("npm", ["run", "build"], { stdio: "inherit" });
  process.exitCode = build.status ?? 1;
}
