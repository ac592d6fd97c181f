import { isMode, type Mode } from "../app/modes.js";
import { firstDuplicateKey } from "../json-duplicates.js";
import { RuleError, ruleWords } from "../rules/rule.js";
import { isToolName } from "./commands.js";
import { type Configuration, explainCommand, type SourcedRule } from "./explain.js";

/**
 * `mini-agent rules explain --stdin`: one command a line in, one JSON line out for each, in
 * order. A line is a JSON object when it starts with `{`:
 * `{"command", "cwd"?, "mode"?: "code"|"ask"|"plan", "sandbox"?: "bwrap"|"off", "rules"?: [{"allow":
 * "WORDS"} | {"deny": "WORDS"}, …]}`; any other line is a command, decided with the flags. The
 * answer is `{"command", "decision", "by", "why"}` (`Explanation`); a line that cannot be read
 * gets `{"line": N, "error": "…"}` and the next line is read.
 */

/** A folder's configuration, and the rules in it a line's `rules` do not replace. */
export interface ExplainSetup {
  config: Configuration;
  /** The rules file's and the configuration files' rules (a line's `rules` replace the flags'). */
  kept: readonly SourcedRule[];
}

export interface LineSetups {
  /** The command line's: the folder of `--cwd`, the flags. */
  setup: ExplainSetup;
  /** The same flags in another folder (a line's `cwd`): its rules file and configuration. */
  forFolder(cwd: string): Promise<ExplainSetup>;
}

/** Lines decided at once: the decisions wait on the file system (redirects), not on each other. */
const inFlight = 16;

const fields = new Set(["command", "cwd", "mode", "sandbox", "rules"]);

/** Reads `input` to its end, writing each line's answer (or error) in input order. */
export async function explainLines(
  input: NodeJS.ReadableStream,
  write: (text: string) => void,
  setups: LineSetups,
): Promise<void> {
  const answers: { text?: string }[] = [];
  // The answers ready at the head, in one write: a write per line costs more than its decision.
  const flush = () => {
    let ready = "";
    while (answers[0]?.text !== undefined) ready += answers.shift()?.text ?? "";
    if (ready !== "") write(ready);
  };
  const running = new Set<Promise<void>>();
  let number = 0;
  // Loaded here: a run that never explains lines does not load readline.
  const { createInterface } = await import("node:readline");
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    const answer: { text?: string } = {};
    answers.push(answer);
    const done = answerLine(line, ++number, setups).then((text) => {
      answer.text = `${text}\n`;
      running.delete(done);
      flush();
    });
    running.add(done);
    if (running.size >= inFlight) await Promise.race(running);
  }
  await Promise.all(running);
}

/** One line's answer as a JSON line: the explanation, or the error that kept it from one. */
async function answerLine(line: string, number: number, setups: LineSetups): Promise<string> {
  try {
    const asked = await readLine(line, setups);
    const { decision, by, why } = await explainCommand(asked.command, asked.config);
    return JSON.stringify({ command: asked.command, decision, by, why });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return JSON.stringify({ line: number, error: message });
  }
}

/** A line's command and the configuration it is decided in; throws one line for a bad one. */
async function readLine(
  line: string,
  setups: LineSetups,
): Promise<{ command: string; config: Configuration }> {
  if (!line.trimStart().startsWith("{")) {
    if (line.trim() === "") throw new Error("the line is empty: give a command or a JSON object");
    return { command: line, config: setups.setup.config };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    throw new Error(
      `a line that starts with { is a JSON object, and this one is not valid JSON (${(error as Error).message}); a command that starts with { goes in {"command": …}`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error('the line is not a JSON object such as {"command": "ls"}');
  const twice = mayRepeatKey(line) ? firstDuplicateKey(line) : undefined;
  if (twice !== undefined) throw new Error(`the line gives ${twice} twice`);
  const object = parsed as Record<string, unknown>;
  const unknown = Object.keys(object).find((key) => !fields.has(key));
  if (unknown !== undefined)
    throw new Error(
      `unknown field ${JSON.stringify(unknown)} (command, cwd, mode, sandbox and rules are read)`,
    );
  const { command, cwd, mode, sandbox, rules } = object;
  if (typeof command !== "string" || command.trim() === "")
    throw new Error(
      command === undefined
        ? 'the line has no "command"'
        : `"command" must be a command in a string, not ${JSON.stringify(command)}`,
    );
  const setup = cwd === undefined ? setups.setup : await inFolder(setups, cwd);
  const base = setup.config;
  const lineMode = modeOf(mode) ?? base.mode;
  const sandboxed = sandboxOf(sandbox, command);
  const lineRules = rules === undefined ? undefined : rulesOf(rules, lineMode);
  const { refused, ...rest } = base;
  return {
    command,
    config: {
      ...rest,
      mode: lineMode,
      // A line's `sandbox` says where bash runs: then nothing refuses it.
      ...(sandboxed === undefined
        ? { sandboxed: base.sandboxed, ...(refused && { refused }) }
        : { sandboxed }),
      ...(lineRules && { rules: [...setup.kept, ...lineRules] }),
    },
  };
}

/**
 * Whether a line (valid JSON) may hold a key twice, found cheaply: with no backslash every string
 * is `"…"` with no quote inside and the keys are exactly the strings followed by `:`, so no name
 * among them seen twice means no object holds one twice. A name seen twice (two rules may each
 * have an "allow") or a backslash leaves it to `firstDuplicateKey`.
 */
function mayRepeatKey(line: string): boolean {
  if (line.includes("\\")) return true;
  const names = new Set<string>();
  for (const [, name = ""] of line.matchAll(/"([^"]*)"\s*:/g)) {
    if (names.has(name)) return true;
    names.add(name);
  }
  return false;
}

/** The setup of a line's `cwd`; a folder that cannot be the workspace is the line's error. */
async function inFolder(setups: LineSetups, cwd: unknown): Promise<ExplainSetup> {
  if (typeof cwd !== "string" || cwd === "")
    throw new Error(`"cwd" must name a folder in a string, not ${JSON.stringify(cwd)}`);
  try {
    return await setups.forFolder(cwd);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`"cwd": ${message.replace(/ \(check --cwd\)$/, "")}`);
  }
}

function modeOf(mode: unknown): Mode | undefined {
  if (mode === undefined) return undefined;
  if (typeof mode === "string" && isMode(mode)) return mode;
  throw new Error(`"mode" must be "code", "ask" or "plan", not ${JSON.stringify(mode)}`);
}

/** `bwrap`: bash runs in the sandbox (the read-only set applies); `off`: it runs without. */
function sandboxOf(sandbox: unknown, command: string): boolean | undefined {
  if (sandbox === undefined) return undefined;
  if (sandbox !== "bwrap" && sandbox !== "off")
    throw new Error(`"sandbox" must be "bwrap" or "off", not ${JSON.stringify(sandbox)}`);
  if (isToolName(command))
    throw new Error('"sandbox" has no use with an MCP tool: tool rules and the mode decide it');
  return sandbox === "bwrap";
}

/** A line's rules: `{"allow": "WORDS"}` or `{"deny": "WORDS"}`, WORDS as `--allow` takes them. */
function rulesOf(rules: unknown, mode: Mode): SourcedRule[] {
  if (!Array.isArray(rules))
    throw new Error(`"rules" must be a list such as [{"allow": "npm test"}, {"deny": "git push"}]`);
  return rules.map((entry: unknown, i) => {
    const where = `"rules"[${i}]`;
    const keys = typeof entry === "object" && entry !== null ? Object.keys(entry) : [];
    const [effect] = keys;
    const text = (entry as Record<string, unknown> | null)?.[effect ?? ""];
    if (keys.length !== 1 || (effect !== "allow" && effect !== "deny") || typeof text !== "string")
      throw new Error(`${where} must be {"allow": "WORDS"} or {"deny": "WORDS"}`);
    if (effect === "allow" && mode !== "code")
      throw new Error(
        `${where}: an allow rule has no use in ${mode} mode: allow rules count only in code mode`,
      );
    try {
      return { rule: { effect, words: ruleWords(text) }, from: "the line's rules" };
    } catch (error) {
      throw error instanceof RuleError ? new Error(`${where}: ${error.message}`) : error;
    }
  });
}
