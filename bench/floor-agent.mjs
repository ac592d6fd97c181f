// The floor: the same two-turn task (prompt, read a file, answer) with no dependencies, straight
// over node:http. What Node itself costs for the job; mini-agent is measured against it.
import { readFileSync } from "node:fs";
import { request } from "node:http";

const base = new URL(process.env.ANTHROPIC_BASE_URL);
const tools = [
  {
    name: "read",
    description: "Read a file",
    input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];

function post(body) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: "/v1/messages",
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-api-key": process.env.ANTHROPIC_API_KEY,
          "anthropic-version": "2023-06-01",
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve(parse(text)));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

function parse(sse) {
  const out = { text: "", calls: [] };
  let json = "";
  let call;
  for (const block of sse.split("\n\n")) {
    const data = block.split("\n").find((line) => line.startsWith("data: "));
    if (!data) continue;
    const event = JSON.parse(data.slice(6));
    if (event.type === "content_block_start" && event.content_block.type === "tool_use") {
      call = { id: event.content_block.id, name: event.content_block.name };
      json = "";
    } else if (event.type === "content_block_delta" && event.delta.type === "text_delta")
      out.text += event.delta.text;
    else if (event.type === "content_block_delta" && event.delta.type === "input_json_delta")
      json += event.delta.partial_json;
    else if (event.type === "content_block_stop" && call) {
      out.calls.push({ ...call, input: JSON.parse(json || "{}") });
      call = undefined;
    }
  }
  return out;
}

const messages = [{ role: "user", content: process.argv[2] ?? "what do the notes say?" }];
for (;;) {
  const round = await post({
    model: "m",
    max_tokens: 1024,
    system: "You are an agent.",
    tools,
    messages,
    stream: true,
  });
  messages.push({
    role: "assistant",
    content: [
      ...(round.text ? [{ type: "text", text: round.text }] : []),
      ...round.calls.map((c) => ({ type: "tool_use", ...c })),
    ],
  });
  if (round.calls.length === 0) {
    process.stdout.write(`${round.text}\n`);
    break;
  }
  messages.push({
    role: "user",
    content: round.calls.map((c) => ({
      type: "tool_result",
      tool_use_id: c.id,
      content: readFileSync(c.input.path, "utf8"),
    })),
  });
}
