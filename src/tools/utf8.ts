import { isUtf8 } from "node:buffer";

/**
 * How many leading bytes of `bytes` (UTF-8 cut at its end) hold whole characters: a character
 * our cut split is left out, so it never decodes to U+FFFD.
 */
export function wholeCharacters(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/**
 * The offset of the first byte that is not part of valid UTF-8 (overlong forms, surrogates and
 * code points above U+10FFFF are invalid, as for `TextDecoder` with `fatal`), or -1 when all of
 * `bytes` is valid.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  if (isUtf8(bytes)) return -1;
  for (let at = 0; at < bytes.length; ) {
    const lead = bytes[at] ?? 0;
    if (lead < 0x80) {
      at++;
      continue;
    }
    const [length, low, high] = sequence(lead) ?? [0, 0, 0];
    const second = bytes[at + 1] ?? -1;
    if (length === 0 || second < low || second > high) return at;
    for (let next = 2; next < length; next++) {
      const byte = bytes[at + next] ?? -1;
      if (byte < 0x80 || byte > 0xbf) return at;
    }
    at += length;
  }
  return -1;
}

/** A lead byte's sequence length and the range its second byte must lie in (RFC 3629). */
function sequence(lead: number): [number, number, number] | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return [2, 0x80, 0xbf];
  if (lead === 0xe0) return [3, 0xa0, 0xbf];
  if (lead === 0xed) return [3, 0x80, 0x9f];
  if (lead >= 0xe1 && lead <= 0xef) return [3, 0x80, 0xbf];
  if (lead === 0xf0) return [4, 0x90, 0xbf];
  if (lead >= 0xf1 && lead <= 0xf3) return [4, 0x80, 0xbf];
  if (lead === 0xf4) return [4, 0x80, 0x8f];
  return undefined;
}
