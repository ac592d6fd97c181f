/**
 * What the CLI's bundle gives the SDKs in place of globals whose first use loads Node's fetch
 * stack or its web streams (esbuild `inject` and `define` in `scripts/bundle.mjs`): the SDKs
 * build every request's headers with `new Headers()`, and the CLI sends them with `httpFetch`.
 * They also ask whether a body is `instanceof FormData` or `instanceof globalThis.ReadableStream`;
 * the CLI sends neither (its bodies are JSON, its answers are read as async iterables), so no
 * value is an instance of these stand-ins.
 */
export { TransportHeaders as Headers } from "./http-transport.js";

export class FormData {
  constructor() {
    throw new Error("the CLI's HTTP transport sends no form data");
  }
}

export class NoReadableStream {
  constructor() {
    throw new Error("the CLI's HTTP transport uses no web streams");
  }
}
