/**
 * Text that enters the history is cut only between code points: half of a surrogate pair makes
 * the provider refuse the request (`no low surrogate in string`) and every request after it.
 * Every tool and the history repair use these three functions; none slices text by itself.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with every lone surrogate replaced by U+FFFD; well-formed text comes back as is. */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}

/** At most `max` UTF-16 units from the start of `text`, never ending inside a surrogate pair. */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = Math.max(0, max);
  return isHighSurrogate(text.charCodeAt(end - 1)) ? text.slice(0, end - 1) : text.slice(0, end);
}

/** At most `max` UTF-16 units from the end of `text`, never starting inside a surrogate pair. */
export function tailOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const start = text.length - Math.max(0, max);
  return isLowSurrogate(text.charCodeAt(start)) ? text.slice(start + 1) : text.slice(start);
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
