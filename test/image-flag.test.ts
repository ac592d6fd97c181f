import { execFileSync } from "node:child_process";
import { truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session/read.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import {
  stream as chatStream,
  completion,
  startOpenAIServer,
} from "../src/testing/openai-server.js";
import {
  response,
  stream as responsesStream,
  startResponsesServer,
} from "../src/testing/responses-server.js";
import { useCleanup } from "./support/cleanup.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";
import { jpeg, png } from "./support/images.js";

/** `--image FILE`: the task's images, on each adapter through its strict server. */

const setup = useCliSetup();
const track = useCleanup();
const shot = png(2, 2);
const logo = jpeg(3, 5);
const content = `what are these?\n[image: image/png, 2x2, ${shot.length} B]\n[image: image/jpeg, 3x5, ${logo.length} B]`;
const url = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString("base64")}`;

async function workspaceWithImages(workspace: string) {
  await writeFile(join(workspace, "shot.png"), shot);
  await writeFile(join(workspace, "logo.jpg"), logo);
  await writeFile(join(workspace, "notes.png"), "not an image\n");
}
const flags = ["--image", "shot.png", "--image", "logo.jpg", "what are these?"];

describe("--image", () => {
  it("sends the task's images to Anthropic as image blocks after its text, and keeps them in the session", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ text: "Two images." })),
    ]);
    await workspaceWithImages(workspace);
    expect(await runBin(flags, options)).toEqual({ code: 0, stdout: "Two images.\n", stderr: "" });
    expect(server.rejections).toEqual([]);
    const block = (type: string, bytes: Buffer) => ({
      type: "image",
      source: { type: "base64", media_type: type, data: bytes.toString("base64") },
    });
    expect(server.requests[0]?.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "what are these?" },
          block("image/png", shot),
          { ...block("image/jpeg", logo), cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
    const [file = ""] = await sessionFiles(home);
    expect((await readSession(file)).messages[0]).toEqual({
      role: "user",
      content,
      parts: [
        { type: "text", text: "what are these?" },
        { type: "image", mediaType: "image/png", data: shot.toString("base64") },
        { type: "image", mediaType: "image/jpeg", data: logo.toString("base64") },
      ],
    });
  });

  it("sends them to Chat Completions and Responses as image parts of the user message", async () => {
    const { workspace, home, options } = await setup([]);
    await workspaceWithImages(workspace);
    const chat = track(await startOpenAIServer([chatStream(completion({ text: "Two." }))]));
    const responses = track(
      await startResponsesServer([responsesStream(response({ text: ["Two."] }))]),
    );
    const openai = (server: { url: string }) => ({
      ...options,
      env: { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${server.url}/v1` },
    });
    const model = ["--model", "local-model"];
    expect(await runBin(["--provider", "openai", ...model, ...flags], openai(chat))).toEqual({
      code: 0,
      stdout: "Two.\n",
      stderr: "",
    });
    expect(
      await runBin(["--provider", "openai-responses", ...model, ...flags], openai(responses)),
    ).toEqual({ code: 0, stdout: "Two.\n", stderr: "" });
    expect([chat.rejections, responses.rejections]).toEqual([[], []]);
    expect(chat.requests[0]?.body.messages).toEqual([
      expect.objectContaining({ role: "system" }),
      {
        role: "user",
        content: [
          { type: "text", text: "what are these?" },
          { type: "image_url", image_url: { url: url("image/png", shot) } },
          { type: "image_url", image_url: { url: url("image/jpeg", logo) } },
        ],
      },
    ]);
    expect(responses.requests[0]?.body.input).toEqual([
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "what are these?" },
          { type: "input_image", image_url: url("image/png", shot), detail: "auto" },
          { type: "input_image", image_url: url("image/jpeg", logo), detail: "auto" },
        ],
      },
    ]);
    expect((await sessionFiles(home)).length).toBe(2);
  });

  it("refuses a file that is not an image, a missing file, a FIFO or folder without waiting on it, and --image without a task, in one line, before anything is created", async () => {
    const { server, workspace, home, options } = await setup([]);
    await workspaceWithImages(workspace);
    execFileSync("mkfifo", [join(workspace, "pipe.png")]);
    await truncate(join(workspace, "zeros.png"), 10 * 1024 ** 3).catch(async () => {
      await writeFile(join(workspace, "zeros.png"), "");
      await truncate(join(workspace, "zeros.png"), 10 * 1024 ** 3);
    });
    const runs = [
      await runBin(["--image", "notes.png", "look"], options),
      await runBin(["--image", "gone.png", "look"], options),
      await runBin(["--image", "pipe.png", "look"], options),
      await runBin(["--image", ".", "look"], options),
      await runBin(["--image", "zeros.png", "look"], options),
      await runBin(["--image", "shot.png"], { ...options, input: "" }),
    ];
    expect(runs).toEqual([
      {
        code: 2,
        stdout: "",
        stderr: "mini-agent: --image notes.png is not a PNG, JPEG, GIF or WebP image\n",
      },
      { code: 2, stdout: "", stderr: "mini-agent: --image gone.png: no such file or directory\n" },
      { code: 2, stdout: "", stderr: "mini-agent: --image pipe.png is not a regular file\n" },
      { code: 2, stdout: "", stderr: "mini-agent: --image . is not a regular file\n" },
      {
        code: 2,
        stdout: "",
        stderr: "mini-agent: --image zeros.png is not a PNG, JPEG, GIF or WebP image\n",
      },
      {
        code: 2,
        stdout: "",
        stderr: "mini-agent: no task: give one as an argument, with --print, or on stdin\n",
      },
    ]);
    expect(server.requests).toEqual([]);
    expect(await sessionFiles(home)).toEqual([]);
  });
});
