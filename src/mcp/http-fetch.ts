/**
 * The `fetch` the Streamable HTTP transport uses, with the two bounds stdio has by its own
 * transport: one message at most `maxMessageBytes` (an SSE event, or a JSON body, that grows past
 * it ends the response and calls `tooLarge`), and no response read on for a request the client
 * cancelled (a call that timed out or was aborted: its `notifications/cancelled` also ends the
 * response that would carry its answer), so a server cannot keep feeding a call nobody waits for.
 */

type Fetch = typeof fetch;

export function boundedFetch(maxMessageBytes: number, tooLarge: () => void, inner: Fetch = fetch) {
  /** The response of each request in flight, by JSON-RPC id, to end when it is cancelled. */
  const live = new Map<string | number, AbortController>();
  return async (input: Parameters<Fetch>[0], init?: RequestInit): Promise<Response> => {
    const messages = messagesOf(init?.body);
    for (const message of messages) {
      if (message.method === "notifications/cancelled") {
        const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
        if (typeof id === "string" || typeof id === "number") live.get(id)?.abort();
      }
    }
    const ids = messages
      .filter((message) => message.method !== undefined && message.id !== undefined)
      .map((message) => message.id as string | number);
    const controller = new AbortController();
    const signal = init?.signal
      ? AbortSignal.any([init.signal, controller.signal])
      : controller.signal;
    for (const id of ids) live.set(id, controller);
    const done = () => {
      for (const id of ids) if (live.get(id) === controller) live.delete(id);
    };
    let response: Response;
    try {
      response = await inner(input, { ...init, signal });
    } catch (error) {
      done();
      throw error;
    }
    if (response.body === null) {
      done();
      return response;
    }
    const events = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    const bounded = response.body.pipeThrough(
      messageBound(maxMessageBytes, events, () => {
        controller.abort();
        tooLarge();
      }),
    );
    const { status, statusText, headers } = response;
    return new Response(finished(bounded, done), { status, statusText, headers });
  };
}

interface Message {
  method?: unknown;
  id?: unknown;
  params?: unknown;
}

function messagesOf(body: unknown): Message[] {
  if (typeof body !== "string") return [];
  try {
    const parsed: unknown = JSON.parse(body);
    const all = Array.isArray(parsed) ? parsed : [parsed];
    return all.filter((item): item is Message => typeof item === "object" && item !== null);
  } catch {
    return [];
  }
}

/**
 * Passes bytes through while no message is over `limit`: in an event stream, the bytes since the
 * last blank line (the end of an event); in any other body, all of it. Past it, the stream fails.
 */
function messageBound(
  limit: number,
  events: boolean,
  over: () => void,
): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  let tail = new Uint8Array(0);
  return new TransformStream({
    transform(chunk, controller) {
      size += chunk.length;
      if (events) {
        const seen = new Uint8Array(tail.length + chunk.length);
        seen.set(tail);
        seen.set(chunk, tail.length);
        const end = lastBlankLine(seen);
        if (end >= 0) size = seen.length - end;
        tail = seen.slice(-2);
      }
      if (size > limit) {
        over();
        const mb = Math.round(limit / 1024 / 1024);
        controller.error(new Error(`the server sent a message larger than ${mb} MB`));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

/** The index just past the last `\n\n` (or `\n\r\n`) in `bytes`, or -1. */
function lastBlankLine(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i > 0; i--) {
    if (bytes[i] !== 10) continue;
    if (bytes[i - 1] === 10) return i + 1;
    if (bytes[i - 1] === 13 && i > 1 && bytes[i - 2] === 10) return i + 1;
  }
  return -1;
}

/** `stream`, calling `done` once it ends, fails or is cancelled. */
function finished(
  stream: ReadableStream<Uint8Array>,
  done: () => void,
): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  return new ReadableStream({
    async pull(controller) {
      try {
        const { value, done: ended } = await reader.read();
        if (ended) {
          done();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    async cancel(reason) {
      done();
      await reader.cancel(reason);
    },
  });
}
