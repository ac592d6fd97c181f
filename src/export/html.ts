import type { Facts } from "../compaction/record.js";
import { IMAGE_MEDIA_TYPES } from "../message-schema.js";
import { checklist } from "../tools/plan.js";
import type { BashChanged, Block, CallBlock, ShownImage } from "./blocks.js";
import { changeShown } from "./change.js";
import { markdownHtml } from "./markdown-html.js";
import { escapeHtml, htmlTag, Markup, type Piece } from "./markup.js";
import { contentSecurityPolicy, script, style } from "./page.js";
import type { Renderer } from "./renderer.js";
import type { Show } from "./shown.js";
import {
  answerlessUsageWords,
  argumentOf,
  bashChangedWords,
  compactionWords,
  decisionWords,
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
 * A self-contained HTML page: every value goes through the `html` tag (shown, then escaped),
 * the only script and style are the page's own (allowed by hash, `page.ts`), and nothing is
 * loaded from anywhere. Long texts are folded in `<details>`; the totals come last in the file
 * (they are known only then) and are laid out first.
 */
export function htmlRenderer(show: Show): Renderer {
  const html = htmlTag(show);
  /** A text shown whole, or folded behind its size when long. */
  const block = (label: string, text: string, className: string, body: Piece = text): Markup =>
    isLong(text)
      ? html`<details class="${className}"><summary>${label}: ${sizeWords(text)}</summary><pre>${body}</pre></details>\n`
      : html`<div class="${className}"><span class="note">${label}</span><pre>${body}</pre></div>\n`;

  /** A diff, each line marked as the terminal colours it: removed, added, hunk, file header. */
  const diff = (label: string, text: string): Markup =>
    block(
      label,
      text,
      "input diff",
      text.split("\n").map((line, i) => {
        const kind = /^(---|\+\+\+)/.test(line)
          ? "file"
          : line.startsWith("@@")
            ? "hunk"
            : line.startsWith("-")
              ? "del"
              : line.startsWith("+")
                ? "add"
                : undefined;
        const shown = kind === undefined ? line : html`<span class="${kind}">${line}</span>`;
        return html`${i > 0 && "\n"}${shown}`;
      }),
    );

  /** An answer's Markdown, rendered as the terminal renders it. */
  const answer = (text: string): Markup => new Markup(markdownHtml(show(text)));

  /**
   * The images of a prompt or a result, each a `data:` image the page holds (its bytes are not
   * text: never redacted), or its placeholder and why it is not shown.
   */
  const images = (list: ShownImage[] | undefined): Markup[] =>
    (list ?? []).map((image) => {
      const uri = dataUri(image);
      return uri === undefined
        ? html`<p class="note image-missing">${image.placeholder}: ${image.missing ?? "not an image"}</p>\n`
        : html`<figure class="image"><img src="${new Markup(uri)}" alt="${image.placeholder}"></figure>\n`;
    });

  const call = (c: CallBlock): Markup => {
    const outcome = outcomeOf(c);
    const mark = outcomeWords[outcome];
    // A plan is shown as its checklist rather than as JSON.
    const text = inputText(c.call);
    const change = changeShown(c, show);
    const input = c.plan
      ? block("Plan", checklist(c.plan).join("\n"), "input")
      : change
        ? change.kind === "diff"
          ? diff(change.label, change.text)
          : block(change.label, change.text, "input")
        : text && block("Input", text, "input");
    const result = c.result
      ? html`${block(c.result.isError ? "Result (error)" : "Result", c.result.content, "result")}${images(c.result.images)}`
      : html`<p class="result note">${missingResultWords}</p>\n`;
    return html`<section class="entry call ${outcome}" id="call-${c.number}">
<h4><span class="num">#${c.number}</span> ${c.call.name} <code>${argumentOf(c.call)}</code>${
      mark && html` <span class="mark ${outcome}">${mark}</span>`
    }${decisionWords(c.approval) && html` <span class="by">${decisionWords(c.approval)}</span>`}${
      c.skill !== undefined && html` <span class="skill">skill ${c.skill}</span>`
    }</h4>
${input}${result}${c.changed && bashChanged(c.changed)}</section>\n`;
  };

  const bashChanged = (changed: BashChanged): Markup => {
    const [words, paths, more] = bashChangedWords(changed);
    const listed = paths.map((path, i) => html`${i > 0 && ", "}<code>${path}</code>`);
    return html`<p class="changed">${words}${listed}${more}</p>\n`;
  };

  const skills = (b: Extract<Block, { kind: "skills" }>): Markup => {
    const sent =
      b.sent.length > 0 &&
      html`<p>${sentWords}: ${b.sent.map((name, i) => html`${i > 0 && ", "}<code>${name}</code>`)}</p>`;
    const loaded = b.loaded;
    if (!loaded) return html`<section class="entry skills">${sent}</section>\n`;
    const [count, detail] = skillsLoadedWords(loaded);
    const items = loaded.map(
      (s) =>
        html`<li><code>${s.name}</code> <span class="note">${skillWords(s)}</span> <code>${s.location}</code></li>`,
    );
    return html`<section class="entry skills"><details${
      loaded.length <= SKILLS_UNFOLDED && new Markup(" open")
    }><summary>Skills loaded: ${count}${detail && html` <span class="note">(${detail})</span>`}</summary>${
      items.length > 0 && html`<ul>${items}</ul>`
    }</details>${sent}</section>\n`;
  };

  const facts = (f: Facts): Markup => {
    const list = (title: string, items: string[]) =>
      items.length > 0 && html`<h4>${title}</h4><ul>${items.map((i) => html`<li>${i}</li>`)}</ul>`;
    return html`<details><summary>Facts kept from the covered part</summary>${[
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
      f.omitted > 0 && html`<p class="note">${f.omitted} older entries left out</p>`,
    ]}</details>`;
  };

  return {
    begin: (header) =>
      html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${new Markup(escapeHtml(contentSecurityPolicy))}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mini-agent session ${header.id}</title>
<style>${new Markup(style)}</style>
</head>
<body>
<header class="session">
<h1>mini-agent session <code>${header.id}</code></h1>
<dl>
<dt>Created</dt><dd>${header.createdAt}</dd>
<dt>Workspace</dt><dd><code>${header.workspace}</code></dd>
<dt>Model</dt><dd><code>${header.model}</code></dd>
<dt>Sandbox</dt><dd>${sandboxWords(header.sandbox)}</dd>
</dl>
</header>
<main>
`.html,
    blocks: {
      prompt: (b) =>
        html`<section class="entry prompt"><h2>Prompt ${b.number}</h2><div class="text">${b.text}</div>${images(b.images)}</section>\n`
          .html,
      thinking: (b) =>
        html`<details class="thinking"><summary>Thinking: ${thinkingWords(b.text, b.redacted)}</summary>${
          b.text !== "" && html`<pre>${b.text}</pre>`
        }</details>\n`.html,
      answer: (b) =>
        html`<section class="entry answer"><h3>Answer${
          b.usage && html` <span class="usage">${usageWords(b.usage)}</span>`
        }</h3>${b.text === "" ? html`<p class="note">(no text, only tool calls)</p>` : html`<div class="text">${answer(b.text)}</div>`}</section>\n`
          .html,
      call: (b) => call(b).html,
      "stray-result": (b) =>
        html`<section class="entry call ${b.isError ? "error" : "ok"}"><h4>Result for a call not in the file <code>${b.toolCallId}</code></h4>${block("Result", b.content, "result")}</section>\n`
          .html,
      usage: (b) =>
        html`<p class="entry usage-only">${answerlessUsageWords}: ${usageWords(b.usage)}</p>\n`
          .html,
      retry: (b) => {
        const [reason, attempt] = retryWords(b.retry);
        return html`<section class="entry retry"><h3>Round lost and run again <span class="note">${attempt}</span></h3><code>${reason}</code></section>\n`
          .html;
      },
      "turn-end": (b) => html`<p class="entry turn-end">Turn ${turnEndWords(b)}</p>\n`.html,
      skills: (b) => skills(b).html,
      "file-restore": (b) =>
        (b.removed
          ? html`<p class="entry rewind">A rewind removed <code>${b.path}</code>, which the agent created from prompt ${String(b.to)} on</p>\n`
          : html`<p class="entry rewind">A rewind put back <code>${b.path}</code> as it was just before prompt ${String(b.to)}</p>\n`
        ).html,
      rewind: (b) =>
        html`<section class="entry rewind"><h2>Rewound to just before prompt ${String(b.to)}</h2><p>${rewindWords(b.to)}</p></section>\n`
          .html,
      compaction: ({ compaction: c }) =>
        html`<section class="entry compaction"><h2>Compaction ${c.count} <span class="note">${compactionWords(c)}</span></h2>
<p>Everything above was replaced, for the model, by ${c.userMessages.length} earlier prompts kept verbatim, the facts below and this summary.</p>
${block("Summary the model wrote", c.summary, "summary")}${facts(c.facts)}</section>\n`.html,
      unreadable: () =>
        html`<p class="entry unreadable">A line of the session file could not be read (a torn write) and is left out.</p>\n`
          .html,
    },
    end: (totals) =>
      html`</main>
<footer id="summary"><h2>Summary</h2><dl>${totalsWords(totals).map(
        ([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`,
      )}</dl></footer>
<script>${new Markup(script)}</script>
</body>
</html>
`.html,
  };
}

const MEDIA_TYPES: readonly string[] = IMAGE_MEDIA_TYPES;

/** `data:image/png;base64,…` for an image of a type every browser shows, in canonical base64. */
function dataUri(image: ShownImage): string | undefined {
  const { mediaType, data } = image;
  if (data === undefined || !MEDIA_TYPES.includes(mediaType)) return undefined;
  if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) return undefined;
  return `data:${mediaType};base64,${data}`;
}
