import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer, request } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { until } from "./until.js";

/** The reference server's entry point (its `bin`), run with this Node: `node <bin> stdio`. */
export function everythingServer(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const { bin } = require(pkg) as { bin: Record<string, string> };
  return join(dirname(pkg), bin["mcp-server-everything"] ?? "");
}

/** A fault server of test/fixtures/mcp-fault-server.mjs, started as `node <script> <mode>`. */
export const faultServer = fileURLToPath(
  new URL("../fixtures/mcp-fault-server.mjs", import.meta.url),
);

/** A recorder around a stdio server: it logs every line the client sends (`mcp-recorder.mjs`). */
export const recorder = fileURLToPath(new URL("../fixtures/mcp-recorder.mjs", import.meta.url));

/** The JSON-RPC messages a recorder logged, in order. */
export async function recorded(log: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(log, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, "close");
  return port;
}

/** The reference server over Streamable HTTP on `port`, once it listens. */
export async function startEverything(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [everythingServer(), "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await until(() => stderr.includes("listening on port"));
  return child;
}

export interface RecordingProxy {
  url: string;
  /** The JSON-RPC messages clients posted, in order. */
  messages: Record<string, unknown>[];
  close(): Promise<void>;
}

/** A loopback proxy in front of an HTTP server that keeps every JSON body posted through it. */
export async function recordingProxy(target: string): Promise<RecordingProxy> {
  const messages: Record<string, unknown>[] = [];
  const { host, port } = new URL(target);
  const proxy = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const body = Buffer.concat(chunks);
      if (body.length > 0) {
        const parsed = JSON.parse(body.toString("utf8")) as unknown;
        for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
          messages.push(message as Record<string, unknown>);
        }
      }
      const forward = request(
        {
          host: host.replace(/:\d+$/, ""),
          port,
          path: incoming.url,
          method: incoming.method,
          headers: { ...incoming.headers, host },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forward.on("error", () => outgoing.destroy());
      forward.end(body);
    });
  });
  proxy.listen(0, "127.0.0.1");
  await once(proxy, "listening");
  const { port: own } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${own}${new URL(target).pathname}`,
    messages,
    close: async () => {
      proxy.closeAllConnections();
      proxy.close();
      await once(proxy, "close").catch(() => {});
    },
  };
}
