import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createWorkspaceTools } from "../../src/tools/index.js";
import type { Tool, ToolResult } from "../../src/types.js";
import { useTempDirs } from "./temp.js";

export interface Workspace {
  /** The workspace folder. */
  root: string;
  /** A sibling folder outside it, holding `secret.txt`. */
  outside: string;
  tools: Map<string, Tool>;
  run(tool: string, input: unknown, signal?: AbortSignal): Promise<ToolResult>;
  /** Creates files (and their folders) inside the workspace. */
  files(contents: Record<string, string | Buffer>): Promise<void>;
}

/** A fresh workspace per test, with an outside folder beside it to attack. */
export function useWorkspace(): () => Promise<Workspace> {
  const tempDir = useTempDirs();
  return async () => {
    const base = await tempDir();
    const root = join(base, "ws");
    const outside = join(base, "outside");
    await mkdir(root);
    await mkdir(outside);
    await writeFile(join(outside, "secret.txt"), "outside secret\n");
    const tools = new Map(
      createWorkspaceTools(root, { bash: { killGrace: 1 } }).map((tool) => [tool.spec.name, tool]),
    );
    return {
      root,
      outside,
      tools,
      run(name, input, signal) {
        const tool = tools.get(name);
        if (!tool) throw new Error(`no tool ${name}`);
        return tool.execute(input, signal);
      },
      async files(contents) {
        for (const [path, content] of Object.entries(contents)) {
          await mkdir(dirname(join(root, path)), { recursive: true });
          await writeFile(join(root, path), content);
        }
      },
    };
  };
}
