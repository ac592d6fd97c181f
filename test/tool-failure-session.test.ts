import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { readSession, Session } from "../src/session/session.js";
import { call, done, FakeClient, text, toolCall } from "../src/testing/fake-client.js";
import type { Message } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";
import { echoTool, scriptedTool } from "./support/tools.js";

const tempDir = useTempDirs();
const user: Message = { role: "user", content: "deploy" };
const secret = "sensitive credential: top-secret-token";

async function runWithSession(options: Omit<Parameters<typeof runAgent>[0], "messages">) {
  const session = await Session.create({
    dir: await tempDir(),
    workspace: "/ws",
    model: "m",
    env: {},
  });
  await session.append(user);
  const outcome = await runAgent({
    ...options,
    messages: [user],
    onEvent: (event) => (event.type === "message" ? session.append(event.message) : undefined),
  }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  await session.close();
  return { ...outcome, path: session.path };
}

const calls = [
  toolCall("c1", "echo", { value: "before" }),
  toolCall("c2", "explode"),
  toolCall("c3", "echo", { value: "after" }),
];

describe("tool failure and the session", () => {
  it("records tool execution failed, skips later calls, rethrows and keeps the secret out of the file", async () => {
    const ran: string[] = [];
    const explode = scriptedTool("explode", async () => {
      throw new Error(secret);
    });
    const client = new FakeClient([
      [text("go"), ...calls.map((c) => call(c.id, c.name, c.input)), done],
    ]);
    const { error, path } = await runWithSession({
      client,
      tools: [echoTool(ran), explode],
      system: "",
    });
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(secret);
    expect(ran).toEqual(["before"]);
    const file = await readFile(path, "utf8");
    expect(file).not.toContain("top-secret-token");
    expect((await readSession(path)).messages).toEqual([
      user,
      { role: "assistant", content: "go", toolCalls: calls },
      { role: "tool", toolCallId: "c1", content: "echo: before", isError: false },
      { role: "tool", toolCallId: "c2", content: "tool execution failed", isError: true },
      {
        role: "tool",
        toolCallId: "c3",
        content: "not executed after an earlier failure",
        isError: true,
      },
    ]);
  });

  it("records tool approval failed when the policy throws, skips later calls and rethrows", async () => {
    const ran: string[] = [];
    const client = new FakeClient([
      [call("c1", "echo", { value: "one" }), call("c2", "echo", { value: "two" }), done],
    ]);
    const { error, path } = await runWithSession({
      client,
      tools: [echoTool(ran)],
      system: "",
      beforeToolCall: () => {
        throw new Error(`policy crashed: ${secret}`);
      },
    });
    expect((error as Error).message).toBe(`policy crashed: ${secret}`);
    expect(ran).toEqual([]);
    expect(await readFile(path, "utf8")).not.toContain("top-secret-token");
    expect((await readSession(path)).messages.slice(2)).toEqual([
      { role: "tool", toolCallId: "c1", content: "tool approval failed", isError: true },
      {
        role: "tool",
        toolCallId: "c2",
        content: "not executed after an earlier failure",
        isError: true,
      },
    ]);
  });

  it("keeps a model error's text out of the session", async () => {
    const client = new FakeClient([[text("partial"), new Error(secret)]]);
    const { error, path } = await runWithSession({ client, tools: [], system: "" });
    expect((error as Error).message).toBe(secret);
    expect(await readFile(path, "utf8")).not.toContain("top-secret-token");
    expect((await readSession(path)).messages).toEqual([user]);
  });
});
