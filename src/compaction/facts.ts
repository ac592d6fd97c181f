import { headOf } from "../text.js";
import { checklist, type PlanItem, planOf } from "../tools/plan.js";
import type { Message, ToolCall } from "../types.js";
import type { Facts } from "./record.js";

/** The most entries each list of facts keeps (the most recent ones). */
export const factLimits = { filesRead: 200, filesChanged: 200, commands: 100, refused: 50 };
/** Characters kept of a command, an argument or a reason. */
const maxText = 200;

export const noFacts: Facts = {
  filesRead: [],
  filesChanged: [],
  commands: [],
  refused: [],
  omitted: 0,
};

/**
 * The facts the calls of `messages` and their results establish. Read from the receipts, never
 * from the model's words: a file counts as read or changed only when its tool returned without
 * error; a command's outcome is the status line `bash` ends its result with (`[exit code 1]`); a
 * call whose result is an error without such a line did not run or failed first (a denial, an
 * unknown tool, invalid input, an abort) and is listed with the first line of its result. The
 * plan is the one the last successful `plan` call set (`planOf`).
 */
export function factsOf(messages: readonly Message[]): Facts {
  const calls = new Map<string, ToolCall>();
  const facts: Facts = { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 };
  for (const message of messages) {
    if (message.role === "assistant")
      for (const call of message.toolCalls) calls.set(call.id, call);
    if (message.role !== "tool") continue;
    const call = calls.get(message.toolCallId);
    if (!call) continue;
    const path = typeof call.input.path === "string" ? call.input.path : undefined;
    if (call.name === "bash" && typeof call.input.command === "string") {
      const outcome = commandOutcome(message.content);
      if (outcome) {
        facts.commands.push({ command: headOf(call.input.command, maxText), outcome });
        continue;
      }
    }
    if (message.isError) {
      facts.refused.push({
        tool: call.name,
        argument: shortArgument(call),
        reason: headOf(firstLine(message.content), maxText),
      });
    } else if (call.name === "read" && path !== undefined) facts.filesRead.push(path);
    else if ((call.name === "write" || call.name === "edit") && path !== undefined)
      facts.filesChanged.push(path);
  }
  const plan = planOf(messages);
  return mergeFacts(noFacts, plan ? { ...facts, plan } : facts);
}

/**
 * `earlier` then `later`, each path listed once (at its latest place), every list bounded; the
 * plan is the later one's, else the earlier one's.
 */
export function mergeFacts(earlier: Facts, later: Facts): Facts {
  let omitted = earlier.omitted + later.omitted;
  const latest = later.plan ?? earlier.plan;
  const plan = latest && { plan: latest };
  const bound = <T>(list: T[], limit: number): T[] => {
    omitted += Math.max(0, list.length - limit);
    return list.slice(Math.max(0, list.length - limit));
  };
  return {
    filesRead: bound(latestOnce([...earlier.filesRead, ...later.filesRead]), factLimits.filesRead),
    filesChanged: bound(
      latestOnce([...earlier.filesChanged, ...later.filesChanged]),
      factLimits.filesChanged,
    ),
    commands: bound([...earlier.commands, ...later.commands], factLimits.commands),
    refused: bound([...earlier.refused, ...later.refused], factLimits.refused),
    omitted,
    ...plan,
  };
}

/**
 * The facts as the model reads them, every path and command JSON-quoted: a name holding a line
 * break cannot start a line of its own.
 */
export function renderFacts(facts: Facts): string {
  const list = (items: string[]) =>
    items.length === 0 ? "- none" : items.map((i) => `- ${i}`).join("\n");
  const quoted = (items: string[]) => items.map((item) => JSON.stringify(item));
  return [
    "Files read:",
    list(quoted(facts.filesRead)),
    "Files written or edited:",
    list(quoted(facts.filesChanged)),
    "Commands run (bash), with how they ended:",
    list(facts.commands.map((c) => `${JSON.stringify(c.command)}: ${c.outcome}`)),
    "Calls denied or failed before running:",
    list(
      facts.refused.map((r) => `${toolName(r.tool)} ${JSON.stringify(r.argument)}: ${r.reason}`),
    ),
    ...(facts.plan
      ? ["The plan, as the last plan call left it:", list(planLines(facts.plan))]
      : []),
    ...(facts.omitted > 0 ? [`(${facts.omitted} older entries left out)`] : []),
  ].join("\n");
}

/** `[x] "Read the code"`: each item on one line, its text JSON-quoted like every path. */
const planLines = (plan: readonly PlanItem[]) =>
  checklist(plan.map((item) => ({ ...item, text: JSON.stringify(item.text) })));

/** A tool name as is when it is a plain name, else quoted (the model may name tools that do not exist). */
const toolName = (name: string) => (/^[\w.-]+$/.test(name) ? name : JSON.stringify(name));

/** `exit 0`, `exit 2`, `exit signal SIGKILL`, `timed out`, `aborted`; undefined when it did not run. */
function commandOutcome(content: string): string | undefined {
  const statuses = [
    ...content.matchAll(/^\[(exit code [^\]\n]+|timed out[^\]\n]*|aborted:[^\]\n]*)\]$/gm),
  ];
  const status = statuses.at(-1)?.[1];
  if (status === undefined) return undefined;
  if (status.startsWith("exit code ")) return `exit ${status.slice("exit code ".length)}`;
  return status.startsWith("timed out") ? "timed out" : "aborted";
}

function shortArgument(call: ToolCall): string {
  const value = ["command", "path", "pattern"]
    .map((key) => call.input[key])
    .find((v) => typeof v === "string");
  return headOf(typeof value === "string" ? value : JSON.stringify(call.input), maxText);
}

const firstLine = (text: string) => text.trim().split("\n")[0] ?? "";

function latestOnce(items: string[]): string[] {
  const last = new Map<string, number>();
  for (const [index, item] of items.entries()) last.set(item, index);
  return items.filter((item, index) => last.get(item) === index);
}
