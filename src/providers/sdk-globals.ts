/**
 * What the CLI's bundle gives the SDKs in place of globals whose first use loads Node's fetch
 * stack (esbuild `inject` in `scripts/bundle.mjs`): the SDKs build every request's headers with
 * `new Headers()`, and the CLI sends them with `httpFetch`. They also ask whether a body is
 * `instanceof FormData`; the CLI never sends one, so no value is an instance of this stand-in.
 */
export { TransportHeaders as Headers } from "./http-transport.js";

export class FormData {
  constructor() {
    throw new Error("the CLI's HTTP transport sends no form data");
  }
}
