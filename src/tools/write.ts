import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { Type } from "@sinclair/typebox";
import type { Tool } from "../types.js";
import { defineTool, ToolError } from "./define.js";
import { writeAtomic } from "./files.js";
import { resolveInWorkspace } from "./path.js";

export function writeTool(root: string): Tool {
  return defineTool({
    name: "write",
    description:
      "Create or replace a whole file (parent folders are created). Prefer edit for changes.",
    input: Type.Object({
      path: Type.String({ description: "File path in the workspace" }),
      content: Type.String({ description: "The complete new content" }),
    }),
    async run({ path, content }) {
      const { path: file, shown } = await resolveInWorkspace(root, path);
      const existing = await stat(file).catch(() => undefined);
      if (existing?.isDirectory()) throw new ToolError(`${shown} is a folder`);
      await mkdir(dirname(file), { recursive: true });
      await writeAtomic(file, content);
      const bytes = Buffer.byteLength(content);
      return { content: `${existing ? "replaced" : "created"} ${shown} (${bytes} bytes)` };
    },
  });
}
