import { isAscii } from "node:buffer";
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";
import { Script } from "node:vm";
import * as zlib from "node:zlib";

/**
 * Loading the part of the CLI a turn needs, with V8's code cache. Compiling the bundle's code is
 * a large share of a short run's start-up, and Node 20 keeps no compile cache for modules (that
 * came in Node 22). So the turn is bundled as one CommonJS file, and the build stores the code V8
 * compiled for it beside it (`makeCodeCache`, `writeCodeCache`). The cache's name carries a hash
 * of the bundle, so it never meets another source.
 *
 * V8 rejects a cache made by another V8 version or under other V8 flags, but it does not check
 * the code itself: a cache damaged in the middle is run as it is and kills the process. So the
 * cache file starts with the CRC-32 of the code after it, and the cache is handed to V8 only when
 * it is a regular file of at most `maxCacheBytes` whose CRC matches. Anything else (no cache, a
 * device, a FIFO, a huge file, damaged bytes, a Node without `zlib.crc32`) and the file is
 * compiled as usual, silently: the cache only ever saves time.
 */
export function requireWithCodeCache(
  file: string,
  cacheFile: string,
  require: NodeJS.Require,
): unknown {
  return run(compile(file, readCodeCache(cacheFile)), file, require);
}

/** Compiles and runs the bundle `file` once, then writes what V8 compiled to `cacheFile`. */
export function makeCodeCache(file: string, cacheFile: string, require: NodeJS.Require): void {
  const script = compile(file, undefined);
  run(script, file, require);
  writeCodeCache(cacheFile, script.createCachedData());
}

/** Writes V8's `code` as a cache file, after its CRC-32; writes nothing where Node has none. */
export function writeCodeCache(cacheFile: string, code: Buffer): void {
  if (typeof zlib.crc32 !== "function") return;
  const crc = Buffer.alloc(crcBytes);
  crc.writeUInt32BE(zlib.crc32(code));
  writeFileSync(cacheFile, Buffer.concat([crc, code]));
}

const crcBytes = 4;
/** The turn's cache is under 1 MB; a file 32 times that is not one the build wrote. */
const maxCacheBytes = 32 * 2 ** 20;

/** The code a cache file holds, or undefined when it is not one the build wrote, whole. */
function readCodeCache(cacheFile: string): Buffer | undefined {
  if (typeof zlib.crc32 !== "function") return undefined;
  let fd: number;
  try {
    // Non-blocking, so a FIFO is not waited on; a regular file reads as usual.
    fd = openSync(cacheFile, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined; // No cache (a build without one).
  }
  try {
    const stats = fstatSync(fd);
    const size = stats.size;
    if (!stats.isFile() || size <= crcBytes || size > maxCacheBytes) return undefined;
    const bytes = Buffer.allocUnsafe(size);
    for (let read = 0; read < size; ) {
      const got = readSync(fd, bytes, read, size - read, read);
      if (got === 0) return undefined; // Shorter than it was a moment ago.
      read += got;
    }
    const code = bytes.subarray(crcBytes);
    return zlib.crc32(code) === bytes.readUInt32BE(0) ? code : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const wrapperStart = "(function (exports, require, module, __filename, __dirname) {";

/**
 * CommonJS text as the function Node wraps a module in, on its first line so positions in stack
 * traces stay the file's own; a hashbang (the entry's) becomes a comment of the same length. The
 * build writes the turn and the entry so (`scripts/bundle.mjs`): their text is then compiled as
 * read, and the turn's megabyte, an external string (off V8's heap), is never copied onto the heap
 * to join the wrapper (the copy filled the young generation and cost a collection at start-up).
 */
export function wrapCommonJs(text: string): string {
  if (text.startsWith(wrapperStart)) return text;
  return `${wrapperStart}${text.startsWith("#!") ? `//${text.slice(2)}` : text}\n})`;
}

function compile(file: string, cachedData: Buffer | undefined): Script {
  // The bundle is ASCII (esbuild escapes the rest), and Latin-1 makes the same text from ASCII
  // without the UTF-8 decoder's work (about a millisecond for the turn); other text is UTF-8.
  const bytes = readFileSync(file);
  return new Script(wrapCommonJs(bytes.toString(isAscii(bytes) ? "latin1" : "utf8")), {
    filename: file,
    ...(cachedData && { cachedData }),
  });
}

/** `require` resolves as in `file`'s folder: the caller's own, from the same folder. */
function run(script: Script, file: string, require: NodeJS.Require): unknown {
  const module = { exports: {} };
  const body = script.runInThisContext() as (...args: unknown[]) => void;
  body(module.exports, require, module, file, dirname(file));
  return module.exports;
}
