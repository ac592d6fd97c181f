import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { CompactingClient } from "../src/compaction/client.js";
import type { Compaction } from "../src/compaction/record.js";
import { imageTokens, messageTokens, textTokens } from "../src/compaction/size.js";
import { summaryPrompt } from "../src/compaction/summary.js";
import { base64ImageSize, checkImage, type ImageAttachment } from "../src/images.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import type { TurnEvent } from "../src/runner/events.js";
import { anthropicImages, openaiImages, type ProviderImages } from "../src/runner/image-budget.js";
import { Journal } from "../src/runner/journal.js";
import { SessionRunner } from "../src/runner/runner.js";
import { Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/store.js";
import { bodyTokens, startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import { FakeClient, text } from "../src/testing/fake-client.js";
import {
  completion,
  stream as openaiStream,
  startOpenAIServer,
} from "../src/testing/openai-server.js";
import type { Body } from "../src/testing/sse-server.js";
import type { Message, ModelClient, Tool } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { gif, jpeg, png, webp } from "./support/images.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Compaction counts an image as its provider does, from its pixel size (never by its base64), and
 * the summary request carries no image: the placeholders stand for them in its transcript.
 */

const track = useCleanup();
const tempDir = useTempDirs();

describe("an image's tokens, by each provider's rule", () => {
  // Anthropic's table (Vision, "calculate image costs"): 200x200 ~54, 1000x1000 ~1334,
  // 1092x1092 ~1590; past 1568 px on the long side or ~1600 tokens, scaled down first.
  it("counts width x height / 750 for Anthropic, after scaling to 1568 px and ~1600 tokens", () => {
    const sizes: [number, number][] = [
      [200, 200],
      [1000, 1000],
      [1092, 1092],
      [1280, 800],
      [3000, 500],
      [4000, 3000],
      [8000, 8000],
    ];
    expect(sizes.map(([w, h]) => imageTokens(w, h, "anthropic"))).toEqual([
      54, 1334, 1590, 1366, 546, 1598, 1599,
    ]);
  });

  // OpenAI's examples (Images and vision, "calculating costs"): 1024x1024 high costs 765,
  // 2048x4096 costs 1105.
  it("counts 85 + 170 per 512-px tile for OpenAI, after fitting 2048x2048 and 768 px on the short side", () => {
    const sizes: [number, number][] = [
      [1024, 1024],
      [2048, 4096],
      [4096, 8192],
      [1280, 800],
      [512, 512],
      [513, 200],
      [200, 200],
    ];
    expect(sizes.map(([w, h]) => imageTokens(w, h, "openai"))).toEqual([
      765, 1105, 1105, 1105, 255, 425, 255,
    ]);
  });

  it("counts the larger of the two when the provider is not known", () => {
    expect(imageTokens(1024, 1024)).toBe(1399);
    expect(imageTokens(512, 513)).toBe(425);
  });

  it("counts a message's images by their pixel size, whatever their bytes, for every image type", () => {
    const images = [png(1280, 800, 400_000), jpeg(8, 6), gif(), webp()].map(attachment);
    const content = ["four images", ...images.map((image) => image.placeholder)].join("\n");
    const parts = [{ type: "text" as const, text: "four images" }, ...images.map((i) => i.part)];
    const message: Message = { role: "tool", toolCallId: "c1", isError: false, content, parts };
    const text = messageTokens({ ...message, parts: [] });
    expect(text).toBe(4 + textTokens(content));
    expect(messageTokens(message, "anthropic") - text).toBe(1366 + 1 + 1 + 1);
    expect(messageTokens(message, "openai") - text).toBe(1105 + 255 * 3);
    expect(messageTokens({ role: "user", content, parts }, "openai") - text).toBe(1105 + 255 * 3);
  });
});

describe("image sizes and the strict servers' counts", () => {
  it("reads a JPEG's size after 120 KB of metadata before its frame header", () => {
    const app = Buffer.concat([Buffer.from([0xff, 0xe1, 0xea, 0x60]), Buffer.alloc(59_998, 1)]);
    const bytes = Buffer.concat([jpeg(8, 6).subarray(0, 2), app, app, jpeg(8, 6).subarray(2)]);
    expect(base64ImageSize(bytes.toString("base64"))).toEqual({ width: 8, height: 6 });
    expect(base64ImageSize(bytes.subarray(0, 100_000).toString("base64"))).toBeUndefined();
    expect(base64ImageSize(Buffer.from("not an image").toString("base64"))).toBeUndefined();
  });

  it("count an image as its API does, from its pixel size, not its base64", () => {
    const shot = screenshots[0] as ImageAttachment;
    const { data } = shot.part;
    const url = `data:image/png;base64,${data}`;
    const bodies = [
      { source: { type: "base64", media_type: "image/png", data }, type: "image" },
      { type: "image_url", image_url: { url } },
      { type: "input_image", image_url: url },
    ].map((block) => ({ model: "m", messages: [{ role: "user", content: [block] }] }));
    const without = [
      { source: { type: "base64", media_type: "image/png", data: "" }, type: "image" },
      { type: "image_url", image_url: { url: "" } },
      { type: "input_image", image_url: "" },
    ].map((block) => ({ model: "m", messages: [{ role: "user", content: [block] }] }));
    expect(bodies.map((body, i) => bodyTokens(body) - bodyTokens(without[i] ?? {}))).toEqual([
      1366, 1105, 1105,
    ]);
  });
});

describe("the session runner", () => {
  /** The size a manual compaction finds, for a history whose first prompt has a 1280x800 image or not. */
  async function sizeBefore(images: ProviderImages | undefined, image: boolean): Promise<number> {
    const dir = await tempDir();
    const create = () => Session.create({ dir, workspace: "/ws", model: "m", id: "s1" });
    const shot = screenshots[0] as ImageAttachment;
    const history: Message[] = [
      {
        role: "user",
        content: `look\n${shot.placeholder}`,
        ...(image && { parts: [{ type: "text" as const, text: "look" }, shot.part] }),
      },
      { role: "assistant", content: "a red screen. ".repeat(400), toolCalls: [] },
      { role: "user", content: "and now?" },
      { role: "assistant", content: "nothing more", toolCalls: [] },
    ];
    const runner = new SessionRunner({
      client: new FakeClient([[text(summary)]]),
      journal: new Journal(new SessionStore(dir, create)),
      turn: async () => ({ system: "be brief", tools: [] }),
      info: { model: "m", workspace: "/ws", sandbox: "off" },
      history,
      ...(images !== undefined && { images }),
    });
    const events: TurnEvent[] = [];
    await runner.compact(undefined, { onEvent: (event) => events.push(event) });
    const compaction = events.find((event) => event.type === "compaction");
    if (compaction?.type !== "compaction") throw new Error("no compaction");
    return compaction.compaction.tokensBefore;
  }

  it("counts an image by the rule its client's builder gave, else as the larger count", async () => {
    const counted = [];
    for (const images of [anthropicImages, openaiImages, undefined])
      counted.push((await sizeBefore(images, true)) - (await sizeBefore(images, false)));
    expect(counted).toEqual([1366, 1105, 1366]);
  });
});

function attachment(bytes: Buffer): ImageAttachment {
  const image = checkImage(bytes);
  if (!("part" in image)) throw new Error(`not an image: ${image.kind}`);
  return image;
}

/** 20 screenshots of 1280x800, each PNG about 300 KB (400 KB of base64), all different. */
const screenshots = Array.from({ length: 20 }, (_, i) => attachment(png(1280, 800, 300_000 + i)));
const prompt = attachment(png(640, 400, 1000));
const summary =
  "## Goal\nscreens\n## Decisions\nnone\n## Done\nshots\n## In progress\nmore\n## Next\ngo on";
const system = "SYSTEM PROMPT: you are mini-agent under test.";
const window = 16_000;
/** The window less the reserve the client keeps (a quarter of the window). */
const limit = 12_000;

const screenshotTool: Tool = {
  spec: { name: "screenshot", description: "takes one", inputSchema: { type: "object" } },
  execute: async (input) => {
    const n = Number((input as { n: number }).n);
    const shot = screenshots[n - 1] as ImageAttachment;
    return {
      content: `screenshot ${n}\n${shot.placeholder}`,
      parts: [{ type: "text", text: `screenshot ${n}` }, shot.part],
    };
  },
};

interface Provider {
  name: string;
  /** The server, its replies made by `reply` (is it the summary request? which round?). */
  start(reply: (summary: boolean, round: number) => "summary" | "done" | number): Promise<{
    url: string;
    requests: { body: Body }[];
    rejections: string[];
    close(): Promise<void>;
  }>;
  client(url: string): ModelClient;
  isSummary(body: Body): boolean;
  /** The base64 of every image a request carries, in order. */
  images(body: Body): string[];
}

type Block = Record<string, unknown>;
const blocks = (value: unknown): Block[] => (Array.isArray(value) ? (value as Block[]) : []);

const anthropic: Provider = {
  name: "Anthropic",
  async start(reply) {
    let round = 0;
    const dispatch = (body: Body) => {
      const what = reply(anthropic.isSummary(body), anthropic.isSummary(body) ? round : ++round);
      if (what === "summary") return stream(turn({ text: [summary] }));
      if (what === "done") return stream(turn({ text: ["all screens seen"] }));
      return stream(
        turn({ calls: [{ id: `toolu_${what}`, name: "screenshot", input: { n: what } }] }),
      );
    };
    return startAnthropicServer(
      Array.from({ length: 60 }, () => dispatch),
      { contextLimit: window },
    );
  },
  client: (url) =>
    new AnthropicModelClient({ apiKey: "k", model: "m", baseURL: url, maxRetries: 0 }),
  isSummary: (body) =>
    blocks(body.system)
      .map((block) => block.text)
      .join("") === summaryPrompt,
  images: (body) =>
    blocks(body.messages).flatMap((message) =>
      blocks(message.content).flatMap((block) => [
        ...[block, ...blocks(block.content)].flatMap((inner) =>
          inner.type === "image" ? [String((inner.source as Block).data)] : [],
        ),
      ]),
    ),
};

const openai: Provider = {
  name: "OpenAI",
  async start(reply) {
    let round = 0;
    const dispatch = (body: Body) => {
      const what = reply(openai.isSummary(body), openai.isSummary(body) ? round : ++round);
      if (what === "summary") return openaiStream(completion({ text: [summary] }));
      if (what === "done") return openaiStream(completion({ text: ["all screens seen"] }));
      return openaiStream(
        completion({ calls: [{ id: `call_${what}`, name: "screenshot", input: { n: what } }] }),
      );
    };
    return startOpenAIServer(
      Array.from({ length: 60 }, () => dispatch),
      { contextLimit: window },
    );
  },
  client: (url) => new OpenAIModelClient({ baseURL: `${url}/v1`, model: "m", maxRetries: 0 }),
  isSummary: (body) => blocks(body.messages)[0]?.content === summaryPrompt,
  images: (body) =>
    blocks(body.messages).flatMap((message) =>
      blocks(message.content).flatMap((part) =>
        part.type === "image_url"
          ? [String((part.image_url as Block).url).replace(/^data:image\/png;base64,/, "")]
          : [],
      ),
    ),
};

describe.each([anthropic, openai])(
  "a session of 20 screenshots through $name's strict server",
  (provider) => {
    it("compacts in time by the images' tokens; every request valid, the summary request without an image", {
      timeout: 60_000,
    }, async () => {
      const server = track(
        await provider.start((isSummary, round) =>
          isSummary ? "summary" : round <= 20 ? round : "done",
        ),
      );
      const records: Compaction[] = [];
      const client = new CompactingClient(provider.client(server.url), {
        contextWindow: window,
        imageRule: provider === anthropic ? "anthropic" : "openai",
        onCompaction: (compaction) => void records.push(compaction),
      });
      const task: Message = {
        role: "user",
        content: `take 20 screenshots, like this one\n${prompt.placeholder}`,
        parts: [{ type: "text", text: "take 20 screenshots, like this one" }, prompt.part],
      };
      const result = await runAgent({ client, tools: [screenshotTool], system, messages: [task] });
      expect(result.status).toBe("completed");
      expect(result.text).toBe("all screens seen");

      // Every request valid, none refused for length: compaction came before the window, by the
      // client's own limit.
      expect(server.rejections).toEqual([]);
      const requests = server.requests.map(({ body }) => ({
        kind: provider.isSummary(body) ? "summary" : "round",
        tokens: bodyTokens(body),
        images: provider.images(body),
        json: JSON.stringify(body),
      }));
      const rounds = requests.filter((request) => request.kind === "round");
      expect(rounds).toHaveLength(21);
      expect(rounds.map((request) => request.tokens).filter((tokens) => tokens > limit)).toEqual(
        [],
      );

      // Compacted at the right point: the request before each summary request was within one
      // screenshot round of the limit, so the round after it would have passed it.
      const oneRound = rounds[2] ? rounds[2].tokens - (rounds[1]?.tokens ?? 0) : 0;
      expect(oneRound).toBeGreaterThan(1000);
      const summaries = requests.flatMap((request, i) => (request.kind === "summary" ? [i] : []));
      expect(summaries.length).toBe(records.length);
      expect(records.length).toBeGreaterThanOrEqual(2);
      expect(records.map((record) => record.trigger)).toEqual(records.map(() => "size"));
      for (const at of summaries) {
        const before = requests[at - 1];
        expect(before?.kind).toBe("round");
        expect((before?.tokens ?? 0) + oneRound).toBeGreaterThan(limit);
        expect(requests[at + 1]?.kind).toBe("round");
      }

      // The summary requests carry no image, no image's bytes: the placeholders stand for them,
      // each screenshot's under its own result, each summarised once, in order.
      const summarised: number[] = [];
      for (const at of summaries) {
        const request = requests[at];
        expect(request?.images).toEqual([]);
        expect(request?.json).not.toContain("iVBORw0KGgo");
        const text = JSON.parse(request?.json ?? "{}") as Body;
        const transcript = JSON.stringify(text.messages);
        for (const match of transcript.matchAll(/screenshot (\d+)\\n(\[image: [^\]]*\])/g)) {
          const n = Number(match[1]);
          expect(match[2]).toBe(screenshots[n - 1]?.placeholder);
          summarised.push(n);
        }
      }
      expect(summarised).toEqual(summarised.map((_, i) => i + 1));
      expect(summarised.length).toBeGreaterThan(10);
      expect(requests[summaries[0] ?? 0]?.json).toContain(
        JSON.stringify(`take 20 screenshots, like this one\n${prompt.placeholder}`).slice(1, -1),
      );

      // Each screenshot reached the model as an image in the round after it was taken.
      const seen = new Set(rounds.flatMap((request) => request.images));
      expect(screenshots.every((shot) => seen.has(shot.part.data))).toBe(true);
      expect(rounds[0]?.images).toEqual([prompt.part.data]);
    });
  },
);
