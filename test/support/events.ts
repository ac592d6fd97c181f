import type { ModelEvent } from "../../src/types.js";

/** Every event a stream state machine yields, and the error that ended it, if one did. */
export async function collect(
  events: AsyncIterable<ModelEvent>,
): Promise<{ out: ModelEvent[]; error: Error | undefined }> {
  const out: ModelEvent[] = [];
  try {
    for await (const event of events) out.push(event);
    return { out, error: undefined };
  } catch (error) {
    return { out, error: error as Error };
  }
}

/** Call ids for a parser under test: `taken` ones, and fresh ones numbered `gen_0`, `gen_1`, … */
export function testIds(taken: string[] = []): { taken: Set<string>; newId: () => string } {
  let n = 0;
  return { taken: new Set(taken), newId: () => `gen_${n++}` };
}

/** A thrown error as the CLI reads it. */
export const shapeOf = (error: Error | undefined) =>
  error && {
    name: error.name,
    type: (error as Error & { type?: unknown }).type,
    message: error.message,
  };
