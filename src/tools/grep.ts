import { realpath, stat } from "node:fs/promises";
import { Type } from "@sinclair/typebox";
import { headOf } from "../text.js";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { BoundedLines, limits, truncated } from "./limits.js";
import type { BoundaryOptions } from "./path.js";
import { Pace } from "./search/pace.js";
import { globMatcher } from "./search/patterns.js";
import { loadRE2 } from "./search/re2.js";
import { FilesWithout, loadSpawn, ripgrepFor } from "./search/ripgrep.js";
import { type LineSearch, lineSearch, PatternError, searchFile } from "./search/scan.js";
import { Skips } from "./search/skips.js";
import { walk } from "./search/walk.js";
import { isInside, resolveShown } from "./shown-path.js";

export function grepTool(root: string, boundary: BoundaryOptions = {}): Tool {
  return defineTool({
    name: "grep",
    description:
      "Search file contents with a regular expression in RE2 syntax (as in ripgrep: no lookaround or backreferences). Prints file:line: text. glob filters files by a path relative to `path` (a glob without / matches names at any depth). Skips .git, .gitignored and binary files, and counts the links and special files it skips.",
    input: Type.Object({
      pattern: Type.String({ minLength: 1, description: "Regular expression (RE2 syntax)" }),
      path: Type.Optional(Type.String({ description: "File or folder (default .)" })),
      glob: Type.Optional(
        Type.String({ description: "Only files matching this glob, relative to path, e.g. *.ts" }),
      ),
      ignoreCase: Type.Optional(Type.Boolean()),
    }),
    async run({ pattern, path = ".", glob, ignoreCase = false }, signal) {
      await loadRE2();
      const out = new BoundedLines(limits.grepMatches);
      let file = "";
      const search = compilePattern(pattern, ignoreCase, (lineNo, line) =>
        out.add(`${file}:${lineNo}: ${cutLine(line)}`),
      );
      const wanted = glob === undefined ? () => true : globMatcher(glob);
      const {
        path: start,
        realRoot,
        shown,
        state,
        prefix,
      } = await resolveShown(root, path, boundary);
      const info = await stat(start);
      if (!info.isDirectory() && !info.isFile())
        throw new ToolError(`${shown} is not a regular file`);
      const skips = new Skips();
      const pace = new Pace(signal);
      const rg = ripgrepFor(realRoot);
      const files = info.isDirectory()
        ? filesUnder(realRoot, start, wanted, { signal, skips, exclude: state })
        : single(start, shown, wanted);
      // Only files really in the workspace and out of the state folder, whatever their path did.
      const rootBytes = Buffer.from(realRoot);
      const inside = (real: Buffer) =>
        isInside(rootBytes, real) && !(state && (real.equals(state) || isInside(state, real)));
      const without =
        rg !== undefined && search.literals && info.isDirectory()
          ? new FilesWithout(rg, start, search.literals, await loadSpawn())
          : undefined;
      try {
        for await (const next of files) {
          if (without?.has(next.path)) continue;
          file = info.isDirectory() ? `${prefix}${next.rel}` : next.rel;
          const outcome = await searchFile(next.path, search, pace, { rg, inside }).catch(
            (error: unknown) => {
              if (signal?.aborted || !isFileError(error)) throw error;
              return "unreadable" as const;
            },
          );
          if (outcome === "special") skips.add("special file");
          if (outcome === "outside") skips.add("moved outside");
          if (outcome === "unreadable") skips.add("unreadable file");
          if (outcome === "stopped") break;
        }
      } finally {
        await without?.stop();
      }
      const notes = [
        out.left > 0
          ? `[truncated: stopped after ${out.lines.length} matches; narrow the pattern, path or glob]`
          : undefined,
        skips.note(),
      ].filter((note) => note !== undefined);
      const found = out.lines.length === 0 ? [`no matches for ${pattern}`] : out.lines;
      return { content: [...found, ...notes].join("\n") };
    },
  });
}

function compilePattern(
  pattern: string,
  ignoreCase: boolean,
  onMatch: LineSearch["onMatch"],
): LineSearch {
  try {
    return lineSearch(pattern, ignoreCase, onMatch);
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    throw new ToolError(
      `invalid grep pattern: ${error.message} (RE2 syntax, as in ripgrep: no lookaround or backreferences)`,
    );
  }
}

function cutLine(line: string): string {
  const head = headOf(line, limits.grepLineChars);
  return head.length < line.length ? `${head} ${truncated(line.length - head.length)}` : line;
}

const isFileError = (error: unknown) =>
  error instanceof Error && typeof (error as NodeJS.ErrnoException).code === "string";

interface SearchedFile {
  path: Buffer;
  rel: string;
}

/** The one file a path named, when its name is `wanted`. */
async function* single(
  path: Buffer,
  shown: string,
  wanted: (sub: string) => boolean,
): AsyncGenerator<SearchedFile> {
  if (wanted(shown.slice(shown.lastIndexOf("/") + 1))) yield { path, rel: shown };
}

/**
 * The files under `start` whose path relative to it is `wanted`. A symlink counts when its real
 * target is a file in the workspace; dangling links, links leading outside and special files
 * (FIFOs, sockets, devices) are counted in `skips`, never opened.
 */
async function* filesUnder(
  realRoot: string,
  start: Buffer,
  wanted: (sub: string) => boolean,
  options: { signal: AbortSignal | undefined; skips: Skips; exclude: Buffer | undefined },
): AsyncGenerator<SearchedFile> {
  const rootBytes = Buffer.from(realRoot);
  for await (const entry of walk(realRoot, start, options)) {
    const { dirent } = entry;
    if (dirent.isDirectory() || !wanted(entry.sub)) continue;
    if (dirent.isFile()) yield entry;
    else if (!dirent.isSymbolicLink()) options.skips.add("special file");
    else {
      const target = await realpath(entry.path, { encoding: "buffer" }).catch(() => undefined);
      const info = target && (await stat(target).catch(() => undefined));
      if (!target || !info) options.skips.add("dangling link");
      else if (!isInside(rootBytes, target)) options.skips.add("link outside");
      else if (
        options.exclude &&
        (target.equals(options.exclude) || isInside(options.exclude, target))
      )
        options.skips.add("link into state");
      else if (info.isFile()) yield { path: target, rel: entry.rel };
      else if (!info.isDirectory()) options.skips.add("special file");
    }
  }
}
