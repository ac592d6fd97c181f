import { wellFormed } from "../text.js";
import { visible } from "../visible.js";

/**
 * How every value from the model, a tool or a file is shown in an export, in both formats:
 * secrets redacted again with the current rule (`secretRedactor`), lone surrogates replaced,
 * and control, bidi and invisible characters made visible as on the terminal (`visible`;
 * newlines and tabs kept). Escaping for the format comes after, in `html.ts` and `markdown.ts`.
 */
export type Show = (text: string) => string;

export function shownWith(redact: (text: string) => string): Show {
  return (text) => visible(redact(wellFormed(text)), { multiline: true });
}
