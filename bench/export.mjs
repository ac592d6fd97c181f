// `mini-agent export` of a 100 MB session (HTML and Markdown, to a file), beside a floor: Node
// streaming the same file to a file, with nothing rendered. The session is rounds of a prompt,
// the request's usage, one read call, its approval and a 15 KB result, as the CLI writes them.

import { createHash } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, mkdirSync } from "node:fs";
import { basename, join } from "node:path";

async function writeSession(dir, megabytes) {
  mkdirSync(dir, { recursive: true });
  const out = createWriteStream(join(dir, "big.jsonl"));
  const line = (record) => `${JSON.stringify(record)}\n`;
  out.write(
    line({
      type: "session",
      version: 1,
      id: "big",
      createdAt: "2026-01-01T00:00:00.000Z",
      workspace: "/w",
      model: "m",
      sandbox: "bwrap",
    }),
  );
  const content = `${"x".repeat(60)}\n`.repeat(256);
  for (let size = 0, i = 0; size < megabytes * 2 ** 20; i++) {
    const id = `c${i}`;
    const chunk = [
      { type: "message", message: { role: "user", content: `prompt ${i}` } },
      { type: "usage", inputTokens: 1000, outputTokens: 10 },
      {
        type: "message",
        message: {
          role: "assistant",
          content: "reading",
          toolCalls: [{ id, name: "read", input: { path: `f${i}.ts` } }],
        },
      },
      { type: "approval", toolCallId: id, tool: "read", approved: true, by: "default-policy" },
      { type: "message", message: { role: "tool", toolCallId: id, content, isError: false } },
    ]
      .map(line)
      .join("");
    size += chunk.length;
    if (!out.write(chunk)) await once(out, "drain");
  }
  out.end();
  await once(out, "close");
  return join(dir, "big.jsonl");
}

/** Adds the export rows through the runner's own helpers (`run`, `row`, formatting). */
export async function exportBench({ run, row, ms, mb, median, scratch, bin, probe, runs }) {
  const workspace = join(scratch, "export-workspace");
  mkdirSync(workspace, { recursive: true });
  const state = join(scratch, "export-state");
  const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 12);
  const file = await writeSession(join(state, "sessions", `${basename(workspace)}-${hash}`), 100);
  const env = { MINI_AGENT_HOME: state };
  const copy = `require("node:stream").pipeline(require("node:fs").createReadStream(${JSON.stringify(file)}), require("node:fs").createWriteStream(${JSON.stringify(join(scratch, "copy"))}), (e) => { if (e) throw e })`;
  const sample = async (command) => {
    const walls = [];
    const rss = [];
    for (let i = 0; i < Math.min(runs, 3); i++) {
      const result = await command();
      walls.push(result.wall);
      rss.push(result.rss);
    }
    return { wall: median(walls), rss: median(rss) };
  };
  const floor = await sample(() => run(process.execPath, ["--import", probe, "-e", copy]));
  for (const format of ["html", "md"]) {
    const out = join(scratch, `export.${format}`);
    const ours = await sample(() =>
      run(
        process.execPath,
        ["--import", probe, bin, "export", "big", "--format", format, "-o", out, "--force"],
        { cwd: workspace, env },
      ),
    );
    row(
      `export: a 100 MB session to ${format === "html" ? "HTML" : "Markdown"} (\`-o FILE\`)`,
      `${ms(ours.wall)}, peak RSS ${mb(ours.rss)}`,
      `${ms(floor.wall)}, peak RSS ${mb(floor.rss)} (node copies the file)`,
      `${(ours.wall / floor.wall).toFixed(2)}× time`,
      "streams; memory flat",
    );
  }
}
