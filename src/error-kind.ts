import { type Static, Type } from "@sinclair/typebox";

/**
 * A failure in one word, for a program that decides what to do next (a batch that pauses its
 * starts, a script that stops on a dead key): `rate_limited` (429, `rate_limit_error`) and
 * `overloaded` (529, `overloaded_error`) apart, since one is the caller's quota and the other the
 * provider's load; `auth` (401, 403); `too_long` (the context window); `server` (another 5xx or
 * passing error); `network` (no connection, no answer, a dropped or stalled stream, not HTTP);
 * `refused` (another 4xx); `model_stop` (the output limit or a refusal); `other`: no failure of
 * the provider (a tool or a hook that threw, a file that could not be written). Made from an
 * error by `errorKindOf` (`providers/provider-error.ts`); the session's `retry` records and the
 * stream-json `retry` and `result` lines carry it.
 */
export const ErrorKindSchema = Type.Union([
  Type.Literal("rate_limited"),
  Type.Literal("overloaded"),
  Type.Literal("auth"),
  Type.Literal("too_long"),
  Type.Literal("server"),
  Type.Literal("network"),
  Type.Literal("refused"),
  Type.Literal("model_stop"),
  Type.Literal("other"),
]);
export type ErrorKind = Static<typeof ErrorKindSchema>;
