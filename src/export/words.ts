import type { LoadedSkill } from "../session/records.js";
import { headOf } from "../text.js";
import type { ToolCall, Usage } from "../types.js";
import type { BashChanged, CallBlock, SkillUse, Totals } from "./blocks.js";

/** The words both formats use, so an HTML page and a Markdown review say the same things. */

const number = (n: number) => Math.round(n).toLocaleString("en-US");
const plural = (n: number, word: string, many = `${word}s`) =>
  `${number(n)} ${n === 1 ? word : many}`;

/**
 * A request whose usage no answer follows in the file. That is what a compaction's summary request
 * leaves, but also a round whose answer line was torn: the file cannot tell which, so neither is said.
 */
export const answerlessUsageWords =
  "Request with no answer in the file (the summary of a compaction, or an answer lost)";

/**
 * `1,234 input · 56 output, 30 of them reasoning · 1,000 cache read tokens`: cache and reasoning
 * counts only when reported.
 */
export function usageWords(usage: Usage): string {
  const reasoning =
    usage.reasoningTokens === undefined
      ? ""
      : `, ${number(usage.reasoningTokens)} of them reasoning`;
  const parts = [
    `${number(usage.inputTokens)} input`,
    `${number(usage.outputTokens)} output${reasoning}`,
  ];
  if (usage.cacheReadTokens !== undefined)
    parts.push(`${number(usage.cacheReadTokens)} cache read`);
  if (usage.cacheWriteTokens !== undefined)
    parts.push(`${number(usage.cacheWriteTokens)} cache write`);
  return `${parts.join(" · ")} tokens`;
}

/** What the header's sandbox value meant for bash; an unknown value is shown as it is. */
export function sandboxWords(sandbox: string | undefined): string {
  if (sandbox === undefined) return "not recorded (a session from before it was)";
  const known: Record<string, string> = {
    bwrap: "bubblewrap: bash could write only the workspace and had no network",
    off: "off: bash ran without a sandbox (--sandbox off)",
    unavailable: "unavailable: bash ran without a sandbox",
    "required-unavailable": "required but unavailable: bash was refused",
    "unused (bash denied)": "unused: bash was denied",
  };
  return known[sandbox] ?? sandbox;
}

/** Who decided on a call, beside its mark: `by no-terminal` (denied), `allowed by user`. */
export function decisionWords(approval: CallBlock["approval"]): string {
  if (!approval) return "";
  return `${approval.approved ? "allowed " : ""}by ${approval.by}`;
}

/** How a call ended: `denied`, `error`, `no result`, or `ok`. */
export function outcomeOf(block: CallBlock): "denied" | "error" | "missing" | "ok" {
  if (block.approval?.approved === false) return "denied";
  if (!block.result) return "missing";
  return block.result.isError ? "error" : "ok";
}

export const outcomeWords = {
  denied: "denied",
  error: "error",
  missing: "no result",
  ok: "",
} as const;

export const missingResultWords =
  "No result recorded: the session ended before this call reported one.";

const ARGUMENT_KEYS = ["command", "path", "pattern"];

/** The argument a call is known by (a command, a path, a pattern): its first line, clipped. */
export function argumentOf(call: ToolCall): string {
  const value = ARGUMENT_KEYS.map((key) => call.input[key]).find((v) => typeof v === "string");
  if (typeof value !== "string") return "";
  const line = value.split("\n")[0] ?? "";
  const more = line !== value || line.length > 100;
  return more ? `${headOf(line, 100)}…` : line;
}

/**
 * The input as a reader wants it: pretty JSON; nothing when the argument beside the call's name
 * already shows all of it (`{ "path": "a.ts" }`) or it is empty.
 */
export function inputText(call: ToolCall): string {
  const keys = Object.keys(call.input);
  const [only] = keys;
  if (keys.length === 0) return "";
  const shownWhole =
    only !== undefined && ARGUMENT_KEYS.includes(only) && call.input[only] === argumentOf(call);
  if (keys.length === 1 && shownWhole) return "";
  return JSON.stringify(call.input, null, 2);
}

/** Text longer than this is folded (HTML `<details>`, closed until opened). */
const FOLD_LINES = 30;
const FOLD_CHARACTERS = 3000;

export function isLong(text: string): boolean {
  if (text.length > FOLD_CHARACTERS) return true;
  let lines = 1;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1))
    if (++lines > FOLD_LINES) return true;
  return false;
}

/** `240 lines, 9,876 characters`. */
export function sizeWords(text: string): string {
  let lines = text === "" ? 0 : 1;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  // Code points: each pair of surrogates counts once.
  const characters = text.length - (text.match(/[\uDC00-\uDFFF]/g)?.length ?? 0);
  return `${plural(lines, "line")}, ${plural(characters, "character")}`;
}

/** `12 lines, and 1 block the provider redacted`: the size of a round's thinking. */
export function thinkingWords(text: string, redacted: number): string {
  const lines = text === "" ? 0 : text.split("\n").length;
  const hidden = redacted > 0 ? `${plural(redacted, "block")} the provider redacted` : "";
  if (lines === 0) return hidden;
  return hidden === "" ? plural(lines, "line") : `${plural(lines, "line")}, and ${hidden}`;
}

/** `overloaded_error: Overloaded; attempt 2 of 4 after 1 s`. */
export function retryWords(retry: {
  attempt: number;
  attempts: number;
  delayMs: number;
  reason: string;
}): [reason: string, attempt: string] {
  const wait =
    retry.delayMs >= 1000
      ? `${Number((retry.delayMs / 1000).toFixed(1))} s`
      : `${Math.round(retry.delayMs)} ms`;
  return [retry.reason, `attempt ${retry.attempt} of ${retry.attempts} after ${wait}`];
}

/** `completed in 1.2 s`, `aborted in 300 ms`. */
export function turnEndWords(end: { status: string; durationMs: number }): string {
  const took =
    end.durationMs >= 1000
      ? `${Number((end.durationMs / 1000).toFixed(1))} s`
      : `${Math.round(end.durationMs)} ms`;
  return `${end.status.replace("_", " ")} in ${took}`;
}

/**
 * `3` and `2 in the catalog, 1 left out of it by its budget`: how many skills were loaded, and
 * how many of them the system prompt listed; `none` and nothing when none was.
 */
export function skillsLoadedWords(loaded: readonly LoadedSkill[]): [count: string, detail: string] {
  if (loaded.length === 0) return ["none", ""];
  const listed = loaded.filter((skill) => skill.listed).length;
  const left = loaded.length - listed;
  const cut = left > 0 ? `, ${number(left)} left out of it by its budget` : "";
  return [number(loaded.length), `${number(listed)} in the catalog${cut}`];
}

/** `user`, `project, left out of the catalog`: where one loaded skill came from. */
export const skillWords = (skill: LoadedSkill): string =>
  skill.listed ? skill.scope : `${skill.scope}, left out of the catalog`;

/** A list of loaded skills longer than this is folded. */
export const SKILLS_UNFOLDED = 10;

export const sentWords = "Sent with the prompt";

/** `review (sent with the prompt, read by the model)`. */
function skillUseWords(use: SkillUse): string {
  const how = [
    ...(use.sent ? ["sent with the prompt"] : []),
    ...(use.read ? ["read by the model"] : []),
  ];
  return `${use.name} (${how.join(", ")})`;
}

/** `size: 182,000 → 24,000 tokens`. */
export function compactionWords(c: {
  trigger: string;
  tokensBefore: number;
  tokensAfter: number;
}): string {
  const why: Record<string, string> = {
    size: "the request reached the context limit",
    overflow: "the provider refused a request as too long",
    manual: "asked for with /compact",
  };
  return `${why[c.trigger] ?? c.trigger}; ${number(c.tokensBefore)} → ${number(c.tokensAfter)} tokens`;
}

/** The cache and reasoning counts only when some request reported one. */
const reported = ({
  cacheReadTokens,
  cacheWriteTokens,
  reasoningTokens,
  ...usage
}: Required<Usage>): Usage => ({
  ...usage,
  ...(cacheReadTokens > 0 && { cacheReadTokens }),
  ...(cacheWriteTokens > 0 && { cacheWriteTokens }),
  ...(reasoningTokens > 0 && { reasoningTokens }),
});

/** The summary lines, each a label and its value. */
export function totalsWords(t: Totals): [string, string][] {
  const calls = [
    `${number(t.denied)} denied`,
    `${number(t.failed)} failed`,
    ...(t.unanswered > 0 ? [`${number(t.unanswered)} without a result`] : []),
  ];
  return [
    ["Prompts", number(t.prompts)],
    ["Answers", number(t.answers)],
    ["Tool calls", `${number(t.calls)} (${calls.join(", ")})`],
    ["Requests", `${number(t.requests)}: ${usageWords(reported(t.usage))}`],
    ["Retries", number(t.retries)],
    ["Compactions", number(t.compactions)],
    ...(t.skills
      ? ([
          [
            "Skills",
            `${number(t.skills.loaded)} loaded; ${
              t.skills.used.length === 0
                ? "none used"
                : `used: ${t.skills.used.map(skillUseWords).join(", ")}`
            }`,
          ],
        ] as [string, string][])
      : []),
    ...(t.unreadable > 0
      ? ([["Unreadable lines", `${number(t.unreadable)} (torn writes, left out)`]] as [
          string,
          string,
        ][])
      : []),
  ];
}

/** What a bash call changed, as a sentence's parts: the words, then the paths, then the count left. */
export function bashChangedWords(
  changed: BashChanged,
): [words: string, paths: string[], more: string] {
  if (changed.skipped !== undefined)
    return [`What this call changed is not known: ${changed.skipped}`, [], ""];
  const more = changed.more > 0 ? ` and ${changed.more} more` : "";
  if (changed.restorable)
    return changed.paths.length === 0
      ? ["Changed no file", [], ""]
      : ["Changed by this call: ", changed.paths, more];
  if (changed.paths.length === 0 && changed.more === 0)
    return ["Git saw no file changed (it does not look at the files it ignores)", [], ""];
  return ["Changed by this call, not restored by a rewind: ", changed.paths, more];
}

/** What a rewind of the conversation means for what follows it in the page. */
export function rewindWords(to: number): string {
  return `The conversation went back to just before prompt ${to}: what follows is a new branch; the prompts above from prompt ${to} on stay in the session file.`;
}
