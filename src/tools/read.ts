import { Type } from "@sinclair/typebox";
import { headOf } from "../text.js";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { countLines, isBinaryFile, readLines } from "./files.js";
import { limits } from "./limits.js";
import { openInWorkspace } from "./open.js";
import type { BoundaryOptions } from "./path.js";
import { imageTypeOf, readImage } from "./read-image.js";
import { Digest, digestFile, type SeenFiles } from "./seen.js";

/**
 * `read` shows text, or an image whole (PNG, JPEG, GIF, WebP, known by its bytes: `read-image.ts`),
 * and records in `seen` the hash of the whole file as it read it, in the same
 * pass (a ranged read reads on to the end for it), so `edit` and `write` know what was seen.
 */
export function readTool(root: string, seen: SeenFiles, boundary: BoundaryOptions = {}): Tool {
  return defineTool({
    name: "read",
    description: `Read a text file, or see an image (PNG, JPEG, GIF, WebP). Returns up to ${limits.readLines} lines or ${limits.readChars / 1000} KB; use offset and limit for more.`,
    input: Type.Object({
      path: Type.String({ description: "File path in the workspace" }),
      offset: Type.Optional(Type.Integer({ minimum: 1, description: "First line, 1-based" })),
      limit: Type.Optional(Type.Integer({ minimum: 1, description: "Number of lines" })),
    }),
    async run({ path, offset = 1, limit = limits.readLines }, signal) {
      const { handle, info, shown, path: real } = await openInWorkspace(root, path, boundary);
      try {
        if (info.size === 0) {
          seen.record(real, new Digest().finish());
          return { content: "(empty file)" };
        }
        const image = await imageTypeOf(handle);
        if (image)
          return await readImage(handle, shown, (digest) => seen.record(real, digest), signal);
        if (await isBinaryFile(handle))
          throw new ToolError(`${shown} is a binary file: read shows text only`);

        const lines: string[] = [];
        let chars = 0;
        let lineNo = offset - 1;
        let note = "";
        const digest = new Digest();
        for await (const line of readLines(handle, limits.readChars, signal, offset, digest)) {
          lineNo++;
          const room = limits.readChars - chars;
          if (lines.length === limit || (line.text.length > room && lines.length > 0)) {
            note = `[truncated: ${info.size - line.start} more bytes after line ${lineNo - 1}; read with offset=${lineNo} to continue]`;
            break;
          }
          if (line.text.length > room || line.dropped > 0) {
            const shownText = headOf(line.text, room);
            const rest = Buffer.byteLength(line.text) + line.dropped - Buffer.byteLength(shownText);
            lines.push(shownText);
            note = `[truncated: line ${lineNo} goes on for ${rest} more bytes; use grep or bash to inspect it`;
            note +=
              info.size > line.start + line.bytes
                ? `; the file goes on at offset=${lineNo + 1}]`
                : "]";
            break;
          }
          lines.push(line.text);
          chars += line.text.length + 1;
        }
        if (lines.length === 0) {
          throw new ToolError(
            `offset ${offset} is past the end of ${shown} (${await countLines(handle)} lines)`,
          );
        }
        seen.record(real, await digestFile(handle, signal, digest));
        return { content: note ? `${lines.join("\n")}\n${note}` : lines.join("\n") };
      } finally {
        await handle.close();
      }
    },
  });
}
