/** The context window assumed for Claude models when `--context-window` is not given. */
export const claudeContextWindow = 200_000;

/**
 * `--context-window N`, else 200 000 for a model whose name says Claude, else none: then the
 * conversation is compacted for size only once the provider has refused a request as too long
 * and named its maximum.
 */
export function contextWindowFor(model: string, flag: number | undefined): number | undefined {
  return flag ?? (/claude/i.test(model) ? claudeContextWindow : undefined);
}

/** `/compact` or `/compact what to keep`: the instructions, or undefined when `line` is not it. */
export function compactCommand(line: string): { instructions: string } | undefined {
  const match = /^\/compact(?:\s+([\s\S]*))?$/.exec(line.trim());
  return match ? { instructions: match[1]?.trim() ?? "" } : undefined;
}
