import type { Message, ToolSpec } from "../types.js";

/**
 * Token estimates without a tokenizer: one token per 4 characters of what a request carries
 * (texts, tool inputs as JSON, tool results, the model's thinking with its signatures, the system
 * prompt, the tool specs as JSON), plus a
 * few tokens of framing per message. Providers count differently; `CompactingClient` measures
 * against what the provider reported for the last request and scales its estimates up when the
 * provider counted more.
 */
export const charsPerToken = 4;
const framingPerMessage = 4;

export function textTokens(text: string): number {
  return Math.ceil(text.length / charsPerToken);
}

export function messageTokens(message: Message): number {
  switch (message.role) {
    case "user":
    case "tool":
      return framingPerMessage + textTokens(message.content);
    case "assistant": {
      let chars = message.content.length;
      for (const call of message.toolCalls)
        chars += call.id.length + call.name.length + JSON.stringify(call.input).length;
      for (const part of message.reasoning ?? [])
        chars +=
          part.type === "thinking"
            ? part.text.length + (part.signature?.length ?? 0)
            : part.data.length;
      return framingPerMessage + Math.ceil(chars / charsPerToken);
    }
  }
}

export function messagesTokens(messages: readonly Message[], from = 0, to = messages.length) {
  let total = 0;
  for (let i = from; i < to; i++) total += messageTokens(messages[i] as Message);
  return total;
}

export function requestTokens(request: {
  system: string;
  messages: readonly Message[];
  tools: readonly ToolSpec[];
}): number {
  return (
    textTokens(request.system) +
    textTokens(request.tools.length > 0 ? JSON.stringify(request.tools) : "") +
    messagesTokens(request.messages)
  );
}
