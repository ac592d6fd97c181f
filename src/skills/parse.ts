/**
 * A `SKILL.md` read as the Agent Skills specification defines it: YAML front matter between two
 * `---` lines, then the Markdown body. The front matter is read by a small, strict reader of the
 * subset the specification uses, not by a YAML library:
 *
 * - top-level `key: value` lines; a value is a plain scalar (continued on more-indented lines,
 *   folded with spaces; ` #` starts a comment), a 'single' or "double" quoted string, or a `|`
 *   or `>` block scalar;
 * - `metadata`: a map one level deep (`  key: value`, every value a string);
 * - `allowed-tools`: a string (space-separated) or a list (`  - item`);
 * - any other key is ignored with whatever is indented under it (the specification says unknown
 *   fields are ignored), so a client's own fields never cost the skill.
 *
 * Anything else in a known field (a tab indent, a key given twice, an unterminated quote, a
 * nested map in `metadata`) refuses the skill with the reason. One leniency, as the client guide
 * of the specification recommends: a plain value holding `: ` (which YAML refuses, and which
 * descriptions often do: `Use when: …`) is read as the whole rest of the line, with a warning.
 */

/** The fields of a valid skill's front matter, and its body. */
export interface SkillFile {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  /** `allowed-tools`, split into its entries: shown to the user, never an approval. */
  allowedTools?: string[];
  /** The Markdown after the front matter. */
  body: string;
  /** A leniency the reader applied, to tell the user (`an unquoted ": " in description …`). */
  warning?: string;
}

export type ParsedSkill = SkillFile | { refused: string };

/** The specification's bounds. */
export const skillBounds = { name: 64, description: 1024, compatibility: 500 } as const;

const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Reads `text` (a whole `SKILL.md`) as a skill of the folder named `folder`. */
export function parseSkill(text: string, folder: string): ParsedSkill {
  const read = readFrontMatter(text, KNOWN);
  if ("refused" in read) return read;
  return checkFields(read.fields, folder, read.body);
}

/** A file's front matter as this reader reads it: the values of its known keys, and the body. */
export interface FrontMatter {
  fields: Fields;
  body: string;
}

/**
 * Reads the front matter of `text` (which must begin with `---`) by the rules above, keeping the
 * keys in `known` (every other is passed over), and the body after it; or why it cannot. A key in
 * `bracketed` may hold a plain value that starts with `[` (Claude Code's `argument-hint: [file]`,
 * which YAML would read as a list): it is read as the text it is.
 */
export function readFrontMatter(
  text: string,
  known: ReadonlySet<string>,
  bracketed: ReadonlySet<string> = new Set(),
): FrontMatter | { refused: string } {
  const split = splitFrontMatter(text);
  if ("refused" in split) return split;
  try {
    return { fields: readFields(split.lines, known, bracketed), body: split.body };
  } catch (error) {
    if (error instanceof FrontMatterError) return { refused: error.message };
    throw error;
  }
}

function splitFrontMatter(text: string): { lines: string[]; body: string } | { refused: string } {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trimEnd() !== "---")
    return { refused: "no front matter (the file must begin with ---)" };
  const end = lines.findIndex((line, at) => at > 0 && line.trimEnd() === "---");
  if (end === -1) return { refused: "the front matter has no closing --- line" };
  // A reader of YAML ends a line there, this one would not: the text after it would vanish.
  const breaking = lines
    .slice(1, end)
    .join("\n")
    .match(/[\r\u0085\u2028\u2029]/)?.[0];
  if (breaking !== undefined)
    return {
      refused: `the front matter holds a line break other than a newline (U+${breaking.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")})`,
    };
  return {
    lines: lines.slice(1, end),
    body: lines
      .slice(end + 1)
      .join("\n")
      .replace(/^\n+/, ""),
  };
}

class FrontMatterError extends Error {}

export type Value = string | string[] | Record<string, string>;
export interface Fields {
  values: Map<string, Value>;
  warning?: string;
}

/** The known fields and how each is read; every other key is passed over. */
const KNOWN = new Set([
  "name",
  "description",
  "license",
  "compatibility",
  "metadata",
  "allowed-tools",
]);

function readFields(
  lines: string[],
  known: ReadonlySet<string>,
  bracketed: ReadonlySet<string> = new Set(),
): Fields {
  const values = new Map<string, Value>();
  let warning: string | undefined;
  for (let at = 0; at < lines.length; ) {
    const line = lines[at] ?? "";
    const fail = (why: string): never => {
      throw new FrontMatterError(`front matter line ${at + 2}: ${why}`);
    };
    if (line.trim() === "" || line.trimStart().startsWith("#")) {
      at++;
      continue;
    }
    if (/^\s/.test(line)) fail("an indented line belongs to no field");
    const match = /^([A-Za-z0-9_-]+)\s*:(?:\s+(.*)|$)/.exec(line);
    if (!match) fail(`not a "key: value" line: ${JSON.stringify(line.slice(0, 60))}`);
    const key = match?.[1] ?? "";
    const rest = (match?.[2] ?? "").trimEnd();
    let next = at + 1;
    while (next < lines.length && (/^\s/.test(lines[next] ?? "") || (lines[next] ?? "") === ""))
      next++;
    // Blank lines at the end of a field belong to nothing.
    let last = next;
    while (last > at + 1 && (lines[last - 1] ?? "").trim() === "") last--;
    const inner = lines.slice(at + 1, last);
    if (known.has(key)) {
      if (values.has(key)) fail(`${key} is given twice`);
      if (inner.some((l) => /^ *\t/.test(l)))
        fail(`a tab indents ${key} (YAML indents with spaces)`);
      const read =
        bracketed.has(key) && rest.startsWith("[")
          ? { value: withoutComment([rest, ...inner.map((l) => l.trim())].join(" ")) }
          : readValue(key, rest, inner, fail);
      values.set(key, read.value);
      if (read.warning && warning === undefined) warning = read.warning;
    }
    at = next;
  }
  return warning === undefined ? { values } : { values, warning };
}

function readValue(
  key: string,
  rest: string,
  inner: string[],
  fail: (why: string) => never,
): { value: Value; warning?: string } {
  if (rest === "" && inner.length > 0) {
    const first = inner[0]?.trim() ?? "";
    if (first.startsWith("- ") || first === "-") return { value: readList(key, inner, fail) };
    return { value: readMap(key, inner, fail) };
  }
  if (rest.startsWith("|") || rest.startsWith(">"))
    return { value: blockScalar(rest, inner, fail) };
  if (rest.startsWith('"') || rest.startsWith("'")) {
    const joined = [rest, ...inner.map((l) => l.trim())].join(" ");
    return { value: quoted(joined, fail) };
  }
  if (rest.startsWith("[") || rest.startsWith("{"))
    fail(`${key}: flow collections ([…], {…}) are not read; use a list of "- item" lines`);
  const plain = [rest, ...inner.map((l) => l.trim())].filter((part) => part !== "").join(" ");
  const value = withoutComment(plain);
  if (/:\s/.test(value) || value.endsWith(":"))
    return {
      value,
      warning: `an unquoted ": " in ${key} (YAML refuses it); read as the whole rest of the line: quote the value`,
    };
  return { value };
}

/** A plain scalar ends before ` #` (a comment). */
function withoutComment(text: string): string {
  const at = text.search(/\s#/);
  return (at === -1 ? text : text.slice(0, at)).trim();
}

function quoted(text: string, fail: (why: string) => never): string {
  const quote = text[0];
  if (quote === "'") {
    const match = /^'((?:[^']|'')*)'\s*(#.*)?$/.exec(text);
    if (!match) fail("an unterminated 'quoted' value, or text after its closing quote");
    return (match?.[1] ?? "").replaceAll("''", "'");
  }
  const match = /^"((?:[^"\\]|\\.)*)"\s*(#.*)?$/.exec(text);
  if (!match) fail('an unterminated "quoted" value, or text after its closing quote');
  const escapes: Record<string, string> = {
    n: "\n",
    t: "\t",
    '"': '"',
    "\\": "\\",
    "/": "/",
    " ": " ",
    r: "\r",
    "0": "\0",
  };
  return (match?.[1] ?? "").replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, code: string) => {
    if (code.startsWith("u") && code.length === 5)
      return String.fromCharCode(Number.parseInt(code.slice(1), 16));
    const char = escapes[code];
    if (char === undefined) fail(`an unknown escape \\${code} in a "quoted" value`);
    return char ?? "";
  });
}

/** `|` keeps the lines, `>` folds them with spaces (a blank line is a line break); `-` strips the end. */
function blockScalar(header: string, inner: string[], fail: (why: string) => never): string {
  if (!/^[|>][-+]?\s*(#.*)?$/.test(header))
    fail(`a block scalar header "${header}" that is not read`);
  const indent = Math.min(
    ...inner.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length),
  );
  const lines = inner.map((l) => (l.trim() === "" ? "" : l.slice(indent)));
  const text = header.startsWith("|")
    ? lines.join("\n")
    : lines.reduce(
        (acc, line) =>
          acc === ""
            ? line
            : line === ""
              ? `${acc}\n`
              : acc.endsWith("\n")
                ? acc + line
                : `${acc} ${line}`,
        "",
      );
  return header[1] === "-" ? text.replace(/\n+$/, "") : `${text.replace(/\n+$/, "")}\n`;
}

function readList(key: string, inner: string[], fail: (why: string) => never): string[] {
  return inner
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const match = /^\s+-(?:\s+(.*)|$)/.exec(l);
      if (!match) fail(`${key}: a list holds "- item" lines only`);
      const item = (match?.[1] ?? "").trim();
      return item.startsWith('"') || item.startsWith("'")
        ? quoted(item, fail)
        : withoutComment(item);
    });
}

function readMap(
  key: string,
  inner: string[],
  fail: (why: string) => never,
): Record<string, string> {
  const map: Record<string, string> = {};
  const lines = inner.filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
  const indent = (l: string) => l.length - l.trimStart().length;
  const depth = indent(lines[0] ?? "");
  for (const line of lines) {
    if (indent(line) !== depth) fail(`${key}: a map one level deep (key: value lines, one indent)`);
    const match = /^\s+([^:#\s][^:]*?)\s*:(?:\s+(.*)|$)/.exec(line);
    if (!match) fail(`${key}: not a "key: value" line`);
    const name = (match?.[1] ?? "").trim();
    const raw = (match?.[2] ?? "").trim();
    if (raw === "")
      fail(`${key}.${name} has no value (a map one level deep, every value a string)`);
    if (Object.hasOwn(map, name)) fail(`${key}.${name} is given twice`);
    map[name] =
      raw.startsWith('"') || raw.startsWith("'") ? quoted(raw, fail) : withoutComment(raw);
  }
  return map;
}

function checkFields(fields: Fields, folder: string, body: string): ParsedSkill {
  const { values } = fields;
  const text = (key: string): string | undefined | { refused: string } => {
    const value = values.get(key);
    if (value === undefined) return undefined;
    return typeof value === "string" ? value : { refused: `${key} must be a string` };
  };
  const name = text("name");
  if (name === undefined || name === "") return { refused: "no name in the front matter" };
  if (typeof name !== "string") return name;
  if (name.length > skillBounds.name)
    return { refused: `the name is ${name.length} characters (at most ${skillBounds.name})` };
  if (!NAME.test(name))
    return {
      refused: `the name ${JSON.stringify(name)} is not lowercase a-z, 0-9 and single hyphens`,
    };
  if (name !== folder)
    return { refused: `the name ${name} is not its folder's name (${JSON.stringify(folder)})` };
  const description = text("description");
  if (typeof description === "object") return description;
  if (description === undefined || description.trim() === "")
    return { refused: "no description in the front matter" };
  if (description.length > skillBounds.description)
    return {
      refused: `the description is ${description.length} characters (at most ${skillBounds.description})`,
    };
  const skill: SkillFile = { name, description, body };
  for (const key of ["license", "compatibility"] as const) {
    const value = text(key);
    if (value === undefined) continue;
    if (typeof value !== "string") return value;
    skill[key] = value;
  }
  if (skill.compatibility !== undefined && skill.compatibility.length > skillBounds.compatibility)
    return { refused: `compatibility is ${skill.compatibility.length} characters (at most 500)` };
  const metadata = values.get("metadata");
  if (metadata !== undefined) {
    if (typeof metadata === "string" || Array.isArray(metadata))
      return { refused: "metadata must be a map of key: value lines" };
    skill.metadata = metadata;
  }
  const tools = values.get("allowed-tools");
  if (tools !== undefined) {
    if (typeof tools === "object" && !Array.isArray(tools))
      return { refused: "allowed-tools must be a string or a list" };
    skill.allowedTools = typeof tools === "string" ? tools.split(/\s+/).filter(Boolean) : tools;
  }
  if (fields.warning !== undefined) skill.warning = fields.warning;
  return skill;
}
