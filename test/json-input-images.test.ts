import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { JsonInput } from "../src/cli/json-input.js";
import type { OutputEvent } from "../src/cli/stream-json-protocol.js";
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
import { protocolLines } from "./support/stream-json.js";
import { useTempDirs } from "./support/temp.js";

/** `--input-format stream-json`: user lines with `images`, inline (base64) or by path. */

const setup = useCliSetup();
const tempDir = useTempDirs();
const track = useCleanup();
const jsonFlags = ["--input-format", "stream-json", "--output-format", "stream-json"];
const shot = png(2, 2);
const logo = jpeg(3, 5);
const block = (type: string, bytes: Buffer) => ({
  type: "image",
  source: { type: "base64", media_type: type, data: bytes.toString("base64") },
});
const user = (text: string, images: unknown[]) => JSON.stringify({ type: "user", text, images });
const error = (message: string) => ({ version: 1, type: "error", message });

describe("stream-json user lines with images", () => {
  it("sends an inline image and one read from a path as image blocks after the text", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: "A red square." })),
      stream(turn({ text: "A grey one." })),
    ]);
    await writeFile(join(workspace, "logo.jpg"), logo);
    const input = [
      user("what is this?", [{ mediaType: "image/png", data: shot.toString("base64") }]),
      user("and this?", [{ path: "logo.jpg" }]),
    ];
    const run = await runBin([...jsonFlags, "--sandbox", "off"], {
      ...options,
      input: `${input.join("\n")}\n`,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "error")).toEqual([]);
    expect(server.rejections).toEqual([]);
    expect(server.requests).toHaveLength(2);
    const first = {
      role: "user",
      content: [{ type: "text", text: "what is this?" }, block("image/png", shot)],
    };
    expect(server.requests[0]?.body.messages).toEqual([
      {
        ...first,
        content: [
          { type: "text", text: "what is this?" },
          { ...block("image/png", shot), cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
    expect(server.requests[1]?.body.messages).toEqual([
      first,
      { role: "assistant", content: [{ type: "text", text: "A red square." }] },
      {
        role: "user",
        content: [
          { type: "text", text: "and this?" },
          { ...block("image/jpeg", logo), cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
  }, 30_000);

  it("skips a line with bad base64, a type its bytes do not have, an oversized image, a missing file or an unknown type, one error each, sending nothing of it", async () => {
    const { server, options } = await setup([stream(turn({ text: "Fine." }))]);
    const big = png(2, 2, 4 * 1024 * 1024);
    const input = [
      user("bad base64", [{ mediaType: "image/png", data: "not base64!" }]),
      user("mismatch", [{ mediaType: "image/jpeg", data: shot.toString("base64") }]),
      user("too big", [{ mediaType: "image/png", data: big.toString("base64") }]),
      user("second bad", [
        { mediaType: "image/png", data: shot.toString("base64") },
        { path: "gone.png" },
      ]),
      user("bmp", [{ mediaType: "image/bmp", data: shot.toString("base64") }]),
      JSON.stringify({ type: "user", text: "plain" }),
    ];
    const run = await runBin([...jsonFlags, "--sandbox", "off"], {
      ...options,
      input: `${input.join("\n")}\n`,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = protocolLines(run.stdout);
    expect(lines.filter((line) => line.type === "error")).toEqual([
      error("input line 1 image 1 is not base64; it was skipped"),
      error("input line 2 image 1 is a PNG image, not image/jpeg as it says; it was skipped"),
      error("input line 3 image 1 is a 4.00 MB image: images go up to 3.75 MB; it was skipped"),
      error("input line 4 image 2 (gone.png): no such file or directory; it was skipped"),
      error(
        'input line 5 has images that are not each {"mediaType":"image/png"|"image/jpeg"|"image/gif"|"image/webp","data":…} or {"path":…}; it was skipped',
      ),
    ]);
    expect(server.requests.map((request) => request.body.messages)).toEqual([
      [
        {
          role: "user",
          content: [{ type: "text", text: "plain", cache_control: { type: "ephemeral" } }],
        },
      ],
    ]);
  }, 30_000);
});

describe("stream-json user lines of images alone", () => {
  const onlyImage = user("", [{ mediaType: "image/png", data: shot.toString("base64") }]);
  const placeholder = `[image: image/png, 2x2, ${shot.length} B]`;

  it("sends an image with empty text as a user message of the image alone, on every adapter", async () => {
    const { server, home, options } = await setup([stream(turn({ text: "Red." }))]);
    const chat = track(await startOpenAIServer([chatStream(completion({ text: "Red." }))]));
    const responses = track(
      await startResponsesServer([responsesStream(response({ text: ["Red."] }))]),
    );
    const openai = (provider: string, url: string) => ({
      args: [...jsonFlags, "--sandbox", "off", "--provider", provider, "--model", "local-model"],
      options: {
        ...options,
        env: { ...options.env, ANTHROPIC_API_KEY: "", OPENAI_BASE_URL: `${url}/v1` },
        input: `${onlyImage}\n`,
      },
    });
    const runs = [
      await runBin([...jsonFlags, "--sandbox", "off"], { ...options, input: `${onlyImage}\n` }),
      ...[openai("openai", chat.url), openai("openai-responses", responses.url)].map(
        async ({ args, options }) => runBin(args, options),
      ),
    ];
    for (const run of await Promise.all(runs)) {
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
      expect(protocolLines(run.stdout).filter((line) => line.type === "error")).toEqual([]);
    }
    expect([server.rejections, chat.rejections, responses.rejections]).toEqual([[], [], []]);
    const url = `data:image/png;base64,${shot.toString("base64")}`;
    expect(server.requests[0]?.body.messages).toEqual([
      {
        role: "user",
        content: [{ ...block("image/png", shot), cache_control: { type: "ephemeral" } }],
      },
    ]);
    expect(chat.requests[0]?.body.messages).toEqual([
      expect.objectContaining({ role: "system" }),
      { role: "user", content: [{ type: "image_url", image_url: { url } }] },
    ]);
    expect(responses.requests[0]?.body.input).toEqual([
      {
        type: "message",
        role: "user",
        content: [{ type: "input_image", image_url: url, detail: "auto" }],
      },
    ]);
    const files = await sessionFiles(home);
    expect(files).toHaveLength(3);
    for (const file of files)
      expect((await readSession(file)).messages[0]).toEqual({
        role: "user",
        content: placeholder,
        parts: [{ type: "image", mediaType: "image/png", data: shot.toString("base64") }],
      });
  }, 60_000);

  it("skips a line with neither text nor images, empty or blank, as before", async () => {
    const { server, options } = await setup([stream(turn({ text: "Fine." }))]);
    const input = [
      JSON.stringify({ type: "user", text: "" }),
      user("", []),
      user("  ", []),
      JSON.stringify({ type: "user", text: "plain" }),
    ];
    const run = await runBin([...jsonFlags, "--sandbox", "off"], {
      ...options,
      input: `${input.join("\n")}\n`,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
    const notUser = (n: number) =>
      error(
        `input line ${n} is not {"type":"user","text":…} or {"type":"approval","id":…,"decision":"allow"|"deny"}; it was skipped`,
      );
    expect(protocolLines(run.stdout).filter((line) => line.type === "error")).toEqual([
      notUser(1),
      notUser(2),
      error("input line 3 is a user message with only whitespace as its text; it was skipped"),
    ]);
    expect(server.requests).toHaveLength(1);
  }, 30_000);
});

describe("JsonInput with images", () => {
  it("gives the prompts in the order of their lines while a file is read, and ends only after them", async () => {
    const workspace = await tempDir();
    await writeFile(join(workspace, "shot.png"), shot);
    execFileSync("mkfifo", [join(workspace, "pipe.png")]);
    const stdin = new PassThrough();
    const sent: OutputEvent[] = [];
    const input = new JsonInput(stdin, {
      send: (event) => sent.push(event),
      approvalTimeoutMs: 1000,
      workspace,
    });
    stdin.end(
      `${user("first", [{ path: "shot.png" }])}\n${user("bad", [{ path: "." }])}\n${user("fifo", [{ path: "pipe.png" }])}\n${JSON.stringify({ type: "user", text: "second" })}\n`,
    );
    const prompts = [await input.nextPrompt(), await input.nextPrompt(), await input.nextPrompt()];
    expect(prompts).toEqual([
      {
        text: "first",
        images: [
          {
            part: { type: "image", mediaType: "image/png", data: shot.toString("base64") },
            placeholder: `[image: image/png, 2x2, ${shot.length} B]`,
          },
        ],
      },
      "second",
      undefined,
    ]);
    expect(sent).toEqual([
      { type: "error", message: "input line 2 image 1 (.) is not a regular file; it was skipped" },
      {
        type: "error",
        message: "input line 3 image 1 (pipe.png) is not a regular file; it was skipped",
      },
    ]);
  });
});
