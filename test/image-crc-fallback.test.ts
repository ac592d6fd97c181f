import { describe, expect, it, vi } from "vitest";
import { png } from "./support/images.js";

describe("PNG checksums without zlib's crc32 (a Node before 20.15)", () => {
  it("takes whole PNGs and refuses one whose critical chunk's CRC is wrong", async () => {
    const good = png(3, 2);
    const large = png(640, 1, 70_000);
    const bad = Buffer.from(good);
    const last = bad.length - 1;
    bad[last] = (bad[last] as number) ^ 0xff; // The IEND chunk's CRC.
    vi.resetModules();
    vi.doMock("node:zlib", async (original) => ({
      ...(await original<typeof import("node:zlib")>()),
      crc32: undefined,
    }));
    const { imageSizeOf } = await import("../src/image-formats.js");
    vi.doUnmock("node:zlib");
    const size = imageSizeOf["image/png"];
    expect([size(good), size(large), size(bad)]).toEqual([
      { width: 3, height: 2 },
      { width: 640, height: 1 },
      undefined,
    ]);
  });
});
