import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { oracleRounds } from "../src/testing/task-models.js";
import { modelsServer, resultLines, runBatch, taskFile } from "./support/batch.js";
import { useCleanup } from "./support/cleanup.js";
import { realSandbox } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The honest check of a task set (docs/batch.md): the oracle, which writes each exercise's
 * reference solution, passes every task; the null model, which changes nothing, passes none.
 * 23 Exercism Python exercises (test/fixtures/exercism-python), through the real CLI.
 */
const fixtures = fileURLToPath(new URL("./fixtures/exercism-python/", import.meta.url));
const slugs = readdirSync(fixtures, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const tempDir = useTempDirs();
const track = useCleanup();
const sandbox = await realSandbox();

/** One task per exercise: its stub and tests copied, the tests put back, unittest as the check. */
const lines = (model: (slug: string) => string) =>
  slugs.map((slug) => {
    const module = slug.replaceAll("-", "_");
    return {
      id: slug,
      prompt: `Make ${module}_test.py pass by completing ${module}.py.`,
      workspace: join(fixtures, slug, "workspace"),
      checkFiles: join(fixtures, slug, "check"),
      check: `PYTHONDONTWRITEBYTECODE=1 python3 -m unittest -q ${module}_test`,
      model: model(slug),
    };
  });

describe.skipIf(!sandbox)("a task set checked with the oracle and the null model", () => {
  it("has at least 20 exercises, each with its licence beside it", () => {
    expect(slugs.length).toBeGreaterThanOrEqual(20);
    expect(readFileSync(join(fixtures, "LICENSE"), "utf8")).toContain("MIT License");
  });

  it("passes every task with the oracle and none with the null model, three at a time", async () => {
    const models = Object.fromEntries(
      slugs.map((slug) => {
        const module = `${slug.replaceAll("-", "_")}.py`;
        return [
          `oracle-${slug}`,
          oracleRounds({
            [module]: readFileSync(join(fixtures, slug, "solution", module), "utf8"),
          }),
        ];
      }),
    );
    const server = track(await modelsServer(models));
    const [tasks, home] = [await tempDir(), await tempDir()];
    for (const [name, model] of [
      ["oracle", (slug: string) => `oracle-${slug}`],
      ["null", () => "null"],
    ] as const) {
      const file = await taskFile(tasks, lines(model), `${name}.jsonl`);
      const out = join(await tempDir(), name);
      const run = await runBatch([file, "--out", out, "--workers", "3"], {
        cwd: tasks,
        home,
        url: server.url,
      });
      expect(run.code, run.stderr).toBe(0);
      const results = resultLines(out);
      const outcomes = results.map((line) => [line.id, line.outcome]);
      const wrong = results.find(
        (line) => line.outcome !== (name === "oracle" ? "passed" : "failed"),
      );
      expect(wrong, JSON.stringify(wrong)).toBeUndefined();
      const wanted = name === "oracle" ? "passed" : "failed";
      expect(outcomes.sort()).toEqual(slugs.map((slug) => [slug, wanted]));
    }
  }, 300_000);
});
