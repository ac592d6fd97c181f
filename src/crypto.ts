import type { Hash } from "node:crypto";
import { nodeCrypto } from "./node-crypto.js";

/**
 * Hashes and random names without paying for `node:crypto` where a run does not need it.
 *
 * Loading `node:crypto` (its fifteen modules, then OpenSSL's first digest) costs about 2.5 ms,
 * a few percent of a short run, and a run needs it only for the SHA-256 of a few paths (the
 * sessions folder, the trust record, the rules file) and of what `read` shows when the file is
 * tiny. So SHA-256 of at most `SMALL` bytes is computed here in JavaScript (the same digest:
 * the tests hold it to `node:crypto`'s for every length around the padding's edges and for random
 * inputs), and larger inputs and random bytes use `node:crypto`. Written here, not taken from a
 * library: fifty lines of FIPS 180-4, checked against `node:crypto` itself.
 *
 * In the CLI's bundle `node:crypto` is loaded at its first use (see `node-crypto.ts`); a
 * program using the library loads it with this module.
 */

/**
 * Up to this many bytes SHA-256 is computed here: a path, a file of a few lines. In a fresh
 * process the JavaScript runs in V8's interpreter, about 25 µs per 64-byte block, so more than a
 * few blocks cost more than `node:crypto` does once loaded.
 */
export const SMALL = 256;

/** SHA-256 of `data` (text as UTF-8), in lowercase hex. */
export function sha256Hex(data: string | Uint8Array): string {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  if (bytes.length > SMALL) return nodeCrypto().createHash("sha256").update(bytes).digest("hex");
  return sha256Small(bytes);
}

/**
 * SHA-256 of bytes given a piece at a time: held until they would pass `SMALL`, then handed to
 * `node:crypto` (copied while held: a caller may reuse its buffer; a large piece is never copied).
 */
export class Sha256 {
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  private hash: Hash | undefined;

  update(piece: Uint8Array): this {
    if (this.hash) {
      this.hash.update(piece);
      return this;
    }
    this.heldBytes += piece.length;
    if (this.heldBytes <= SMALL) {
      this.held.push(Uint8Array.prototype.slice.call(piece));
      return this;
    }
    this.hash = nodeCrypto().createHash("sha256");
    for (const held of this.held) this.hash.update(held);
    this.hash.update(piece);
    this.held = [];
    return this;
  }

  /** The digest in lowercase hex; the hash is done. */
  digest(): string {
    return this.hash ? this.hash.digest("hex") : sha256Small(Buffer.concat(this.held));
  }
}

/** `size` random bytes as hex, from `node:crypto`. */
export function randomHex(size: number): string {
  return nodeCrypto().randomBytes(size).toString("hex");
}

// FIPS 180-4: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** FIPS 180-4's SHA-256, for a few blocks (see `SMALL`): written flat, for V8's interpreter. */
function sha256Small(bytes: Uint8Array): string {
  // The message, a 1 bit, zeros, and its length in bits as a 64-bit big-endian number.
  const padded = new Uint8Array(Math.ceil((bytes.length + 9) / 64) * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bytes.length / 2 ** 29));
  view.setUint32(padded.length - 4, (bytes.length * 8) >>> 0);
  const state = new Int32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Int32Array(64);
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(block + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15] as number;
      const b = w[i - 2] as number;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) | 0;
    }
    let a = state[0] as number;
    let b = state[1] as number;
    let c = state[2] as number;
    let d = state[3] as number;
    let e = state[4] as number;
    let f = state[5] as number;
    let g = state[6] as number;
    let h = state[7] as number;
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    state[0] = (state[0] as number) + a;
    state[1] = (state[1] as number) + b;
    state[2] = (state[2] as number) + c;
    state[3] = (state[3] as number) + d;
    state[4] = (state[4] as number) + e;
    state[5] = (state[5] as number) + f;
    state[6] = (state[6] as number) + g;
    state[7] = (state[7] as number) + h;
  }
  let hex = "";
  for (const word of state) hex += (word >>> 0).toString(16).padStart(8, "0");
  return hex;
}

export { nodeCrypto };

/**
 * sha256 (hex) of a text or bytes, as mini-agent names content: a blob, a kept file, a skill, a
 * trusted entry (a JSON value in canonical form, `canonicalJson`).
 */
export function contentHash(content: string | Uint8Array): string {
  return sha256Hex(content);
}
