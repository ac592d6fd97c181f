import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { checkLine, definedSchema, protocolLines, shippedSchema } from "./support/stream-json.js";

const setup = useCliSetup();

describe("the stream-json protocol", () => {
  it("ships a JSON Schema written from the same definitions the tests check lines with", () => {
    expect(shippedSchema).toEqual(definedSchema());
    expect(shippedSchema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(Object.keys(shippedSchema.$defs as object)).toEqual(["input"]);
  });

  it("refuses a line without its version, with an unknown type or with a field it does not define", () => {
    const text = { version: 1, type: "text", text: "hi" };
    expect(checkLine(text)).toEqual(text);
    expect(() => checkLine({ type: "text", text: "hi" })).toThrow(/not in the schema/);
    expect(() => checkLine({ version: 2, type: "text", text: "hi" })).toThrow(/not in the schema/);
    expect(() => checkLine({ version: 1, type: "chat", text: "hi" })).toThrow(/not in the schema/);
    expect(() => checkLine({ ...text, extra: true })).toThrow(/not in the schema/);
    expect(() => checkLine({ version: 1, type: "tool_start" })).toThrow(/not in the schema/);
  });

  it("lists the calls a turn denied in its result, with who denied them", async () => {
    const { options } = await setup([
      stream(
        turn({
          calls: [
            { id: "toolu_1", name: "bash", input: { command: "make" } },
            { id: "toolu_2", name: "ls", input: {} },
          ],
        }),
      ),
      stream(turn({ text: ["ok"] })),
    ]);
    const run = await runBin(["--output-format", "stream-json", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "approval")).toEqual([
      {
        version: 1,
        type: "approval",
        id: "toolu_1",
        name: "bash",
        approved: false,
        by: "no-terminal",
      },
      {
        version: 1,
        type: "approval",
        id: "toolu_2",
        name: "ls",
        approved: true,
        by: "default-policy",
      },
    ]);
    expect(lines.at(-1)).toMatchObject({
      type: "result",
      status: "completed",
      denied: [{ id: "toolu_1", name: "bash", by: "no-terminal" }],
    });
  });
});

describe("file changes in stream-json", () => {
  it("writes a file_change line after each write or edit, with the hashes and mode", async () => {
    const { options } = await setup([
      stream(
        turn({ calls: [{ id: "toolu_1", name: "write", input: { path: "a.txt", content: "x" } }] }),
      ),
      stream(turn({ text: ["ok"] })),
    ]);
    const run = await runBin(["--output-format", "stream-json", "go"], options);
    expect(run.code).toBe(0);
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "file_change")).toEqual([
      {
        version: 1,
        type: "file_change",
        id: "toolu_1",
        path: "a.txt",
        before: null,
        after: createHash("sha256").update("x").digest("hex"),
        mode: 0o666 & ~process.umask(),
      },
    ]);
    const kinds = lines.map((line) => line.type);
    expect(kinds.indexOf("file_change")).toBe(kinds.indexOf("tool_result") - 1);
  });
});

describe("stream-json lines for every JSON-lines reader", () => {
  it("escapes U+2028, U+2029 and U+0085, so no reader splits a line on them", async () => {
    const answer = "one\u2028two\u2029three\u0085four";
    const { options } = await setup([stream(turn({ text: [answer] }))]);
    const run = await runBin(["--output-format", "stream-json", "go"], options);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/[\u2028\u2029\u0085]/);
    // Python's str.splitlines() splits on each of them, as on \n and \r.
    const lines = run.stdout.split(/\r\n|[\n\r\v\f\u0085\u2028\u2029]/).filter(Boolean);
    const texts = lines.map((line) => checkLine(JSON.parse(line))).filter((l) => l.type === "text");
    expect(texts.map((line) => line.text).join("")).toBe(answer);
  });
});
