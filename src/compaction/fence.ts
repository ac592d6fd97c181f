/** A run of `~` longer than any in `text` (at least three): `text` cannot close it. */
export function fence(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/~+/g)].map((run) => run[0].length));
  return "~".repeat(Math.max(3, longest + 1));
}

/**
 * `text` between two fence lines it cannot close: what the model or a tool wrote stays quoted,
 * and no heading or marker in it can pass for one of the text around it.
 */
export const fenced = (text: string) => `${fence(text)}\n${text}\n${fence(text)}`;
