import { createServer } from "node:net";
import { APIError as AnthropicAPIError } from "@anthropic-ai/sdk/core/error";
import { APIConnectionError, APIError as OpenAIAPIError } from "openai";
import { describe, expect, it } from "vitest";
import { describeError } from "../src/app/errors.js";
import { AnthropicModelClient } from "../src/providers/anthropic.js";
import { OpenAIModelClient } from "../src/providers/openai.js";
import { OpenAIResponsesModelClient } from "../src/providers/openai-responses.js";
import { errorKindOf, ProviderError } from "../src/providers/provider-error.js";
import * as anthropic from "../src/testing/anthropic-server.js";
import * as openai from "../src/testing/openai-server.js";
import * as responses from "../src/testing/responses-server.js";
import type { Reply, ReplyScript } from "../src/testing/sse-server.js";
import type { ModelClient } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";

/**
 * Whatever an adapter's SDK throws (an HTTP error status, an error event in the middle of a
 * stream, a refused connection, a dropped or stalled stream), the adapter throws one
 * `ProviderError` with the same normalised fields, made against each protocol's strict server.
 */

const track = useCleanup();

type Provider = "anthropic" | "openai" | "openai-responses";

/** The client of `provider` against `url`, with no SDK retries and a short idle limit. */
function clientFor(provider: Provider, url: string, timeout = 60_000): ModelClient {
  const common = { model: "local-model", maxRetries: 0, idleTimeout: 200, timeout };
  switch (provider) {
    case "anthropic":
      return new AnthropicModelClient({ apiKey: "test-key-not-real", baseURL: url, ...common });
    case "openai":
      return new OpenAIModelClient({ baseURL: `${url}/v1`, ...common });
    case "openai-responses":
      return new OpenAIResponsesModelClient({ baseURL: `${url}/v1`, ...common });
  }
}

async function serve(provider: Provider, script: ReplyScript[], contextLimit?: number) {
  const options = contextLimit === undefined ? {} : { contextLimit };
  switch (provider) {
    case "anthropic":
      return track(await anthropic.startAnthropicServer(script, options));
    case "openai":
      return track(await openai.startOpenAIServer(script, options));
    case "openai-responses":
      return track(await responses.startResponsesServer(script));
  }
}

/** What one request to `client` throws. */
async function failureOf(client: ModelClient, content = "hi"): Promise<unknown> {
  try {
    for await (const _ of client.stream({
      system: "",
      messages: [{ role: "user", content }],
      tools: [],
    }));
  } catch (error) {
    return error;
  }
  throw new Error("the request did not fail");
}

/** The normalised fields of a `ProviderError`, or what else was thrown. */
function fieldsOf(error: unknown) {
  if (!(error instanceof ProviderError)) return error;
  const { name, provider, kind, status, type, code, retryable, retryAfterMs, tooLong } = error;
  const { message, providerMessage } = error;
  return {
    ...{ name, provider, kind, status, type, code, message, providerMessage },
    ...{ retryable, retryAfterMs, tooLong },
  };
}

interface Fields {
  kind: string;
  status: number | undefined;
  type: string | undefined;
  code: string | undefined;
  message: string;
  providerMessage: string;
  retryable: boolean;
  retryAfterMs: number | undefined;
  tooLong: { tokens?: number; maximum?: number } | undefined;
}

/**
 * The whole set of fields expected of `provider`'s error: `rest` over the defaults; its message
 * is the provider's, unless `rest` says otherwise.
 */
function fields(provider: Provider, rest: Partial<Fields>) {
  const defaults: Fields = {
    kind: "status",
    status: undefined,
    type: undefined,
    code: undefined,
    message: "",
    providerMessage: "",
    retryable: false,
    retryAfterMs: undefined,
    tooLong: undefined,
  };
  const message = rest.message ?? rest.providerMessage ?? "";
  return { name: "ProviderError", provider, ...defaults, message, ...rest };
}

/** A TCP server on 127.0.0.1 that answers each request with `answer`, or never when undefined. */
async function rawServer(answer: string | undefined): Promise<{ url: string; close(): void }> {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    if (answer !== undefined) socket.once("data", () => socket.end(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => {
      server.close();
      server.unref();
    },
  };
}

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

const oneTurn: Record<Provider, () => ReplyScript> = {
  anthropic: () => anthropic.turn({ text: ["Partial", " answer"] }),
  openai: () => openai.completion({ text: ["Partial", " answer"] }),
  "openai-responses": () => responses.response({ text: ["Partial", " answer"] }),
};

/** Each protocol's stream of one turn with a fault. */
const streamWith: Record<Provider, (faults: Record<string, number>) => Reply> = {
  anthropic: (faults) => anthropic.stream(anthropic.turn({ text: ["Partial", " answer"] }), faults),
  openai: (faults) => openai.stream(openai.completion({ text: ["Partial", " answer"] }), faults),
  "openai-responses": (faults) =>
    responses.stream(responses.response({ text: ["Partial", " answer"] }), faults),
};

const providers: Provider[] = ["anthropic", "openai", "openai-responses"];

describe.each(providers)("the %s adapter's failures", (provider) => {
  it("throws a 4xx as a ProviderError that is not retried, the SDK's error as its cause", async () => {
    const reply: Record<Provider, Reply> = {
      anthropic: anthropic.status(
        400,
        undefined,
        "messages: text content blocks must be non-empty",
      ),
      openai: openai.status(400, "messages: text content blocks must be non-empty"),
      "openai-responses": responses.status(400, "messages: text content blocks must be non-empty"),
    };
    const server = await serve(provider, [reply[provider]]);
    const error = await failureOf(clientFor(provider, server.url));
    expect(fieldsOf(error)).toEqual(
      fields(provider, {
        status: 400,
        type: "invalid_request_error",
        message: "400 messages: text content blocks must be non-empty",
        providerMessage: "messages: text content blocks must be non-empty",
      }),
    );
    const sdkError = provider === "anthropic" ? AnthropicAPIError : OpenAIAPIError;
    expect((error as Error).cause).toBeInstanceOf(sdkError);
  });

  it("throws a 5xx or an overload as a retryable ProviderError, with the wait the server asked", async () => {
    const reply: Record<Provider, Reply> = {
      anthropic: anthropic.status(529, 2),
      openai: openai.status(500, "The server had an error while processing your request"),
      "openai-responses": responses.status(503, "The service is unavailable"),
    };
    const server = await serve(provider, [reply[provider]]);
    const error = await failureOf(clientFor(provider, server.url));
    const byProvider: Record<Provider, Partial<Fields>> = {
      anthropic: {
        status: 529,
        type: "overloaded_error",
        message: "529 Overloaded",
        providerMessage: "Overloaded",
        retryAfterMs: 2000,
      },
      openai: {
        status: 500,
        type: "server_error",
        message: "500 The server had an error while processing your request",
        providerMessage: "The server had an error while processing your request",
      },
      "openai-responses": {
        status: 503,
        type: "server_error",
        message: "503 The service is unavailable",
        providerMessage: "The service is unavailable",
      },
    };
    expect(fieldsOf(error)).toEqual(fields(provider, { ...byProvider[provider], retryable: true }));
  });

  it("throws an error event in the middle of the stream as a ProviderError of kind stream", async () => {
    const server = await serve(provider, [streamWith[provider]({ errorAfter: 4 })]);
    const error = await failureOf(clientFor(provider, server.url));
    const byProvider: Record<Provider, Partial<Fields>> = {
      anthropic: { type: "overloaded_error", providerMessage: "Overloaded" },
      openai: {
        type: "server_error",
        providerMessage: "The server had an error while processing your request",
      },
      "openai-responses": {
        type: "server_error",
        providerMessage: "The server had an error processing your request. Sorry about that!",
      },
    };
    expect(fieldsOf(error)).toEqual(
      fields(provider, { kind: "stream", ...byProvider[provider], retryable: true }),
    );
  });

  it("throws a refusal of a prompt too long as a ProviderError that says so, with the sizes", async () => {
    const tooLong: Reply = {
      kind: "status",
      status: 400,
      body: {
        error: {
          message: openai.contextTooLong(130_001, 128_000),
          type: "invalid_request_error",
          param: "input",
          code: "context_length_exceeded",
        },
      },
    };
    const limit = provider === "openai-responses" ? undefined : 100;
    const script = provider === "openai-responses" ? [tooLong] : [oneTurn[provider]()];
    const server = await serve(provider, script, limit);
    const error = await failureOf(clientFor(provider, server.url), "x".repeat(2000));
    const tokens = anthropic.bodyTokens(server.requests[0]?.body ?? {});
    const byProvider: Record<Provider, Partial<Fields>> = {
      anthropic: {
        message: `400 ${anthropic.promptTooLong(tokens, 100)}`,
        providerMessage: anthropic.promptTooLong(tokens, 100),
        tooLong: { tokens, maximum: 100 },
      },
      openai: {
        code: "context_length_exceeded",
        message: `400 ${openai.contextTooLong(tokens, 100)}`,
        providerMessage: openai.contextTooLong(tokens, 100),
        tooLong: { tokens, maximum: 100 },
      },
      "openai-responses": {
        code: "context_length_exceeded",
        message: `400 ${openai.contextTooLong(130_001, 128_000)}`,
        providerMessage: openai.contextTooLong(130_001, 128_000),
        tooLong: { tokens: 130_001, maximum: 128_000 },
      },
    };
    expect(fieldsOf(error)).toEqual(
      fields(provider, { status: 400, type: "invalid_request_error", ...byProvider[provider] }),
    );
  });

  it("throws a refused connection as a ProviderError of kind connection, not retried", async () => {
    const error = await failureOf(clientFor(provider, `http://127.0.0.1:${await closedPort()}`));
    expect(fieldsOf(error)).toEqual(
      fields(provider, { kind: "connection", providerMessage: "Connection error." }),
    );
    expect((error as Error).cause).toBeInstanceOf(
      provider === "anthropic" ? AnthropicAPIError : APIConnectionError,
    );
  });

  it("throws an answer that is not HTTP and a timeout before the headers as ProviderErrors, not retried", async () => {
    const contradiction =
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n";
    const notHTTP = track(await rawServer(contradiction));
    expect(fieldsOf(await failureOf(clientFor(provider, notHTTP.url)))).toEqual(
      fields(provider, {
        kind: "invalid-http",
        providerMessage: "HPE_UNEXPECTED_CONTENT_LENGTH",
      }),
    );
    const silent = track(await rawServer(undefined));
    expect(fieldsOf(await failureOf(clientFor(provider, silent.url, 300)))).toEqual(
      fields(provider, { kind: "timeout", providerMessage: "Request timed out." }),
    );
  });

  it("throws a connection dropped mid-stream and a stalled stream as retryable ProviderErrors", async () => {
    const server = await serve(provider, [
      streamWith[provider]({ dropAfter: 3 }),
      streamWith[provider]({ stallAfter: 3 }),
    ]);
    const dropped = fieldsOf(await failureOf(clientFor(provider, server.url)));
    expect(dropped).toEqual(
      fields(provider, { kind: "dropped", providerMessage: "terminated", retryable: true }),
    );
    expect(fieldsOf(await failureOf(clientFor(provider, server.url)))).toEqual(
      fields(provider, {
        kind: "stalled",
        providerMessage: "the model stream stalled: no event for 0.2 s",
        retryable: true,
      }),
    );
  });
});

describe("the hint for a refused key", () => {
  const refusedKey: Record<Provider, Reply> = {
    anthropic: anthropic.status(401, undefined, "invalid x-api-key"),
    openai: {
      kind: "status",
      status: 401,
      body: {
        error: {
          message: "Incorrect API key provided",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      },
    },
    "openai-responses": {
      kind: "status",
      status: 401,
      body: {
        error: {
          message: "Incorrect API key provided",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      },
    },
  };
  const lines: Record<Provider, string> = {
    anthropic:
      "provider error 401 authentication_error: invalid x-api-key (check the API key (ANTHROPIC_API_KEY))",
    openai:
      "provider error 401 invalid_request_error: Incorrect API key provided (check the API key (OPENAI_API_KEY))",
    "openai-responses":
      "provider error 401 invalid_request_error: Incorrect API key provided (check the API key (OPENAI_API_KEY))",
  };

  it.each(providers)("names only the variable of %s", async (provider) => {
    const server = await serve(provider, [refusedKey[provider]]);
    const error = await failureOf(clientFor(provider, server.url));
    expect(describeError(error, undefined, {})).toBe(lines[provider]);
  });

  it("names the provider's variable for an authentication error in the middle of a stream", () => {
    const streamed = (provider: Provider) =>
      new ProviderError({
        provider,
        kind: "stream",
        type: "authentication_error",
        providerMessage: "invalid x-api-key",
      });
    expect(describeError(streamed("anthropic"), undefined, {})).toBe(
      "provider error authentication_error: invalid x-api-key (check the API key (ANTHROPIC_API_KEY))",
    );
    expect(describeError(streamed("openai-responses"), undefined, {})).toBe(
      "provider error authentication_error: invalid x-api-key (check the API key (OPENAI_API_KEY))",
    );
  });
});

describe("ProviderError across copies of the package", () => {
  it("recognises an error made by another copy of the class, and nothing that only looks like one", async () => {
    const built = (await import(
      new URL("../dist/providers/provider-error.js", import.meta.url).href
    )) as { ProviderError: typeof ProviderError };
    expect(built.ProviderError).not.toBe(ProviderError);
    const other = new built.ProviderError({
      provider: "openai",
      kind: "stream",
      type: "server_error",
      providerMessage: "down",
    });
    expect(other instanceof ProviderError).toBe(true);
    expect(describeError(other, undefined, {})).toBe(
      "provider error server_error: down (the answer stopped mid-stream; try again)",
    );
    const lookalike = Object.assign(new Error("down"), { name: "ProviderError", kind: "stream" });
    expect(lookalike instanceof ProviderError).toBe(false);
  });
});

describe("errorKindOf", () => {
  const failure = (init: Partial<ConstructorParameters<typeof ProviderError>[0]>) =>
    new ProviderError({ provider: "anthropic", kind: "status", providerMessage: "m", ...init });

  it("names each failure in one word, a 429 and a 529 apart, and finds it behind a wrapping error", () => {
    const kinds = [
      failure({ status: 429, type: "rate_limit_error" }),
      failure({ kind: "stream", type: "rate_limit_error" }),
      failure({ status: 529, type: "overloaded_error" }),
      failure({ kind: "stream", type: "overloaded_error" }),
      failure({ status: 401, type: "authentication_error" }),
      failure({ status: 403, type: "permission_error" }),
      failure({ status: 400, providerMessage: "prompt is too long: 10 tokens > 5 maximum" }),
      failure({ status: 500, type: "api_error" }),
      failure({ status: 404, type: "not_found_error" }),
      failure({ kind: "stop", stop: "max_tokens" }),
      failure({ kind: "connection" }),
      failure({ kind: "dropped" }),
      new Error("compaction failed", { cause: failure({ status: 429 }) }),
      new Error("a tool threw"),
    ].map(errorKindOf);
    expect(kinds).toEqual([
      "rate_limited",
      "rate_limited",
      "overloaded",
      "overloaded",
      "auth",
      "auth",
      "too_long",
      "server",
      "refused",
      "model_stop",
      "network",
      "network",
      "rate_limited",
      "other",
    ]);
  });
});
