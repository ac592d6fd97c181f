import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { Session } from "../src/session/session.js";
import { type BrowserPage, hasChromium, openPage } from "./support/chromium.js";
import { useCleanup } from "./support/cleanup.js";
import { useExportSetup } from "./support/export.js";

/**
 * An exported page as a reader sees it, in a real headless Chromium: what is visible, what is
 * folded, what a script in a tool's output does (nothing), and what the page may load (nothing).
 */

const setup = useExportSetup();
const track = useCleanup();

const injected = `<script>document.title = "pwned"; window.pwned = 1</script><img src=x onerror="window.pwned = 2">`;
const longResult = `${Array.from({ length: 200 }, (_, i) => `src/file${i}.ts:1: // TODO`).join("\n")}\nLAST-LINE-MARKER`;

async function demo(session: Session): Promise<void> {
  await session.append({ role: "user", content: "List the files, read the notes, run the tests" });
  await session.record({ type: "usage", inputTokens: 3120, outputTokens: 88 });
  await session.append({
    role: "assistant",
    content: "Looking around first.",
    toolCalls: [
      { id: "t1", name: "ls", input: {} },
      { id: "t2", name: "bash", input: { command: "npm test" } },
      { id: "t3", name: "read", input: { path: "notes.txt" } },
      { id: "t4", name: "grep", input: { pattern: "TODO" } },
    ],
  });
  await session.record({
    type: "approval",
    toolCallId: "t1",
    tool: "ls",
    approved: true,
    by: "default-policy",
  });
  await session.append({
    role: "tool",
    toolCallId: "t1",
    content: "notes.txt\nsrc/",
    isError: false,
  });
  await session.record({
    type: "approval",
    toolCallId: "t2",
    tool: "bash",
    approved: false,
    by: "no-terminal",
  });
  await session.append({
    role: "tool",
    toolCallId: "t2",
    content: "bash is denied",
    isError: true,
  });
  await session.record({
    type: "approval",
    toolCallId: "t3",
    tool: "read",
    approved: true,
    by: "default-policy",
  });
  await session.append({ role: "tool", toolCallId: "t3", content: injected, isError: false });
  await session.record({
    type: "approval",
    toolCallId: "t4",
    tool: "grep",
    approved: true,
    by: "default-policy",
  });
  await session.append({ role: "tool", toolCallId: "t4", content: longResult, isError: false });
  await session.record({ type: "usage", inputTokens: 5400, outputTokens: 20 });
  await session.append({
    role: "assistant",
    content: `All **done**: see \`notes.txt\`.\n\n\`\`\`sh\nnpm test\n\`\`\`\n\n- ${injected}`,
    toolCalls: [],
  });
}

async function exported(): Promise<string> {
  const s = await setup();
  await s.session("browser-demo", demo);
  const file = join(s.workspace, "page.html");
  const run = await s.run(["-o", file]);
  expect(run.code).toBe(0);
  return file;
}

async function inPage<T>(file: string, look: (page: BrowserPage) => Promise<T>, javascript = true) {
  const page = await openPage(pathToFileURL(file).href, { javascript });
  try {
    return await look(page);
  } finally {
    await page.close();
  }
}

describe.skipIf(!hasChromium())("an exported page in headless Chromium", () => {
  it("shows every tool call, marks the denied one, and runs no script from a tool's output", {
    timeout: 90_000,
  }, async () => {
    const file = await exported();
    await inPage(file, async (page) => {
      const seen = await page.evaluate<Record<string, unknown>>(`({
        title: document.title,
        pwned: window.pwned ?? null,
        calls: Array.from(document.querySelectorAll("main .call")).map((c) => c.innerText.split("\\n")[0]),
        denied: Array.from(document.querySelectorAll("main .call.denied")).map((c) => c.innerText.split("\\n")[0]),
        summary: document.querySelector("#summary").innerText,
        text: document.body.innerText,
        scripts: document.scripts.length,
        images: document.images.length,
        answer: Array.from(document.querySelectorAll("main .answer")).at(-1).innerText,
        strong: getComputedStyle(document.querySelector("main .answer strong")).fontWeight,
        code: Array.from(document.querySelectorAll("main .answer code")).map((c) => c.textContent),
      })`);
      expect(seen).toEqual({
        title: "mini-agent session browser-demo",
        pwned: null,
        calls: [
          "#1 ls allowed by default-policy",
          "#2 bash npm test DENIED by no-terminal",
          "#3 read notes.txt allowed by default-policy",
          "#4 grep TODO allowed by default-policy",
        ],
        denied: ["#2 bash npm test DENIED by no-terminal"],
        summary: expect.stringContaining("Tool calls\n4 (1 denied, 0 failed)\n"),
        text: expect.stringContaining(injected),
        scripts: 1,
        images: 0,
        answer: `Answer 5,400 input · 20 output tokens\nAll done: see notes.txt.\n\n┌─ sh\n│ npm test\n└─\n\n• ${injected}`,
        strong: "700",
        code: ["notes.txt", "npm test"],
      });
      expect(page.messages).toEqual([]);
    });
  });

  it("folds a long result until it is opened; the search box shows only the entries that match", {
    timeout: 90_000,
  }, async () => {
    const file = await exported();
    await inPage(file, async (page) => {
      expect(await page.evaluate("document.body.innerText.includes('LAST-LINE-MARKER')")).toBe(
        false,
      );
      expect(await page.evaluate("document.body.textContent.includes('LAST-LINE-MARKER')")).toBe(
        true,
      );
      const visibleHeadings = `Array.from(document.querySelectorAll("main > .entry")).filter((e) => e.offsetParent !== null).map((e) => e.innerText.split("\\n")[0])`;
      const found = await page.evaluate(`(() => {
        const box = document.querySelector(".controls input");
        box.value = "last-line-marker";
        box.dispatchEvent(new Event("input"));
        return { shown: ${visibleHeadings}, opened: document.body.innerText.includes("LAST-LINE-MARKER") };
      })()`);
      expect(found).toEqual({ shown: ["#4 grep TODO allowed by default-policy"], opened: true });
      const folded = await page.evaluate(`(() => {
        document.querySelector(".controls input").value = "";
        document.querySelector(".controls input").dispatchEvent(new Event("input"));
        Array.from(document.querySelectorAll(".controls button")).find((b) => b.textContent === "Fold all").click();
        return { shown: ${visibleHeadings}.length, marker: document.body.innerText.includes("LAST-LINE-MARKER") };
      })()`);
      expect(folded).toEqual({ shown: 7, marker: false });
    });
  });

  it("reads the same without JavaScript, without the controls", { timeout: 90_000 }, async () => {
    const file = await exported();
    await inPage(
      file,
      async (page) => {
        const seen = await page.evaluate<Record<string, unknown>>(`({
          controls: document.querySelectorAll(".controls").length,
          calls: document.querySelectorAll("main .call").length,
          denied: document.querySelector(".call.denied").innerText.includes("DENIED"),
          prompt: document.body.innerText.includes("List the files, read the notes, run the tests"),
          summary: document.querySelector("#summary").innerText.includes("4 (1 denied, 0 failed)"),
        })`);
        expect(seen).toEqual({ controls: 0, calls: 4, denied: true, prompt: true, summary: true });
      },
      false,
    );
  });

  it("runs no script and loads nothing the page does not hold, even one slipped into it", {
    timeout: 90_000,
  }, async () => {
    const file = await exported();
    const requests: string[] = [];
    const server = createServer((request, response) => {
      requests.push(request.url ?? "");
      response.end("x");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    track({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const { port } = server.address() as { port: number };
    const origin = `http://127.0.0.1:${port}`;
    // What a failure of escaping would let in, put right after the policy.
    const page = await readFile(file, "utf8");
    const slipped = `<script>document.title = "pwned"</script><script src="${origin}/script.js"></script><img src="${origin}/image.png"><link rel="stylesheet" href="${origin}/style.css"><style>body{background:url(${origin}/bg.png)}</style><iframe src="${origin}/frame"></iframe>`;
    const tampered = page.replace(
      /(<meta http-equiv="Content-Security-Policy"[^>]*>)/,
      `$1${slipped}`,
    );
    expect(tampered).not.toBe(page);
    await writeFile(file, tampered);
    await inPage(file, async (seen) => {
      expect(await seen.evaluate("document.title")).toBe("mini-agent session browser-demo");
      expect(await seen.evaluate("document.querySelectorAll('.controls').length")).toBe(1);
      expect(seen.messages.join("\n")).toContain("Content Security Policy");
    });
    expect(requests).toEqual([]);
  });
});
