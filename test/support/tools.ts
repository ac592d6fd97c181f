import { Type } from "@sinclair/typebox";
import { defineTool } from "../../src/tools/define.js";
import type { Tool, ToolResult } from "../../src/types.js";

/** A schema-checked tool that answers `echo: <value>` and records each value it ran with. */
export function echoTool(ran: string[] = []): Tool {
  return defineTool({
    name: "echo",
    description: "Echo a value.",
    input: Type.Object({ value: Type.String() }),
    run: async ({ value }) => {
      ran.push(value);
      return { content: `echo: ${value}` };
    },
  });
}

/** A tool whose `execute` is given by the test, for throws, aborts and slow runs. */
export function scriptedTool(
  name: string,
  execute: (input: unknown, signal?: AbortSignal) => Promise<ToolResult>,
): Tool {
  return { spec: { name, description: `${name} tool`, inputSchema: { type: "object" } }, execute };
}
