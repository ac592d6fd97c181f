import { symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UpdateMapper } from "../src/acp/updates.js";
import { messageTokens } from "../src/compaction/size.js";
import { contentHash } from "../src/crypto.js";
import { ImageBytesGone, readableData } from "../src/images.js";
import type { TurnEvent } from "../src/runner/events.js";
import { anthropicImageLimits, ImageBudgetClient } from "../src/runner/image-budget.js";
import { ImageFallbackClient, imageKey } from "../src/runner/images.js";
import { Journal } from "../src/runner/journal.js";
import { SessionRunner } from "../src/runner/runner.js";
import { blobDirFor } from "../src/session/blobs.js";
import type { ImagesRefusal } from "../src/session/records.js";
import { readSession, Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/store.js";
import { done, FakeClient, text, toolCall } from "../src/testing/fake-client.js";
import type { ImagePart, Message, ModelClient } from "../src/types.js";
import { redPrompt as prompt, red, writeSession as writeTo } from "./support/image-sessions.js";
import { png } from "./support/images.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A loaded session's images read their bytes from the blob store only when a request sends
 * them: what is known without them (their size and pixels, from the record) answers the image
 * budget, the compaction's count and a placeholder, and a blob that cannot be read by then, for
 * whatever reason, costs that image alone.
 */

const tempDir = useTempDirs();
const writeSession = async (messages: Message[]) => writeTo(await tempDir(), messages);

/** 101 prompts of an image each (a session over the request's 100), written and loaded. */
async function manyShots() {
  const shots = Array.from({ length: 101 }, (_, i) => png(1 + i, 1));
  const history = shots.flatMap((shot, i): Message[] => [
    {
      role: "user",
      content: `[image: image/png, ${1 + i}x1, ${shot.length} B]`,
      parts: [{ type: "image", mediaType: "image/png", data: shot.toString("base64") }],
    },
    { role: "assistant", content: "seen", toolCalls: [] },
  ]);
  const path = await writeSession(history);
  return { shots, path, loaded: await readSession(path) };
}

/**
 * One turn of a session runner over `history` for Anthropic's model "m", which refused what
 * `imagesRefused` says; the turn's events and the messages of its request.
 */
async function oneTurn(history: Message[], imagesRefused: ImagesRefusal[]) {
  const dir = await tempDir();
  const client = new FakeClient([[text("ok"), done]]);
  const runner = new SessionRunner({
    client,
    journal: new Journal(
      new SessionStore(dir, () => Session.create({ dir, workspace: "/ws", model: "m" })),
    ),
    turn: async () => ({ system: "", tools: [] }),
    info: { model: "m", workspace: "/ws", sandbox: "off" },
    history,
    provider: "anthropic",
    imagesRefused,
  });
  const events: TurnEvent[] = [];
  await runner.runTurn("and now?", { onEvent: (event) => events.push(event) });
  return { events, sent: client.requests[0]?.messages ?? [] };
}

const imagesIn = (messages: readonly Message[]): ImagePart[] =>
  messages.flatMap((message) =>
    message.role === "assistant"
      ? []
      : (message.parts ?? []).flatMap((part) => (part.type === "image" ? [part] : [])),
  );

/** The messages `client` passes on to the model for `messages`. */
async function passedOn(
  wrap: (inner: ModelClient) => ModelClient,
  messages: readonly Message[],
): Promise<readonly Message[]> {
  const inner = new FakeClient([[text("ok"), done]]);
  for await (const _ of wrap(inner).stream({ system: "", messages, tools: [] })) {
  }
  return inner.requests[0]?.messages ?? [];
}

describe("a loaded session's images", () => {
  it("take a blob that cannot be read (a link to itself) as gone, not as an error", async () => {
    const path = await writeSession([prompt]);
    const loaded = await readSession(path);
    const blob = join(blobDirFor(path), contentHash(red));
    await unlink(blob);
    await symlink(blob, blob);
    const [image] = imagesIn(loaded.messages);
    expect(() => image?.data).toThrow(ImageBytesGone);
    expect(image && readableData(image)).toBeUndefined();
  });

  it("are counted by the compaction from their record, without their bytes", async () => {
    const path = await writeSession([prompt]);
    const loaded = await readSession(path);
    // Same size, other bytes: counting must not read them (it would find them gone).
    await writeFile(join(blobDirFor(path), contentHash(red)), Buffer.alloc(red.length));
    const [message] = loaded.messages;
    expect(message && messageTokens(message)).toBe(messageTokens(prompt));
  });

  it("are held back for the request's limits by their record, without reading their bytes", async () => {
    // The request takes the newest 100.
    const { shots, path, loaded } = await manyShots();
    const oldest = shots[0] ?? Buffer.alloc(0);
    // The oldest blob is altered in place: only a read would find it out.
    await writeFile(join(blobDirFor(path), contentHash(oldest)), Buffer.alloc(oldest.length));
    const sent = await passedOn(
      (inner) => new ImageBudgetClient(inner, anthropicImageLimits),
      loaded.messages,
    );
    expect(sent[0]).toEqual({
      role: "user",
      content: `[image not shown: image/png, 1x1, ${oldest.length} B: the request holds 100 newer images, the provider's limit]`,
    });
    expect(imagesIn(sent)).toHaveLength(100);
  });

  it("whose bytes are gone keep their size in the placeholder a model that takes no images gets", async () => {
    const path = await writeSession([prompt]);
    const loaded = await readSession(path);
    await writeFile(join(blobDirFor(path), contentHash(red)), Buffer.alloc(red.length));
    const sent = await passedOn(
      (inner) => new ImageFallbackClient(inner, true, async () => {}),
      loaded.messages,
    );
    expect(sent).toEqual([
      {
        role: "user",
        content: `what is this?\n[image not shown: image/png, 3x2, ${red.length} B: this model takes no images]`,
      },
    ]);
  });

  it("whose bytes are gone when a request would send them go as a placeholder with their size", async () => {
    const path = await writeSession([
      prompt,
      { role: "assistant", content: "", toolCalls: [toolCall("c1", "read", { path: "a" })] },
      { role: "tool", toolCallId: "c1", content: "done", isError: false },
    ]);
    const loaded = await readSession(path);
    await unlink(join(blobDirFor(path), contentHash(red)));
    const sent = await passedOn(
      (inner) => new ImageBudgetClient(inner, anthropicImageLimits),
      loaded.messages,
    );
    expect(sent[0]).toEqual({
      role: "user",
      content: `what is this?\n[image not shown: image/png, 3x2, ${red.length} B: its bytes are gone from the session's blob store, altered or unreadable]`,
    });
  });

  it("are neither read nor held back for the request's limits when the model takes no images", async () => {
    const { shots, path, loaded } = await manyShots();
    // Every blob altered in place: a read of any would say its bytes are gone.
    for (const shot of shots)
      await writeFile(join(blobDirFor(path), contentHash(shot)), Buffer.alloc(shot.length));
    const { events, sent } = await oneTurn(loaded.messages, [
      { provider: "anthropic", model: "m", reason: "no images" },
    ]);
    expect(events.filter((event) => event.type === "images_held_back")).toEqual([]);
    expect(sent.slice(0, 2).map((message) => message.content)).toEqual([
      `[image not shown: image/png, 1x1, ${shots[0]?.length} B: this model takes no images]`,
      "seen",
    ]);
    expect(imagesIn(sent)).toEqual([]);
    const reasons = sent.flatMap((m) => m.content.match(/: [^:\]]*\]$/) ?? []);
    expect(new Set(reasons)).toEqual(new Set([": this model takes no images]"]));
  });

  it("give the room of an image the provider could not process to the next older one", async () => {
    const { shots, loaded } = await manyShots();
    const newest = shots[100]?.toString("base64") ?? "";
    const { sent } = await oneTurn(loaded.messages, [
      {
        provider: "anthropic",
        model: "m",
        reason: "Could not process image",
        image: imageKey(newest),
      },
    ]);
    // The request takes 100 images: the newest is left out, so all 100 older ones go.
    expect(imagesIn(sent)).toHaveLength(100);
    expect(sent[200]?.content).toBe(
      `[image not shown: image/png, 101x1, ${shots[100]?.length} B: the provider could not process it]`,
    );
  });

  it("replay to an editor as a line saying why when their bytes are gone", async () => {
    const path = await writeSession([prompt]);
    const loaded = await readSession(path);
    await writeFile(join(blobDirFor(path), contentHash(red)), Buffer.alloc(red.length));
    const [message] = loaded.messages;
    if (message === undefined) throw new Error("no message loaded");
    expect(new UpdateMapper("/ws").replay(message)).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "what is this?" } },
      {
        sessionUpdate: "user_message_chunk",
        content: {
          type: "text",
          text: `[image not shown: image/png, 3x2, ${red.length} B: its bytes are gone from the session's blob store, altered or unreadable]`,
        },
      },
    ]);
  });
});
