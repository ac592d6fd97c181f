import * as acp from "@agentclientprotocol/sdk";
import { editorCommands, type ListedCommand } from "../app/commands.js";
import { compactCommand } from "../app/compaction.js";
import { describeError } from "../app/errors.js";
import { UsageError } from "../app/exit.js";
import { modeCommand } from "../app/modes.js";
import { compactedLine } from "../app/notices.js";
import type { AcpSession } from "./session.js";

type Notify = (update: acp.SessionUpdate) => Promise<unknown>;

/**
 * The commands an editor offers after `/`: the built-ins with an effect in an editor (`/compact`,
 * `/mode`), then the user's. `/rewind` is not among them: an editor has no way to be told where
 * the conversation was cut. Each takes what is typed after its name.
 */
export function commandsUpdate(session: AcpSession): acp.SessionUpdate {
  const listed = [...editorCommands, ...session.agent.commands.listed()];
  return { sessionUpdate: "available_commands_update", availableCommands: listed.map(available) };
}

function available({ name, description, hint }: ListedCommand): acp.AvailableCommand {
  return { name, description, ...(hint !== undefined && { input: { hint } }) };
}

/** The names the last update listed, per session, to send another only when they changed. */
const sentLists = new WeakMap<AcpSession, string>();

/** Sends the editor the session's commands when they are not what it was sent last. */
export async function sendCommands(session: AcpSession, notify: Notify): Promise<void> {
  const update = commandsUpdate(session);
  const key = JSON.stringify(update);
  if (sentLists.get(session) === key) return;
  sentLists.set(session, key);
  await notify(update);
}

/**
 * A prompt that is one of the built-ins an editor can run, run: `/compact [what to keep]`
 * compacts the conversation now and says so (or why not, in the answer: nothing changed);
 * `/mode [NAME]` says the mode, or switches to NAME
 * (and tells the editor the current mode). Undefined for any other prompt.
 */
export async function builtInPrompt(
  session: AcpSession,
  text: string,
  signal: AbortSignal,
  notify: Notify,
): Promise<acp.StopReason | undefined> {
  const say = (line: string) =>
    notify({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: line } });
  const compact = compactCommand(text);
  if (compact) {
    let said = Promise.resolve<unknown>(undefined);
    try {
      await session.agent.runner.compact(compact.instructions || undefined, {
        signal,
        onEvent: (event) => {
          if (event.type === "compaction") said = say(compactedLine(event.compaction));
        },
      });
    } catch (error) {
      if (signal.aborted) return "cancelled";
      // As at the terminal: one line says why, and the session goes on as it was.
      said = say(`mini-agent: ${describeError(error, undefined)}`);
    }
    await said;
    return "end_turn";
  }
  const mode = /^\/mode(?:\s+(\S*))?\s*$/.exec(text.trim());
  if (!mode) return undefined;
  const { mode: state } = session.agent;
  const before = state.current;
  const line = modeCommand(state, mode[1] ?? "");
  if (state.current !== before)
    await notify({ sessionUpdate: "current_mode_update", currentModeId: state.current });
  await say(line);
  return "end_turn";
}

/** The prompt a user's command stands for, else the text as it is; a bad command's file is the request's error. */
export async function userCommandPrompt(session: AcpSession, text: string): Promise<string> {
  try {
    return (await session.agent.commands.prompt(text)) ?? text;
  } catch (error) {
    if (error instanceof UsageError) throw acp.RequestError.invalidParams(undefined, error.message);
    throw error;
  }
}
