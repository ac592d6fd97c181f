import { readFileSync } from "node:fs";
import { Value } from "@sinclair/typebox/value";
import {
  type OutputLine,
  OutputLineSchema,
  streamJsonSchema,
} from "../../src/cli/stream-json-protocol.js";

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
