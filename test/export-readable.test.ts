import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Session } from "../src/session/session.js";
import { useExportSetup } from "./support/export.js";

/**
 * An export as readable as the terminal: answers rendered as Markdown, an edit as its diff, a
 * write as the file's text, prompts numbered as `mini-agent rewind --to N` numbers them, and the
 * page kept where it cannot be committed by accident.
 */

const setup = useExportSetup();

const answer = [
  "Created **notes.txt** and capitalised `beta`.",
  "",
  "```ts",
  "const a = 1 < 2;",
  "```",
  "",
  "- one <script>window.pwned = 1</script>",
  "\x01bforged\x02b",
].join("\n");

async function edits(session: Session): Promise<void> {
  await session.append({ role: "user", content: "make notes" });
  await session.append({
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "w1", name: "write", input: { path: "notes.txt", content: "alpha\nbeta\ngamma\n" } },
      { id: "e1", name: "edit", input: { path: "notes.txt", oldText: "beta", newText: "BETA" } },
    ],
  });
  await session.append({
    role: "tool",
    toolCallId: "w1",
    content: "created notes.txt (17 bytes)",
    isError: false,
  });
  await session.append({
    role: "tool",
    toolCallId: "e1",
    content: "edited notes.txt: replaced 1 occurrence at line 2",
    isError: false,
  });
  await session.append({ role: "assistant", content: answer, toolCalls: [] });
}

describe("an export as readable as the terminal", () => {
  it("renders an answer's Markdown on the page, its text still escaped", async () => {
    const s = await setup();
    await s.session("s1", edits);
    const page = (await s.run(["-o", "-"])).stdout;
    const shown = page.slice(page.lastIndexOf('<section class="entry answer">'));
    expect(shown).toContain(
      "Created <strong>notes.txt</strong> and capitalised <code>beta</code>.",
    );
    expect(shown).toContain("<code>const a = 1 &lt; 2;</code>");
    expect(shown).toContain("• one &lt;script&gt;window.pwned = 1&lt;/script&gt;");
    // The marks the renderer's styles write cannot be forged by the answer: they are shown.
    expect(shown).toContain("␁bforged␂b");
    expect(shown.match(/<strong>/g)).toHaveLength(1);
    expect(shown).not.toContain("```");
    expect(shown).not.toContain("**");
  });

  it("shows an edit as its diff and a write as the file's text, in both formats", async () => {
    const s = await setup();
    await s.session("s1", edits);
    const md = (await s.run(["--format", "md"])).stdout;
    expect(md).toContain("```diff\n--- notes.txt\n+++ notes.txt\n@@ -2 +2 @@\n-beta\n+BETA\n```");
    expect(md).toContain("```\nalpha\nbeta\ngamma\n```");
    expect(md).not.toContain("oldText");
    expect(md).not.toContain('"content"');
    const page = (await s.run(["-o", "-"])).stdout;
    expect(page).toContain('<span class="del">-beta</span>');
    expect(page).toContain('<span class="add">+BETA</span>');
    expect(page).toContain("<pre>alpha\nbeta\ngamma\n</pre>");
    expect(page).not.toContain("oldText");
    expect(page).not.toContain("\\n");
  });

  it("numbers the prompts after a rewind as mini-agent rewind --to N does", async () => {
    const s = await setup();
    await s.session("s1", async (session) => {
      for (const text of ["one", "two", "three"]) {
        await session.append({ role: "user", content: text });
        await session.append({ role: "assistant", content: `${text} done`, toolCalls: [] });
      }
      await session.record({ type: "rewind", to: 2 });
      await session.append({ role: "user", content: "two again" });
      await session.append({ role: "assistant", content: "ok", toolCalls: [] });
      await session.record({ type: "rewind", to: 1 });
      await session.append({ role: "user", content: "one again" });
    });
    const md = (await s.run(["--format", "md"])).stdout;
    expect(md.match(/^## (Prompt \d+|Rewound to just before prompt \d+)/gm)).toEqual([
      "## Prompt 1",
      "## Prompt 2",
      "## Prompt 3",
      "## Rewound to just before prompt 2",
      "## Prompt 2",
      "## Rewound to just before prompt 1",
      "## Prompt 1",
    ]);
    const page = (await s.run(["-o", "-"])).stdout;
    expect(page.match(/<h2>Prompt \d+/g)).toEqual([
      "<h2>Prompt 1",
      "<h2>Prompt 2",
      "<h2>Prompt 3",
      "<h2>Prompt 2",
      "<h2>Prompt 1",
    ]);
  });
});

describe("an edit that was not made, or whose result names no line", () => {
  it("is the diff it asked for, labelled as such, never its JSON", async () => {
    const s = await setup();
    const edit = (id: string) => ({
      id,
      name: "edit",
      input: { path: "a.ts", oldText: "x\ny", newText: "x\nz" },
    });
    await s.session("s1", async (session) => {
      await session.append({ role: "user", content: "fix" });
      await session.append({ role: "assistant", content: "", toolCalls: [edit("d"), edit("o")] });
      await session.record({
        type: "approval",
        toolCallId: "d",
        tool: "edit",
        approved: false,
        by: "user",
      });
      await session.append({ role: "tool", toolCallId: "d", content: "denied", isError: true });
      await session.append({
        role: "tool",
        toolCallId: "o",
        content: "edited a.ts: 1 replacement",
        isError: false,
      });
    });
    const md = (await s.run(["--format", "md"])).stdout;
    const diff = "```diff\n--- a.ts\n+++ a.ts\n x\n-y\n+z\n```";
    expect(md).toContain(`Diff asked for:\n\n${diff}`);
    expect(md).toContain(`Diff (its line is not in the result):\n\n${diff}`);
    expect(md).not.toContain("oldText");
  });
});

describe("where an export goes by default", () => {
  it("writes the page into the state folder, never the current folder, and replaces its own copy", async () => {
    const s = await setup();
    await s.session("s1", edits);
    const file = join(s.env.MINI_AGENT_HOME ?? "", "exports", "s1.html");
    for (let run = 0; run < 2; run++) {
      expect(await s.run([])).toEqual({
        code: 0,
        stdout: "",
        stderr: `mini-agent: exported session s1 (2 tool calls) to ${file}\n`,
      });
    }
    expect(await readdir(s.workspace)).toEqual([]);
    expect((await readFile(file, "utf8")).startsWith("<!doctype html>")).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(file, ".."))).mode & 0o777).toBe(0o700);
  });

  it("writes where -o says, still", async () => {
    const s = await setup();
    await s.session("s1", edits);
    const run = await s.run(["-o", "here.html"]);
    expect(run.code).toBe(0);
    expect(await readdir(s.workspace)).toEqual(["here.html"]);
  });
});
