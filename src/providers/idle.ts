/** A stream that went quiet for longer than the idle limit; the round committed nothing. */
export class StreamStalledError extends Error {
  override readonly name = "StreamStalledError";
}

/**
 * Passes events through; if none arrives for `ms` while waiting for one, aborts `controller`
 * (ending the request) and throws. SDK timeouts cover only the response headers; this covers
 * a stream that goes quiet after them.
 */
export async function* failWhenIdle<T>(
  events: AsyncIterable<T>,
  ms: number,
  controller: AbortController,
): AsyncGenerator<T> {
  let stalled = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      stalled = true;
      controller.abort();
    }, ms);
  };
  try {
    arm();
    for await (const event of events) {
      clearTimeout(timer);
      yield event;
      arm();
    }
  } finally {
    clearTimeout(timer);
  }
  if (stalled)
    throw new StreamStalledError(`the model stream stalled: no event for ${ms / 1000} s`);
}

/** An AbortController that follows `signal`, and a function to detach it. */
export function linkedController(signal: AbortSignal | undefined): [AbortController, () => void] {
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal?.addEventListener("abort", abort, { once: true });
  if (signal?.aborted) abort();
  return [
    controller,
    () => {
      signal?.removeEventListener("abort", abort);
      abort();
    },
  ];
}
