// Tests wait for facts, not for time: reports every timer (setTimeout, setInterval, a
// `sleep(...)`, node:timers/promises) in test/ outside test/support/until.ts, the one home of
// waiting, and outside the tests docs/internals.md lists as keeping a time bound. Reports only;
// exits 1 when it found any.  node scripts/check-test-sleeps.mjs [root]
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const root = process.argv[2] ?? ".";
const home = "test/support/until.ts";
// Fake programs the tests start: their slowness is what they stand for.
const skipped = new Set(["node_modules", "fixtures"]);

/** The `- \`file\`, "name": why` items under the list's heading: file → names. */
function listed() {
  const text = readFileSync(join(root, "docs/internals.md"), "utf8");
  const start = text.indexOf("### Tests that keep a time bound");
  const section = start < 0 ? "" : text.slice(start).split(/\n#{2,3} /)[0];
  const allowed = new Map();
  for (const [, file, name] of section.matchAll(/^- `([^`]+)`, "([^"]+)"/gm))
    allowed.set(file, [...(allowed.get(file) ?? []), name]);
  return allowed;
}

function* files(dir) {
  const entries = readdirSync(dir, { withFileTypes: true });
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (skipped.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (/\.(ts|mts|js|mjs|cjs)$/.test(entry.name)) yield path;
  }
}

const timer = /\bset(Timeout|Interval)\b|(?<![.\w])sleep\s*\(|timers\/promises/;
const test = /\b(?:it|test)(?:\.\w+)*(?:\(.*?\))?\(\s*(["'`])(.*?)\1/;
const helper = /\bfunction\s+(\w+)/;

/** The test (its name) or the function a line stands in: the nearest one that opens above it. */
function enclosing(lines, index) {
  for (let i = index; i >= 0; i--) {
    const line = lines[i] ?? "";
    const found = test.exec(line)?.[2] ?? helper.exec(line)?.[1];
    if (found !== undefined) return found;
  }
  return undefined;
}

const allowed = listed();
const found = [];
for (const path of files(join(root, "test"))) {
  const file = relative(root, path).split("\\").join("/");
  if (file === home) continue;
  const lines = readFileSync(path, "utf8").split("\n");
  lines.forEach((line, index) => {
    const code = line.trim();
    if (code.startsWith("//") || code.startsWith("*") || code.startsWith("/*")) return;
    if (!timer.test(code)) return;
    const name = enclosing(lines, index);
    if (name !== undefined && allowed.get(file)?.includes(name)) return;
    found.push(`${file}:${index + 1}: ${code}`);
  });
}

if (found.length > 0) {
  process.stdout.write(
    `${found.join("\n")}\n${found.length} timer(s) in tests: wait for a fact with until() ` +
      `(${home}); a test whose subject is a time bound is listed in docs/internals.md ` +
      `("Tests that keep a time bound") with why\n`,
  );
  process.exit(1);
}
