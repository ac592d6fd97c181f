import { readFile, realpath } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { strictlyWithin } from "../paths.js";

/**
 * The workspace files and folders the workspace repository's own configuration (`.git/config`,
 * which the protected set keeps as it is) makes code: a `core.hooksPath` folder (git runs the
 * hooks there) and each file an `include.path` or `includeIf.*.path` names (git reads it as
 * configuration, which can name programs). By real path, with why: for the session's protected
 * set. Read once, when a session starts, by a reader of git's file format here (no git runs:
 * a start costs one small read); none when there is no such file.
 */
export async function gitConfigFiles(realRoot: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const gitDir = join(realRoot, ".git");
  const text = await readFile(join(gitDir, "config"), "utf8").catch(() => "");
  for (const { section, key, value } of configEntries(text)) {
    const hooks = section === "core" && key === "hookspath";
    const include = (section === "include" || section.startsWith("includeif ")) && key === "path";
    if ((!hooks && !include) || value === "" || value.startsWith("~")) continue;
    // A relative hooks folder is taken from the work tree's top; an include, from `.git/`.
    const path = isAbsolute(value) ? value : resolve(hooks ? realRoot : gitDir, value);
    const real = await realpath(path).catch(() => path);
    if (!strictlyWithin(realRoot, real)) continue;
    found.set(
      real,
      hooks
        ? "git runs the files in the folder core.hooksPath names as hooks"
        : "git reads it as configuration (an include of .git/config), which can name programs git runs",
    );
  }
  return found;
}

/**
 * The `key = value` lines of a git configuration file: the section lower-cased (`includeif
 * "gitdir:~/x/"` keeps its subsection), the key lower-cased, the value without its quotes,
 * escapes or trailing comment.
 */
function* configEntries(text: string): Generator<{ section: string; key: string; value: string }> {
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    const rest = header ? (header[3] ?? "").trim() : line;
    if (header)
      section = `${(header[1] ?? "").toLowerCase()}${header[2] !== undefined ? ` ${header[2]}` : ""}`;
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(rest);
    if (entry === null) continue;
    yield { section, key: (entry[1] ?? "").toLowerCase(), value: unquote(entry[2] ?? "") };
  }
}

/** A value as git reads it: quotes removed, `\"`, `\\`, `\t`, `\n` undone, a comment cut. */
function unquote(value: string): string {
  let out = "";
  let quoted = false;
  for (let at = 0; at < value.length; at++) {
    const char = value[at] ?? "";
    if (char === "\\") {
      const next = value[++at] ?? "";
      out += next === "t" ? "\t" : next === "n" ? "\n" : next;
    } else if (char === '"') quoted = !quoted;
    else if (!quoted && (char === "#" || char === ";")) break;
    else out += char;
  }
  return out.trim();
}
