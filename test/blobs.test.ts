import {
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { BlobStore, blobDirFor } from "../src/session/blobs.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();

describe("the session's blob store", () => {
  it("keeps bytes once under their hash, 0600 in a 0700 folder beside the session", async () => {
    const dir = await tempDir();
    const store = BlobStore.forSession(join(dir, "s1.jsonl"));
    expect(store.dir).toBe(join(dir, "s1.blobs"));
    const bytes = Buffer.from([0, 255, 10, 13, 1, 2]);
    const first = store.put(bytes);
    const again = store.put(Buffer.from(bytes));
    expect(first).toEqual({ ok: true, hash: contentHash(bytes), size: 6 });
    expect(again).toEqual(first);
    expect(readdirSync(store.dir)).toEqual([contentHash(bytes)]);
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(store.dir, contentHash(bytes))).mode & 0o777).toBe(0o600);
    expect(store.get(contentHash(bytes))).toEqual(bytes);
  });

  it("reads a missing, altered or malformed blob as missing, and writes an altered one anew", async () => {
    const dir = await tempDir();
    const store = new BlobStore(join(dir, "b"));
    const put = store.put(Buffer.from("old bytes"));
    if (!put.ok) throw new Error(put.reason);
    writeFileSync(join(store.dir, put.hash), "other"); // altered by hand
    expect(store.get(put.hash)).toBeUndefined();
    expect(store.get("../../etc/passwd")).toBeUndefined();
    expect(store.get("../s1.jsonl")).toBeUndefined();
    expect(store.get("0".repeat(64))).toBeUndefined();
    expect(store.put(Buffer.from("old bytes"))).toMatchObject({ ok: true, hash: put.hash });
    expect(readFileSync(join(store.dir, put.hash), "utf8")).toBe("old bytes");
  });

  it("refuses bytes over the cap in one line and writes nothing", async () => {
    const dir = await tempDir();
    const store = new BlobStore(join(dir, "b"), 1024 * 1024);
    expect(store.put(Buffer.alloc(700 * 1024, 1)).ok).toBe(true);
    const refused = store.put(Buffer.alloc(400 * 1024, 2));
    expect(refused).toEqual({
      ok: false,
      reason: "the session's blob store would exceed its cap of 1 MiB (0.7 MiB kept, 0.4 MiB more)",
    });
    expect(readdirSync(store.dir)).toHaveLength(1);
    // A second store over the same folder counts what is on disk.
    expect(new BlobStore(store.dir, 1024 * 1024).put(Buffer.alloc(400 * 1024, 3)).ok).toBe(false);
  });

  it("counts only blobs in its cap: not a link to a big file, not a file of another name", async () => {
    const dir = await tempDir();
    const folder = join(dir, "b");
    mkdirSync(folder);
    const big = join(dir, "big");
    writeFileSync(big, "");
    truncateSync(big, 8 * 1024 * 1024);
    symlinkSync(big, join(folder, "a".repeat(64)));
    writeFileSync(join(folder, "notes.txt"), Buffer.alloc(2 * 1024 * 1024));
    const store = new BlobStore(folder, 1024 * 1024);
    expect(store.put(Buffer.alloc(100 * 1024, 1)).ok).toBe(true);
    expect(store.put(Buffer.alloc(1000 * 1024, 2))).toEqual({
      ok: false,
      reason: "the session's blob store would exceed its cap of 1 MiB (0.1 MiB kept, 1 MiB more)",
    });
  });

  it("holds one cap for every store of a folder: a session's images and a rewind's pre-images together", async () => {
    const dir = await tempDir();
    const images = new BlobStore(join(dir, "b"), 1024 * 1024);
    const preImages = new BlobStore(join(dir, "b"), 1024 * 1024);
    expect([
      images.put(Buffer.alloc(100 * 1024, 1)).ok,
      preImages.put(Buffer.alloc(100 * 1024, 2)).ok,
    ]).toEqual([true, true]);
    expect(images.put(Buffer.alloc(600 * 1024, 3)).ok).toBe(true);
    expect(preImages.put(Buffer.alloc(400 * 1024, 4))).toEqual({
      ok: false,
      reason: "the session's blob store would exceed its cap of 1 MiB (0.8 MiB kept, 0.4 MiB more)",
    });
  });

  it("counts a folder removed and made again anew", async () => {
    const dir = await tempDir();
    const store = new BlobStore(join(dir, "b"), 1024 * 1024);
    expect(store.put(Buffer.alloc(700 * 1024, 1)).ok).toBe(true);
    rmSync(store.dir, { recursive: true });
    expect(store.put(Buffer.alloc(700 * 1024, 2)).ok).toBe(true);
    expect(readdirSync(store.dir)).toHaveLength(1);
  });

  it("leaves no half-written blob readable after a kill, and the next put clears it", async () => {
    const dir = await tempDir();
    const blobs = join(dir, "s.blobs");
    mkdirSync(blobs);
    // What a process killed in the middle of `put` leaves: its bytes under a temporary name,
    // never under the hash (the rename comes after the flush).
    const bytes = Buffer.alloc(5000, 7);
    writeFileSync(join(blobs, ".tmp-0123456789ab"), bytes.subarray(0, 1000));
    const left = readdirSync(blobs);
    expect(left).toHaveLength(1);
    expect(left[0]?.startsWith(".tmp-")).toBe(true);
    const store = new BlobStore(blobs);
    expect(store.get(contentHash(bytes))).toBeUndefined();
    const put = store.put(Buffer.from("next"));
    expect(readdirSync(blobs)).toEqual([put.ok ? put.hash : "?"]);
  });

  it("names the folder of a session file", () => {
    expect(blobDirFor("/s/abc.jsonl")).toBe("/s/abc.blobs");
  });
});
