import type { Show } from "./shown.js";

/** HTML that is safe as it is: made by the `html` tag below, or from the page's fixed parts. */
export class Markup {
  constructor(readonly html: string) {}
}

/** What a template may hold: markup as it is, numbers, and text (always shown, then escaped). */
export type Piece = Markup | string | number | undefined | false | readonly Piece[];

/**
 * The tag every piece of the exported page is written with: `html\`<p>${text}</p>\``. A string
 * put into it is text, whatever it holds (`<script>`, `</textarea>`, `]]>`, `<!--`): shown with
 * `show` (redacted, made visible) and escaped. Only another `html` template is inserted as
 * markup, so no value can reach the page unescaped.
 */
export function htmlTag(show: Show) {
  const piece = (value: Piece): string => {
    if (value instanceof Markup) return value.html;
    if (typeof value === "string") return escapeHtml(show(value));
    if (typeof value === "number") return String(value);
    if (value === undefined || value === false) return "";
    return value.map(piece).join("");
  };
  return (strings: TemplateStringsArray, ...values: Piece[]): Markup => {
    let out = strings[0] ?? "";
    for (let i = 0; i < values.length; i++) out += piece(values[i]) + (strings[i + 1] ?? "");
    return new Markup(out);
  };
}

const entities: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text as HTML element content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => entities[char] ?? char);
}
