import { execFileSync } from "node:child_process";

const built = Symbol.for("mini-agent.test.built");

/**
 * The CLI tests spawn the real bin, so `dist/` is rebuilt from the sources first: once per run,
 * though each test project (see vitest.config.ts) calls this setup.
 */
export default function setup(): void {
  const state = globalThis as { [built]?: true };
  if (state[built]) return;
  execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
  state[built] = true;
}
