/**
 * Colour on a terminal, decided once, by the usual conventions, in this order:
 * - `FORCE_COLOR` set: colour, unless it is `0` or `false` (as Node reads it, it wins over the rest);
 * - `NO_COLOR` set and not empty: no colour;
 * - `TERM=dumb`: no colour;
 * - otherwise colour when the output is a terminal.
 * Only the terminal view (`terminal-view.ts`) asks: output that is not a terminal is plain text
 * whatever these say.
 */
export function colourWanted(env: NodeJS.ProcessEnv, isTTY: boolean): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== "0" && force !== "false";
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.TERM === "dumb") return false;
  return isTTY;
}

/**
 * The styles the terminal view uses, each wrapping text already made safe by `visible`: a style
 * adds its own escape sequences around the text and never reads it. Without colour each is the
 * identity, and `on` is false so a renderer can keep the Markdown marks that carried the meaning.
 */
export interface Styles {
  on: boolean;
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  /** Inline code and code blocks. */
  code(text: string): string;
  /** The `✓` of a tool that succeeded, the `✗` of one that failed. */
  ok(text: string): string;
  failed(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) =>
  text === "" ? "" : `\x1b[${open}m${text}\x1b[${close}m`;

export function styles(on: boolean): Styles {
  if (!on) {
    const same = (text: string) => text;
    return {
      on,
      bold: same,
      dim: same,
      italic: same,
      underline: same,
      code: same,
      ok: same,
      failed: same,
    };
  }
  return {
    on,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    italic: sgr(3, 23),
    underline: sgr(4, 24),
    code: sgr(36, 39),
    ok: sgr(32, 39),
    failed: sgr(31, 39),
  };
}
