import { describe, expect, it } from "vitest";
import { useExportSetup } from "./support/export.js";

/** A rewind in an exported session: the files it put back, and where the conversation went back. */

const setup = useExportSetup();

describe("exporting a rewound session", () => {
  it("shows each file a rewind put back and the point the conversation went back to", async () => {
    const s = await setup();
    await s.session("s1", async (session) => {
      await session.append({ role: "user", content: "one" });
      await session.append({ role: "assistant", content: "a1", toolCalls: [] });
      await session.append({ role: "user", content: "two" });
      await session.append({ role: "assistant", content: "a2", toolCalls: [] });
      const hash = "0".repeat(64);
      await session.record({
        type: "file_restore",
        to: 2,
        path: "a.txt",
        before: hash,
        after: hash,
        mode: 420,
      });
      await session.record({
        type: "file_restore",
        to: 2,
        path: "b.txt",
        before: hash,
        after: null,
        mode: null,
      });
      await session.record({ type: "rewind", to: 2 });
      await session.append({ role: "user", content: "two again" });
    });
    const md = await s.run(["--format", "md"]);
    expect(md.stdout).toContain(
      [
        "_A rewind put back `a.txt` as it was just before prompt 2_",
        "",
        "_A rewind removed `b.txt`, which the agent created from prompt 2 on_",
        "",
        "## Rewound to just before prompt 2",
        "",
        "The conversation went back to just before prompt 2: what follows is a new branch; the prompts above from prompt 2 on stay in the session file.",
        "",
      ].join("\n"),
    );
    const page = await s.run(["-o", "-"]);
    expect(page.stdout).toContain(
      '<p class="entry rewind">A rewind put back <code>a.txt</code> as it was just before prompt 2</p>',
    );
    expect(page.stdout).toContain(
      '<section class="entry rewind"><h2>Rewound to just before prompt 2</h2>',
    );
  });
});

describe("exporting what bash changed", () => {
  it("shows under each bash call the files it changed, that a rewind does not restore, or why they are not known", async () => {
    const s = await setup();
    const bash = (id: string, command: string) => ({ id, name: "bash", input: { command } });
    await s.session("s1", async (session) => {
      await session.append({ role: "user", content: "build" });
      await session.append({
        role: "assistant",
        content: "",
        toolCalls: [bash("b1", "make"), bash("b2", "true"), bash("b3", "sleep 9")],
      });
      await session.record({
        type: "bash_change",
        toolCallId: "b1",
        paths: ["out/a.o", "out/b.o"],
        more: 3,
      });
      await session.append({ role: "tool", toolCallId: "b1", content: "ok", isError: false });
      await session.record({ type: "bash_change", toolCallId: "b2", paths: [] });
      await session.append({ role: "tool", toolCallId: "b2", content: "", isError: false });
      await session.record({
        type: "bash_change",
        toolCallId: "b3",
        paths: [],
        skipped: "git took over 2 s: skipped",
      });
      await session.append({ role: "tool", toolCallId: "b3", content: "done", isError: false });
      await session.append({
        role: "assistant",
        content: "",
        toolCalls: [bash("b4", "touch x"), bash("b5", "true")],
      });
      const made = { path: "x", before: null, after: { hash: "0".repeat(64), mode: 420 } };
      await session.record({ type: "bash_change", toolCallId: "b4", paths: ["x"], files: [made] });
      await session.append({ role: "tool", toolCallId: "b4", content: "", isError: false });
      await session.record({ type: "bash_change", toolCallId: "b5", paths: [], files: [] });
      await session.append({ role: "tool", toolCallId: "b5", content: "", isError: false });
    });
    const md = await s.run(["--format", "md"]);
    const changedLines = md.stdout
      .split("\n")
      .filter((line) => /^_(Changed|What this|Git saw)/.test(line));
    expect(changedLines).toEqual([
      "_Changed by this call, not restored by a rewind: `out/a.o`, `out/b.o` and 3 more_",
      "_Git saw no file changed \\(it does not look at the files it ignores\\)_",
      "_What this call changed is not known: git took over 2 s: skipped_",
      "_Changed by this call: `x`_",
      "_Changed no file_",
    ]);
    const page = await s.run(["-o", "-"]);
    const changed = page.stdout.match(/<p class="changed">.*?<\/p>/g);
    expect(changed).toEqual([
      '<p class="changed">Changed by this call, not restored by a rewind: <code>out/a.o</code>, <code>out/b.o</code> and 3 more</p>',
      '<p class="changed">Git saw no file changed (it does not look at the files it ignores)</p>',
      '<p class="changed">What this call changed is not known: git took over 2 s: skipped</p>',
      '<p class="changed">Changed by this call: <code>x</code></p>',
      '<p class="changed">Changed no file</p>',
    ]);
  });
});
