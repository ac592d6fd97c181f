/**
 * The Responses API's encrypted reasoning, kept in the history as a `redacted_thinking` part:
 * its `data` is this module's JSON text, `{"responses":MODEL,"id":"rs_…","encrypted_content":…}`,
 * opaque to everyone else and sent back only to the same API and model that wrote it. A part
 * from another model or another provider (an Anthropic redacted block is base64, never JSON) is
 * not sent; one of these is never sent to Anthropic, whose redacted blocks are its own.
 */

/** What goes back to the Responses API of one encrypted reasoning item. */
export interface EncryptedReasoning {
  id: string;
  encrypted_content: string;
}

/** The `data` of a `redacted_thinking` part for an item `model` wrote. */
export function responsesReasoningData(model: string, item: EncryptedReasoning): string {
  return JSON.stringify({
    responses: model,
    id: item.id,
    encrypted_content: item.encrypted_content,
  });
}

/** The item `data` holds, when the Responses API wrote it for `model`; else undefined. */
export function responsesReasoningFor(model: string, data: string): EncryptedReasoning | undefined {
  const parsed = parse(data);
  return parsed?.model === model ? parsed.item : undefined;
}

/** Whether `data` holds a Responses API item (for any model): no other provider takes it. */
export function isResponsesReasoning(data: string): boolean {
  return parse(data) !== undefined;
}

function parse(data: string): { model: string; item: EncryptedReasoning } | undefined {
  if (!data.startsWith("{")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { responses, id, encrypted_content } = value as Record<string, unknown>;
  if (typeof responses !== "string" || typeof id !== "string") return undefined;
  if (typeof encrypted_content !== "string") return undefined;
  return { model: responses, item: { id, encrypted_content } };
}
