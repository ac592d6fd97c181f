// Makes docs/screenshot.png: a real interactive session in tmux against a local scripted
// Messages API server, captured with `tmux capture-pane -e`, drawn as SVG and turned into PNG by
// `rsvg-convert`. Needs tmux, librsvg2-bin and fonts-dejavu-core (Debian), and a built dist/
// (`npm run build`). Not part of the tests or CI: run it by hand after changing the view.
//   node scripts/screenshot.mjs [out.png]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = process.argv[2] ?? join(root, "docs/screenshot.png");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const bin = join(root, pkg.bin["mini-agent"]);
const [columns, rows] = [112, 38];

const scratch = mkdtempSync(join(tmpdir(), "mini-agent-shot-"));
const workspace = join(scratch, "project");
mkdirSync(join(workspace, "src"), { recursive: true });
writeFileSync(
  join(workspace, "src/stats.ts"),
  [
    "/** Arithmetic mean of the values. */",
    "export function mean(values: number[]): number {",
    "  let total = 0;",
    "  for (const value of values) total += value;",
    "  return total / values.length;",
    "}",
    "",
    "/** The middle value, or the mean of the two middle ones. */",
    "export function median(values: number[]): number {",
    "  const sorted = [...values].sort((a, b) => a - b);",
    "  const mid = sorted.length >> 1;",
    "  return sorted.length % 2 ? sorted[mid] : mean([sorted[mid - 1], sorted[mid]]);",
    "}",
    "",
  ].join("\n"),
);

const answer = `## \`mean([])\` returns \`NaN\`

\`mean\` divides the **sum** by \`values.length\`, so an empty list gives \`0 / 0\`:

- \`mean([])\` is \`NaN\`, and so is \`median([])\`
- nothing throws, so the \`NaN\` travels on into *later* results

A guard makes the failure loud:

\`\`\`typescript
export function mean(values: number[]): number {
  if (values.length === 0) throw new RangeError("mean of an empty list");
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
\`\`\`

See [MDN on NaN](https://developer.mozilla.org/docs/Web/JavaScript/Reference/Global_Objects/NaN).
`;

const frame = (event, data) =>
  `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
const start = (input) =>
  frame("message_start", {
    message: {
      id: "msg",
      type: "message",
      role: "assistant",
      model: "m",
      content: [],
      stop_reason: null,
      usage: { input_tokens: input, output_tokens: 1 },
    },
  });
const end = (reason, output) =>
  frame("message_delta", { delta: { stop_reason: reason }, usage: { output_tokens: output } }) +
  frame("message_stop", {});
const replies = [
  [
    start(2210),
    frame("content_block_start", {
      index: 0,
      content_block: { type: "tool_use", id: "toolu_1", name: "read", input: {} },
    }),
    frame("content_block_delta", {
      index: 0,
      delta: { type: "input_json_delta", partial_json: '{"path":"src/stats.ts"}' },
    }),
    frame("content_block_stop", { index: 0 }),
    end("tool_use", 48),
  ],
  [
    start(2530),
    frame("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ...answer
      .match(/[\s\S]{1,24}/g)
      .map((text) =>
        frame("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
      ),
    frame("content_block_stop", { index: 0 }),
    end("end_turn", 236),
  ],
];
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const frames = replies.shift() ?? [];
    res.writeHead(200, { "content-type": "text/event-stream" });
    let i = 0;
    const next = () =>
      i < frames.length ? res.write(frames[i++], () => setTimeout(next, 15)) : res.end();
    setTimeout(next, 900);
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));

const session = `mini-agent-shot-${process.pid}`;
const tmux = (...args) => execFileSync("tmux", args, { encoding: "utf8" });
const env = {
  HOME: scratch,
  MINI_AGENT_HOME: join(scratch, "state"),
  ANTHROPIC_API_KEY: "local",
  ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.address().port}`,
  TERM: "xterm-256color",
  PATH: process.env.PATH,
};
const command = `cd ${workspace} && env -i ${Object.entries(env)
  .map(([k, v]) => `${k}=${v}`)
  .join(" ")} ${process.execPath} ${bin}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(text) {
  for (let i = 0; i < 100; i++) {
    if (tmux("capture-pane", "-p", "-t", session).includes(text)) return;
    await sleep(100);
  }
  throw new Error(`no ${text} on screen:\n${tmux("capture-pane", "-p", "-t", session)}`);
}
let ansi;
try {
  tmux("new-session", "-d", "-s", session, "-x", String(columns), "-y", String(rows), command);
  await waitFor("›");
  tmux("send-keys", "-t", session, "-l", "what does mean() do with an empty list?");
  tmux("send-keys", "-t", session, "Enter");
  await waitFor("compaction");
  ansi = tmux("capture-pane", "-p", "-e", "-t", session);
  if (process.env.SHOT_ANSI) writeFileSync(process.env.SHOT_ANSI, ansi);
} finally {
  try {
    tmux("kill-session", "-t", session);
  } catch {}
  server.close();
  rmSync(scratch, { recursive: true, force: true });
}

// ANSI → SVG: one <text> per line, one <tspan> per run of the same style, on a grid of cells.
const colours = {
  30: "#45475a",
  31: "#f38ba8",
  32: "#a6e3a1",
  33: "#f9e2af",
  34: "#89b4fa",
  35: "#cba6f7",
  36: "#89dceb",
  37: "#cdd6f4",
};
const [cellW, cellH, pad] = [8.4, 19, 16];
const xml = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const lines = ansi.replace(/\n+$/, "").split("\n");
// capture-pane writes each style change once: a style runs on across lines until changed.
const style = { bold: false, dim: false, italic: false, underline: false, fg: undefined };
const sgrPart = new RegExp(`(${"\u001b"}\\[[\\d;]*m)`);
const body = lines.map((line, row) => {
  const spans = [];
  let col = 0;
  for (const part of line.split(sgrPart)) {
    const sgr = sgrPart.test(part) ? /\[([\d;]*)m$/.exec(part) : null;
    if (sgr) {
      const codes = sgr[1] === "" ? [0] : sgr[1].split(";").map(Number);
      for (let i = 0; i < codes.length; i++) {
        const c = codes[i];
        if (c === 0)
          Object.assign(style, {
            bold: false,
            dim: false,
            italic: false,
            underline: false,
            fg: undefined,
          });
        else if (c === 1) style.bold = true;
        else if (c === 2) style.dim = true;
        else if (c === 22) Object.assign(style, { bold: false, dim: false });
        else if (c === 3) style.italic = true;
        else if (c === 23) style.italic = false;
        else if (c === 4) style.underline = true;
        else if (c === 24) style.underline = false;
        else if (c === 39) style.fg = undefined;
        else if (colours[c]) style.fg = colours[c];
        else if (c === 38) i += codes[i + 1] === 5 ? 2 : 4;
      }
      continue;
    }
    if (part === "") continue;
    const attrs = [
      `x="${(pad + col * cellW).toFixed(1)}"`,
      `fill="${style.fg ?? "#cdd6f4"}"`,
      style.dim ? 'fill-opacity="0.55"' : "",
      style.bold ? 'font-weight="bold"' : "",
      style.italic ? 'font-style="italic"' : "",
      style.underline ? 'text-decoration="underline"' : "",
    ].filter(Boolean);
    spans.push(`<tspan ${attrs.join(" ")}>${xml(part)}</tspan>`);
    col += [...part].length;
  }
  return `<text y="${pad + 14 + row * cellH}" xml:space="preserve">${spans.join("")}</text>`;
});
const width = Math.ceil(pad * 2 + columns * cellW);
const height = pad * 2 + lines.length * cellH;
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
<rect width="100%" height="100%" rx="8" fill="#1e1e2e"/>
<g font-family="DejaVu Sans Mono" font-size="14">
${body.join("\n")}
</g>
</svg>`;
const svgFile = out.replace(/\.png$/, ".svg");
writeFileSync(svgFile, svg);
execFileSync("rsvg-convert", ["-o", out, svgFile]);
rmSync(svgFile);
console.log(`wrote ${out}`);
