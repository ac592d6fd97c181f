import { appendFile, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { readSession, Session } from "../src/session/session.js";
import type { Message } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The session file and the model's thinking: stored with the message, checked against the one
 * schema of the history's shape, redacted like every other text, signatures untouched.
 */

const tempDir = useTempDirs();
const secret = "hunter2-very-secret-value";
const signature = "EqQBCkYIBxgCKkB+/=sig";
const round: Message = {
  role: "assistant",
  content: "",
  toolCalls: [{ id: "call_1", name: "ls", input: {} }],
  reasoning: [
    { type: "thinking", text: `the password is ${secret}`, signature, at: { text: 0, calls: 0 } },
    { type: "redacted_thinking", data: "opaque+/==", at: { text: 0, calls: 0 } },
  ],
};

describe("thinking in the session file", () => {
  it("redacts secrets in the thinking text, drops the signature it no longer matches and keeps redacted data byte for byte", async () => {
    const session = await Session.create({
      dir: await tempDir(),
      workspace: "/ws",
      model: "m",
      env: { DB_PASSWORD: secret },
    });
    await session.append({ role: "user", content: "hi" });
    await session.append(round);
    await session.close();
    expect(await readFile(session.path, "utf8")).not.toContain(secret);
    const { messages } = await readSession(session.path);
    expect(messages[1]).toEqual({
      ...round,
      reasoning: [
        { type: "thinking", text: "the password is [redacted]", at: { text: 0, calls: 0 } },
        { type: "redacted_thinking", data: "opaque+/==", at: { text: 0, calls: 0 } },
      ],
    });
  });

  it("keeps the signature of a text cleaning leaves as it was, and drops it where a lone surrogate was replaced", async () => {
    const session = await Session.create({ dir: await tempDir(), workspace: "/ws", model: "m" });
    const parts = (texts: string[]): Message => ({
      ...round,
      reasoning: texts.map((text) => ({
        type: "thinking",
        text,
        signature,
        at: { text: 0, calls: 0 },
      })),
    });
    await session.append({ role: "user", content: "hi" });
    await session.append(parts(["kept as it was", "half \ud800 a pair"]));
    await session.close();
    const { messages } = await readSession(session.path);
    expect(messages[1]).toEqual({
      ...round,
      reasoning: [
        { type: "thinking", text: "kept as it was", signature, at: { text: 0, calls: 0 } },
        { type: "thinking", text: "half \ufffd a pair", at: { text: 0, calls: 0 } },
      ],
    });
  });

  it("keeps the kind of each reasoning part when a secret equals it", async () => {
    const session = await Session.create({
      dir: await tempDir(),
      workspace: "/ws",
      model: "m",
      env: { API_TOKEN: "redacted_thinking", OTHER_SECRET: "thinking" },
    });
    await session.append({ role: "user", content: "hi" });
    await session.append(round);
    await session.close();
    const loaded = await readSession(session.path);
    expect(loaded.skipped).toBe(0);
    expect(loaded.messages[1]).toEqual({
      ...round,
      reasoning: [
        {
          type: "thinking",
          text: `the password is ${secret}`,
          signature,
          at: { text: 0, calls: 0 },
        },
        { type: "redacted_thinking", data: "opaque+/==", at: { text: 0, calls: 0 } },
      ],
    });
  });

  it("skips a record whose reasoning does not have the message schema's shape", async () => {
    const session = await Session.create({ dir: await tempDir(), workspace: "/ws", model: "m" });
    await session.append({ role: "user", content: "hi" });
    await session.close();
    const broken = { ...round, reasoning: [{ type: "thinking", text: "no place" }] };
    await appendFile(session.path, `${JSON.stringify({ type: "message", message: broken })}\n`);
    const loaded = await readSession(session.path);
    expect(loaded.skipped).toBe(1);
    expect(loaded.messages).toEqual([{ role: "user", content: "hi" }]);
  });
});
