import { createHash } from "node:crypto";
import { readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { blobDirFor } from "../src/session/blobs.js";
import { readSession } from "../src/session/read.js";
import { status, stream, turn } from "../src/testing/anthropic-server.js";
import { assertValidHistory } from "../src/testing/history.js";
import { runBin, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";
import { png, undecodablePng } from "./support/images.js";

/**
 * An image `read` showed, through the built CLI and the strict Messages server: kept in the
 * session, valid, sent again after `--continue`; and a model that refuses images.
 */

const setup = useCliSetup();
const bytes = png(2, 2);
const data = bytes.toString("base64");
const readCall = { id: "toolu_1", name: "read", input: { path: "a.png" } };
const placeholder = `[image: image/png, 2x2, ${bytes.length} B]`;
const hash = contentHash(bytes);
const imageResult = {
  id: "toolu_1",
  content: [{ type: "image", source: { type: "base64", media_type: "image/png", data } }],
  isError: false,
};

/**
 * A session whose model read `a.png` (kept in its blob store), the server ready for a
 * `--continue` answered "I only see its placeholder now.".
 */
async function readThenResume() {
  const { server, workspace, home, options } = await setup([
    stream(turn({ calls: [readCall] })),
    stream(turn({ text: "A red square." })),
    stream(turn({ text: "I only see its placeholder now." })),
  ]);
  await writeFile(join(workspace, "a.png"), bytes);
  expect((await runBin(["look at a.png"], options)).code).toBe(0);
  const [file = ""] = await sessionFiles(home);
  return { server, file, options };
}

describe("an image in a CLI session", () => {
  it("is sent to the model, kept in a valid session, and sent again after --continue", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [readCall] })),
      stream(turn({ text: "A red square." })),
      stream(turn({ text: "Still red." })),
    ]);
    await writeFile(join(workspace, "a.png"), bytes);
    expect(await runBin(["look at a.png"], options)).toEqual({
      code: 0,
      stdout: "A red square.\n",
      stderr: "  ✓ read a.png\n",
    });
    const [file = ""] = await sessionFiles(home);
    // The bytes are kept once, out of line; the record names them by hash.
    expect((await readFile(file, "utf8")).includes(data)).toBe(false);
    const results = (await sessionRecords(file)).filter(
      (record) => (record.message as { role?: string } | undefined)?.role === "tool",
    );
    expect(results).toEqual([
      {
        type: "message",
        message: {
          role: "tool",
          toolCallId: "toolu_1",
          content: placeholder,
          isError: false,
          // What the read saw, for a resumed session's edit safety.
          seen: { path: "a.png", sha256: hash },
          parts: [
            {
              type: "image",
              mediaType: "image/png",
              blob: hash,
              size: bytes.length,
              width: 2,
              height: 2,
            },
          ],
        },
      },
    ]);
    expect(await readFile(join(blobDirFor(file), hash))).toEqual(bytes);
    const loaded = await readSession(file);
    assertValidHistory(loaded.messages);
    expect(loaded.messages[2]).toEqual({
      role: "tool",
      toolCallId: "toolu_1",
      content: placeholder,
      isError: false,
      seen: { path: "a.png", sha256: hash },
      parts: [{ type: "image", mediaType: "image/png", data }],
    });
    expect(await runBin(["--continue", "and now?"], options)).toEqual({
      code: 0,
      stdout: "Still red.\n",
      stderr: "",
    });
    // The export shows the image's placeholder, as every reader without images does.
    const exported = await runBin(["export", "--format", "md", "-o", "-"], options);
    expect([exported.code, exported.stderr, exported.stdout.includes(placeholder)]).toEqual([
      0,
      "",
      true,
    ]);
    expect(exported.stdout.includes(data)).toBe(false);
    expect(server.rejections).toEqual([]);
    expect(server.requests.slice(1).map(({ body }) => toolResults(body))).toEqual([
      [imageResult],
      [imageResult],
    ]);
  });

  it("sends the placeholder of an image whose bytes left the blob store after --continue, with one warning", async () => {
    const { server, file, options } = await readThenResume();
    await unlink(join(blobDirFor(file), hash));
    expect(await runBin(["--continue", "and now?"], options)).toEqual({
      code: 0,
      stdout: "I only see its placeholder now.\n",
      stderr: `mini-agent: warning: 1 image(s) of this session are missing from its blob store or altered (${blobDirFor(file)}); their placeholders are sent instead\n`,
    });
    expect(server.rejections).toEqual([]);
    expect(server.requests.slice(1).map(({ body }) => toolResults(body))).toEqual([
      [imageResult],
      [
        {
          id: "toolu_1",
          content: `[image not shown: image/png, 2x2, ${bytes.length} B: its bytes are missing from the session's blob store]`,
          isError: false,
        },
      ],
    ]);
  });

  it("sends the placeholder of an image whose blob was altered in place (same size), found when it is first sent", async () => {
    const { server, file, options } = await readThenResume();
    // A load reads no image's bytes: only its size tells at load; these bytes are read when sent.
    await writeFile(join(blobDirFor(file), hash), Buffer.alloc(bytes.length));
    expect(await runBin(["--continue", "and now?"], options)).toEqual({
      code: 0,
      stdout: "I only see its placeholder now.\n",
      stderr: "",
    });
    expect(server.rejections).toEqual([]);
    expect(server.requests.slice(1).map(({ body }) => toolResults(body))).toEqual([
      [imageResult],
      [
        {
          id: "toolu_1",
          content: `[image not shown: image/png, 2x2, ${bytes.length} B: its bytes are gone from the session's blob store, altered or unreadable]`,
          isError: false,
        },
      ],
    ]);
    assertValidHistory((await readSession(file)).messages);
  });

  it("gives a model that refuses images one line and a valid session, then their placeholders, after --continue too", async () => {
    const { server, workspace, home, options } = await setup(
      [
        stream(turn({ calls: [readCall] })),
        status(500, undefined, "not reached: the request before is refused"),
        stream(turn({ text: "I see a placeholder." })),
      ],
      { refuseImages: true },
    );
    await writeFile(join(workspace, "a.png"), bytes);
    const refusal =
      "messages.2.content.0.tool_result.content.0: this model does not support image input";
    expect(await runBin(["look at a.png"], options)).toEqual({
      code: 1,
      stdout: "",
      stderr: `  ✓ read a.png\nmini-agent: provider error 400 invalid_request_error: ${refusal} (the provider rejected the request); this model is sent text placeholders for images from now on: send your prompt again\n`,
    });
    const [file = ""] = await sessionFiles(home);
    const records = await sessionRecords(file);
    expect(records.filter((record) => record.type === "images_refused")).toEqual([
      {
        type: "images_refused",
        provider: "anthropic",
        model: "claude-sonnet-5-5",
        reason: refusal,
      },
    ]);
    assertValidHistory((await readSession(file)).messages);
    expect(await runBin(["--continue", "what is it?"], options)).toEqual({
      code: 0,
      stdout: "I see a placeholder.\n",
      stderr: "",
    });
    expect(server.rejections).toEqual([refusal]);
    expect(toolResults(server.requests[2]?.body ?? {})).toEqual([
      {
        id: "toolu_1",
        content: `[image not shown: image/png, 2x2, ${bytes.length} B: this model takes no images]`,
        isError: false,
      },
    ]);
  });

  it("sends an image the provider could not process as a placeholder saying so, keeps images on, and leaves it out after --continue", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [readCall] })),
      status(500, undefined, "not reached: the request before is refused"),
      stream(turn({ text: "That one was not shown." })),
      stream(turn({ text: "Still not shown." })),
    ]);
    const damaged = undecodablePng(2, 2);
    await writeFile(join(workspace, "a.png"), damaged);
    expect(await runBin(["look at a.png"], options)).toEqual({
      code: 0,
      stdout: "That one was not shown.\n",
      stderr: "  ✓ read a.png\n",
    });
    const [file = ""] = await sessionFiles(home);
    expect((await sessionRecords(file)).filter((r) => r.type === "images_refused")).toEqual([
      {
        type: "images_refused",
        provider: "anthropic",
        model: "claude-sonnet-5-5",
        reason: "Could not process image",
        image: createHash("sha256").update(damaged.toString("base64")).digest("hex"),
      },
    ]);
    expect(await runBin(["--continue", "and now?"], options)).toEqual({
      code: 0,
      stdout: "Still not shown.\n",
      stderr: "",
    });
    const heldBack = {
      id: "toolu_1",
      content: `[image not shown: image/png, 2x2, ${damaged.length} B: the provider could not process it]`,
      isError: false,
    };
    expect(server.rejections).toEqual(["Could not process image"]);
    expect(server.requests.slice(2).map(({ body }) => toolResults(body))).toEqual([
      [heldBack],
      [heldBack],
    ]);
  });
});
