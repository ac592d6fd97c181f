import { applyRewind } from "../rewind/apply.js";
import { branchPrompts } from "../rewind/history.js";
import { planRewind, RewindError } from "../rewind/rewind.js";
import type { Journal } from "../runner/journal.js";
import type { SessionRunner } from "../runner/runner.js";
import { readSession } from "../session/session.js";
import { visible } from "../visible.js";
import { fileLines } from "./rewind-command.js";
import type { LineIntent } from "./slash-commands.js";
import { planLines } from "./terminal/tool-lines.js";

export interface RewindAtPrompt {
  runner: SessionRunner;
  journal: Journal;
  workspace: string;
  stateDir: string;
  /** Where the lines go: the terminal's stderr. */
  write: (text: string) => void;
}

/**
 * `/rewind` at the interactive prompt: the prompts of the session's current branch, each with
 * the files its turn changed. `/rewind N`: what `mini-agent rewind --to N` does (the files put
 * back, then the conversation), recorded through the journal, and the running session goes on
 * from the branch as loading reads it (the runner restarts from that history). The model's plan
 * as it was then is shown when it is not the one the rewind left.
 */
export async function rewindAtPrompt(
  parts: RewindAtPrompt,
  intent: Extract<LineIntent, { kind: "rewind" }>,
): Promise<void> {
  const { journal, write } = parts;
  const lines = (list: string[]) => write(list.map((line) => `${line}\n`).join(""));
  if (intent.invalid !== undefined) {
    const shown = JSON.stringify(visible(intent.invalid));
    return lines([`mini-agent: /rewind takes a prompt number, 1 for the first, not ${shown}`]);
  }
  const path = journal.sessionPath;
  if (path === undefined) return lines(["mini-agent: nothing to rewind yet: no prompt was sent"]);
  if (intent.to === undefined) {
    const listed = (await branchPrompts(path)).map(({ number, text, files }) => {
      const more = files.length > 10 ? ` and ${files.length - 10} more` : "";
      const changed =
        files.length > 0 ? `${files.slice(0, 10).join(", ")}${more}` : "no file changed";
      return visible(`${String(number).padStart(3)}  ${text.split("\n")[0] ?? ""}  (${changed})`);
    });
    return lines([
      ...listed,
      "/rewind N goes back to just before prompt N: the files changed since are put back, and the conversation goes on from there",
    ]);
  }
  const to = intent.to;
  const plan = await planRewind({
    session: path,
    workspace: parts.workspace,
    stateDir: parts.stateDir,
    to,
  }).catch((error: unknown) => {
    if (!(error instanceof RewindError)) throw error;
    lines([`mini-agent: ${error.message.replace("--to must be", "/rewind takes")}`]);
    return undefined;
  });
  if (!plan) return;
  await journal.record({ type: "rewind_start", to });
  const outcomes = await applyRewind(plan, ({ type: _, ...restore }) =>
    journal.record({ type: "file_restore", restore }),
  );
  if (!plan.again) await journal.record({ type: "rewind", to });
  await journal.record({ type: "rewind_end", to });
  const loaded = await readSession(path);
  const planBefore = parts.runner.plan;
  parts.runner.restart(loaded.messages, loaded.compaction);
  const planNow = parts.runner.plan;
  const later =
    to === plan.prompts ? `prompt ${to} stays` : `prompts ${to} to ${plan.prompts} stay`;
  const files = outcomes.length > 0 || plan.bashCalls > 0 ? fileLines(plan, outcomes, false) : [];
  lines([
    ...files,
    plan.again
      ? `mini-agent: the conversation already went back to just before prompt ${to}`
      : `mini-agent: the conversation went back to just before prompt ${to}; ${later} in the session file as a branch`,
  ]);
  if (JSON.stringify(planNow) === JSON.stringify(planBefore)) return;
  write(
    planNow
      ? `mini-agent: the plan as it was then:\n${planLines(planNow)}`
      : "mini-agent: there was no plan then\n",
  );
}
