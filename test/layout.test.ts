import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * docs/internals.md's layout block names every room of src/: each folder (at any depth) has its
 * own entry, each file at the top of src/ is named, and every path an entry starts with exists.
 * A room added and not named, or one removed and still named, fails here.
 */

const root = new URL("..", import.meta.url).pathname;

/** The lines of the ```text block under "## Layout". */
function layoutBlock(): string {
  const page = readFileSync(join(root, "docs/internals.md"), "utf8");
  const start = page.indexOf("```text\n", page.indexOf("\n## Layout\n"));
  const end = page.indexOf("\n```\n", start);
  if (start < 0 || end < 0) throw new Error("docs/internals.md has no layout block");
  return page.slice(start + "```text\n".length, end);
}

/** Every folder under src/, as `src/a/b/`. */
function folders(dir = "src"): string[] {
  return readdirSync(join(root, dir))
    .filter((name) => statSync(join(root, dir, name)).isDirectory())
    .flatMap((name) => [`${dir}/${name}/`, ...folders(`${dir}/${name}`)]);
}

const block = layoutBlock();
/** The path each entry starts with (an entry is a line that does not start with a blank). */
const entries = block
  .split("\n")
  .filter((line) => /^\S/.test(line))
  .map((line) => line.split(/\s+/)[0] ?? "");

describe("the layout in docs/internals.md", () => {
  it("has an entry for every folder of src/", () => {
    expect(folders().filter((folder) => !entries.includes(folder))).toEqual([]);
  });

  it("names every file at the top of src/", () => {
    const files = readdirSync(join(root, "src")).filter((name) =>
      statSync(join(root, "src", name)).isFile(),
    );
    expect(files.filter((name) => !new RegExp(`(^|[\\s/(])${name}\\b`).test(block))).toEqual([]);
  });

  it("names only paths that exist", () => {
    const paths = entries.flatMap((entry) => entry.split(",")).filter((path) => path !== "");
    const missing = paths.filter((path) => {
      try {
        statSync(join(root, path));
        return false;
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });
});
