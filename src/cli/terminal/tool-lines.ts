import { monotonicMs } from "../../clock.js";
import { changeDiff } from "../../render/diff.js";
import { headOf } from "../../text.js";
import { checklist, type PlanItem } from "../../tools/plan.js";
import type { Message, ToolCall } from "../../types.js";
import { visible } from "../../visible.js";
import type { TerminalTurn } from "../output.js";
import { elapsed } from "./activity.js";

type ToolMessage = Message & { role: "tool" };

/** Lines of a command's output kept at its end, below the count of the hidden ones. */
const bashTailLines = 4;

/**
 * The tool calls of a turn on the terminal: each declared call is running until its result
 * comes; then its line is shown with its duration, and under it a diff (a successful edit or
 * write) or its folded output (bash's with its last lines too).
 */
export class ToolLines {
  private readonly calls = new Map<string, ToolCall>();
  private readonly started = new Map<string, number>();
  private readonly running = new Set<string>();

  constructor(private readonly view: TerminalTurn) {}

  declared(calls: readonly ToolCall[]): void {
    for (const call of calls) {
      this.calls.set(call.id, call);
      this.running.add(call.id);
    }
  }

  start(call: ToolCall): void {
    this.started.set(call.id, monotonicMs());
  }

  /** Shows a result under its call's line; true when no call of the round still runs. */
  result(result: ToolMessage): boolean {
    const { view } = this;
    const style = view.styles;
    const call = this.calls.get(result.toolCallId);
    const start = this.started.get(result.toolCallId);
    const took = start === undefined ? "" : style.dim(` · ${elapsed(monotonicMs() - start)}`);
    const mark = result.isError ? style.failed("✗") : style.ok("✓");
    const diff = call && !result.isError ? changeDiff(call, result.content) : undefined;
    // The plan a call set is shown whole by the `plan` event that follows.
    const planSet = call?.name === "plan" && !result.isError;
    const below = diff
      ? view.diff(diff)
      : planSet
        ? ""
        : view.folded(
            toolOutput(call, result),
            call?.name === "bash" ? { tail: bashTailLines } : {},
          );
    view.err(`${toolLine(call, result, mark)}${took}\n${below}`);
    this.running.delete(result.toolCallId);
    return this.running.size === 0;
  }
}

/** `  ✓ read src/a.ts` or `  ✗ bash npm test: exit code 1`: tool, short argument, outcome. */
export function toolLine(call: ToolCall | undefined, result: ToolMessage, mark?: string): string {
  const name = call?.name ?? "tool";
  const argument = call ? shortArgument(call.input) : "";
  const head = `  ${mark ?? (result.isError ? "✗" : "✓")} ${visible(name)}${argument ? ` ${argument}` : ""}`;
  if (!result.isError) return head;
  return `${head}: ${clip(visible(reasonLine(name, result)), 120)}`;
}

/** bash ends its result with its status; every other tool says why it failed first. */
function reasonLine(name: string, result: ToolMessage): string {
  const lines = result.content.trim().split("\n");
  return (name === "bash" ? lines.at(-1) : lines[0]) ?? "";
}

/** What the terminal shows of a result under its line: all of it but the reason the line shows. */
function toolOutput(call: ToolCall | undefined, result: ToolMessage): string {
  if (!result.isError) return result.content;
  const lines = result.content.trim().split("\n");
  return (call?.name === "bash" ? lines.slice(0, -1) : lines.slice(1)).join("\n");
}

/**
 * The model's plan as the terminal shows it when it changes, on resume and after a rewind: one
 * line per item (`    [x] Read the code`), each through `visible`; `(empty plan)` for none.
 */
export function planLines(items: readonly PlanItem[]): string {
  const lines = items.length === 0 ? ["(empty plan)"] : checklist(items);
  return lines.map((line) => `    ${visible(line)}\n`).join("");
}

/** The argument a tool line shows: a command, a path or a pattern, on one line and cut. */
export function shortArgument(input: Record<string, unknown>): string {
  const value = ["command", "path", "pattern"]
    .map((key) => input[key])
    .find((v) => typeof v === "string");
  return typeof value === "string" ? clip(visible(value.replace(/[ \t]+/g, " ")), 60) : "";
}

const clip = (text: string, max: number) =>
  text.length > max ? `${headOf(text, max - 1)}…` : text;
