import { describe, expect, it } from "vitest";
import { gif, jpeg, png, webp } from "./support/images.js";
import { useWorkspace } from "./support/workspace.js";

const workspace = useWorkspace();

const image = (mediaType: string, bytes: Buffer, size: string) => ({
  content: `[image: ${mediaType}, ${size}, ${bytes.length} B]`,
  parts: [{ type: "image", mediaType, data: bytes.toString("base64") }],
});

describe("read of an image", () => {
  it("returns each image type whole, with a placeholder as its text", async () => {
    const files = { "a.png": png(2, 2), "b.jpg": jpeg(2, 2), "c.gif": gif(), "d.webp": webp() };
    const ws = await workspace();
    await ws.files(files);
    const results = [];
    for (const path of Object.keys(files)) results.push(await ws.run("read", { path }));
    expect(results).toEqual([
      image("image/png", files["a.png"], "2x2"),
      image("image/jpeg", files["b.jpg"], "2x2"),
      image("image/gif", files["c.gif"], "1x1"),
      image("image/webp", files["d.webp"], "1x1"),
    ]);
  });

  it("knows an image by its bytes, not its name", async () => {
    const ws = await workspace();
    const bytes = jpeg(3, 5);
    await ws.files({
      "photo.txt": bytes,
      "notes.png": "not an image\n",
      "data.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]),
    });
    expect([
      await ws.run("read", { path: "photo.txt" }),
      await ws.run("read", { path: "notes.png" }),
      await ws.run("read", { path: "data.png" }),
    ]).toEqual([
      image("image/jpeg", bytes, "3x5"),
      { content: "not an image" },
      { content: "data.png is a binary file: read shows text only", isError: true },
    ]);
  });

  it("shows the size in KB or MB", async () => {
    const ws = await workspace();
    const bytes = png(2, 2, 1200);
    await ws.files({ "a.png": bytes });
    expect(await ws.run("read", { path: "a.png" })).toEqual({
      ...image("image/png", bytes, "2x2"),
      content: `[image: image/png, 2x2, ${(bytes.length / 1024).toFixed(1)} KB]`,
    });
  });

  it("refuses an image over the size or pixel bound in one line naming the limit", async () => {
    const ws = await workspace();
    // The frame header of tall.jpg says 9000 pixels high (after SOI and the quantisation table).
    const tall = jpeg(1, 8);
    tall.writeUInt16BE(9000, 2 + 69 + 5);
    await ws.files({
      "big.png": png(2, 2, 4 * 1024 * 1024),
      "wide.png": png(8001, 1),
      "tall.jpg": tall,
    });
    expect([
      await ws.run("read", { path: "big.png" }),
      await ws.run("read", { path: "wide.png" }),
      await ws.run("read", { path: "tall.jpg" }),
    ]).toEqual([
      {
        content:
          "big.png is a 4.00 MB image: read shows images up to 3.75 MB (5 MB in base64, what providers take)",
        isError: true,
      },
      {
        content: "wide.png is 8001x1 pixels: read shows images up to 8000 pixels a side",
        isError: true,
      },
      {
        content: "tall.jpg is 1x9000 pixels: read shows images up to 8000 pixels a side",
        isError: true,
      },
    ]);
  });

  it("names a size near the bound in bytes, so the size and the bound never read the same", async () => {
    const ws = await workspace();
    const base = png(2, 2, 1).length - 1;
    const exact = png(2, 2, 3_932_160 - base);
    const over = png(2, 2, 3_932_161 - base);
    await ws.files({ "exact.png": exact, "over.png": over });
    expect([
      await ws.run("read", { path: "exact.png" }),
      await ws.run("read", { path: "over.png" }),
    ]).toEqual([
      { ...image("image/png", exact, "2x2"), content: "[image: image/png, 2x2, 3.75 MB]" },
      {
        content:
          "over.png is a 3,932,161-byte image: read shows images up to 3,932,160 bytes (5 MB in base64, what providers take)",
        isError: true,
      },
    ]);
  });

  it("refuses a truncated or damaged image in one line, never half of it", async () => {
    const ws = await workspace();
    const riff = webp();
    riff.writeUInt32LE(riff.readUInt32LE(4) + 10, 4);
    await ws.files({
      "cut.png": png(2, 2).subarray(0, 40),
      "cut.jpg": jpeg(2, 2).subarray(0, 120),
      "cut.gif": gif().subarray(0, 30),
      "long.webp": riff,
      "head.png": png(2, 2).subarray(0, 12),
    });
    const results = [];
    for (const [path, type] of [
      ["cut.png", "PNG"],
      ["cut.jpg", "JPEG"],
      ["cut.gif", "GIF"],
      ["long.webp", "WebP"],
      ["head.png", "PNG"],
    ]) {
      results.push([await ws.run("read", { path }), type]);
    }
    expect(results).toEqual(
      results.map(([, type], i) => [
        {
          content: `${["cut.png", "cut.jpg", "cut.gif", "long.webp", "head.png"][i]} is not a whole ${type} image (cut short or damaged): read shows whole images only`,
          isError: true,
        },
        type,
      ]),
    );
  });

  it("counts an image it showed as seen, so write may replace it", async () => {
    const ws = await workspace();
    await ws.files({ "a.png": png(2, 2) });
    await ws.run("read", { path: "a.png" });
    expect(await ws.run("write", { path: "a.png", content: "text\n" })).toEqual({
      content: "replaced a.png (5 bytes)",
    });
  });
});
