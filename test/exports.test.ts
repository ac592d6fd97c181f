import { describe, expect, it } from "vitest";

describe("the package entry", () => {
  it("exports the public API from the built package", async () => {
    const entry = (await import(new URL("../dist/index.js", import.meta.url).href)) as Record<
      string,
      unknown
    >;
    const expected = {
      runAgent: "function",
      createWorkspaceTools: "function",
      workspacePath: "function",
      denyBashByDefault: "function",
      AnthropicModelClient: "function",
      OpenAIModelClient: "function",
      toAnthropicMessages: "function",
      toModelEvents: "function",
      Session: "function",
      defineTool: "function",
      ProviderStreamError: "function",
      withoutSecrets: "function",
      SeenFiles: "function",
      CompactingClient: "function",
      CompactionError: "function",
      historyProblem: "function",
    };
    expect(
      Object.fromEntries(Object.keys(expected).map((name) => [name, typeof entry[name]])),
    ).toEqual(expected);
  });
});
