import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { maxSearched, pathWords, typedImages } from "../src/cli/typed-images.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { useCliSetup } from "./support/cli.js";
import { jpeg, png } from "./support/images.js";
import { afterBanner, converse, hasScript, screenOf } from "./support/pty.js";
import { useTempDirs } from "./support/temp.js";
import { hasTmux, useTmux } from "./support/tmux.js";

/**
 * A path to an image typed or pasted at the prompt, as a whole line or as a word of it, is
 * attached as `--image` attaches a file, with a one-line notice; anything else stays text.
 */

const tempDir = useTempDirs();
const setup = useCliSetup();
const tmux = useTmux();

const shot = png(800, 600);
const logo = jpeg(3, 5);
/** Over the 3.75 MB bound: a PNG with a 4 MB comment. */
const huge = png(2, 2, 4 * 1024 * 1024);
const shotNotice = `attached image: shot.png (image/png, 800x600, ${(shot.length / 1024).toFixed(1)} KB)`;

describe("the words of a prompt line that may be paths", () => {
  it("splits at blanks, keeps quoted words whole, and joins backslash-escaped blanks", () => {
    expect(pathWords(`look at '/tmp/my shots/a.png' and "b c.png" or d\\ e.png, x`)).toEqual([
      "look",
      "at",
      "/tmp/my shots/a.png",
      "and",
      "b c.png",
      "or",
      "d e.png,",
      "x",
    ]);
    // An apostrophe inside a word is text, not a quote.
    expect(pathWords("don't read ~/a.png")).toEqual(["don't", "read", "~/a.png"]);
    expect(pathWords(`'/tmp/it isn't closed.png`)).toEqual(["'/tmp/it", "isn't", "closed.png"]);
  });
});

describe("typedImages", () => {
  async function folder() {
    const home = await tempDir();
    const cwd = await tempDir();
    await mkdir(join(home, "Pictures"));
    await writeFile(join(home, "Pictures", "my shot.png"), shot);
    await writeFile(join(cwd, "shot.png"), shot);
    await writeFile(join(cwd, "logo.jpg"), logo);
    await writeFile(join(cwd, "notes.png"), "not an image\n");
    await writeFile(join(cwd, "huge.png"), huge);
    await writeFile(join(cwd, "cut.png"), shot.subarray(0, shot.length - 12));
    await mkdir(join(cwd, "dir.png"));
    return { home, cwd };
  }
  const names = (result: Awaited<ReturnType<typeof typedImages>>) => ({
    notices: result.notices,
    images: result.images.map((image) => image.placeholder),
    ...(result.refusal !== undefined && { refusal: result.refusal }),
  });

  it("attaches each image path of the line, absolute, relative, under ~/, quoted or escaped, once each", async () => {
    const { home, cwd } = await folder();
    const line = `compare shot.png, ${cwd}/logo.jpg and '~/Pictures/my shot.png' with ~/Pictures/my\\ shot.png and ./shot.png`;
    const result = await typedImages(line, cwd, home);
    expect(names(result)).toEqual({
      notices: [
        shotNotice,
        `attached image: logo.jpg (image/jpeg, 3x5, ${logo.length} B)`,
        shotNotice.replace("shot.png", "my shot.png"),
      ],
      images: [
        `[image: image/png, 800x600, ${(shot.length / 1024).toFixed(1)} KB]`,
        `[image: image/jpeg, 3x5, ${logo.length} B]`,
        `[image: image/png, 800x600, ${(shot.length / 1024).toFixed(1)} KB]`,
      ],
    });
    expect(result.images[0]?.part).toEqual({
      type: "image",
      mediaType: "image/png",
      data: shot.toString("base64"),
    });
  });

  it("takes a whole line that is a path with blanks in it, as a dragged file is pasted", async () => {
    const { home, cwd } = await folder();
    const result = await typedImages(`${home}/Pictures/my shot.png `, cwd, home);
    expect(result.notices).toEqual([shotNotice.replace("shot.png", "my shot.png")]);
    expect(result.images).toHaveLength(1);
  });

  it("leaves as text a path that is not an image, is missing, is a folder, or names nothing", async () => {
    const { home, cwd } = await folder();
    const line = "read notes.png gone.png dir.png ~/nothing.png src/app.ts and fix it.";
    expect(names(await typedImages(line, cwd, home))).toEqual({ notices: [], images: [] });
  });

  it("makes at most 32 look-ups, in a prompt of at most 64 KiB", async () => {
    const { home, cwd } = await folder();
    const padding = "x".repeat(maxSearched - "see shot.png ".length);
    expect((await typedImages(`see shot.png ${padding}`, cwd, home)).images).toHaveLength(1);
    expect(names(await typedImages(`see shot.png ${padding}x`, cwd, home))).toEqual({
      notices: [],
      images: [],
    });
    // The whole line is one look-up, then each word that may be a path.
    const many = Array.from({ length: 31 }, (_, i) => `f${i}.txt`).join(" ");
    expect(names(await typedImages(`${many} shot.png`, cwd, home))).toEqual({
      notices: [],
      images: [],
    });
    expect((await typedImages(`${many.slice(0, -7)} shot.png`, cwd, home)).images).toHaveLength(1);
  });

  it("refuses in one line an image over the bound or cut short, and attaches nothing", async () => {
    const { home, cwd } = await folder();
    expect(names(await typedImages("see shot.png and huge.png", cwd, home))).toEqual({
      notices: [],
      images: [],
      refusal: "huge.png is a 4.00 MB image: images go up to 3.75 MB",
    });
    expect(names(await typedImages("see cut.png", cwd, home))).toEqual({
      notices: [],
      images: [],
      refusal: "cut.png is not a whole PNG image (cut short or damaged)",
    });
  });
});

/** Every user message the model was sent, its blocks as types (and text), in order of the requests. */
function userBlocks(requests: { body?: Record<string, unknown> }[]): unknown[] {
  return requests.map((request) => {
    const messages = (request.body?.messages ?? []) as {
      content: { type: string; text?: string }[];
    }[];
    return messages.at(-1)?.content.map((block) => block.text ?? block.type);
  });
}

describe.skipIf(!hasScript)("an image path at the prompt of a terminal", () => {
  it("attaches a typed or pasted path with a notice, keeps other paths as text, and refuses an image over the bound without sending it", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["A red screen."] })),
      stream(turn({ text: ["The same."] })),
      stream(turn({ text: ["Notes."] })),
    ]);
    await writeFile(join(workspace, "shot.png"), shot);
    await writeFile(join(workspace, "notes.png"), "not an image\n");
    await writeFile(join(workspace, "huge.png"), huge);
    const dragged = `'${workspace}/shot.png' `;
    const { code, screen } = await converse(options.env, workspace, [
      ["› ", "what is in shot.png?\r"],
      ["A red screen.", ""],
      ["› ", `\x1b[200~${dragged}\x1b[201~`],
      ["Enter sends]", "\r"],
      ["The same.", ""],
      ["› ", "notes.png says what?\r"],
      ["Notes.", ""],
      ["› ", "and huge.png?\r"],
      // Back on the line (TERM=dumb edits nothing): Ctrl-D leaves.
      ["the prompt is back to edit", ""],
      ["› and huge.png?", "\x04"],
    ]);
    expect(code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(userBlocks(server.requests)).toEqual([
      ["what is in shot.png?", "image"],
      [dragged, "image"],
      ["notes.png says what?"],
    ]);
    const lines = afterBanner(screenOf(screen));
    expect(lines.filter((line) => /attached|mini-agent:/.test(line))).toEqual([
      shotNotice,
      shotNotice,
      "mini-agent: huge.png is a 4.00 MB image: images go up to 3.75 MB; nothing was sent, the prompt is back to edit",
    ]);
  });
});

describe.skipIf(!hasTmux)("an image path at the prompt, in tmux", () => {
  it("attaches a path under ~/ with escaped blanks; after a refusal the prompt is back on the line to edit", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ text: ["A red screen."] })),
      stream(turn({ text: ["Fine."] })),
    ]);
    await mkdir(join(home, "My Shots"));
    await writeFile(join(home, "My Shots", "shot one.png"), shot);
    await writeFile(join(workspace, "huge.png"), huge);
    const term = tmux({ cwd: workspace, env: options.env });
    await term.waitFor(/^›/m);
    term.type("what is in ~/My\\ Shots/shot\\ one.png?");
    term.keys("Enter");
    await term.waitFor("A red screen.");
    term.type("and huge.png?");
    term.keys("Enter");
    await term.waitFor("the prompt is back to edit");
    await term.waitFor(/back to edit\n› and huge\.png\?$/m);
    term.keys("C-u");
    term.type("fine");
    term.keys("Enter");
    const screen = await term.waitFor("Fine.");
    expect(userBlocks(server.requests)).toEqual([
      ["what is in ~/My\\ Shots/shot\\ one.png?", "image"],
      ["fine"],
    ]);
    expect(screen.split("\n").filter((line) => /^(attached|mini-agent:|› )/.test(line))).toEqual([
      "› what is in ~/My\\ Shots/shot\\ one.png?",
      shotNotice.replace("shot.png", "shot one.png"),
      "› and huge.png?",
      "mini-agent: huge.png is a 4.00 MB image: images go up to 3.75 MB; nothing was sent, the prompt is back to edit",
      "› fine",
    ]);
    term.type("/exit");
    term.keys("Enter");
  });
});
