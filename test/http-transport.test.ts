import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { httpFetch, TransportHeaders } from "../src/providers/http-transport.js";
import type { ModelEvent } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import { until } from "./support/until.js";

const track = useCleanup();

/** A loopback server answering every request with `handle`; counts the connections it took. */
async function serve(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; connections: number; close(): Promise<void> }> {
  const server: Server = createServer(handle);
  const state = { url: "", connections: 0, close: async () => {} };
  server.on("connection", () => {
    state.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return track(state);
}

/** What a rejected promise rejected with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("it did not reject");
}

const causeCode = (error: unknown) => (error as { cause?: { code?: unknown } }).cause?.code;

describe("TransportHeaders", () => {
  it("behaves as the Fetch standard's Headers for every sequence of append, set and delete", () => {
    const name = fc.constantFrom("Content-Type", "content-type", "X-Api-Key", "accept", "ACCEPT");
    const value = fc.constantFrom("a", " b ", "c\t", "", "x, y");
    const op = fc.oneof(
      fc.tuple(fc.constant("append" as const), name, value),
      fc.tuple(fc.constant("set" as const), name, value),
      fc.tuple(fc.constant("delete" as const), name, fc.constant("")),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 12 }), (ops) => {
        const ours = new TransportHeaders();
        const theirs = new Headers();
        for (const [kind, n, v] of ops) {
          if (kind === "delete") {
            ours.delete(n);
            theirs.delete(n);
          } else {
            ours[kind](n, v);
            theirs[kind](n, v);
          }
        }
        expect([...ours]).toEqual([...theirs]);
        expect(["accept", "X-API-KEY"].map((n) => [ours.get(n), ours.has(n)])).toEqual(
          ["accept", "X-API-KEY"].map((n) => [theirs.get(n), theirs.has(n)]),
        );
        expect([...new TransportHeaders(theirs)]).toEqual([...new Headers(theirs)]);
      }),
    );
  });

  it("refuses a name or value a request could not carry, as Headers does", () => {
    expect(() => new TransportHeaders({ "bad name": "x" })).toThrow(TypeError);
    expect(() => new Headers({ "bad name": "x" })).toThrow(TypeError);
    expect(() => new TransportHeaders({ ok: "a\r\nInjected: yes" })).toThrow(TypeError);
    expect(() => new Headers({ ok: "a\r\nInjected: yes" })).toThrow(TypeError);
  });
});

describe("httpFetch", () => {
  it("sends the method, headers and body, and reads status, headers and text", async () => {
    const seen: { method?: string; headers?: IncomingMessage["headers"]; body?: string } = {};
    const server = await serve(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      Object.assign(seen, { method: req.method, headers: req.headers, body });
      res.writeHead(201, "Made", { "x-one": "1", "Set-Thing": "a" });
      res.end("é answer");
    });
    const response = await httpFetch(`${server.url}/v1/x?q=1`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Api-Key": "k" },
      body: '{"a":"é"}',
    });
    expect([response.status, response.statusText, response.ok, response.url]).toEqual([
      201,
      "Made",
      true,
      `${server.url}/v1/x?q=1`,
    ]);
    expect(response.headers.get("X-ONE")).toBe("1");
    expect(response.headers.get("set-thing")).toBe("a");
    expect(await response.text()).toBe("é answer");
    expect(seen.method).toBe("POST");
    expect(seen.body).toBe('{"a":"é"}');
    expect(seen.headers?.["content-type"]).toBe("application/json");
    expect(seen.headers?.["x-api-key"]).toBe("k");
    expect(seen.headers?.["content-length"]).toBe(String(Buffer.byteLength('{"a":"é"}')));
  });

  it("decodes a gzip body, as fetch does", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-encoding": "gzip", "content-type": "application/json" });
      res.end(gzipSync('{"ok":true}'));
    });
    expect(await (await httpFetch(server.url)).json()).toEqual({ ok: true });
  });

  it("stops reading a whole body past 16 MiB decoded: a gzip bomb is not expanded into memory", async () => {
    // 64 MiB of one letter, a few dozen kilobytes on the wire.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x61), { level: 9 });
    const server = await serve((_req, res) => {
      res.writeHead(400, { "content-encoding": "gzip", "content-type": "application/json" });
      res.end(bomb);
    });
    const error = await rejection((await httpFetch(server.url)).text());
    expect(error).toEqual(new Error("the response body is over 16 MiB; it was not read"));
  });

  it("rejects with TypeError('fetch failed') and the system error as cause when nothing listens", async () => {
    const server = await serve(() => {});
    const url = server.url;
    await server.close();
    const error = await rejection(httpFetch(url));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe("fetch failed");
    expect(causeCode(error)).toBe("ECONNREFUSED");
  });

  it("ends the body with TypeError('terminated') when the connection is lost mid-body", async () => {
    let drop = () => {};
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      drop = () => res.socket?.destroy();
    });
    const response = await httpFetch(server.url);
    // Lost once the client has the answer's head: mid-body.
    drop();
    const error = await rejection(response.text());
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe("terminated");
    expect(causeCode(error)).toBe("ECONNRESET");
  });

  it("rejects with the signal's reason on an abort before the answer, and ends the body on one after", async () => {
    let asked = false;
    const server = await serve((req, res) => {
      asked = true;
      if (req.url === "/slow") return;
      res.writeHead(200);
      res.write("partial");
    });
    const early = new AbortController();
    const pending = httpFetch(`${server.url}/slow`, { signal: early.signal });
    // Once the server has the request, which it never answers.
    await until(() => asked);
    early.abort();
    const error = await rejection(pending);
    expect(error).toBe(early.signal.reason);

    const late = new AbortController();
    const response = await httpFetch(server.url, { signal: late.signal });
    const reading = rejection(response.text());
    late.abort();
    expect(await reading).toBe(late.signal.reason);
  });

  it("closes the connection when the body is cancelled through its iterator", async () => {
    let closed = false;
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.write("first");
      res.on("close", () => {
        closed = true;
      });
    });
    const response = await httpFetch(server.url);
    const body = (response.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    expect(Buffer.from((await body.next()).value ?? []).toString()).toBe("first");
    await body.return?.();
    await until(() => closed);
  });

  it("hands an event stream on whole events at a time, whatever its line endings", async () => {
    const events = [
      "event: a\ndata: 1\n\n",
      "data: 2\r\n\r\n",
      "data: 3\r\r",
      "data: 4\n\r\n",
      "data: tail",
    ];
    const text = events.join("");
    const ends = events.map((_, i) => events.slice(0, i + 1).join("").length);
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      // Pieces of 3 bytes, each sent once the one before is out, so that most reads end
      // inside a line or an ending.
      const pieces = text.match(/.{1,3}/gs) ?? [];
      const next = () => {
        const piece = pieces.shift();
        if (piece === undefined) return void res.end();
        res.write(piece, () => setImmediate(next));
      };
      next();
    });
    const response = await httpFetch(server.url);
    let received = "";
    for await (const piece of response.body as unknown as AsyncIterable<Uint8Array>) {
      received += Buffer.from(piece).toString();
      // A piece may stop between the CR and the LF of an event's last ending, when the read
      // did: a CR may always be followed by LF, and the SDKs wait for the byte after it.
      const cut = received.endsWith("\r") && text[received.length] === "\n";
      expect(ends).toContain(received.length + (cut ? 1 : 0));
    }
    expect(received).toBe(text);
  });

  it("refuses a protocol other than http and https", async () => {
    const error = await rejection(httpFetch("ftp://127.0.0.1/"));
    expect((error as Error).message).toBe("fetch failed");
  });
});

describe("the Anthropic adapter over httpFetch", () => {
  it("tries a refused connection again as the SDK does, then fails with a connection error", async () => {
    const server = await serve((req) => req.socket.destroy());
    const client = new AnthropicModelClient({
      apiKey: "k",
      model: "m",
      baseURL: server.url,
      maxRetries: 2,
      fetch: httpFetch,
    });
    const events: ModelEvent[] = [];
    const error = await rejection(
      (async () => {
        for await (const event of client.stream({ system: "", messages: [], tools: [] }))
          events.push(event);
      })(),
    );
    expect(error).toMatchObject({ name: "ProviderError", kind: "connection" });
    expect(((error as Error).cause as Error).name).toBe("APIConnectionError");
    expect(events).toEqual([]);
    expect(server.connections).toBe(3);
  }, 20_000);
});
