import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { readableData } from "../src/images.js";
import { blobDirFor } from "../src/session/blobs.js";
import { readSession } from "../src/session/session.js";
import {
  redHolder as holder,
  redPrompt as prompt,
  red,
  writeSession,
} from "./support/image-sessions.js";
import { useTempDirs } from "./support/temp.js";

/**
 * A session's blob store that its user may not read or write (made by a run as another user,
 * `sudo`): an image whose blob cannot be read is gone, not an error, and an image whose blob
 * cannot be written is not kept, with why, and the session goes on. Root reads and writes past
 * file modes, so these run without privileges (`.ci/as-nobody` runs this file as `nobody`).
 */

const tempDir = useTempDirs();
const asRoot = process.getuid?.() === 0;

describe("a blob store not this user's to read or write", () => {
  it.skipIf(asRoot)("takes an image whose blob cannot be read as gone", async () => {
    const path = await writeSession(await tempDir(), [prompt]);
    const blob = join(blobDirFor(path), contentHash(red));
    await chmod(blob, 0o000);
    const loaded = await readSession(path);
    expect(loaded.missingImages).toBeUndefined();
    const [message] = loaded.messages;
    const image = message?.role === "user" ? message.parts?.[1] : undefined;
    expect(image?.type).toBe("image");
    expect(image?.type === "image" && readableData(image)).toBeUndefined();
  });

  it.skipIf(asRoot)("keeps no image it cannot write, says why, and goes on", async () => {
    const dir = await tempDir();
    const blobs = join(dir, "s1.blobs");
    await mkdir(blobs, { mode: 0o500 });
    const notes: string[] = [];
    const path = await writeSession(dir, [prompt], { notes });
    await chmod(blobs, 0o700);
    expect(notes).toEqual([
      `the image ${holder} was not kept in the session (the session's blob store cannot be written (permission denied: ${blobs})): a resumed session sends its placeholder`,
    ]);
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual([
      {
        role: "user",
        content: `what is this?\n[image not shown: image/png, 3x2, ${red.length} B: it was not kept in the session (the session's blob store cannot be written (permission denied: ${blobs}))]`,
      },
    ]);
  });
});
