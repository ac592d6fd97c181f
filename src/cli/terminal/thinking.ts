/**
 * How the terminal shows the model's reasoning: collected while it streams and shown once the
 * reasoning of the round is over (its answer or a call begins), as one block that `show` draws
 * (dimmed and folded, see `terminal-view.ts`). A round lost and run again drops what it thought.
 * Hidden (`--hide-thinking`), it collects nothing; a pipe never gets it (the terminal view alone
 * uses this).
 */
export function thinkingView(show: ((text: string) => void) | undefined) {
  let pending = "";
  return {
    add(text: string): void {
      if (show) pending += text;
    },
    /** Forgets the thinking not yet shown: its round was lost and runs again. */
    drop(): void {
      pending = "";
    },
    end(): void {
      const text = pending.trim();
      pending = "";
      if (text !== "") show?.(text);
    },
  };
}
