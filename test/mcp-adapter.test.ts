import { describe, expect, it } from "vitest";
import { modelToolNames } from "../src/mcp/names.js";
import { receiptOf } from "../src/mcp/result.js";
import { adaptTools, argumentProblem, usableTools } from "../src/mcp/tools.js";
import { secretRedactor } from "../src/secrets.js";
import type { ToolResult } from "../src/types.js";

const plain = (text: string) => text;

describe("an MCP result as a receipt", () => {
  it("joins text blocks and carries isError over", () => {
    const result = {
      content: [
        { type: "text", text: "one" },
        { type: "text", text: "two" },
      ],
      isError: true,
    };
    expect(receiptOf(result, plain)).toEqual({ content: "one\ntwo", isError: true });
  });

  it("shows structuredContent as JSON only when there is no text", () => {
    const structuredContent = { temperature: 22, unit: "C" };
    expect(receiptOf({ content: [], structuredContent }, plain)).toEqual({
      content: '{"temperature":22,"unit":"C"}',
      isError: false,
    });
    expect(
      receiptOf({ content: [{ type: "text", text: "22 C" }], structuredContent }, plain),
    ).toEqual({ content: "22 C", isError: false });
  });

  it("turns links, embedded resources, images, audio and blobs into lines", () => {
    const result = {
      content: [
        {
          type: "resource_link",
          name: "Report\nQ3",
          uri: "file:///r.pdf",
          mimeType: "application/pdf",
        },
        { type: "resource", resource: { uri: "demo://a", text: "inline text" } },
        {
          type: "resource",
          resource: { uri: "demo://b", mimeType: "application/zip", blob: "AAAA" },
        },
        { type: "image", mimeType: "image/png", data: "A".repeat(4096) },
        { type: "audio", mimeType: "audio/wav", data: "AA==" },
        { type: "hologram" },
      ],
    };
    expect(receiptOf(result, plain).content).toBe(
      [
        "[resource link: Report Q3 file:///r.pdf (application/pdf)]",
        "[resource: demo://a]",
        "inline text",
        "[resource: demo://b, application/zip, 3 B]",
        "[image not shown: image/png, 3.0 KB: not a PNG, JPEG, GIF or WebP image]",
        "[audio: audio/wav, 1 B]",
        "[unsupported content: hologram]",
      ].join("\n"),
    );
  });

  it("says when there is no content at all", () => {
    expect(receiptOf({ content: [] }, plain)).toEqual({ content: "[no content]", isError: false });
  });

  it("redacts secrets and makes the text well-formed", () => {
    const redact = secretRedactor({ DEPLOY_KEY: "dk-0123456789abcdef" });
    const result = {
      content: [{ type: "text", text: "key dk-0123456789abcdef, half \uD800 pair" }],
    };
    expect(receiptOf(result, redact)).toEqual({
      content: "key [redacted], half \uFFFD pair",
      isError: false,
    });
  });

  it("cuts a long result between code points, saying how much it cut", () => {
    const text = `${"a".repeat(49_999)}😀${"b".repeat(100)}`;
    expect(receiptOf({ content: [{ type: "text", text }] }, plain).content).toBe(
      `${"a".repeat(49_999)}\n[truncated 102 characters]`,
    );
  });
});

describe("model-visible MCP tool names", () => {
  it("keeps a name that fits, and hashes one that does not or that collides", () => {
    const names = modelToolNames("gh", ["list_issues", "get-pr", "a.b", "a_b", "x".repeat(70)]);
    expect(names.slice(0, 2)).toEqual(["mcp__gh__list_issues", "mcp__gh__get-pr"]);
    expect(names[2]).toMatch(/^mcp__gh__a_b_[0-9a-f]{8}$/);
    expect(names[3]).toMatch(/^mcp__gh__a_b_[0-9a-f]{8}$/);
    expect(names[2]).not.toBe(names[3]);
    expect(names[4]).toHaveLength(64);
    expect(names.every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true);
  });

  it("gives a tool the same name whatever order or company it comes in", () => {
    const alone = modelToolNames("s", ["ü"]);
    const later = modelToolNames("s", ["z", "y", "ü"]);
    expect(later[2]).toBe(alone[0]);
    expect(modelToolNames("t", ["ü"])[0]).not.toBe(alone[0]?.replace("mcp__s__", "mcp__t__"));
  });
});

describe("an MCP tool as a Tool", () => {
  const schema = {
    type: "object",
    properties: { q: { type: "string" }, n: { type: ["integer", "null"] }, any: {} },
    required: ["q"],
  };

  it("checks the arguments it can before calling", () => {
    expect(argumentProblem(schema, { q: "x", n: 3, any: [1] })).toBeUndefined();
    expect(argumentProblem(schema, { q: "x", n: null })).toBeUndefined();
    expect(argumentProblem(schema, { n: 3 })).toBe("q is required");
    expect(argumentProblem(schema, { q: 1 })).toBe("q must be a string");
    expect(argumentProblem(schema, { q: "x", n: 1.5 })).toBe("n must be an integer or a null");
    expect(argumentProblem(schema, "x")).toBe("input must be an object");
    expect(argumentProblem(schema, { q: "x", constructor: 1 })).toBeUndefined();
  });

  it("calls the raw name with the arguments, and never calls on invalid input or after an abort", async () => {
    const calls: unknown[] = [];
    const answer: ToolResult = { content: "ok", isError: false };
    const [tool] = adaptTools(
      "s",
      [{ name: "do.it", inputSchema: schema, annotations: { destructiveHint: true } }],
      async (request) => {
        calls.push(request);
        return answer;
      },
    );
    expect(tool?.spec).toEqual({
      name: expect.stringMatching(/^mcp__s__do_it_/),
      description: "",
      inputSchema: schema,
    });
    expect(tool?.mcp).toEqual({
      server: "s",
      tool: "do.it",
      annotations: { destructiveHint: true },
    });
    expect(await tool?.execute({ q: "x" })).toEqual(answer);
    expect(await tool?.execute({ q: 1 })).toEqual({
      content: `invalid ${tool?.spec.name} input: q must be a string`,
      isError: true,
    });
    const aborted = new AbortController();
    aborted.abort();
    expect(await tool?.execute({ q: "x" }, aborted.signal)).toEqual({
      content: `${tool?.spec.name} aborted before it started`,
      isError: true,
    });
    expect(calls).toEqual([{ tool: "do.it", label: tool?.spec.name, args: { q: "x" } }]);
  });
});

describe("what a server lists that cannot be offered", () => {
  const schema = { type: "object" as const, properties: {} };

  it("leaves out a second tool of the same name, a tool without a name, and says so", () => {
    const { tools, leftOut } = usableTools([
      { name: "dup", description: "d1", inputSchema: schema },
      { name: "dup", description: "d2", inputSchema: schema },
      { name: "", inputSchema: schema },
      { name: "ok", inputSchema: schema },
    ]);
    expect(tools.map((tool) => [tool.name, tool.description])).toEqual([
      ["dup", "d1"],
      ["ok", undefined],
    ]);
    expect(leftOut).toEqual(['"dup" (listed twice)', "a tool without a name"]);
    const names = adaptTools("h", tools, async () => ({ content: "", isError: false })).map(
      (tool) => tool.spec.name,
    );
    expect(new Set(names).size).toBe(names.length);
  });

  it("leaves out a tool whose schema is too big for a request, and tools past the server's share", () => {
    const properties = Object.fromEntries(
      Array.from({ length: 20_000 }, (_, index) => [`p${index}`, { type: "string" }]),
    );
    const huge = { type: "object" as const, properties };
    const { tools, leftOut } = usableTools([
      { name: "big", inputSchema: huge },
      { name: "small", inputSchema: schema },
    ]);
    expect(tools.map((tool) => tool.name)).toEqual(["small"]);
    expect(leftOut).toEqual(['"big" (its input schema is over 64 KiB)']);

    const many = Array.from({ length: 400 }, (_, index) => ({
      name: `t${String(index).padStart(3, "0")}`,
      description: "x".repeat(2000),
      inputSchema: schema,
    }));
    const shared = usableTools(many);
    expect(shared.tools.length).toBeLessThan(400);
    expect(shared.tools.length).toBeGreaterThan(100);
    expect(shared.leftOut).toEqual([
      `${400 - shared.tools.length} more tools (the server's tools are over 512 KiB)`,
    ]);
  });
});
