import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Session } from "../src/session/session.js";
import { header, useExportSetup } from "./support/export.js";

/** `mini-agent export`: which session, where it goes, what it refuses, and what it shows. */

const setup = useExportSetup();

const prompt = { type: "message", message: { role: "user", content: "hello" } };
const answer = { type: "message", message: { role: "assistant", content: "hi", toolCalls: [] } };

async function small(session: Session): Promise<void> {
  await session.append({ role: "user", content: "hello" });
  await session.record({ type: "usage", inputTokens: 12, outputTokens: 3 });
  await session.append({ role: "assistant", content: "hi", toolCalls: [] });
}

const smallMarkdown = `# mini-agent session \`s1\`

- Created: 2026\\-11\\-30T12:00:00\\.000Z
- Workspace: \`/work/project\`
- Model: \`claude-sonnet-5-5\`
- Sandbox: bubblewrap: bash could write only the workspace and had no network

## Prompt 1

\`\`\`text
hello
\`\`\`

### Answer (12 input · 3 output tokens)

\`\`\`text
hi
\`\`\`

## Summary

- Prompts: 1
- Answers: 1
- Tool calls: 0 \\(0 denied, 0 failed\\)
- Requests: 1: 12 input · 3 output tokens
- Retries: 0
- Compactions: 0
`;

describe("which session and where it goes", () => {
  it("exports the newest session of the folder to exports/ID.html in the state folder, 0600, and says so", async () => {
    const s = await setup();
    const older = await s.session("older", small);
    await utimes(older, new Date(2020, 0, 1), new Date(2020, 0, 1));
    await s.session("newer", small);
    const run = await s.run([]);
    const file = join(s.env.MINI_AGENT_HOME ?? "", "exports", "newer.html");
    expect(run).toEqual({
      code: 0,
      stdout: "",
      stderr: `mini-agent: exported session newer (0 tool calls) to ${file}\n`,
    });
    const page = await readFile(file, "utf8");
    expect(page.startsWith("<!doctype html>\n")).toBe(true);
    expect(page.endsWith("</html>\n")).toBe(true);
    expect(page).toContain("<title>mini-agent session newer</title>");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(s.workspace)).toEqual([]);
  });

  it("writes Markdown to stdout with --format md, and to the file -o names when it ends in .md", async () => {
    const s = await setup();
    await s.session("s1", small);
    expect(await s.run(["--format", "md"])).toEqual({ code: 0, stdout: smallMarkdown, stderr: "" });
    const run = await s.run(["s1", "-o", "review.md"]);
    expect(run.code).toBe(0);
    expect(await readFile(join(s.workspace, "review.md"), "utf8")).toBe(smallMarkdown);
  });

  it("writes the page to stdout with -o -", async () => {
    const s = await setup();
    await s.session("s1", small);
    const run = await s.run(["-o", "-"]);
    expect(run.code).toBe(0);
    expect(run.stdout.startsWith("<!doctype html>")).toBe(true);
    expect(run.stdout.endsWith("</html>\n")).toBe(true);
    expect(await readdir(s.workspace)).toEqual([]);
  });

  it("exports a session named by its id, not the newest", async () => {
    const s = await setup();
    await s.session("first", async (session) => {
      await session.append({ role: "user", content: "the first one" });
    });
    await s.session("second", small);
    const run = await s.run(["first", "--format", "md"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("# mini-agent session `first`");
    expect(run.stdout).toContain("the first one");
  });

  it("shows where each turn ended and how long it took, in Markdown and in HTML", async () => {
    const s = await setup();
    await s.session("s1", async (session) => {
      await small(session);
      await session.record({ type: "turn_end", status: "completed", durationMs: 1234 });
      await session.append({ role: "user", content: "again" });
      await session.record({ type: "turn_end", status: "aborted", durationMs: 40 });
    });
    const md = await s.run(["--format", "md"]);
    expect(md.stdout).toContain("```\n\n_Turn completed in 1\\.2 s_\n\n## Prompt 2");
    expect(md.stdout).toContain("again\n```\n\n_Turn aborted in 40 ms_\n\n## Summary");
    const page = await s.run(["-o", "-"]);
    expect(page.stdout).toContain('<p class="entry turn-end">Turn completed in 1.2 s</p>');
  });

  it("refuses an unknown id and a folder without sessions: one line, exit 2, nothing written", async () => {
    const s = await setup();
    expect(await s.run([])).toEqual({
      code: 2,
      stdout: "",
      stderr: "mini-agent: no session to export for this folder\n",
    });
    await s.session("s1", small);
    expect(await s.run(["nope"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'mini-agent: no session "nope" for this folder (mini-agent --sessions lists them)\n',
    });
    expect(await readdir(s.workspace)).toEqual([]);
  });
});

describe("what it refuses", () => {
  it("never replaces an existing file without --force, and replaces it with --force", async () => {
    const s = await setup();
    await s.session("s1", small);
    const file = join(s.workspace, "s1.html");
    await writeFile(file, "my notes");
    expect(await s.run(["-o", "s1.html"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: ${file} exists: choose another file with -o, or add --force to replace it\n`,
    });
    expect(await readFile(file, "utf8")).toBe("my notes");
    expect((await s.run(["-o", "s1.html", "--force"])).code).toBe(0);
    expect((await readFile(file, "utf8")).startsWith("<!doctype html>")).toBe(true);
    expect((await readdir(s.workspace)).sort()).toEqual(["s1.html"]);
  });

  it("refuses -o into a missing folder, onto a folder, or onto the session file itself", async () => {
    const s = await setup();
    const path = await s.session("s1", small);
    const missing = join(s.workspace, "no", "such", "page.html");
    expect(await s.run(["-o", missing])).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: cannot write ${missing}: the folder ${join(s.workspace, "no", "such")} does not exist\n`,
    });
    await mkdir(join(s.workspace, "out.html"));
    const folder = join(s.workspace, "out.html");
    expect(await s.run(["-o", folder, "--force"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `mini-agent: cannot write ${folder}: it is a folder\n`,
    });
    expect(await s.run(["-o", path, "--force"])).toEqual({
      code: 2,
      stdout: "",
      stderr: "mini-agent: -o names the session file itself: choose another file\n",
    });
    expect(await readdir(s.workspace)).toEqual(["out.html"]);
  });

  it.each([
    ["empty", [], "session file PATH is damaged: it is empty"],
    [
      "with a torn header",
      ['{"type":"session","version":1,"id":"s1","crea'],
      "session file PATH is damaged: its first line is a torn session header",
    ],
    [
      "not a session",
      [prompt, answer],
      "PATH is not a mini-agent session file: its first line is not a session header",
    ],
    [
      "of a newer format",
      [header("s1", { version: 99 }), prompt],
      "session format version 99 is newer than this mini-agent supports (1): PATH",
    ],
  ])(
    "refuses a session file %s: one line that says so, exit 2, no file",
    async (_what, lines, message) => {
      const s = await setup();
      const path = await s.raw("s1", lines);
      if (lines.length === 0) await writeFile(path, "");
      expect(await s.run(["s1"])).toEqual({
        code: 2,
        stdout: "",
        stderr: `mini-agent: ${message.replace("PATH", path)}\n`,
      });
      expect(await readdir(s.workspace)).toEqual([]);
    },
  );

  it.each([
    [["--format", "md"], "mini-agent: --format is for mini-agent export [ID] (see --help)"],
    [["-o", "x.html"], "mini-agent: -o is for mini-agent export [ID] (see --help)"],
    [["--force"], "mini-agent: --force is for mini-agent export [ID] (see --help)"],
    [["export", "--format", "pdf"], 'mini-agent: unknown export format "pdf" (html or md)'],
    [
      ["export", "a", "b"],
      "mini-agent: usage: mini-agent export [ID] [--format html|md] [-o FILE] [--force]",
    ],
  ])("refuses %j in one line, exit 2", async (args, line) => {
    const s = await setup();
    const { runBin } = await import("./support/cli.js");
    expect(await runBin(args, { cwd: s.workspace, env: s.env })).toEqual({
      code: 2,
      stdout: "",
      stderr: `${line}\n`,
    });
  });
});

describe("what the page holds", () => {
  const hostile = "<script>alert(1)</script></textarea>]]><!-- --><img src=x onerror=alert(2)>";

  async function hostileSession(session: Session): Promise<void> {
    await session.append({ role: "user", content: `prompt ${hostile}` });
    await session.append({
      role: "assistant",
      content: `answer ${hostile}`,
      toolCalls: [{ id: "c1", name: "read", input: { path: hostile, [hostile]: 1 } }],
    });
    await session.record({
      type: "approval",
      toolCallId: "c1",
      tool: "read",
      approved: false,
      by: `rule ${hostile}`,
    });
    await session.append({
      role: "tool",
      toolCallId: "c1",
      content: `result ${hostile}`,
      isError: true,
    });
    await session.record({
      type: "retry",
      attempt: 2,
      attempts: 4,
      delayMs: 1,
      reason: `reason ${hostile}`,
    });
  }

  it("escapes every value: a tool output holding <script>, </textarea>, ]]> or <!-- stays text", async () => {
    const s = await setup();
    await s.session("s1", hostileSession);
    const run = await s.run(["-o", "-"]);
    expect(run.code).toBe(0);
    const page = run.stdout;
    const ownScript = /<script>[\s\S]*?<\/script>/g;
    expect(page.match(ownScript)).toHaveLength(1);
    const rest = page.replace(ownScript, "");
    for (const markup of ["<script", "</textarea", "]]>", "<!--", "<img"])
      expect(rest.includes(markup), markup).toBe(false);
    const escaped =
      "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/textarea&gt;]]&gt;&lt;!-- --&gt;&lt;img src=x onerror=alert(2)&gt;";
    for (const where of ["prompt", "answer", "result", "reason", "rule"])
      expect(rest, where).toContain(`${where} ${escaped}`);
  });

  it("allows by its policy exactly its own script and style, by their hashes, and nothing else", async () => {
    const s = await setup();
    await s.session("s1", small);
    const page = (await s.run(["-o", "-"])).stdout;
    const hash = (text: string | undefined) =>
      `'sha256-${createHash("sha256")
        .update(text ?? "")
        .digest("base64")}'`;
    const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1];
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)?.[1];
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(page)?.[1];
    expect(policy?.replaceAll("&#39;", "'")).toBe(
      `default-src 'none'; script-src ${hash(script)}; style-src ${hash(style)}; img-src data:; base-uri 'none'; form-action 'none'`,
    );
    expect(page.indexOf("Content-Security-Policy")).toBeLessThan(page.indexOf("<style>"));
    expect(page).not.toMatch(/ style=|<link|https?:\/\//);
  });

  it("redacts secrets again with the current rule, in both formats", async () => {
    const s = await setup();
    const token = "ghp_0123456789abcdefghij";
    const password = "hunter2hunter2";
    await s.raw("s1", [
      header("s1"),
      { type: "message", message: { role: "user", content: `use ${token}` } },
      {
        type: "message",
        message: {
          role: "assistant",
          content: "",
          toolCalls: [
            { id: "c1", name: "bash", input: { command: `echo ${password}`, [token]: 1 } },
          ],
        },
      },
      {
        type: "message",
        message: { role: "tool", toolCallId: "c1", content: `printed ${password}`, isError: false },
      },
      {
        type: "retry",
        attempt: 2,
        attempts: 4,
        delayMs: 1,
        reason: `refused ${JSON.stringify(token)}`,
      },
    ]);
    const env = { GH_TOKEN: token, DATABASE_URL: `postgres://app:${password}@db/app` };
    for (const format of ["html", "md"]) {
      const run = await s.run(["--format", format, "-o", "-"], env);
      expect(run.code).toBe(0);
      expect(run.stdout).not.toContain(token);
      expect(run.stdout).not.toContain(password);
      expect(run.stdout.match(/\[redacted\]/g)?.length, format).toBe(format === "html" ? 6 : 6);
    }
    const plain = await s.run(["--format", "md"]);
    expect(plain.stdout).toContain(token);
  });

  it("shows control and bidi characters instead of obeying them", async () => {
    const s = await setup();
    await s.session("s1", async (session) => {
      await session.append({ role: "user", content: "a\u202eb\u001b[2Jc\rd" });
    });
    const page = (await s.run(["-o", "-"])).stdout;
    expect(page).toContain('<div class="text">a&lt;U+202E&gt;b␛[2Jc␍d</div>');
    const markdown = (await s.run(["--format", "md"])).stdout;
    expect(markdown).toContain("```text\na<U+202E>b␛[2Jc␍d\n```");
  });
});

/** A session with one of each thing an export shows. */
const long = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n");
const rich: (object | string)[] = [
  header("s1", { sandbox: "off" }),
  { type: "message", message: { role: "user", content: "go" } },
  {
    type: "usage",
    inputTokens: 1000,
    outputTokens: 20,
    cacheReadTokens: 800,
    cacheWriteTokens: 0,
  },
  {
    type: "message",
    message: {
      role: "assistant",
      content: "",
      toolCalls: [
        { id: "c1", name: "bash", input: { command: "rm -rf build" } },
        { id: "c2", name: "read", input: { path: "big.txt" } },
        { id: "c3", name: "edit", input: { path: "a.ts", oldText: "x", newText: "y" } },
      ],
    },
  },
  { type: "approval", toolCallId: "c1", tool: "bash", approved: false, by: "user" },
  {
    type: "message",
    message: {
      role: "tool",
      toolCallId: "c1",
      content: "the user denied this call",
      isError: true,
    },
  },
  { type: "approval", toolCallId: "c2", tool: "read", approved: true, by: "default-policy" },
  {
    type: "message",
    message: { role: "tool", toolCallId: "c2", content: long, isError: false },
  },
  '{"type":"message","message":{"role":"tool","toolCa',
  {
    type: "retry",
    attempt: 2,
    attempts: 4,
    delayMs: 2000,
    reason: "overloaded_error: Overloaded",
  },
  { type: "usage", inputTokens: 5000, outputTokens: 700 },
  {
    type: "compaction",
    firstKept: 1,
    count: 1,
    trigger: "size",
    userMessages: ["go"],
    facts: {
      filesRead: ["big.txt"],
      filesChanged: [],
      commands: [],
      refused: [{ tool: "bash", argument: "rm -rf build", reason: "denied" }],
      omitted: 0,
    },
    summary: "Goal: clean up.",
    tokensBefore: 182000,
    tokensAfter: 24000,
  },
  { type: "message", message: { role: "user", content: "again" } },
];

describe("what the Markdown shows", () => {
  it("fences each value so no content can close its block", async () => {
    const s = await setup();
    await s.session("s1", async (session) => {
      await session.append({ role: "user", content: "```\n# not a heading\n````" });
      await session.append({ role: "assistant", content: "ends with `", toolCalls: [] });
    });
    const run = await s.run(["--format", "md"]);
    expect(run.stdout).toContain("## Prompt 1\n\n`````text\n```\n# not a heading\n````\n`````\n\n");
    expect(run.stdout).toContain("### Answer\n\n```text\nends with `\n```\n\n");
  });

  it("shows calls and their decisions, results folded when long, usage, retries, compactions, torn lines and calls left without a result", async () => {
    const s = await setup();
    await s.raw("s1", rich);
    const run = await s.run(["--format", "md"]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(`# mini-agent session \`s1\`

- Created: 2026\\-11\\-30T12:00:00\\.000Z
- Workspace: \`/work/project\`
- Model: \`claude-sonnet-5-5\`
- Sandbox: off: bash ran without a sandbox \\(\\-\\-sandbox off\\)

## Prompt 1

\`\`\`text
go
\`\`\`

### Answer (1,000 input · 20 output · 800 cache read · 0 cache write tokens)

_No text, only tool calls._

#### Tool call 1: \`bash\` \`rm -rf build\` — **DENIED** by \`user\`

Result (error):

\`\`\`text
the user denied this call
\`\`\`

#### Tool call 2: \`read\` \`big.txt\` — allowed by \`default-policy\`

<details><summary>Result: 40 lines, 310 characters</summary>

\`\`\`text
${long}
\`\`\`

</details>

_A line of the session file could not be read (a torn write) and is left out._

#### Tool call 3: \`edit\` \`a.ts\` — **NO RESULT**

Diff asked for:

\`\`\`diff
--- a.ts
+++ a.ts
-x
+y
\`\`\`

No result recorded: the session ended before this call reported one\\.

### Round lost and run again (attempt 2 of 4 after 2 s)

\`overloaded_error: Overloaded\`

_Request with no answer in the file (the summary of a compaction, or an answer lost): 5,000 input · 700 output tokens_

## Compaction 1 (the request reached the context limit; 182,000 → 24,000 tokens)

Everything above was replaced, for the model, by 1 earlier prompts kept verbatim, these facts and this summary.

Files read:

- \`big.txt\`

Refused:

- \`bash rm -rf build: denied\`

Summary the model wrote:

\`\`\`text
Goal: clean up.
\`\`\`

## Prompt 2

\`\`\`text
again
\`\`\`

## Summary

- Prompts: 2
- Answers: 1
- Tool calls: 3 \\(1 denied, 0 failed, 1 without a result\\)
- Requests: 2: 6,000 input · 720 output · 800 cache read tokens
- Retries: 1
- Compactions: 1
- Unreadable lines: 1 \\(torn writes, left out\\)
`);
  });

  it("shows the same things in the page, and a result that answers no call", async () => {
    const s = await setup();
    const stray = {
      type: "message",
      message: { role: "tool", toolCallId: "gone", content: "late", isError: false },
    };
    await s.raw("s1", [...rich, stray]);
    const page = (await s.run(["-o", "-"])).stdout;
    const main = page.slice(page.indexOf("<main>"), page.indexOf("</main>"));
    const headings = [...main.matchAll(/<(h[234])>(.*?)<\/\1>/g)].map(([, , text]) =>
      (text ?? "").replace(/<[^>]*>/g, ""),
    );
    expect(headings).toEqual([
      "Prompt 1",
      "Answer 1,000 input · 20 output · 800 cache read · 0 cache write tokens",
      "#1 bash rm -rf build denied by user",
      "#2 read big.txt allowed by default-policy",
      "#3 edit a.ts no result",
      "Round lost and run again attempt 2 of 4 after 2 s",
      "Compaction 1 the request reached the context limit; 182,000 → 24,000 tokens",
      "Files read",
      "Refused",
      "Prompt 2",
      "Result for a call not in the file gone",
    ]);
    expect(main).toContain(
      '<details class="result"><summary>Result: 40 lines, 310 characters</summary>',
    );
    expect(main).toContain("could not be read (a torn write)");
    expect(main).toContain(
      "Request with no answer in the file (the summary of a compaction, or an answer lost): 5,000 input · 700 output tokens",
    );
    expect(main).toContain(
      '<div class="summary"><span class="note">Summary the model wrote</span><pre>Goal: clean up.</pre></div>',
    );
  });

  it("exports a session written before usage, retries and the sandbox were recorded", async () => {
    const s = await setup();
    await s.raw("old", [
      {
        type: "session",
        version: 1,
        id: "old",
        createdAt: "2026-01-01T00:00:00.000Z",
        workspace: "/w",
        model: "m",
      },
      prompt,
      answer,
    ]);
    const run = await s.run(["--format", "md"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("- Sandbox: not recorded \\(a session from before it was\\)\n");
    expect(run.stdout).toContain("### Answer\n\n```text\nhi\n```\n");
    expect(existsSync(join(s.workspace, "old.html"))).toBe(false);
  });
});

describe("the model's thinking", () => {
  async function thinking(session: Session): Promise<void> {
    await session.append({ role: "user", content: "hello" });
    await session.append({
      role: "assistant",
      content: "hi",
      toolCalls: [],
      reasoning: [
        {
          type: "thinking",
          text: "First <b>thought</b>\n```\nend",
          signature: "c2ln",
          at: { text: 0, calls: 0 },
        },
        { type: "redacted_thinking", data: "ZW5jcnlwdGVk", at: { text: 0, calls: 0 } },
      ],
    });
  }

  it("shows a round's thinking folded before its answer, escaped, with the redacted blocks counted", async () => {
    const s = await setup();
    await s.session("s1", thinking);
    const md = await s.run(["--format", "md"]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain(
      "<details><summary>Thinking: 3 lines, and 1 block the provider redacted</summary>\n\n````text\nFirst <b>thought</b>\n```\nend\n````\n</details>\n\n### Answer",
    );
    const html = await s.run(["-o", "-"]);
    expect(html.stdout).toContain(
      '<details class="thinking"><summary>Thinking: 3 lines, and 1 block the provider redacted</summary><pre>First &lt;b&gt;thought&lt;/b&gt;\n```\nend</pre></details>\n<section class="entry answer">',
    );
    expect(html.stdout).not.toContain("ZW5jcnlwdGVk");
    expect(md.stdout).not.toContain("c2ln");
  });
});
