import { MAX_INPUT_DEPTH } from "../history/call-ids.js";
import { imageLimits } from "../images.js";

/** Every bound on what a tool returns to the model, in one place. */
export const limits = {
  /** `read`: lines per call unless `limit` says otherwise, and characters per call. */
  readLines: 2000,
  readChars: 50_000,
  /** `ls`, `find`: entries per call (the character bound applies too). */
  listEntries: 1000,
  /** `grep`: matching lines per call, and characters kept of each. */
  grepMatches: 500,
  grepLineChars: 500,
  /** Characters of any tool output before it is cut. */
  outputChars: 50_000,
  /** `read` of an image: the biggest file and pixels a side (`imageLimits`, one bound for all). */
  imageBytes: imageLimits.bytes,
  imageSide: imageLimits.side,
  /** Bytes looked at to decide that a file is binary (it holds a NUL byte). */
  binarySniffBytes: 8192,
  /** Largest `.gitignore` read as rules; a bigger one is ignored and counted. */
  ignoreFileBytes: 256 * 1024,
  /** `edit`: the biggest file it edits (in memory), and how many match lines an error lists. */
  editBytes: 10 * 1024 * 1024,
  editListedLines: 20,
  /** `edit`: the closest-line hint looks at this many first bytes, and characters per line. */
  editHintBytes: 1024 * 1024,
  editHintLineChars: 500,
  /** Lines of a file whose hashes are kept to say where it changed; a longer file is only hashed. */
  seenLines: 100_000,
  /** What an error shows of a file changed since the agent saw it: lines, and characters. */
  changeLines: 20,
  changeChars: 2000,
  /** `plan`: items in one plan, and characters of an item's text. */
  planItems: 30,
  planItemChars: 300,
  /** Nesting of objects and arrays in a tool's input; deeper input is refused, not recursed. */
  inputDepth: MAX_INPUT_DEPTH,
} as const;

/** The marker every tool puts where it cut output. */
export const truncated = (count: number) => `[truncated ${count} characters]`;

/**
 * Lines of a result kept while they fit both bounds: at most `maxLines` lines whose text, joined
 * with newlines, is at most `limits.outputChars`. What does not fit is counted in `left`.
 */
export class BoundedLines {
  readonly lines: string[] = [];
  left = 0;
  private chars = -1;

  constructor(private readonly maxLines: number) {}

  /** Keeps `line` if it fits; false (and counted) otherwise. */
  add(line: string): boolean {
    if (this.left === 0 && this.lines.length < this.maxLines) {
      if (this.chars + 1 + line.length <= limits.outputChars) {
        this.lines.push(line);
        this.chars += 1 + line.length;
        return true;
      }
    }
    this.left++;
    return false;
  }
}
