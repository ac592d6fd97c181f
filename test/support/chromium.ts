import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { hasProgram } from "./programs.js";
import { until, watchdog } from "./until.js";

/**
 * A real headless Chromium (Debian's `chromium`), driven over the DevTools protocol on a pipe
 * (`--remote-debugging-pipe`: file descriptors 3 and 4, no port, no network). Its tests are
 * skipped where it is not installed, but not in CI (`hasChromium`): `.ci/run` installs it.
 */
export const hasChromium = () => hasProgram("chromium");

export function chromiumPath(): string {
  const found = spawnSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === "")
    throw new Error("chromium is not installed: apt-get install chromium (.ci/run installs it)");
  return path;
}

export interface BrowserPage {
  /** The value of a JavaScript expression in the page (awaited when it is a promise). */
  evaluate<T>(expression: string): Promise<T>;
  /** A PNG of the page's full height at the window's width. */
  screenshot(): Promise<Buffer>;
  /** Console messages, exceptions and log entries (CSP violations among them), as text. */
  messages: string[];
  close(): Promise<void>;
}

interface Reply {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

export interface PageOptions {
  width?: number;
  height?: number;
  /** Run the page's scripts (default); `false` reads it as a browser with JavaScript off. */
  javascript?: boolean;
}

/** Opens `url` in a fresh headless Chromium (its own profile) and waits for its load event. */
export async function openPage(url: string, options: PageOptions = {}): Promise<BrowserPage> {
  const { width = 1100, height = 900 } = options;
  const profile = await mkdtemp(join(tmpdir(), "mini-agent-chromium-"));
  const child = spawn(
    chromiumPath(),
    [
      "--headless",
      // Root (CI containers) cannot start Chromium's own sandbox; the page is ours.
      "--no-sandbox",
      "--disable-gpu",
      // Containers often give /dev/shm 64 MB, too little for a long page.
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--hide-scrollbars",
      `--window-size=${width},${height}`,
      `--user-data-dir=${profile}`,
      "--remote-debugging-pipe",
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
  );
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const waiting = new Map<number, (reply: Reply) => void>();
  const listeners: ((event: Reply) => void)[] = [];
  let buffered = "";
  fromBrowser.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let end = buffered.indexOf("\0"); end !== -1; end = buffered.indexOf("\0")) {
      const reply = JSON.parse(buffered.slice(0, end)) as Reply;
      buffered = buffered.slice(end + 1);
      if (reply.id !== undefined) waiting.get(reply.id)?.(reply);
      else for (const listener of listeners) listener(reply);
    }
  });
  let next = 0;
  const send = (method: string, params: object = {}, sessionId?: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = ++next;
      const disarm = watchdog(20_000, () =>
        reject(new Error(`chromium did not answer ${method}: ${stderr.slice(-500)}`)),
      );
      waiting.set(id, (reply) => {
        disarm();
        waiting.delete(id);
        if (reply.error) reject(new Error(`${method}: ${reply.error.message}`));
        else resolve(reply.result ?? {});
      });
      toBrowser.write(
        `${JSON.stringify({ id, method, params, ...(sessionId && { sessionId }) })}\0`,
      );
    });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const close = async () => {
    await send("Browser.close").catch(() => child.kill("SIGKILL"));
    await until(() => child.exitCode !== null || child.signalCode !== null, 5000).catch(() =>
      child.kill("SIGKILL"),
    );
    await exited;
    await rm(profile, { recursive: true, force: true });
  };

  try {
    const { targetId } = await send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = (await send("Target.attachToTarget", { targetId, flatten: true })) as {
      sessionId: string;
    };
    const call = (method: string, params: object = {}) => send(method, params, sessionId);
    const messages: string[] = [];
    listeners.push((event) => {
      if (event.sessionId !== sessionId) return;
      if (event.method === "Runtime.consoleAPICalled" || event.method === "Log.entryAdded")
        messages.push(JSON.stringify(event.params));
      if (event.method === "Runtime.exceptionThrown") messages.push(JSON.stringify(event.params));
    });
    await call("Page.enable");
    await call("Runtime.enable");
    await call("Log.enable");
    if (options.javascript === false)
      await call("Emulation.setScriptExecutionDisabled", { value: true });
    const loaded = new Promise<void>((resolve) =>
      listeners.push((event) => {
        if (event.sessionId === sessionId && event.method === "Page.loadEventFired") resolve();
      }),
    );
    await call("Page.navigate", { url });
    await loaded;
    return {
      messages,
      async evaluate<T>(expression: string): Promise<T> {
        const { result, exceptionDetails } = (await call("Runtime.evaluate", {
          expression,
          returnByValue: true,
          awaitPromise: true,
        })) as { result: { value: T }; exceptionDetails?: { text: string } };
        if (exceptionDetails) throw new Error(`in the page: ${exceptionDetails.text}`);
        return result.value;
      },
      async screenshot(): Promise<Buffer> {
        const { data } = (await call("Page.captureScreenshot", {
          format: "png",
          captureBeyondViewport: true,
        })) as { data: string };
        return Buffer.from(data, "base64");
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
