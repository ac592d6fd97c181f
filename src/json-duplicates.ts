/**
 * `JSON.parse` keeps the last of two equal keys, so `{"model": "sk-…", "model": "x"}` would
 * pass every check made on the parsed value while an editor or a reviewer sees the first. A
 * settings file with a key given twice is refused instead; this finds the first such key.
 */

interface Frame {
  /** The path of this object or array: `sandbox.limits`, `rules.deny`, `` at the top. */
  path: string;
  /** An object's keys so far; undefined for an array. */
  keys?: Set<string>;
  /** An object: the key whose value comes next; an array: the index of the next item. */
  key: string;
  index: number;
  /** An object: the next string is a key. */
  expectKey: boolean;
}

/**
 * The path of the first key that an object of `text` holds twice (`sandbox.limits.memory`,
 * `mcpServers.a`), compared after escapes are decoded; undefined when there is none. `text` must
 * be valid JSON (checked by `JSON.parse` first). Iterative: any nesting depth is safe.
 */
export function firstDuplicateKey(text: string): string | undefined {
  const stack: Frame[] = [];
  const childPath = (frame: Frame | undefined): string => {
    if (frame === undefined) return "";
    if (frame.keys === undefined) return `${frame.path}[${frame.index}]`;
    return frame.path === "" ? frame.key : `${frame.path}.${frame.key}`;
  };
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    const top = stack[stack.length - 1];
    if (char === '"') {
      const end = stringEnd(text, at);
      if (top?.keys !== undefined && top.expectKey) {
        const key = JSON.parse(text.slice(at, end + 1)) as string;
        top.key = key;
        if (top.keys.has(key)) return childPath(top);
        top.keys.add(key);
        top.expectKey = false;
      }
      at = end;
    } else if (char === "{" || char === "[") {
      stack.push({
        path: childPath(top),
        ...(char === "{" && { keys: new Set<string>() }),
        key: "",
        index: 0,
        expectKey: char === "{",
      });
    } else if (char === "}" || char === "]") {
      stack.pop();
    } else if (char === "," && top !== undefined) {
      if (top.keys === undefined) top.index++;
      else top.expectKey = true;
    }
  }
  return undefined;
}

/** The index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  for (let at = start + 1; at < text.length; at++) {
    if (text[at] === "\\") at++;
    else if (text[at] === '"') return at;
  }
  return text.length - 1;
}
