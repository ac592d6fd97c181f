import { readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Script } from "node:vm";

/**
 * Loading the part of the CLI a turn needs, with V8's code cache. Compiling the bundle's code is
 * a large share of a short run's start-up, and Node 20 keeps no compile cache for modules (that
 * came in Node 22). So the turn is bundled as one CommonJS file, and the build stores the code V8
 * compiled for it beside it (`makeCodeCache`). A cache made by another V8 version or under other
 * V8 flags is rejected by V8 itself, and the file is then compiled as usual: the cache only ever
 * saves time. The cache's name carries a hash of the bundle, so it never meets another source.
 */
export function requireWithCodeCache(
  file: string,
  cacheFile: string,
  require: NodeJS.Require,
): unknown {
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // No cache (a build without one): compiled as usual.
  }
  return run(compile(file, cachedData), file, require);
}

/** Compiles and runs the bundle `file` once, then writes what V8 compiled to `cacheFile`. */
export function makeCodeCache(file: string, cacheFile: string, require: NodeJS.Require): void {
  const script = compile(file, undefined);
  run(script, file, require);
  writeFileSync(cacheFile, script.createCachedData());
}

function compile(file: string, cachedData: Buffer | undefined): Script {
  const source = readFileSync(file, "utf8");
  // The CommonJS wrapper, on the first line, so positions in stack traces stay the file's own.
  return new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
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
