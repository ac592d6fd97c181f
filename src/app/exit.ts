/**
 * Exit codes, documented in docs/cli.md. A run stopped from outside exits 128 + the signal's
 * number, as a shell reports it: Ctrl-C (SIGINT) 130, SIGHUP 129, SIGTERM 143, and 141 (SIGPIPE)
 * when the reader of stdout went away.
 */
export const exitCodes = {
  done: 0,
  error: 1,
  usage: 2,
  maxTurns: 3,
  compactionFailed: 4,
  budgetExceeded: 5,
  hangup: 129,
  interrupted: 130,
  outputClosed: 141,
  terminated: 143,
} as const;

/** A mistake in how mini-agent was called or configured: one line, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
