import { readdirSync, writeSync } from "node:fs";
import { mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { ImageBytesGone, readableData } from "../src/images.js";
import { toAnthropicMessages } from "../src/providers/anthropic-protocol.js";
import { blobDirFor } from "../src/session/blobs.js";
import { readSession, Session } from "../src/session/session.js";
import { validate as validateAnthropic } from "../src/testing/anthropic-server.js";
import { toolCall } from "../src/testing/fake-client.js";
import type { ImagePart, Message } from "../src/types.js";
import { red, redHolder, redPrompt, writeSession as writeTo } from "./support/image-sessions.js";
import { gif } from "./support/images.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Images in the session file: their bytes kept once in the session's blob store, the records
 * naming them by hash; read back into images on load, or their placeholders when a blob is gone.
 */

const tempDir = useTempDirs();
const tiny = gif();
const redData = red.toString("base64");
const tinyData = tiny.toString("base64");
const tinyHolder = `[image: image/gif, 1x1, ${tiny.length} B]`;
const prompt = redPrompt;
const asks: Message = {
  role: "assistant",
  content: "",
  toolCalls: [toolCall("c1", "read", { path: "a.png" }), toolCall("c2", "screenshot", {})],
};
const readResult: Message = {
  role: "tool",
  toolCallId: "c1",
  content: redHolder,
  isError: false,
  parts: [{ type: "image", mediaType: "image/png", data: redData }],
};
const shotResult: Message = {
  role: "tool",
  toolCallId: "c2",
  content: `the page:\n${tinyHolder}`,
  isError: false,
  parts: [
    { type: "text", text: "the page:" },
    { type: "image", mediaType: "image/gif", data: tinyData },
  ],
};
const answer: Message = { role: "assistant", content: "A red square.", toolCalls: [] };
const history = [prompt, asks, readResult, shotResult, answer];

const writeSession = async (
  messages: Message[],
  options?: { env?: NodeJS.ProcessEnv; blobCap?: number; notes?: string[] },
) => writeTo(await tempDir(), messages, options);

async function records(path: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(path, "utf8");
  return text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const validAnthropic = (messages: Message[]) =>
  validateAnthropic({
    model: "m",
    max_tokens: 100,
    messages: toAnthropicMessages([...messages, { role: "user", content: "again" }]),
  });

const ref = (bytes: Buffer, mediaType: string, width: number, height: number) => ({
  type: "image",
  mediaType,
  blob: contentHash(bytes),
  size: bytes.length,
  width,
  height,
});

describe("images in a session file", () => {
  it("keeps each image's bytes once in the blob store, names them by hash, and reads them back", async () => {
    const path = await writeSession(history);
    const text = await readFile(path, "utf8");
    expect([text.includes(redData), text.includes(tinyData)]).toEqual([false, false]);
    expect((await records(path)).slice(1).map((record) => record.message)).toEqual([
      { ...prompt, parts: [{ type: "text", text: "what is this?" }, ref(red, "image/png", 3, 2)] },
      asks,
      { ...readResult, parts: [ref(red, "image/png", 3, 2)] },
      {
        ...shotResult,
        parts: [{ type: "text", text: "the page:" }, ref(tiny, "image/gif", 1, 1)],
      },
      answer,
    ]);
    // The same bytes twice (the prompt's and the read's) are one blob.
    expect(readdirSync(blobDirFor(path)).sort()).toEqual(
      [contentHash(red), contentHash(tiny)].sort(),
    );
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual(history);
    expect(loaded.missingImages).toBeUndefined();
    expect(validAnthropic(loaded.messages)).toBeUndefined();
  });

  it("loads a session whose records hold images inline, as earlier versions wrote them", async () => {
    const dir = await tempDir();
    const path = join(dir, "old.jsonl");
    const header = {
      type: "session",
      version: 1,
      id: "old",
      createdAt: "",
      workspace: "/w",
      model: "m",
    };
    const lines = [header, ...history.map((message) => ({ type: "message", message }))];
    await writeFile(path, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual(history);
  });

  it("gives an image whose blob is missing or altered its placeholder and one warning, and stays valid to send", async () => {
    const path = await writeSession(history);
    const blobs = blobDirFor(path);
    await unlink(join(blobs, contentHash(red)));
    await writeFile(join(blobs, contentHash(tiny)), Buffer.from("not the same bytes"));
    const loaded = await Session.open(path, { env: {} });
    await loaded.session.close();
    // Each image's placeholder says it is not shown, and why.
    const missing = "its bytes are missing from the session's blob store";
    const gone = (holder: string) =>
      holder.replace("[image: ", "[image not shown: ").replace(/\]$/, `: ${missing}]`);
    const { parts: _r, ...readText } = readResult as Message & { role: "tool" };
    const { parts: _s, ...shotText } = shotResult as Message & { role: "tool" };
    expect(loaded.messages).toEqual([
      { role: "user", content: `what is this?\n${gone(redHolder)}` },
      asks,
      { ...readText, content: gone(redHolder) },
      { ...shotText, content: `the page:\n${gone(tinyHolder)}` },
      answer,
    ]);
    expect(loaded.missingImages).toBe(3);
    expect(validAnthropic(loaded.messages)).toBeUndefined();
  });

  it("reads an image's bytes from the blob store when it is first used, not at load, and keeps them then", async () => {
    const path = await writeSession(history);
    const blobs = blobDirFor(path);
    const loaded = await readSession(path);
    expect(loaded.missingImages).toBeUndefined();
    const imagesOf = (message: Message | undefined): ImagePart[] =>
      message?.role === "user" || message?.role === "tool"
        ? (message.parts ?? []).flatMap((part) => (part.type === "image" ? [part] : []))
        : [];
    const [promptImage] = imagesOf(loaded.messages[0]);
    const [shotImage] = imagesOf(loaded.messages[3]);
    // The gif is used once, then its blob goes: the part keeps what it read.
    expect(shotImage?.data).toBe(tinyData);
    await unlink(join(blobs, contentHash(tiny)));
    expect(shotImage?.data).toBe(tinyData);
    // The png is not used before its blob changes (same size, other bytes): a load that had read
    // it would still hold the old bytes; this part reads them now and finds them altered.
    await writeFile(join(blobs, contentHash(red)), Buffer.alloc(red.length));
    expect(() => promptImage?.data).toThrow(ImageBytesGone);
    expect(() => promptImage?.data).toThrow(
      `image/png image ${contentHash(red)} is gone from the session's blob store, altered or unreadable (${blobs})`,
    );
    expect(promptImage && readableData(promptImage)).toBeUndefined();
  });

  it("tells at load of a blob of another size than its record says, without reading it", async () => {
    const path = await writeSession([prompt]);
    await writeFile(join(blobDirFor(path), contentHash(red)), Buffer.alloc(red.length + 1));
    const loaded = await readSession(path);
    expect(loaded.missingImages).toBe(1);
    const line = `[image not shown: image/png, 3x2, ${red.length} B: its bytes are missing from the session's blob store]`;
    expect(loaded.messages).toEqual([{ role: "user", content: `what is this?\n${line}` }]);
  });

  it("keeps the placeholder of an image over the blob store's cap, with a note, and loads it as text", async () => {
    const notes: string[] = [];
    const path = await writeSession([prompt], { blobCap: 10, notes });
    expect(notes).toEqual([
      `the image ${redHolder} was not kept in the session (the session's blob store would exceed its cap of 0 MiB (0 MiB kept, 0 MiB more)): a resumed session sends its placeholder`,
    ]);
    const [, record] = await records(path);
    expect(record?.message).toEqual({
      ...prompt,
      parts: [
        { type: "text", text: "what is this?" },
        {
          type: "image",
          mediaType: "image/png",
          size: red.length,
          width: 3,
          height: 2,
          unkept: "the session's blob store would exceed its cap of 0 MiB (0 MiB kept, 0 MiB more)",
        },
      ],
    });
    expect(readdirSync(join(path, "..")).includes("s1.blobs")).toBe(false);
    const loaded = await readSession(path);
    const line = `[image not shown: image/png, 3x2, ${red.length} B: it was not kept in the session (the session's blob store would exceed its cap of 0 MiB (0 MiB kept, 0 MiB more))]`;
    expect(loaded.messages).toEqual([{ role: "user", content: `what is this?\n${line}` }]);
    expect(loaded.missingImages).toBeUndefined();
  });

  it("redacts secrets in the text, never an image's bytes or the hash that names them", async () => {
    const hash = contentHash(red);
    const secret = hash.slice(10, 40);
    const env = { DEPLOY_TOKEN: secret };
    const said: Message = { ...readResult, content: `${redHolder} token ${secret}` };
    const path = await writeSession([prompt, asks, said, shotResult, answer], { env });
    const [, , , result] = await records(path);
    expect(result?.message).toEqual({
      ...said,
      content: `${redHolder} token [redacted]`,
      parts: [ref(red, "image/png", 3, 2)],
    });
    const loaded = await readSession(path);
    expect(loaded.messages[2]).toEqual({ ...readResult, content: `${redHolder} token [redacted]` });
  });

  it("puts an image's bytes before its record: a record that fails leaves only an unnamed blob", async () => {
    const dir = await tempDir();
    let fail = false;
    const session = await Session.create({
      dir,
      workspace: "/ws",
      model: "m",
      id: "s1",
      env: {},
      write: (fd, data) => {
        if (fail) throw Object.assign(new Error("no space"), { code: "ENOSPC" });
        return writeSync(fd, data);
      },
    });
    fail = true;
    await expect(session.append(prompt)).rejects.toThrow(/ENOSPC/);
    await session.close();
    expect(readdirSync(blobDirFor(session.path))).toEqual([contentHash(red)]);
    const loaded = await readSession(session.path);
    expect(loaded.messages).toEqual([]);
  });

  it("goes on when the blob store cannot be written: the image is not kept, with why, and nothing half written stays", async () => {
    for (const spoil of ["a file for the folder", "a folder for the blob"] as const) {
      const dir = await tempDir();
      const blobs = join(dir, "s1.blobs");
      const blob = join(blobs, contentHash(red));
      if (spoil === "a file for the folder") await writeFile(blobs, "");
      else await mkdir(blob, { recursive: true });
      const notes: string[] = [];
      const path = await writeTo(dir, [prompt], { notes });
      const why =
        spoil === "a file for the folder"
          ? `the session's blob store cannot be written (a file is in the way: ${blobs})`
          : `the session's blob store cannot be written (a folder is in the way: ${blob})`;
      expect(notes).toEqual([
        `the image ${redHolder} was not kept in the session (${why}): a resumed session sends its placeholder`,
      ]);
      const [, record] = await records(path);
      expect(record?.message).toMatchObject({ parts: [{}, { unkept: why }] });
      if (spoil === "a folder for the blob") expect(readdirSync(blobs)).toEqual([contentHash(red)]);
    }
  });

  it("reads only the images since the last compaction", async () => {
    const dir = await tempDir();
    const session = await Session.create({ dir, workspace: "/ws", model: "m", id: "s1", env: {} });
    for (const message of history) await session.append(message);
    await session.record({
      type: "compaction",
      firstKept: 2,
      count: 1,
      trigger: "manual",
      userMessages: ["what is this?"],
      facts: { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 },
      summary: "a red square",
      tokensBefore: 100,
      tokensAfter: 10,
    });
    const laterParts: Message = {
      role: "user",
      content: tinyHolder,
      parts: [{ type: "image", mediaType: "image/gif", data: tinyData }],
    };
    await session.append(laterParts);
    await session.close();
    // The covered part's image is gone; nothing is missing from what the model sees.
    await unlink(join(blobDirFor(session.path), contentHash(red)));
    const loaded = await readSession(session.path);
    expect(loaded.messages).toEqual([answer, laterParts]);
    expect(loaded.missingImages).toBeUndefined();
  });
});
