/** A size as `--sandbox-memory` and `sandbox.limits.memory` take it: bytes, or with K, M, G or T. */
export const SIZE = /^(\d+(?:\.\d+)?)([kmgtKMGT]?)[iI]?[bB]?$/;

const units: Record<string, number> = { "": 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

/** `512M`, `16G`, `1.5g`, `4096`: a size in bytes, or 0 when it is none. */
export function sizeInBytes(text: string): number {
  const size = SIZE.exec(text);
  return size ? Math.floor(Number(size[1]) * (units[size[2]?.toLowerCase() ?? ""] ?? 0)) : 0;
}
