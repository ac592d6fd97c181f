#!/usr/bin/env node
import { readFile } from "node:fs/promises";
import { systemErrorMeaning } from "../system-errors.js";
import {
  type AnthropicServer,
  startAnthropicServer,
  type TurnScript,
  turn,
} from "./anthropic-server.js";
import { completion, startOpenAIServer } from "./openai-server.js";
import { type Reply, type ReplyScript, stream } from "./sse-server.js";
import { taskModels } from "./task-models.js";

/**
 * `mini-agent-testing serve --script ROUNDS.json`: one of the kit's strict servers, started from
 * the command line with a script of rounds, so mini-agent can be tried (or a program tested)
 * without a provider key. The first line on stdout is the base URL to point the CLI at.
 */

const usage =
  "usage: mini-agent-testing serve --script ROUNDS.json [--port N] [--protocol anthropic|openai]";
const help = `${usage}

Serves the model's rounds in ROUNDS.json, one per request, on 127.0.0.1 and prints the base URL.
The server refuses what the real API refuses (a call without its result, a bad id), as the
testing kit's servers do. ROUNDS.json is a list of rounds, each a text, tool calls, or both:

  [
    { "calls": [{ "name": "read", "input": { "path": "hello.txt" } }] },
    { "text": "hello.txt says hello." }
  ]

With --models, each request is answered from the rounds of the model it names (Messages API
only), chosen by the number of assistant messages it holds, so many conversations (a batch's
tasks, each naming its own model) run at once. MODELS.json maps a model's name to its rounds;
the model "null" (unless named there) changes nothing: it answers once, with text.

  { "oracle-two-fer": [ { "calls": [{ "name": "write", "input": { "path": "two_fer.py", "content": "..." } }] },
                        { "text": "done" } ] }

Options:
  --script FILE             the rounds to serve, one per request
  --models FILE             the rounds of each model, one per round of its conversation
  --port N                  the port to listen on (default: any free one)
  --protocol NAME           anthropic (default: the Messages API) or openai (Chat Completions)
  -h, --help                print this help
`;

/** A bad invocation or script: one line on stderr, exit 2. */
class UsageError extends Error {}

interface Options {
  script?: string;
  models?: string;
  port: number;
  protocol: "anthropic" | "openai";
}

/** A round of the script: the model's answer text, its tool calls, or both. */
interface Round {
  text?: string[];
  calls?: { id: string; name: string; input: Record<string, unknown> }[];
}

function parseArgs(argv: string[]): Options | "help" {
  if (argv.includes("-h") || argv.includes("--help")) return "help";
  const [command, ...rest] = argv;
  if (command !== "serve") throw new UsageError(usage);
  const options: Partial<Options> = { port: 0, protocol: "anthropic" };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i] ?? "";
    if (!["--script", "--models", "--port", "--protocol"].includes(flag)) {
      throw new UsageError(`unknown option ${flag} (mini-agent-testing --help lists the options)`);
    }
    const value = rest[++i];
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (flag === "--script") options.script = value;
    else if (flag === "--models") options.models = value;
    else if (flag === "--port") options.port = port(value);
    else if (value === "anthropic" || value === "openai") options.protocol = value;
    else
      throw new UsageError(`--protocol must be anthropic or openai, not ${JSON.stringify(value)}`);
  }
  if (options.script === undefined && options.models === undefined)
    throw new UsageError("serve needs --script ROUNDS.json");
  if (options.script !== undefined && options.models !== undefined)
    throw new UsageError("give one of --script and --models");
  if (options.models !== undefined && options.protocol !== "anthropic")
    throw new UsageError("--models serves the Messages API only (--protocol anthropic)");
  return options as Options;
}

function port(value: string): number {
  const number = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(number <= 65535)) {
    throw new UsageError(`--port must be a number from 0 to 65535, not ${JSON.stringify(value)}`);
  }
  return number;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A script file's JSON. */
async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    const why =
      { ENOENT: "no such file", EISDIR: "it is a folder" }[code] ?? systemErrorMeaning(code);
    throw new UsageError(`cannot read ${file}: ${why}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

/** The rounds of a script (`where` names it in messages), checked whole before anything is served. */
function roundsOf(value: unknown, where: string, idPrefix: string): Round[] {
  if (!Array.isArray(value)) {
    throw new UsageError(`${where} must hold a list of rounds, e.g. [{"text": "Hello."}]`);
  }
  if (value.length === 0) throw new UsageError(`${where} holds no rounds`);
  let calls = 0;
  return value.map((round, index) => {
    const problem = (why: string) => new UsageError(`${where}: round ${index + 1}${why}`);
    return checkRound(round, problem, () => `${idPrefix}${++calls}`);
  });
}

/** A models file: each model's name and its rounds. */
async function readModels(file: string): Promise<Record<string, TurnScript[]>> {
  const value = await readJson(file);
  if (!isObject(value)) throw new UsageError(`${file} must map each model's name to its rounds`);
  return Object.fromEntries(
    Object.entries(value).map(([model, rounds]) => [
      model,
      roundsOf(rounds, `${file}: model ${JSON.stringify(model)}`, "toolu_").map((round) => ({
        ...(round.text && { text: round.text }),
        ...(round.calls && { calls: round.calls }),
      })),
    ]),
  );
}

function checkRound(
  round: unknown,
  problem: (why: string) => UsageError,
  nextId: () => string,
): Round {
  if (!isObject(round)) throw problem(" must be an object with text, calls or both");
  const unknown = Object.keys(round).find((key) => key !== "text" && key !== "calls");
  if (unknown !== undefined) {
    throw problem(` has an unknown field ${JSON.stringify(unknown)} (text, calls)`);
  }
  if (round.text === undefined && round.calls === undefined) {
    throw problem(" has neither text nor calls");
  }
  const checked: Round = {};
  if (round.text !== undefined) {
    const text = typeof round.text === "string" ? [round.text] : round.text;
    if (!Array.isArray(text) || !text.every((piece) => typeof piece === "string")) {
      throw problem(": text must be a string or a list of strings");
    }
    checked.text = text;
  }
  if (round.calls !== undefined) {
    if (!Array.isArray(round.calls)) throw problem(": calls must be a list");
    checked.calls = round.calls.map((call: unknown, at) => {
      const field = (name: string, why: string) => problem(`: calls[${at}].${name} must be ${why}`);
      if (!isObject(call)) throw problem(`: calls[${at}] must be an object`);
      if (typeof call.name !== "string" || call.name === "")
        throw field("name", "a non-empty string");
      if (!isObject(call.input)) throw field("input", "an object");
      if (call.id !== undefined && typeof call.id !== "string") throw field("id", "a string");
      return { id: call.id ?? nextId(), name: call.name, input: call.input };
    });
  }
  return checked;
}

/** The replies the server gives, one per round, in its protocol. */
function replies(rounds: Round[], protocol: Options["protocol"]): ReplyScript[] {
  return rounds.map((round): Reply => {
    const script = {
      ...(round.text && { text: round.text }),
      ...(round.calls && { calls: round.calls }),
    };
    return stream(protocol === "anthropic" ? turn(script) : completion(script));
  });
}

async function serve(options: Options): Promise<AnthropicServer> {
  const anthropic = options.protocol === "anthropic";
  let served: string;
  let server: AnthropicServer;
  if (options.models !== undefined) {
    const models = await readModels(options.models);
    served = `the rounds of ${Object.keys(models).length} models`;
    server = await startAnthropicServer([], {
      port: options.port,
      everyRequest: taskModels(models),
    });
  } else {
    const where = options.script ?? "";
    const rounds = roundsOf(await readJson(where), where, anthropic ? "toolu_" : "call_");
    served = `${rounds.length} rounds`;
    const script = replies(rounds, options.protocol);
    server = anthropic
      ? await startAnthropicServer(script, { port: options.port })
      : await startOpenAIServer(script, { port: options.port });
  }
  const url = anthropic ? server.url : `${server.url}/v1`;
  const how = anthropic
    ? "set ANTHROPIC_BASE_URL to it and ANTHROPIC_API_KEY to any value"
    : "give it as --base-url (or OPENAI_BASE_URL) with --provider openai and any --model";
  process.stderr.write(
    `mini-agent-testing: serving ${served} (${options.protocol}) at ${url}: ${how}; Ctrl-C stops\n`,
  );
  process.stdout.write(`${url}\n`);
  return server;
}

async function main(argv: string[]): Promise<void> {
  try {
    const options = parseArgs(argv);
    if (options === "help") {
      process.stdout.write(help);
      return;
    }
    const server = await serve(options);
    const stop = () => void server.close().then(() => process.exit(0));
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  } catch (error) {
    const inUse = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
    if (!(error instanceof UsageError) && !inUse) throw error;
    const message = inUse
      ? "that port is in use: choose another with --port"
      : (error as Error).message;
    process.stderr.write(`mini-agent-testing: ${message}\n`);
    process.exitCode = 2;
  }
}

await main(process.argv.slice(2));
