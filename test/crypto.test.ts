import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Sha256, SMALL, sha256Hex } from "../src/crypto.js";

const reference = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Reproducible bytes: a small linear congruential generator, so a failure can be replayed. */
function bytesOf(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

describe("SHA-256 without node:crypto for small inputs", () => {
  it("gives node:crypto's digest for every length up to past the small bound", () => {
    // Every length covers the padding's edges (55, 56, 64 bytes and each block after) and the
    // hand-over to node:crypto past `SMALL`.
    const wrong: number[] = [];
    for (let length = 0; length <= SMALL + 130; length++) {
      const bytes = bytesOf(length, length + 1);
      if (sha256Hex(bytes) !== reference(bytes)) wrong.push(length);
    }
    expect(wrong).toEqual([]);
  });

  it("hashes text as its UTF-8 bytes", () => {
    for (const text of ["", "abc", "/home/ünïcode/プロジェクト", "emoji 👩‍💻", "x".repeat(SMALL)])
      expect(sha256Hex(text)).toBe(reference(Buffer.from(text, "utf8")));
    // FIPS 180-4's own examples.
    expect(sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("gives the same digest fed in pieces of any size, below, at and past the small bound", () => {
    for (const total of [0, 1, 63, 64, SMALL - 1, SMALL, SMALL + 1, 5 * SMALL + 17]) {
      const bytes = bytesOf(total, total + 7);
      for (const size of [1, 7, 64, 100, SMALL, total || 1]) {
        const hash = new Sha256();
        for (let at = 0; at < total; at += size) hash.update(bytes.subarray(at, at + size));
        expect([total, size, hash.digest()]).toEqual([total, size, reference(bytes)]);
      }
    }
  });

  it("keeps what it was given, though the caller reuses its buffer", () => {
    const buffer = new Uint8Array(100);
    const hash = new Sha256();
    buffer.fill(1);
    hash.update(buffer);
    buffer.fill(2);
    hash.update(buffer);
    buffer.fill(3);
    const expected = reference(
      Buffer.concat([new Uint8Array(100).fill(1), new Uint8Array(100).fill(2)]),
    );
    expect(hash.digest()).toBe(expected);
  });
});
