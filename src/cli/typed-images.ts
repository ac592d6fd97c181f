import { basename, resolve } from "node:path";
import { typedImageFile } from "../app/prompt-images.js";
import type { ImageAttachment } from "../images.js";
import { visible } from "../visible.js";

/**
 * Images named at the prompt of a terminal: a path to an image file typed or pasted (a file
 * dragged onto a terminal arrives as its path, quoted or with its blanks escaped) is attached to
 * the prompt as `--image` attaches a file. The path may be the whole line (blanks and all) or a
 * word of it; absolute, relative to the working folder, or under `~/`. Only a file whose bytes
 * are an image's counts; any other word stays text, silently. The prompt's text is sent as typed.
 * At most 32 files are looked up (the whole line, then each word that may be a path), in a
 * prompt of at most 64 KiB.
 */

export interface TypedImages {
  images: ImageAttachment[];
  /** One line per image attached: `attached image: shot.png (image/png, 800x600, 120.0 KB)`. */
  notices: string[];
  /** Why nothing is attached and the prompt must not go: an image that cannot be sent. */
  refusal?: string;
}

/** At most this many files are looked up for one prompt. */
const maxCandidates = 32;
/** A longer prompt (a pasted log) is not searched for paths: it stays text, whatever it names. */
export const maxSearched = 64 * 1024;
/** The longest path a file system takes (Linux's `PATH_MAX`). */
const maxPath = 4096;

/**
 * The images a prompt line names, each file once, in the order of the line; or the refusal of
 * the first one that is an image but cannot be sent (then none is attached).
 */
export async function typedImages(line: string, cwd: string, home: string): Promise<TypedImages> {
  const found: TypedImages = { images: [], notices: [] };
  if (line.length > maxSearched) return found;
  const seen = new Set<string>();
  const whole = line.trim();
  let looked = 0;
  for (const word of candidates(line)) {
    if (looked >= maxCandidates) break;
    const paths = [word, word.replace(/[,;:!?.)]+$/, "")].filter(mayBePath);
    for (const path of new Set(paths)) {
      const file = resolve(cwd, path.startsWith("~/") ? `${home}${path.slice(1)}` : path);
      if (seen.has(file)) break;
      looked++;
      const image = await typedImageFile(file);
      if (image === undefined) continue;
      const name = visible(basename(file));
      if ("refusal" in image)
        return { images: [], notices: [], refusal: `${name}${image.refusal}` };
      seen.add(file);
      found.images.push(image);
      // The placeholder is `[image: TYPE, WxH, SIZE]`: its inside describes the image.
      found.notices.push(`attached image: ${name} (${image.placeholder.slice(8, -1)})`);
      if (word === whole) return found;
      break;
    }
  }
  return found;
}

/** The whole line first (a dragged file whose blanks the terminal did not escape), then its words. */
function* candidates(line: string): Generator<string> {
  const whole = line.trim();
  if (/\s/.test(whole) && whole.length <= maxPath) yield whole;
  yield* wordsOf(line);
}

/** A word worth looking up: it has a folder in it, starts at home, or ends in an extension. */
function mayBePath(word: string): boolean {
  return word.includes("/") || /\.[A-Za-z0-9]{1,8}$/.test(word);
}

/**
 * The words of a line as a terminal pastes paths: split at blanks; a word that starts with a
 * quote and ends at its closing quote (before a blank or the end) is the text between them; a
 * backslash outside quotes keeps the character after it (`my\ shot.png`). An apostrophe inside
 * a word (`don't`) or a quote never closed is text.
 */
export function pathWords(line: string): string[] {
  return [...wordsOf(line)];
}

/** `pathWords` one at a time: a long paste is read only as far as the words looked up. */
function* wordsOf(line: string): Generator<string> {
  const word = /\s*(?:'([^']*)'(?=\s|$)|"([^"]*)"(?=\s|$)|((?:\\[\s\S]?|[^\s\\])+))/y;
  for (let match = word.exec(line); match?.[0]; match = word.exec(line)) {
    const [, single, double, bare] = match;
    yield single ?? double ?? (bare ?? "").replace(/\\([\s\S])/g, "$1");
  }
}
