import { readFile } from "node:fs/promises";
import { parseLine } from "../session/records.js";
import type { Message, ModelEvent } from "../types.js";
import { FakeClient } from "./fake-client.js";

/**
 * A scripted client that answers with the assistant rounds of a recorded session file, in order:
 * each round's text, then its calls, then `done`. Run the same task again (with other tools or
 * another policy) and see what they do with the model's recorded moves. It records the requests
 * it receives and throws when the recording runs out, as `FakeClient` does. Lines a crash tore
 * are skipped, as loading a session skips them.
 */
export async function replaySession(file: string): Promise<FakeClient> {
  const lines = (await readFile(file, "utf8")).split("\n");
  const rounds = lines
    .flatMap((line) => parseLine(line).records)
    .flatMap((record) => (record.type === "message" ? [record.message] : []))
    .filter(
      (message): message is Extract<Message, { role: "assistant" }> => message.role === "assistant",
    )
    .map((message): ModelEvent[] => [
      ...(message.content === "" ? [] : [{ type: "text" as const, text: message.content }]),
      ...message.toolCalls.map((call) => ({ type: "tool_call" as const, call })),
      { type: "done" },
    ]);
  return new FakeClient(rounds);
}
