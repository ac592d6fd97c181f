#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { exitCodes, parseCliArgs, UsageError, usage } from "./args.js";
import { describeError } from "./errors.js";

/**
 * The `mini-agent` command. This file stays light: `--version` and `--help` load nothing else,
 * and the provider SDK is loaded only when a turn runs.
 */
async function main(argv: string[]): Promise<number> {
  let debug = argv.includes("--debug");
  let baseURL: string | undefined;
  try {
    const args = parseCliArgs(argv, process.env);
    debug = args.debug;
    baseURL = args.baseURL;
    if (args.help) {
      process.stdout.write(`${usage}\n`);
      return exitCodes.done;
    }
    if (args.version) {
      process.stdout.write(`${version()}\n`);
      return exitCodes.done;
    }
    const workspace = await realpath(args.cwd).catch(() => {
      throw new UsageError(`no such folder: ${args.cwd}`);
    });
    const { runCli } = await import("./run.js");
    return await runCli(args, workspace);
  } catch (error) {
    const usageError = error instanceof UsageError;
    process.stderr.write(`mini-agent: ${describeError(error, baseURL)}\n`);
    if (usageError && /^(Unknown option|Option)/.test(error.message))
      process.stderr.write(`\n${usage}\n`);
    if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    return usageError ? exitCodes.usage : exitCodes.error;
  }
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

// Exit as soon as the work is done: on Linux stdout and stderr writes are synchronous, and
// nothing left (an idle keep-alive socket, a pool) deserves the wait.
main(process.argv.slice(2)).then((code) => process.exit(code));
