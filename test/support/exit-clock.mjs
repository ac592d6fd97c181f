// Preloaded into a CLI under test (NODE_OPTIONS=--import this file, EXIT_CLOCK_FILE=where):
// writes there, as the process exits, when each stop signal reached it and when it exited, on the
// process's own clock. A test of a time bound measures from the event to the effect inside the
// process under test, not around a spawn on a loaded machine. Its listeners only observe: the
// CLI's own handlers (installed as it starts) decide what a signal does.
import { writeFileSync } from "node:fs";

const file = process.env.EXIT_CLOCK_FILE ?? "";
// What the CLI starts (bash and its commands) runs without this.
delete process.env.NODE_OPTIONS;
delete process.env.EXIT_CLOCK_FILE;
const signals = [];
for (const name of ["SIGINT", "SIGTERM", "SIGHUP"])
  process.prependListener(name, () => signals.push({ name, atMs: performance.now() }));
process.on("exit", () => {
  writeFileSync(file, JSON.stringify({ signals, exitAtMs: performance.now() }));
});
