import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { type ResultLine, ResultLineSchema } from "../../src/batch/results.js";
import type { TurnScript } from "../../src/testing/anthropic-server.js";
import { startAnthropicServer } from "../../src/testing/anthropic-server.js";
import type { ScriptedServer } from "../../src/testing/sse-server.js";
import { taskModels } from "../../src/testing/task-models.js";
import { bin, type CliRun, cliEnv } from "./cli.js";

/** A loopback Messages API server answering each task from the rounds of the model it names. */
export function modelsServer(models: Record<string, TurnScript[]>): Promise<ScriptedServer> {
  return startAnthropicServer([], { everyRequest: taskModels(models) });
}

/** Writes a task file of `lines`. */
export async function taskFile(
  folder: string,
  lines: Record<string, unknown>[],
  name = "tasks.jsonl",
): Promise<string> {
  const file = join(folder, name);
  await writeFile(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(""));
  return file;
}

/** `mini-agent batch ARGS` through the real bin; `started` gets the process (to kill it). */
export function runBatch(
  args: string[],
  options: {
    cwd: string;
    home: string;
    url: string;
    started?: (child: ReturnType<typeof spawn>) => void;
    /** Variables beside those of `cliEnv` (a `PATH` of its own). */
    env?: NodeJS.ProcessEnv;
  },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "batch", ...args], {
      cwd: options.cwd,
      env: cliEnv(options.home, options.url, options.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    options.started?.(child);
  });
}

/** The lines of `DIR/results.jsonl`, each checked against the shipped schema's definition. */
export function resultLines(dir: string): ResultLine[] {
  let text: string;
  try {
    text = readFileSync(join(dir, "results.jsonl"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const value: unknown = JSON.parse(line);
      const error = Value.Errors(ResultLineSchema, value).First();
      if (error)
        throw new Error(
          `results line does not match its schema: ${error.path} ${error.message}: ${line}`,
        );
      return value as ResultLine;
    });
}
