import { readFile, symlink, unlink, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { escapeHtml } from "../src/export/markup.js";
import { contentSecurityPolicy } from "../src/export/page.js";
import { blobDirFor } from "../src/session/blobs.js";
import type { Session } from "../src/session/session.js";
import { hasChromium, openPage } from "./support/chromium.js";
import { useCleanup } from "./support/cleanup.js";
import { header, useExportSetup } from "./support/export.js";
import { gif, png } from "./support/images.js";

/**
 * The images of a session in its export: on the page as `data:` images read from the blob
 * store (the policy allows images from the page itself and nowhere else), in Markdown as their
 * placeholder lines; an image whose bytes are gone shows its placeholder and says why.
 */

const setup = useExportSetup();
const track = useCleanup();
const shown = png(3, 2);
const screenshot = png(5, 4);
const lost = gif();
const holder = (bytes: Buffer, type: string, size: string) =>
  `[image: ${type}, ${size}, ${bytes.length} B]`;
const shownHolder = holder(shown, "image/png", "3x2");
const screenshotHolder = holder(screenshot, "image/png", "5x4");
const lostHolder = holder(lost, "image/gif", "1x1");
const image = (bytes: Buffer, mediaType: "image/png" | "image/gif") => ({
  type: "image" as const,
  mediaType,
  data: bytes.toString("base64"),
});
const dataUri = (bytes: Buffer) => `data:image/png;base64,${bytes.toString("base64")}`;

async function withImages(session: Session): Promise<void> {
  await session.append({
    role: "user",
    content: `why is this red?\n${shownHolder}`,
    parts: [{ type: "text", text: "why is this red?" }, image(shown, "image/png")],
  });
  await session.append({
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "t1", name: "read", input: { path: "shot.png" } },
      { id: "t2", name: "read", input: { path: "lost.gif" } },
    ],
  });
  await session.append({
    role: "tool",
    toolCallId: "t1",
    content: screenshotHolder,
    isError: false,
    parts: [image(screenshot, "image/png")],
  });
  await session.append({
    role: "tool",
    toolCallId: "t2",
    content: lostHolder,
    isError: false,
    parts: [image(lost, "image/gif")],
  });
  await session.append({ role: "assistant", content: "The CSS says red.", toolCalls: [] });
}

/** Unlinks the lost image's blob, or puts in its place what cannot be read. */
async function exported(format: "html" | "md", spoil = (blob: string) => unlink(blob)) {
  const s = await setup();
  const path = await s.session("images", withImages);
  await spoil(join(blobDirFor(path), contentHash(lost)));
  const file = join(s.workspace, format === "html" ? "page.html" : "page.md");
  const run = await s.run(["images", "-o", file]);
  expect([run.code, run.stderr]).toEqual([
    0,
    `mini-agent: exported session images (2 tool calls) to ${file}\n`,
  ]);
  return { file, text: await readFile(file, "utf8"), s };
}

const missingNote = `${lostHolder}: its bytes are missing from the session's blob store`;

describe("images in an export", () => {
  it("puts each image on the page as a data: image from the blob store, and says which is missing", async () => {
    const { text } = await exported("html");
    const images = [...text.matchAll(/<img [^>]*>/g)].map(([tag]) => tag);
    expect(images).toEqual([
      `<img src="${dataUri(shown)}" alt="${shownHolder}">`,
      `<img src="${dataUri(screenshot)}" alt="${screenshotHolder}">`,
    ]);
    expect(text).toContain(`<p class="note image-missing">${escapeHtml(missingNote)}</p>`);
    expect(contentSecurityPolicy.split("; ")).toContain("img-src data:");
  });

  it("gives Markdown the placeholder lines, no image data, and says which is missing", async () => {
    const { text } = await exported("md");
    for (const line of [shownHolder, screenshotHolder, lostHolder]) expect(text).toContain(line);
    expect(text.includes(shown.toString("base64"))).toBe(false);
    expect(text).toContain(`_${missingNote.replace(/[[\]()._-]/g, (c) => `\\${c}`)}_`);
  });

  it("says which is missing when its blob cannot be read (a link to itself), in both formats", async () => {
    const loop = async (blob: string) => {
      await unlink(blob);
      await symlink(blob, blob);
    };
    const html = await exported("html", loop);
    expect(html.text).toContain(`<p class="note image-missing">${escapeHtml(missingNote)}</p>`);
    const md = await exported("md", loop);
    expect(md.text).toContain(`_${missingNote.replace(/[[\]()._-]/g, (c) => `\\${c}`)}_`);
  });

  it("shows the images of a session written with images inline, as earlier versions did", async () => {
    const s = await setup();
    const path = await s.raw("old", [
      header("old"),
      {
        type: "message",
        message: { role: "user", content: shownHolder, parts: [image(shown, "image/png")] },
      },
    ]);
    expect(path.endsWith("old.jsonl")).toBe(true);
    const run = await s.run(["old", "-o", "-"]);
    expect(run.code).toBe(0);
    expect([...run.stdout.matchAll(/<img [^>]*>/g)].map(([tag]) => tag)).toEqual([
      `<img src="${dataUri(shown)}" alt="${shownHolder}">`,
    ]);
  });
});

describe.skipIf(!hasChromium())("images of an exported page in headless Chromium", () => {
  it("shows each image, decoded, and nothing leaves the page, not even an image slipped into it", {
    timeout: 90_000,
  }, async () => {
    const { file, text } = await exported("html");
    const requests: string[] = [];
    const server = createServer((request, response) => {
      requests.push(request.url ?? "");
      response.end("x");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    track({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const { port } = server.address() as { port: number };
    const slipped = `<img id="slipped" src="http://127.0.0.1:${port}/image.png">`;
    await writeFile(file, text.replace("<main>", `<main>${slipped}`));
    const page = await openPage(pathToFileURL(file).href);
    try {
      const seen = await page.evaluate(`(async () => {
        const images = Array.from(document.querySelectorAll("main img:not(#slipped)"));
        await Promise.all(images.map((i) => i.decode().catch(() => undefined)));
        return {
          images: images.map((i) => [i.alt, i.naturalWidth, i.naturalHeight]),
          slipped: document.querySelector("#slipped").naturalWidth,
          missing: document.querySelector(".image-missing").innerText,
          fetched: performance.getEntriesByType("resource").map((e) => e.name),
        };
      })()`);
      expect(seen).toEqual({
        images: [
          [shownHolder, 3, 2],
          [screenshotHolder, 5, 4],
        ],
        slipped: 0,
        missing: missingNote,
        // The page's own images are no fetch; the slipped one is tried, refused by the policy,
        // and never reaches the server (below).
        fetched: [`http://127.0.0.1:${port}/image.png`],
      });
      expect(page.messages.join("\n")).toContain("Content Security Policy");
      expect(page.messages.filter((m) => !m.includes("127.0.0.1"))).toEqual([]);
    } finally {
      await page.close();
    }
    expect(requests).toEqual([]);
  });
});
