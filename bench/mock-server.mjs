// A minimal Messages API stream for the benchmarks: the first request of a conversation gets a
// `read` call for notes.txt, the next one a short answer. Records each request body's size and
// when it arrived.
// With `answerChars`, every request is answered at once with that much text instead, streamed in
// 16 KiB deltas with backpressure (for peak memory against answer size).
// It also answers what other agents send beside their Messages requests (Claude Code: a `HEAD /`,
// `count_tokens`, requests without `stream`, as a JSON message); `requests` holds only the POSTs
// to `/v1/messages`, each with its path, `others` the method and path of the rest.
import { once } from "node:events";
import { createServer } from "node:http";

const frame = (event, data) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function reply(body) {
  const last = body.messages.at(-1);
  const answered =
    Array.isArray(last.content) && last.content.some((block) => block.type === "tool_result");
  const frames = [messageStart(body.model)];
  if (answered) {
    frames.push(
      frame("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "" },
      }),
      frame("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: "The notes say hello." },
      }),
      frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    );
  } else {
    frames.push(
      frame("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_1", name: "read", input: {} },
      }),
      frame("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '{"path":"notes.txt"}' },
      }),
      frame("content_block_stop", { type: "content_block_stop", index: 0 }),
    );
  }
  frames.push(
    frame("message_delta", {
      type: "message_delta",
      delta: { stop_reason: answered ? "end_turn" : "tool_use" },
      usage: { output_tokens: 5 },
    }),
    frame("message_stop", { type: "message_stop" }),
  );
  return frames.join("");
}

const messageStart = (model) =>
  frame("message_start", {
    type: "message_start",
    message: {
      id: "msg",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  });

/** Streams `chars` characters of ordinary text lines as one text block, then ends the turn. */
async function streamAnswer(res, model, chars) {
  const line = "An ordinary line of a long answer, with words and numbers 0123456789.\n";
  const piece = line.repeat(Math.ceil(16_384 / line.length)).slice(0, 16_384);
  const write = async (text) => {
    if (!res.write(text)) await once(res, "drain");
  };
  await write(messageStart(model));
  await write(
    frame("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
  );
  for (let sent = 0; sent < chars; sent += piece.length) {
    const text = piece.slice(0, Math.min(piece.length, chars - sent));
    await write(
      frame("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      }),
    );
  }
  res.end(
    frame("content_block_stop", { type: "content_block_stop", index: 0 }) +
      frame("message_delta", {
        type: "message_delta",
        delta: { stop_reason: "end_turn" },
        usage: { output_tokens: Math.ceil(chars / 4) },
      }) +
      frame("message_stop", { type: "message_stop" }),
  );
}

/** A request that is not a streamed Messages request, answered as the API would. */
function answerOther(req, res, raw) {
  const json = (value) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(value));
  };
  if (req.method !== "POST") return res.end();
  const path = new URL(req.url, "http://mock").pathname;
  if (path.endsWith("/count_tokens")) return json({ input_tokens: 1 });
  const body = JSON.parse(raw.toString("utf8") || "{}");
  json({
    id: "msg",
    type: "message",
    role: "assistant",
    model: body.model ?? "mock",
    content: [{ type: "text", text: "Notes" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  });
}

export function startMockServer({ answerChars } = {}) {
  const requests = [];
  const others = [];
  const server = createServer((req, res) => {
    // When the request arrived (`performance.now()` of this process), for time-to-first-request.
    const at = performance.now();
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const path = new URL(req.url, "http://mock").pathname;
      const body = req.method === "POST" && path === "/v1/messages" ? JSON.parse(raw) : undefined;
      if (body?.stream !== true) {
        others.push({ method: req.method, path, at });
        return answerOther(req, res, raw);
      }
      requests.push({ bytes: raw.length, body, at, path });
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (answerChars === undefined) res.end(reply(body));
      else streamAnswer(res, body.model, answerChars).catch(() => res.destroy());
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        requests,
        others,
        close: () => server.close(),
      });
    });
  });
}
