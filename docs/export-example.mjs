// Makes docs/export-example.png: an example session, exported by the built CLI and
// photographed by headless Chromium. Run `npm run build` first; needs Debian's `chromium`.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Session } from "../dist/session/session.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "mini-agent-example-")));
const workspace = join(scratch, "dates");
execFileSync("mkdir", ["-p", workspace]);
const state = join(scratch, "state");
const hash = createHash("sha256").update(workspace).digest("hex").slice(0, 12);
const session = await Session.create({
  dir: join(state, "sessions", `${basename(workspace)}-${hash}`),
  workspace: "/home/ada/src/dates",
  model: "claude-sonnet-5-5",
  sandbox: "bwrap",
  id: "20261201-091502-3f9a1c",
  now: new Date("2026-12-01T09:15:02.000Z"),
  env: {},
});
const call = (id, name, input) => ({ id, name, input });
const tests = [
  "> dates@1.4.0 test",
  "> vitest run",
  "",
  ...Array.from({ length: 36 }, (_, i) => ` ✓ test/parse.test.ts > parses case ${i + 1}`),
  "",
  " Test Files  1 passed (1)",
  "      Tests  37 passed (37)",
].join("\n");
await session.append({
  role: "user",
  content: "parseDate fails on leap days. Fix it and run the tests.",
});
await session.record({
  type: "usage",
  inputTokens: 4210,
  outputTokens: 96,
  cacheReadTokens: 0,
  cacheWriteTokens: 3904,
});
await session.append({
  role: "assistant",
  content: "Let me find where the day is checked.",
  toolCalls: [
    call("toolu_01", "grep", { pattern: "daysInMonth" }),
    call("toolu_02", "read", { path: "src/parse.ts" }),
  ],
});
await session.record({
  type: "approval",
  toolCallId: "toolu_01",
  tool: "grep",
  approved: true,
  by: "default-policy",
});
await session.append({
  role: "tool",
  toolCallId: "toolu_01",
  content: "src/parse.ts:14: const daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];",
  isError: false,
});
await session.record({
  type: "approval",
  toolCallId: "toolu_02",
  tool: "read",
  approved: true,
  by: "default-policy",
});
await session.append({
  role: "tool",
  toolCallId: "toolu_02",
  content:
    '12 export function parseDate(text: string): Date {\n13   const [y, m, d] = text.split("-").map(Number);\n14   const daysInMonth = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];\n15   if (d > daysInMonth[m - 1]) throw new Error("no such day: " + text);',
  isError: false,
});
await session.record({
  type: "retry",
  attempt: 2,
  attempts: 4,
  delayMs: 1000,
  reason: "overloaded_error: Overloaded",
});
await session.record({
  type: "usage",
  inputTokens: 4630,
  outputTokens: 210,
  cacheReadTokens: 3904,
  cacheWriteTokens: 0,
});
await session.append({
  role: "assistant",
  content: "February needs 29 days in a leap year. Fixing, then running the tests.",
  toolCalls: [
    call("toolu_03", "edit", {
      path: "src/parse.ts",
      oldText: "31, 28, 31",
      newText: "31, leap(y) ? 29 : 28, 31",
    }),
    call("toolu_04", "bash", { command: "npm test" }),
    call("toolu_05", "bash", { command: "git push origin main" }),
  ],
});
await session.record({
  type: "approval",
  toolCallId: "toolu_03",
  tool: "edit",
  approved: true,
  by: "default-policy",
});
await session.append({
  role: "tool",
  toolCallId: "toolu_03",
  content: "edited src/parse.ts: replaced 1 occurrence at line 14",
  isError: false,
});
await session.record({
  type: "approval",
  toolCallId: "toolu_04",
  tool: "bash",
  approved: true,
  by: "rule:allow npm test",
});
await session.append({
  role: "tool",
  toolCallId: "toolu_04",
  content: `${tests}\n[exit code 0]`,
  isError: false,
});
await session.record({
  type: "approval",
  toolCallId: "toolu_05",
  tool: "bash",
  approved: false,
  by: "rule:deny git push",
});
await session.append({
  role: "tool",
  toolCallId: "toolu_05",
  content: "denied by the rule deny git push",
  isError: true,
});
await session.record({
  type: "usage",
  inputTokens: 5980,
  outputTokens: 64,
  cacheReadTokens: 4630,
  cacheWriteTokens: 0,
});
await session.append({
  role: "assistant",
  content:
    "Fixed: February has **29 days** in leap years, and all 37 tests pass:\n\n```sh\nnpm test   # 37 passed\n```\n\nI did not `git push`: that is yours to do.",
  toolCalls: [],
});
await session.close();

const page = join(scratch, "example.html");
execFileSync(process.execPath, [join(root, "dist/bundle/main.js"), "export", "-o", page], {
  cwd: workspace,
  env: { PATH: process.env.PATH, HOME: scratch, MINI_AGENT_HOME: state },
});
// --no-sandbox: Chromium's own sandbox cannot start as root (a container); the page is ours.
execFileSync(
  "chromium",
  [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--window-size=1000,1780",
    `--screenshot=${join(root, "docs/export-example.png")}`,
    `file://${page}`,
  ],
  { stdio: "ignore" },
);
rmSync(scratch, { recursive: true, force: true });
