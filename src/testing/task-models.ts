import { type Reply, status, type TurnScript, turn } from "./anthropic-server.js";
import { type Body, stream } from "./sse-server.js";

/**
 * A model per task, for checking a task set with no real model (`mini-agent batch` with
 * `"model"` set on each line): each request is answered from the rounds of the model it names,
 * the round chosen by the conversation itself (the number of assistant messages it holds), so
 * many conversations may run at once, and an attempt run again starts from the first round.
 *
 * - An **oracle** is a model whose rounds apply a task's known solution (write its files, say
 *   done), as Harbor's oracle agent runs a task's `solution/`: every task's check must pass.
 * - The **null** model (`NULL_MODEL`, unless the map names its own) changes nothing and answers
 *   once: no task's check may pass. A task set where the oracle fails a task, or the null model
 *   passes one, has a broken checker.
 */
export const NULL_MODEL = "null";

const nullRounds: TurnScript[] = [{ text: "I leave the workspace as it is." }];

/** The reply for each request, from the rounds of its model; a model not in `models` is a 404. */
export function taskModels(models: Readonly<Record<string, TurnScript[]>>): (body: Body) => Reply {
  return (body) => {
    const model = typeof body.model === "string" ? body.model : "";
    const rounds = Object.hasOwn(models, model)
      ? models[model]
      : model === NULL_MODEL
        ? nullRounds
        : undefined;
    if (rounds === undefined) return status(404, undefined, `model: ${model}`);
    const messages = Array.isArray(body.messages) ? (body.messages as { role?: unknown }[]) : [];
    const round = messages.filter((message) => message.role === "assistant").length;
    const script = rounds[round];
    if (script === undefined) {
      return status(
        500,
        undefined,
        `test server: model ${model} has no round ${round + 1} (it has ${rounds.length})`,
      );
    }
    return stream(turn(script));
  };
}

/**
 * The rounds of an oracle that writes `files` (path → content, relative to the workspace): it
 * reads each first (the `write` tool refuses to replace a file the model has not read; a file
 * that does not exist yet is an error the model is told, and harmless), writes them all in one
 * round, then says it is done.
 */
export function oracleRounds(files: Readonly<Record<string, string>>): TurnScript[] {
  const paths = Object.keys(files);
  const reads = paths.map((path, at) => ({
    id: `toolu_read_${at + 1}`,
    name: "read",
    input: { path },
  }));
  const writes = paths.map((path, at) => ({
    id: `toolu_write_${at + 1}`,
    name: "write",
    input: { path, content: files[path] },
  }));
  return [{ calls: reads }, { calls: writes }, { text: "The known solution is in place." }];
}
