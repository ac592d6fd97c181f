import { describe, expect, it } from "vitest";
import { banner, recap } from "../src/cli/terminal/banner.js";
import { styles } from "../src/render/style.js";
import type { Message } from "../src/types.js";

const plain = styles(false);
const wide = (line: string) => line;

describe("the start banner", () => {
  it("names the model, the provider, the sandbox, the folder and /help", () => {
    const info = { model: "claude-sonnet-5-5", provider: "anthropic", sandbox: "bwrap" };
    expect(banner({ ...info, workspace: "/work/app" }, plain, wide)).toBe(
      "mini-agent · model claude-sonnet-5-5 · provider anthropic · sandbox bwrap\n" +
        "folder /work/app · /help lists the commands, /exit leaves\n",
    );
  });

  it("shows control characters in a folder's name instead of obeying them", () => {
    const info = { model: "m", provider: "openai", sandbox: "none" };
    expect(banner({ ...info, workspace: "/w/\x1b[2Jx" }, plain, wide)).toContain(
      "folder /w/␛[2Jx ·",
    );
  });
});

describe("the recap of a resumed session", () => {
  const now = new Date("2026-12-01T12:00:00Z");
  const messages: Message[] = [
    { role: "user", content: "first prompt" },
    { role: "assistant", content: "first answer", toolCalls: [] },
    { role: "user", content: "fix the\ntest\x1b[31m" },
    { role: "assistant", content: "", toolCalls: [{ id: "t1", name: "bash", input: {} }] },
    { role: "tool", toolCallId: "t1", content: "ok", isError: false },
    { role: "assistant", content: "Done:\n  the test\tpasses.\rok", toolCalls: [] },
  ];

  it("names the session and its age, then the last prompt and the last answer, one line each", () => {
    const updatedAt = new Date("2026-12-01T09:00:00Z");
    expect(recap({ id: "20261201-090000-ab12", updatedAt, messages }, now, plain, wide)).toBe(
      "resumed session 20261201-090000-ab12, last used 3 hours ago\n" +
        "  last prompt: fix the test␛[31m\n" +
        "  last answer: Done: the test passes.␍ok\n",
    );
  });

  it("says so when the session has no answer yet, and counts minutes and days", () => {
    const recent = recap(
      { id: "a", updatedAt: new Date("2026-12-01T11:58:30Z"), messages: messages.slice(0, 1) },
      now,
      plain,
      wide,
    );
    expect(recent).toBe(
      "resumed session a, last used 1 minute ago\n  last prompt: first prompt\n  last answer: (none yet)\n",
    );
    const old = recap(
      { id: "b", updatedAt: new Date("2026-11-28T12:00:00Z"), messages: [] },
      now,
      plain,
      wide,
    );
    expect(old).toBe(
      "resumed session b, last used 3 days ago\n  last prompt: (none)\n  last answer: (none yet)\n",
    );
    const fresh = recap({ id: "c", updatedAt: now, messages: [] }, now, plain, wide);
    expect(fresh.split("\n")[0]).toBe("resumed session c, last used just now");
  });

  it("cuts each line to the terminal's width", () => {
    const long: Message[] = [{ role: "user", content: "x".repeat(500) }];
    const fit = (line: string) => (line.length > 40 ? `${line.slice(0, 39)}…` : line);
    const lines = recap({ id: "a", updatedAt: now, messages: long }, now, plain, fit).split("\n");
    expect(lines[1]).toBe(`  last prompt: ${"x".repeat(24)}…`);
  });
});
