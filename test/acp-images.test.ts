import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/read.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { errorOf, invalidLines, withAcpAgent } from "./support/acp.js";
import { sessionFiles, useCliSetup } from "./support/cli.js";
import { jpeg, png } from "./support/images.js";

/** `mini-agent acp`: image blocks of a prompt reach the model as images of the user message. */

const setup = useCliSetup();
const shot = png(2, 2);
const logo = jpeg(3, 5);
const image = (mimeType: string, bytes: Buffer | string): acp.ContentBlock => ({
  type: "image",
  mimeType,
  data: typeof bytes === "string" ? bytes : bytes.toString("base64"),
});
const block = (type: string, bytes: Buffer) => ({
  type: "image",
  source: { type: "base64", media_type: type, data: bytes.toString("base64") },
});
const cached = { cache_control: { type: "ephemeral" } };

const noAnswer = (): acp.RequestPermissionResponse => {
  throw new Error("no permission request was expected");
};

describe("mini-agent acp with images in prompts", () => {
  it("says it takes images, sends a prompt's images after its text, and takes a prompt of an image alone", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: "A red square." })),
      stream(turn({ text: "A grey one." })),
    ]);
    const { value, run, code } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        const init = await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [],
        });
        const text: acp.ContentBlock = { type: "text", text: "what is this?" };
        const first = await agent.request("session/prompt", {
          sessionId,
          prompt: [text, image("image/png", shot)],
        });
        const second = await agent.request("session/prompt", {
          sessionId,
          prompt: [image("image/jpeg", logo)],
        });
        return { init, answers: [first, second] };
      },
    );
    expect(code).toBe(0);
    expect(value.init.agentCapabilities?.promptCapabilities).toEqual({
      image: true,
      audio: false,
      embeddedContext: false,
    });
    expect(value.answers).toEqual([{ stopReason: "end_turn" }, { stopReason: "end_turn" }]);
    expect(server.rejections).toEqual([]);
    expect(server.requests[1]?.body.messages).toEqual([
      {
        role: "user",
        content: [{ type: "text", text: "what is this?" }, block("image/png", shot)],
      },
      { role: "assistant", content: [{ type: "text", text: "A red square." }] },
      { role: "user", content: [{ ...block("image/jpeg", logo), ...cached }] },
    ]);
    expect(invalidLines(run.lines)).toEqual([]);
  });

  it("refuses a bad image with -32602 and sends nothing: bad base64, a type its bytes do not have, an oversized image", async () => {
    const { server, workspace, home, options } = await setup([]);
    const big = png(2, 2, 4 * 1024 * 1024);
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [],
        });
        const prompts = [
          [image("image/png", "not base64!")],
          [{ type: "text", text: "look" }, image("image/jpeg", shot)],
          [image("image/png", shot), image("image/png", big)],
        ] satisfies acp.ContentBlock[][];
        const errors = [];
        for (const prompt of prompts)
          errors.push(await errorOf(agent.request("session/prompt", { sessionId, prompt })));
        return errors;
      },
    );
    expect(value).toEqual([
      { code: -32602, message: "Invalid params: image 1 of the prompt is not base64" },
      {
        code: -32602,
        message: "Invalid params: image 1 of the prompt is a PNG image, not image/jpeg as it says",
      },
      {
        code: -32602,
        message:
          "Invalid params: image 2 of the prompt is a 4.00 MB image: images go up to 3.75 MB",
      },
    ]);
    expect(server.requests).toEqual([]);
    // The session file session/new created holds no message: nothing of the prompts was recorded.
    const files = await sessionFiles(home);
    const messages = await Promise.all(
      files.map(async (file) => (await readSession(file)).messages),
    );
    expect(messages).toEqual([[]]);
    expect(invalidLines(run.lines)).toEqual([]);
  });

  it("replays a prompt's images as image blocks when the session is loaded", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: "A red square." })),
      stream(turn({ text: "Still red." })),
    ]);
    const first = await withAcpAgent(["--sandbox", "off"], options, noAnswer, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1 });
      const { sessionId } = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
      await agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "what is this?" }, image("image/png", shot)],
      });
      return sessionId;
    });
    const sessionId = first.value;
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent, seen) => {
        await agent.request("initialize", { protocolVersion: 1 });
        await agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
        const replayed = seen.updates.map((note) => note.update);
        const answer = await agent.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "and now?" }],
        });
        return { replayed, answer };
      },
    );
    expect(value.replayed).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "what is this?" } },
      { sessionUpdate: "user_message_chunk", content: image("image/png", shot) },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "A red square." } },
    ]);
    expect(value.answer).toEqual({ stopReason: "end_turn" });
    expect(server.requests[1]?.body.messages).toEqual([
      {
        role: "user",
        content: [{ type: "text", text: "what is this?" }, block("image/png", shot)],
      },
      { role: "assistant", content: [{ type: "text", text: "A red square." }] },
      { role: "user", content: [{ type: "text", text: "and now?", ...cached }] },
    ]);
    expect(server.rejections).toEqual([]);
    expect(invalidLines([...first.run.lines, ...run.lines])).toEqual([]);
  });
});
