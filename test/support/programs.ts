import { spawnSync } from "node:child_process";

/**
 * Whether `name` is on PATH, for tests that need a program a machine may lack (Chromium,
 * ripgrep). Elsewhere their tests are skipped; in CI (`CI` set) every test must run, so a missing
 * program is an error that says how to install it (`.ci/run` does).
 */
export function hasProgram(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const found = spawnSync("sh", ["-c", `command -v ${name}`], {
    encoding: "utf8",
    env: { PATH: env.PATH },
  });
  if (found.status === 0 && found.stdout.trim() !== "") return true;
  if (env.CI)
    throw new Error(`CI must run every test: ${name} is not installed (.ci/run installs it)`);
  return false;
}
