// A session of 100 screenshots: a prompt, then 100 `read` rounds each returning a ~200 KB PNG
// (noise, so it does not compress), written through `Session` (the bytes go to the session's blob
// store, the records name them; a load reads none). Measured: loading it (`readSession`) and the CLI's `--continue`
// (one turn, two requests to the mock server), against the same session whose results are the
// placeholders alone; and the same two with a compaction after the screenshots, which covers them.

import { randomBytes } from "node:crypto";
import { mkdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { crc32, deflateSync } from "node:zlib";

const IMAGES = 100;
const SIDE = 256;

/** A PNG of random RGB pixels: about 197 KB of image data that deflate cannot shrink. */
function noisePng() {
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIDE, 0);
  header.writeUInt32BE(SIDE, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Array.from({ length: SIDE }, () =>
    Buffer.concat([Buffer.from([0]), randomBytes(SIDE * 3)]),
  );
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

export async function imagesBench({
  run,
  row,
  ms,
  mb,
  heavy,
  inProcess,
  envNote,
  scratch,
  root,
  bin,
}) {
  const dist = (path) => join(root, "dist", path);
  const { Session } = await import(pathToFileURL(dist("session/session.js")).href);
  const { sessionsDir } = await import(pathToFileURL(dist("session/store.js")).href);
  const { startMockServer } = await import("./mock-server.mjs");
  const probe = join(root, "bench/rss-probe.mjs");
  const shots = Array.from({ length: IMAGES }, noisePng);
  const placeholder = (png) =>
    `[image: image/png, ${SIDE}x${SIDE}, ${(png.length / 1024).toFixed(1)} KB]`;

  /** Writes the session into `dir` as `c.jsonl` (its blobs beside it); returns its path. */
  const write = async (dir, { images, compacted }) => {
    rmSync(dir, { recursive: true, force: true });
    const session = await Session.create({ dir, workspace: "/w", model: "m", id: "c", env: {} });
    await session.append({ role: "user", content: "look at the screenshots" });
    for (const [i, png] of shots.entries()) {
      const id = `call_${i}`;
      await session.append({
        role: "assistant",
        content: "",
        toolCalls: [{ id, name: "read", input: { path: `shot-${i}.png` } }],
      });
      const parts = [{ type: "image", mediaType: "image/png", data: png.toString("base64") }];
      await session.append({
        role: "tool",
        toolCallId: id,
        content: placeholder(png),
        isError: false,
        ...(images && { parts }),
      });
    }
    await session.append({ role: "assistant", content: "The button is red.", toolCalls: [] });
    if (compacted) {
      const facts = { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 };
      await session.record({
        type: "compaction",
        firstKept: IMAGES + 1,
        count: 1,
        trigger: "size",
        userMessages: ["look at the screenshots"],
        facts,
        summary: "## Goal\n…",
        tokensBefore: 200_000,
        tokensAfter: 2_000,
      });
    }
    await session.close();
    return session.path;
  };

  const load = (file) =>
    inProcess(`
      import { readSession } from ${JSON.stringify(dist("session/session.js"))};
      const start = performance.now();
      const loaded = await readSession(${JSON.stringify(file)});
      console.log(JSON.stringify({ wall: performance.now() - start, n: loaded.messages.length }));
    `);

  const server = await startMockServer();
  const cases = {};
  for (const [name, shape] of Object.entries({
    plain: { images: false, compacted: false },
    images: { images: true, compacted: false },
    plainCompacted: { images: false, compacted: true },
    imagesCompacted: { images: true, compacted: true },
  })) {
    const work = join(scratch, `images-${name}`);
    const home = join(scratch, `images-${name}-home`);
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, "notes.txt"), "hello\n");
    const dir = sessionsDir({ MINI_AGENT_HOME: home }, realpathSync(work));
    const file = await write(dir, shape);
    const bytes = statSync(file).size;
    const env = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "bench-key",
      MINI_AGENT_HOME: home,
    };
    const loaded = await heavy(() => load(file));
    const resumed = await heavy(async () => {
      // Each run appends a turn: the session is written again, as it was, before each.
      await write(dir, shape);
      // The mock server keeps each request it parsed: not the images' bodies of every run.
      server.requests.length = 0;
      return run(process.execPath, ["--import", probe, bin, "--continue", "go on"], {
        cwd: work,
        env,
      });
    });
    cases[name] = { bytes, loaded, resumed };
  }
  server.close();

  const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;
  const { plain, images, plainCompacted, imagesCompacted } = cases;
  const sides = (a, b, what) => [
    `${ms(a.wall)}, peak RSS ${mb(a.rss)}${a.note}`,
    `${ms(b.wall)}, peak RSS ${mb(b.rss)} (${what})`,
    `${(a.wall / b.wall).toFixed(2)}× wall, ${(a.rss / b.rss).toFixed(2)}× RSS`,
  ];
  const file = `session file ${kb(images.bytes)} + ${IMAGES} blobs of ~${kb(shots[0].length)}`;
  row(
    `session: load ${IMAGES} screenshots still in view (\`readSession\`; ${file})`,
    ...sides(images.loaded, plain.loaded, `without the images, ${kb(plain.bytes)}`),
    "close to 1×",
    envNote(images.loaded, plain.loaded),
  );
  row(
    `CLI \`--continue\` of that session (one turn: two requests, each sending the ${IMAGES} images)`,
    ...sides(images.resumed, plain.resumed, "without the images"),
    "the bytes it sends",
    envNote(images.resumed, plain.resumed),
  );
  row(
    `session: load ${IMAGES} screenshots a compaction covers (\`readSession\`)`,
    ...sides(imagesCompacted.loaded, plainCompacted.loaded, "without the images"),
    "close to 1×",
    envNote(imagesCompacted.loaded, plainCompacted.loaded),
  );
  row(
    `CLI \`--continue\` of that session (one turn)`,
    ...sides(imagesCompacted.resumed, plainCompacted.resumed, "without the images"),
    "close to 1×",
    envNote(imagesCompacted.resumed, plainCompacted.resumed),
  );
}
