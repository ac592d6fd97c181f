import type { Facts } from "../compaction/record.js";
import { checklist } from "../tools/plan.js";
import type { BashChanged, Block, CallBlock, ShownImage } from "./blocks.js";
import { changeShown } from "./change.js";
import { escapeHtml } from "./markup.js";
import type { Renderer } from "./renderer.js";
import type { Show } from "./shown.js";
import {
  answerlessUsageWords,
  argumentOf,
  bashChangedWords,
  compactionWords,
  inputText,
  isLong,
  missingResultWords,
  outcomeOf,
  outcomeWords,
  retryWords,
  rewindWords,
  SKILLS_UNFOLDED,
  sandboxWords,
  sentWords,
  sizeWords,
  skillsLoadedWords,
  skillWords,
  thinkingWords,
  totalsWords,
  turnEndWords,
  usageWords,
} from "./words.js";

/**
 * Markdown for pasting into a review: the same blocks as the page, each value through one of
 * three helpers. `fence` puts text in a code block whose fence is longer than any run of
 * backticks in it, so no content can close it; `code` does the same for a code span on one line;
 * `plain` backslash-escapes every mark Markdown gives a meaning, so words cannot become markup.
 */
export function markdownRenderer(show: Show): Renderer {
  const md = markdownText(show);
  const part = (label: string, text: string, info: string): string =>
    isLong(text)
      ? `<details><summary>${escapeHtml(`${label}: ${sizeWords(text)}`)}</summary>\n\n${md.fence(text, info)}\n</details>\n\n`
      : `${label}:\n\n${md.fence(text, info)}\n`;

  /**
   * Images stay their placeholder lines (in the text already): a data link is refused by most
   * Markdown viewers and would make a review comment megabytes long. One whose bytes are gone says so.
   */
  const missing = (images: ShownImage[] | undefined): string =>
    (images ?? [])
      .filter((image) => image.data === undefined)
      .map(
        (image) => `_${md.plain(`${image.placeholder}: ${image.missing ?? "not an image"}`)}_\n\n`,
      )
      .join("");

  const call = (c: CallBlock): string => {
    const outcome = outcomeOf(c);
    const mark = outcomeWords[outcome];
    const argument = argumentOf(c.call);
    const decision = c.approval
      ? ` ${c.approval.approved ? "— allowed " : ""}by ${md.code(c.approval.by)}`
      : "";
    // A plan is shown as its checklist rather than as JSON.
    const text = inputText(c.call);
    const change = changeShown(c, show);
    const input = c.plan
      ? part("Plan", checklist(c.plan).join("\n"), "text")
      : change
        ? part(change.label, change.text, change.kind === "diff" ? "diff" : "")
        : text && part("Input", text, "json");
    const result = c.result
      ? `${part(c.result.isError ? "Result (error)" : "Result", c.result.content, "text")}${missing(c.result.images)}`
      : `${md.plain(missingResultWords)}\n\n`;
    const skill = c.skill === undefined ? "" : ` — skill ${md.code(c.skill)}`;
    const changed = c.changed ? bashChanged(c.changed) : "";
    return `#### Tool call ${c.number}: ${md.code(c.call.name)}${argument && ` ${md.code(argument)}`}${
      mark && ` — **${mark.toUpperCase()}**`
    }${decision}${skill}\n\n${input}${result}${changed}`;
  };

  const bashChanged = (changed: BashChanged): string => {
    const [words, paths, more] = bashChangedWords(changed);
    return `_${md.plain(words)}${paths.map((path) => md.code(path)).join(", ")}${more}_\n\n`;
  };

  const skills = (b: Extract<Block, { kind: "skills" }>): string => {
    const sent =
      b.sent.length === 0
        ? ""
        : `${sentWords}: ${b.sent.map((name) => md.code(name)).join(", ")}\n\n`;
    if (!b.loaded) return sent;
    const [count, detail] = skillsLoadedWords(b.loaded);
    const title = `### Skills loaded: ${md.plain(count)}${detail && ` ${md.plain(`(${detail})`)}`}\n\n`;
    const list = b.loaded
      .map(
        (s) => `- ${md.code(s.name)} ${md.plain(`(${skillWords(s)})`)}: ${md.code(s.location)}\n`,
      )
      .join("");
    const shown =
      b.loaded.length === 0
        ? ""
        : b.loaded.length > SKILLS_UNFOLDED
          ? `<details><summary>${b.loaded.length} skills</summary>\n\n${list}\n</details>\n\n`
          : `${list}\n`;
    return `${title}${shown}${sent}`;
  };

  const facts = (f: Facts): string => {
    const list = (title: string, items: string[]) =>
      items.length === 0 ? "" : `${title}:\n\n${items.map((i) => `- ${md.code(i)}\n`).join("")}\n`;
    return [
      list("Files read", f.filesRead),
      list("Files changed", f.filesChanged),
      list(
        "Commands",
        f.commands.map((c) => `${c.command} (${c.outcome})`),
      ),
      list(
        "Refused",
        f.refused.map((r) => `${r.tool} ${r.argument}: ${r.reason}`),
      ),
      list("Plan", checklist(f.plan ?? [])),
      f.omitted > 0 ? `${f.omitted} older facts left out.\n\n` : "",
    ].join("");
  };

  return {
    begin: (h) =>
      `# mini-agent session ${md.code(h.id)}\n\n- Created: ${md.plain(h.createdAt)}\n- Workspace: ${md.code(
        h.workspace,
      )}\n- Model: ${md.code(h.model)}\n- Sandbox: ${md.plain(sandboxWords(h.sandbox))}\n\n`,
    blocks: {
      prompt: (b) => `## Prompt ${b.number}\n\n${md.fence(b.text, "text")}\n${missing(b.images)}`,
      thinking: (b) => {
        const summary = escapeHtml(`Thinking: ${thinkingWords(b.text, b.redacted)}`);
        return b.text === ""
          ? `<details><summary>${summary}</summary></details>\n\n`
          : `<details><summary>${summary}</summary>\n\n${md.fence(b.text, "text")}</details>\n\n`;
      },
      answer: (b) =>
        `### Answer${b.usage ? ` (${md.plain(usageWords(b.usage))})` : ""}\n\n${
          b.text === "" ? "_No text, only tool calls._\n\n" : `${md.fence(b.text, "text")}\n`
        }`,
      call,
      "stray-result": (b) =>
        `#### Result for a call not in the file: ${md.code(b.toolCallId)}\n\n${part(
          b.isError ? "Result (error)" : "Result",
          b.content,
          "text",
        )}`,
      usage: (b) => `_${answerlessUsageWords}: ${md.plain(usageWords(b.usage))}_\n\n`,
      retry: (b) => {
        const [reason, attempt] = retryWords(b.retry);
        return `### Round lost and run again (${md.plain(attempt)})\n\n${md.code(reason)}\n\n`;
      },
      "turn-end": (b) => `_Turn ${md.plain(turnEndWords(b))}_\n\n`,
      skills,
      "file-restore": (b) =>
        b.removed
          ? `_A rewind removed ${md.code(b.path)}, which the agent created from prompt ${b.to} on_\n\n`
          : `_A rewind put back ${md.code(b.path)} as it was just before prompt ${b.to}_\n\n`,
      rewind: (b) => `## Rewound to just before prompt ${b.to}\n\n${rewindWords(b.to)}\n\n`,
      compaction: ({ compaction: c }) =>
        `## Compaction ${c.count} (${md.plain(compactionWords(c))})\n\nEverything above was replaced, for the model, by ${
          c.userMessages.length
        } earlier prompts kept verbatim, these facts and this summary.\n\n${facts(c.facts)}${part(
          "Summary the model wrote",
          c.summary,
          "text",
        )}`,
      unreadable: () =>
        "_A line of the session file could not be read (a torn write) and is left out._\n\n",
    },
    end: (totals) =>
      `## Summary\n\n${totalsWords(totals)
        .map(([label, value]) => `- ${label}: ${md.plain(value)}\n`)
        .join("")}`,
  };
}

/** The three ways a value enters Markdown; each shows it first (`Show`). */
export function markdownText(show: Show) {
  return {
    fence(text: string, info = ""): string {
      const shown = show(text);
      const marks = "`".repeat(Math.max(3, longestRun(shown) + 1));
      return `${marks}${info}\n${shown}${shown.endsWith("\n") || shown === "" ? "" : "\n"}${marks}\n`;
    },
    code(text: string): string {
      const shown = show(text).replace(/[\n\t]/g, " ");
      if (shown === "") return "";
      const marks = "`".repeat(longestRun(shown) + 1);
      const pad = /^[` ]|[` ]$/.test(shown) ? " " : "";
      return `${marks}${pad}${shown}${pad}${marks}`;
    },
    plain(text: string): string {
      return show(text)
        .replace(/[\n\t]/g, " ")
        .replace(/[\\`*_{}[\]()#+\-.!|<>~&]/g, (char) => `\\${char}`);
    },
  };
}

/** The longest run of backticks in `text`. */
function longestRun(text: string): number {
  let longest = 0;
  let run = 0;
  for (let at = 0; at < text.length; at++) {
    run = text.charCodeAt(at) === 96 ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}
