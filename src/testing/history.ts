import { historyProblem } from "../history/valid.js";
import type { Message } from "../types.js";

export { historyProblem };

/**
 * Throws when `messages` is a history a provider would refuse: a call without its one result, a
 * result for no open call, a repeated call id, or a first message that is not the user's. The
 * rule is `historyProblem`, the one the library checks its own requests with.
 */
export function assertValidHistory(messages: readonly Message[]): void {
  const problem = historyProblem(messages);
  if (problem !== undefined) throw new Error(`invalid history: ${problem}`);
}
