import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";

/**
 * A `fetch` for the official SDKs over `node:http` and `node:https`, so that a run never loads
 * Node's own fetch stack (undici, its web streams and the modules they pull in), which costs about
 * as much as starting Node itself. It does what the SDKs ask of `fetch`, and no more:
 *
 * - the request: a method, `Headers` (or a plain record of them), a string or byte body, and an
 *   abort signal;
 * - the response: `ok`, `status`, `statusText`, `url`, `headers`, `text()`, `json()`, and `body`
 *   as an async iterable of bytes (the SDKs read a body through `Symbol.asyncIterator` when it has
 *   one, and cancel it through the iterator's `return`);
 * - failures as Node's fetch reports them, so the SDKs' retries and the CLI's messages stay the
 *   same: a connection that cannot be made rejects with `TypeError("fetch failed")` and the system
 *   error as its `cause`; a connection lost mid-body throws `TypeError("terminated")` the same way;
 *   an abort rejects, or ends the body, with the signal's reason.
 *
 * HTTPS goes through Node's global agent: the system's and `NODE_EXTRA_CA_CERTS`' authorities are
 * trusted, as with Node's fetch. Like Node 20's fetch, it does not use `HTTP(S)_PROXY`. It does not
 * follow redirects (the APIs do not redirect; a 3xx reaches the SDK as an error) and accepts only
 * `identity` and `gzip`/`deflate`/`br` encodings (decoded, as fetch does).
 */
export const httpFetch = (async (
  input: string | URL | { url: string },
  init: TransportInit = {},
): Promise<TransportResponse> => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const request =
    url.protocol === "https:"
      ? (await import("node:https")).request
      : url.protocol === "http:"
        ? httpRequest
        : undefined;
  if (request === undefined) throw new TypeError("fetch failed", { cause: unsupported(url) });
  const body = bodyBytes(init.body);
  const headers: OutgoingHttpHeaders = { "accept-encoding": "gzip, deflate, br" };
  for (const [name, value] of new TransportHeaders(init.headers)) headers[name] = value;
  if (body !== undefined) headers["content-length"] = String(body.length);

  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", headers, signal });
    req.on("response", resolve);
    req.on("error", (error) =>
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error })),
    );
    req.end(body);
  });
  return new TransportResponse(url.href, response, signal);
}) as unknown as typeof fetch;

/** Headers as `fetch` takes them: a `Headers`, `[name, value]` pairs or a record. */
type HeaderPairs = Iterable<readonly [string, string]> | Record<string, string>;

/** What `httpFetch` reads of a `RequestInit`. */
interface TransportInit {
  method?: string;
  headers?: HeaderPairs;
  body?: unknown;
  signal?: AbortSignal | null;
}

function bodyBytes(body: unknown): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError("this transport sends only string and byte bodies");
}

function unsupported(url: URL): Error {
  return new Error(`unsupported protocol ${url.protocol} in ${url.origin}`);
}

/**
 * The part of the Fetch standard's `Headers` the SDKs use: names case-insensitive (kept in lower
 * case), values trimmed, appended values joined with `, `, iteration in name order. The CLI's
 * bundle gives it to the SDKs in place of the global `Headers`, whose first use loads undici.
 */
export class TransportHeaders implements Iterable<[string, string]> {
  private readonly map = new Map<string, string>();

  constructor(init?: HeaderPairs | null) {
    if (init === undefined || init === null) return;
    const pairs: Iterable<readonly [string, string]> =
      Symbol.iterator in init
        ? (init as Iterable<readonly [string, string]>)
        : Object.entries(init);
    for (const pair of pairs) {
      if (pair.length !== 2) throw new TypeError("a header is a [name, value] pair");
      this.append(pair[0], pair[1]);
    }
  }

  append(name: string, value: string): void {
    const key = headerName(name);
    const text = headerValue(value);
    const old = this.map.get(key);
    this.map.set(key, old === undefined ? text : `${old}, ${text}`);
  }

  set(name: string, value: string): void {
    this.map.set(headerName(name), headerValue(value));
  }

  get(name: string): string | null {
    return this.map.get(headerName(name)) ?? null;
  }

  has(name: string): boolean {
    return this.map.has(headerName(name));
  }

  delete(name: string): void {
    this.map.delete(headerName(name));
  }

  forEach(callback: (value: string, name: string, headers: this) => void): void {
    for (const [name, value] of this) callback(value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    const names = [...this.map.keys()].sort();
    for (const name of names) yield [name, this.map.get(name) ?? ""];
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function headerName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`invalid header name: ${JSON.stringify(text)}`);
  return text.toLowerCase();
}

function headerValue(value: string): string {
  const text = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (/[\0\r\n]/.test(text)) throw new TypeError(`invalid header value: ${JSON.stringify(text)}`);
  return text;
}

/** The most of a body `text()` reads: far above any error or JSON answer of a provider. */
const MAX_TEXT_BYTES = 16 * 1024 * 1024;

/** The response the SDKs read; see `httpFetch`. */
class TransportResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers = new TransportHeaders();
  readonly body: AsyncIterableIterator<Uint8Array>;

  constructor(
    readonly url: string,
    message: IncomingMessage,
    signal: AbortSignal | undefined,
  ) {
    this.status = message.statusCode ?? 0;
    this.statusText = message.statusMessage ?? "";
    this.ok = this.status >= 200 && this.status < 300;
    const raw = message.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) this.headers.append(raw[i] ?? "", raw[i + 1] ?? "");
    const body = bodyOf(message, this.headers.get("content-encoding"), signal);
    const type = this.headers.get("content-type")?.toLowerCase() ?? "";
    this.body = type.startsWith("text/event-stream") ? wholeEvents(body, new URL(url).host) : body;
  }

  /**
   * The whole body as text, for an error or a JSON answer; stops past `MAX_TEXT_BYTES` decoded,
   * so a compressed body that expands without end (a gzip bomb) is never held in memory.
   */
  async text(): Promise<string> {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of this.body) {
      size += chunk.length;
      if (size > MAX_TEXT_BYTES) {
        await this.body.return?.();
        throw new Error("the response body is over 16 MiB; it was not read");
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString("utf8");
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

/**
 * The bytes of a response, decoded, as one iterator: `return` (the SDKs' cancel) closes the
 * connection; a lost connection throws `TypeError("terminated")`, an abort the signal's reason.
 */
function bodyOf(
  message: IncomingMessage,
  encoding: string | null,
  signal: AbortSignal | undefined,
): AsyncIterableIterator<Uint8Array> {
  const onAbort = () => message.destroy(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  let source: AsyncIterator<Uint8Array> | undefined;
  const start = async (): Promise<AsyncIterator<Uint8Array>> => {
    if (source) return source;
    const decoded = await decoder(message, encoding);
    source = decoded[Symbol.asyncIterator]();
    return source;
  };
  const finish = () => {
    signal?.removeEventListener("abort", onAbort);
    message.destroy();
  };
  const iterator: AsyncIterableIterator<Uint8Array> = {
    async next() {
      try {
        const result = await (await start()).next();
        if (result.done) finish();
        return result;
      } catch (error) {
        finish();
        if (signal?.aborted) throw signal.reason;
        throw new TypeError("terminated", { cause: error });
      }
    },
    async return() {
      finish();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/** The body decoded as `content-encoding` says; zlib is loaded only for an encoded body. */
async function decoder(
  message: IncomingMessage,
  encoding: string | null,
): Promise<AsyncIterable<Uint8Array>> {
  const name = encoding?.trim().toLowerCase() ?? "identity";
  if (name === "identity" || name === "") return message;
  const zlib = await import("node:zlib");
  const make = {
    gzip: zlib.createGunzip,
    "x-gzip": zlib.createGunzip,
    deflate: zlib.createInflate,
    br: zlib.createBrotliDecompress,
  }[name];
  if (make === undefined) throw new Error(`unsupported content-encoding ${name}`);
  const stream = make();
  message.on("error", (error) => stream.destroy(error));
  return message.pipe(stream);
}

/**
 * The most of one server-sent event the transport holds. The longest real events carry one tool
 * call's whole input, a few MB at most; past this, the stream is not a provider's, and the SDKs'
 * parsers would hold it whole (as one string, which V8 refuses at 512 MiB, or as bytes they copy
 * again for every piece that arrives).
 */
const MAX_EVENT_BYTES = 64 * 1024 * 1024;
/**
 * The most one round's streamed answer may hold, all its events together: a real answer (even
 * 128k tokens of thinking) is a few MB; past this, text or thinking built up from small deltas
 * would grow until V8 refuses the string, and the run dies instead of failing in one line.
 */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
const LF = 0x0a;
const CR = 0x0d;

/**
 * An event stream's bytes handed on whole events at a time: each piece but the last ends with a
 * blank line, so the SDKs' parsers, which copy or search all they hold for each piece they get,
 * do each event's work once. An event that goes on past `MAX_EVENT_BYTES`, or events that
 * together go past `MAX_ANSWER_BYTES`, end the body with an error naming `host`; nothing of the
 * round is committed, so the session stays valid. `return` (the SDKs' cancel) closes the
 * connection, as on `body`.
 */
function wholeEvents(
  body: AsyncIterableIterator<Uint8Array>,
  host: string,
): AsyncIterableIterator<Uint8Array> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let total = 0;
  let last = 0;
  const iterator: AsyncIterableIterator<Uint8Array> = {
    async next() {
      for (;;) {
        if (heldBytes > MAX_EVENT_BYTES) {
          held = [];
          await body.return?.();
          throw new Error(
            `a server-sent event from ${host} is over 64 MiB: the answer was not read further`,
          );
        }
        if (total > MAX_ANSWER_BYTES) {
          held = [];
          await body.return?.();
          throw new Error(
            `the answer from ${host} is over 64 MiB in one round: it was not read further`,
          );
        }
        const result = await body.next();
        if (result.done) {
          if (heldBytes === 0) return result;
          const rest = Buffer.concat(held);
          held = [];
          heldBytes = 0;
          return { done: false, value: rest };
        }
        const chunk = Buffer.from(
          result.value.buffer,
          result.value.byteOffset,
          result.value.length,
        );
        total += chunk.length;
        const end = eventsEnd(last, chunk);
        last = chunk.at(-1) ?? last;
        if (end === 0) {
          held.push(chunk);
          heldBytes += chunk.length;
          continue;
        }
        const events = chunk.subarray(0, end);
        const value = heldBytes === 0 ? events : Buffer.concat([...held, events]);
        held = end < chunk.length ? [chunk.subarray(end)] : [];
        heldBytes = chunk.length - end;
        return { done: false, value };
      }
    },
    async return() {
      held = [];
      heldBytes = 0;
      return (await body.return?.()) ?? { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/**
 * Where the last blank line of `chunk` ends (0: it has none), `previous` being the byte before it.
 * Lines end with CR LF, LF or CR, so a blank line is two line endings in a row, and every such
 * pair holds LF LF, CR CR or LF CR (CR LF alone is one ending).
 */
function eventsEnd(previous: number, chunk: Buffer): number {
  const end = Math.max(
    chunk.lastIndexOf("\n\n"),
    chunk.lastIndexOf("\r\r"),
    chunk.lastIndexOf("\n\r"),
  );
  // CR then LF is one ending: a pair ending with CR takes the LF after it.
  if (end !== -1) return chunk[end + 1] === CR && chunk[end + 2] === LF ? end + 3 : end + 2;
  const first = chunk[0];
  const pair =
    (previous === LF && (first === LF || first === CR)) || (previous === CR && first === CR);
  if (!pair) return 0;
  return first === CR && chunk[1] === LF ? 2 : 1;
}
