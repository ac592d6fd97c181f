import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Value } from "@sinclair/typebox/value";
import {
  type OutputLine,
  OutputLineSchema,
  streamJsonSchema,
} from "../../src/cli/stream-json-protocol.js";
import { bin, type CliOptions } from "./cli.js";

/** The JSON Schema the built package ships. */
export const shippedSchema = JSON.parse(
  readFileSync(new URL("../../dist/stream-json.schema.json", import.meta.url), "utf8"),
) as Record<string, unknown>;

/**
 * Checks one parsed stream-json line against the protocol, and throws naming the line and the
 * first problem. The definitions it checks with are the ones the shipped schema file is written
 * from; `stream-json.test.ts` proves the file equals them.
 */
export function checkLine(value: unknown, text = JSON.stringify(value)): OutputLine {
  if (Value.Check(OutputLineSchema, value)) return value;
  const problem = [...Value.Errors(OutputLineSchema, value)]
    .map((error) => `${error.path || "/"}: ${error.message}`)
    .slice(0, 3)
    .join("; ");
  throw new Error(`stream-json line not in the schema: ${text} (${problem})`);
}

/** Every line of a stream-json stdout, parsed and checked against the schema. */
export function protocolLines(stdout: string): OutputLine[] {
  return stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => checkLine(JSON.parse(line) as unknown, line));
}

/** The schema as generated from the definitions now (the build writes this to the file). */
export const definedSchema = () => JSON.parse(JSON.stringify(streamJsonSchema())) as unknown;

/**
 * A program driving the built CLI over stdin and stdout: every stdout line is checked against
 * the protocol's schema as it arrives and handed to `answer`, which returns the lines to write
 * back (or `"end"` to close stdin).
 */
export function drive(
  args: string[],
  options: CliOptions,
  first: string[],
  answer: (line: OutputLine) => string[] | "end" | "SIGTERM",
): Promise<{ code: number | null; lines: OutputLine[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const lines: OutputLine[] = [];
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const send = (values: string[]) => {
      for (const value of values) child.stdin.write(`${value}\n`);
    };
    createInterface({ input: child.stdout }).on("line", (text) => {
      const line = checkLine(JSON.parse(text) as unknown, text);
      lines.push(line);
      const reply = answer(line);
      if (reply === "end") child.stdin.end();
      else if (reply === "SIGTERM") child.kill("SIGTERM");
      else send(reply);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, lines, stderr }));
    send(first);
  });
}
