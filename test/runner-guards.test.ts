import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runAgent } from "../src/agent.js";
import { Journal } from "../src/runner/journal.js";
import { SessionRunner } from "../src/runner/runner.js";
import { Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/store.js";
import { FakeClient, text } from "../src/testing/fake-client.js";
import type { ModelEvent, ModelRequest } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const done: ModelEvent = { type: "done" };

async function runnerIn(dir: string, client: FakeClient, env: NodeJS.ProcessEnv = {}) {
  const store = new SessionStore(dir, () =>
    Session.create({ dir, workspace: "/ws", model: "m", id: "s1", now: new Date(0), env }),
  );
  const journal = new Journal(store);
  const runner = new SessionRunner({
    client,
    journal,
    turn: async () => ({ system: "system", tools: [] }),
    info: { model: "m", workspace: "/ws", sandbox: "off" },
  });
  return { runner, journal };
}

describe("SessionRunner and runAgent against a caller that breaks the rules", () => {
  it("refuses a second turn while one runs on the same runner, and the first goes on", async () => {
    let release = () => {};
    const slow = (_request: ModelRequest) =>
      (async function* () {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        yield text("first");
        yield done;
      })();
    const dir = await tempDir();
    const { runner, journal } = await runnerIn(dir, new FakeClient([slow]));
    const first = runner.runTurn("one");
    await expect(runner.runTurn("two")).rejects.toThrow(
      "a turn is already running on this runner: wait for it to end",
    );
    release();
    expect(await first).toMatchObject({ status: "completed", text: "first" });
    await journal.close();
    const prompts = (await readFile(`${dir}/s1.jsonl`, "utf8"))
      .split("\n")
      .filter((line) => line.includes('"role":"user"'));
    expect(prompts).toHaveLength(1);
  });

  it("keeps a turn's status as written whatever secret equals it", async () => {
    const dir = await tempDir();
    const { runner, journal } = await runnerIn(dir, new FakeClient([[text("hi"), done]]), {
      STATUS_TOKEN: "completed",
    });
    expect(await runner.runTurn("go")).toMatchObject({ status: "completed" });
    await journal.close();
    const ends = (await readFile(`${dir}/s1.jsonl`, "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; status?: string })
      .filter((record) => record.type === "turn_end");
    expect(ends.map((end) => end.status)).toEqual(["completed"]);
  });

  it("refuses a turn limit that is not a whole number of at least 1", async () => {
    for (const maxTurns of [0, -1, 1.5, Number.NaN]) {
      const run = runAgent({
        client: new FakeClient([[text("hi"), done]]),
        tools: [],
        system: "",
        messages: [{ role: "user", content: "go" }],
        maxTurns,
      });
      await expect(run, String(maxTurns)).rejects.toThrow(
        `maxTurns must be a whole number of at least 1, not ${maxTurns}`,
      );
    }
  });
});
