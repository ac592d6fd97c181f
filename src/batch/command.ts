import { BatchUsageError, batchExit, runBatch } from "./batch.js";
import { batchOptions, batchUsage } from "./options.js";
import { TaskFileError } from "./tasks.js";

/**
 * `mini-agent batch`: a front end of its own. It drives headless `mini-agent` children through
 * the published stream-json protocol; `main.ts` hands it the words after `batch`. SIGINT and
 * SIGTERM stop the children (their attempts are recorded as interrupted, unscored) and exit.
 */
export async function batchCommand(argv: string[]): Promise<number> {
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const stop = new AbortController();
  const signals = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  let code: number | undefined;
  for (const [name, exit] of Object.entries(signals)) {
    // The batch owns its signals: the turn's handlers would exit before the children are stopped.
    process.removeAllListeners(name);
    process.on(name, () => {
      if (stop.signal.aborted) process.exit(exit);
      code = exit;
      say(`batch: ${name}: stopping the running tasks (again to quit at once)`);
      stop.abort();
    });
  }
  try {
    const options = batchOptions(argv, (message) => new BatchUsageError(message));
    if (options === "help") {
      process.stdout.write(`${batchUsage}\n`);
      return batchExit.done;
    }
    const exit = await runBatch(options, say, stop.signal);
    return code ?? exit;
  } catch (error) {
    if (error instanceof TaskFileError) {
      for (const problem of error.problems) say(`mini-agent batch: ${problem}`);
      return batchExit.usage;
    }
    if (error instanceof BatchUsageError) {
      say(`mini-agent batch: ${error.message}`);
      return batchExit.usage;
    }
    throw error;
  }
}
