import { type ChildProcess, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { connect, createServer as createNetServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import {
  response,
  stream as responsesStream,
  startResponsesServer,
} from "../src/testing/responses-server.js";
import { useCleanup } from "./support/cleanup.js";
import { cliEnv, runBin, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";
import { sampleEvery, watchdog } from "./support/until.js";

const setup = useCliSetup();
const tempDir = useTempDirs();
const track = useCleanup();

/** A self-signed certificate for 127.0.0.1, made for the test by the openssl command. */
async function selfSigned(dir: string): Promise<{ key: string; cert: string; certFile: string }> {
  const keyFile = join(dir, "key.pem");
  const certFile = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"],
      ...["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
      ...["-keyout", keyFile, "-out", certFile],
    ],
    { stdio: "ignore" },
  );
  return { key: await readFile(keyFile, "utf8"), cert: await readFile(certFile, "utf8"), certFile };
}

/** HTTPS in front of a plain HTTP server: TLS ends here, the bytes go on to `port`. */
async function tlsFront(
  port: number,
  key: string,
  cert: string,
): Promise<{ url: string; close(): void }> {
  const server: Server = createTlsServer({ key, cert }, (secure) => {
    const plain = connect(port, "127.0.0.1");
    secure.pipe(plain).pipe(secure);
    const end = () => {
      secure.destroy();
      plain.destroy();
    };
    secure.on("error", end);
    plain.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `https://127.0.0.1:${address.port}`, close: () => server.close() };
}

/**
 * A loopback server that answers each connection, once its request has arrived, with `answer`
 * writing raw bytes to the socket: whatever a broken server may send.
 */
async function rawServer(
  answer: (socket: Socket) => void,
): Promise<{ url: string; connections: number; close(): void }> {
  const sockets = new Set<Socket>();
  const state = { url: "", connections: 0, close: () => {} };
  const server = createNetServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.once("data", () => answer(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  state.url = `http://127.0.0.1:${address.port}`;
  state.close = () => {
    for (const socket of sockets) socket.destroy();
    server.close();
  };
  return state;
}

/**
 * Watches a process: kills it once its resident memory is over `limit` bytes (read every 20 ms)
 * or once it has run 10 s, and says which (`killed`).
 */
function watch(
  child: ChildProcess,
  limit: number,
): { readonly killed: "memory" | "time" | undefined; stop(): void } {
  const state: { killed: "memory" | "time" | undefined; stop(): void } = {
    killed: undefined,
    stop: () => {},
  };
  const kill = (why: "memory" | "time") => {
    state.killed ??= why;
    child.kill("SIGKILL");
  };
  const disarm = watchdog(10_000, () => kill("time"));
  const stop = sampleEvery(20, () => {
    let status = "";
    try {
      status = readFileSync(`/proc/${child.pid}/status`, "utf8");
    } catch {
      return; // Gone.
    }
    if (Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024 > limit) kill("memory");
  });
  state.stop = () => {
    stop();
    disarm();
  };
  return state;
}

describe("the CLI's HTTP transport", () => {
  it("runs a turn without loading Node's fetch stack (undici)", async () => {
    const { options, home } = await setup([stream(turn({ text: ["Hello."] }))]);
    const probe = join(home, "probe.mjs");
    const out = join(home, "modules.txt");
    await writeFile(
      probe,
      `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`,
    );
    const run = await runBin(["hi"], {
      ...options,
      env: { ...options.env, NODE_OPTIONS: `--import=${probe}` },
    });
    expect(run).toEqual({ code: 0, stdout: "Hello.\n", stderr: "" });
    const loaded = (await readFile(out, "utf8")).split("\n");
    expect(loaded).toContain("NativeModule http");
    expect(loaded.filter((name) => name.includes("undici"))).toEqual([]);
  }, 20_000);

  it("runs a Responses API turn without loading Node's fetch stack either", async () => {
    const server = track(
      await startResponsesServer([responsesStream(response({ text: ["Hi."] }))]),
    );
    const home = await tempDir();
    const probe = join(home, "probe.mjs");
    const out = join(home, "modules.txt");
    await writeFile(
      probe,
      `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`,
    );
    const env = { ...cliEnv(home, server.url), OPENAI_BASE_URL: `${server.url}/v1` };
    const run = await runBin(["--provider", "openai-responses", "-m", "gpt-5.5", "hi"], {
      cwd: home,
      env: { ...env, NODE_OPTIONS: `--import=${probe}` },
    });
    expect(run).toEqual({ code: 0, stdout: "Hi.\n", stderr: "" });
    const loaded = (await readFile(out, "utf8")).split("\n");
    expect(loaded).toContain("NativeModule http");
    expect(loaded.filter((name) => name.includes("undici"))).toEqual([]);
  }, 20_000);

  it("connects straight to the base URL whatever HTTP_PROXY and HTTPS_PROXY say, as Node 20's fetch does", async () => {
    const { server, options } = await setup([stream(turn({ text: ["Direct."] }))]);
    const dead = "http://127.0.0.1:9";
    const env = { ...options.env, HTTP_PROXY: dead, HTTPS_PROXY: dead, http_proxy: dead };
    expect(await runBin(["hi"], { ...options, env })).toEqual({
      code: 0,
      stdout: "Direct.\n",
      stderr: "",
    });
    expect(server.requests).toHaveLength(1);
  }, 20_000);

  it("talks HTTPS to a server whose certificate NODE_EXTRA_CA_CERTS trusts, and refuses it otherwise", async () => {
    const { server, options } = await setup([stream(turn({ text: ["Over TLS."] }))]);
    const { key, cert, certFile } = await selfSigned(await tempDir());
    const front = track(await tlsFront(Number(new URL(server.url).port), key, cert));
    const env = { ...options.env, ANTHROPIC_BASE_URL: front.url };

    const untrusted = await runBin(["hi"], { ...options, env });
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toBe(
      `mini-agent: could not reach ${front.url} (Connection error): check --base-url and the network\n`,
    );
    expect(server.requests).toHaveLength(0);

    const trusted = await runBin(["hi"], {
      ...options,
      env: { ...env, NODE_EXTRA_CA_CERTS: certFile },
    });
    expect(trusted).toEqual({ code: 0, stdout: "Over TLS.\n", stderr: "" });
    expect(server.requests).toHaveLength(1);
  }, 30_000);

  it.each([
    [
      "a 200 kB header",
      `HTTP/1.1 200 OK\r\nX-Big: ${"a".repeat(200_000)}\r\n\r\n`,
      "Header overflow",
    ],
    [
      "both Transfer-Encoding and Content-Length",
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "Content-Length can't be present with Transfer-Encoding",
    ],
  ])(
    "says a server answering with %s did not answer in valid HTTP",
    async (_, bytes, reason) => {
      const server = track(await rawServer((socket) => socket.end(bytes)));
      const home = await tempDir();
      const run = await runBin(["hi"], { cwd: home, env: cliEnv(home, server.url) });
      expect(run).toEqual({
        code: 1,
        stdout: "",
        stderr: `mini-agent: ${server.url} did not answer in valid HTTP (${reason}): check --base-url\n`,
      });
    },
    20_000,
  );

  // A server-sent event longer than 64 MiB is no provider's: the longest real ones carry one
  // tool call's whole input, a few MB at most. Without a bound, the SDKs' parsers hold the event
  // whole: Anthropic's as one string until V8 refuses it (512 MiB), OpenAI's as bytes it copies
  // and searches again for every piece that arrives.
  it.each([
    ["one line (Messages API)", "event: message_start\r\ndata: ", "a", []],
    ["many lines (Chat Completions)", "", "data: x\n", ["--provider", "openai", "--model", "m"]],
    [
      "one line (Responses API)",
      "event: response.output_text.delta\ndata: ",
      "a",
      ["--provider", "openai-responses", "--model", "m"],
    ],
  ])(
    "ends the turn in one line when a server-sent event of %s goes on past 64 MiB, its memory bounded",
    async (_, start, line, flags) => {
      const chunk = Buffer.from(line.repeat(2 ** 20 / line.length));
      let written = 0;
      const server = track(
        await rawServer((socket) => {
          socket.write(
            `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n${start}`,
          );
          // One event without end, never held here: at most 1 GiB in all.
          const more = () => {
            while (!socket.destroyed && written < 2 ** 30) {
              written += chunk.length;
              if (!socket.write(chunk)) return void socket.once("drain", more);
            }
            socket.end();
          };
          more();
        }),
      );
      const home = await tempDir();
      const env = {
        ...cliEnv(home, server.url),
        OPENAI_API_KEY: "sk-test-key-0123456789",
        OPENAI_BASE_URL: server.url,
      };
      let watched: ReturnType<typeof watch> | undefined;
      const run = await runBin([...flags, "hi"], {
        cwd: home,
        env,
        started: (child) => {
          watched = watch(child, 400 * 2 ** 20);
        },
      });
      watched?.stop();
      expect(watched?.killed).toBeUndefined();
      expect(run).toEqual({
        code: 1,
        stdout: "",
        stderr: `mini-agent: a server-sent event from ${new URL(server.url).host} is over 64 MiB: the answer was not read further\n`,
      });
      expect(server.connections).toBe(1);
      expect(written).toBeLessThan(2 ** 30);
    },
    20_000,
  );

  it("ends the turn in one line when a round's events together go on past 64 MiB, its memory bounded", async () => {
    const delta = (text: string) =>
      `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: text } })}\n\n`;
    const chunk = Buffer.from(delta("x".repeat(2 ** 20)));
    let written = 0;
    const server = track(
      await rawServer((socket) => {
        const start = [
          `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } })}\n\n`,
          `event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } })}\n\n`,
        ].join("");
        socket.write(
          `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n${start}`,
        );
        const more = () => {
          while (!socket.destroyed && written < 2 ** 30) {
            written += chunk.length;
            if (!socket.write(chunk)) return void socket.once("drain", more);
          }
          socket.end();
        };
        more();
      }),
    );
    const home = await tempDir();
    let watched: ReturnType<typeof watch> | undefined;
    const run = await runBin(["hi"], {
      cwd: home,
      env: cliEnv(home, server.url),
      started: (child) => {
        watched = watch(child, 400 * 2 ** 20);
      },
    });
    watched?.stop();
    expect(watched?.killed).toBeUndefined();
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: `mini-agent: the answer from ${new URL(server.url).host} is over 64 MiB in one round: it was not read further\n`,
    });
    expect(server.connections).toBe(1);
    expect(written).toBeLessThan(2 ** 30);
  }, 30_000);
});
