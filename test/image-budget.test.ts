import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";
import { png } from "./support/images.js";

/**
 * A session whose images together are more than one request may carry stays sendable: the
 * oldest images go as placeholders saying why, the newest are sent, and the strict server (which
 * refuses what the API refuses) takes every request.
 */

const setup = useCliSetup();

/** The images in a Messages request body, in order, each named by its index in `files`. */
function imagesSent(body: Record<string, unknown>, files: Buffer[]): number[] {
  const names = new Map(files.map((bytes, i) => [bytes.toString("base64"), i]));
  return [...JSON.stringify(body).matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map(
    ([, data]) => names.get(data ?? "") ?? -1,
  );
}
const heldBackLines = (body: Record<string, unknown>) =>
  JSON.stringify(body).match(/\[image not shown: [^\]]*\]/g) ?? [];

async function run(files: Buffer[]) {
  const { server, workspace, options } = await setup([stream(turn({ text: "Seen." }))]);
  const flags: string[] = [];
  for (const [i, bytes] of files.entries()) {
    await writeFile(join(workspace, `shot${i}.png`), bytes);
    flags.push("--image", `shot${i}.png`);
  }
  const result = await runBin([...flags, "look"], options);
  const body = (server.requests[0]?.body ?? {}) as Record<string, unknown>;
  return { result, server, body };
}

describe("the images of one request", () => {
  it("sends ten 3.5 MB screenshots within Anthropic's 32 MB, the newest six, the rest as placeholders", async () => {
    // Each different, so each is its own image.
    const files = Array.from({ length: 10 }, (_, i) => png(2 + i, 2, 3_500_000));
    const { result, server, body } = await run(files);
    expect(result).toEqual({
      code: 0,
      stdout: "Seen.\n",
      stderr:
        "mini-agent: 4 older images are sent as placeholders: a request holds only as many as the provider takes\n",
    });
    expect(server.rejections).toEqual([]);
    expect(imagesSent(body, files)).toEqual([4, 5, 6, 7, 8, 9]);
    expect(heldBackLines(body)).toEqual(
      files
        .slice(0, 4)
        .map(
          (_, i) =>
            `[image not shown: image/png, ${2 + i}x2, 3.34 MB: newer images fill the 32 MB the provider takes in a request]`,
        ),
    );
  }, 60_000);

  it("sends the newest 100 of 101 images", async () => {
    const files = Array.from({ length: 101 }, (_, i) => png(1 + i, 1));
    const { result, server, body } = await run(files);
    expect([result.code, server.rejections]).toEqual([0, []]);
    expect(imagesSent(body, files)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(heldBackLines(body)).toEqual([
      `[image not shown: image/png, 1x1, ${files[0]?.length} B: the request holds 100 newer images, the provider's limit]`,
    ]);
  }, 60_000);

  it("sends the newest 20 of 21 images 2500 pixels wide, which Anthropic takes only up to 20", async () => {
    const files = Array.from({ length: 21 }, (_, i) => png(2500, 1 + i));
    const { result, server, body } = await run(files);
    expect([result.code, server.rejections]).toEqual([0, []]);
    expect(imagesSent(body, files)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(heldBackLines(body)).toEqual([
      `[image not shown: image/png, 2500x1, ${files[0]?.length} B: over 2000 pixels a side in a request of more than 20 images]`,
    ]);
  }, 60_000);
});
