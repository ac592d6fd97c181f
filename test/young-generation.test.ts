import { describe, expect, it } from "vitest";
import { YoungGeneration } from "../src/app/young-generation.js";
import type { TurnEvent } from "../src/runner/events.js";

/** A `YoungGeneration` whose flags are recorded, past `long` units. */
function watched(long: number, setFlags?: (flags: string) => void | Promise<void>) {
  const set: string[] = [];
  const young = new YoungGeneration(
    setFlags ??
      ((flags) => {
        set.push(flags);
      }),
    long,
  );
  return { young, set };
}

/** Lets the flag, set after the event that passed the bound, be set. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const text = (units: number): TurnEvent => ({ type: "text", text: "x".repeat(units) });
const thinking = (units: number): TurnEvent => ({ type: "thinking", text: "t".repeat(units) });
const answer = (units: number): TurnEvent => ({
  type: "message",
  message: { role: "assistant", content: "x".repeat(units), toolCalls: [] },
});

describe("YoungGeneration", () => {
  it("leaves V8's flags alone while the streamed answers are short", async () => {
    const { young, set } = watched(100);
    for (const event of [text(40), thinking(30), text(29), answer(1000)]) young.watch(event);
    await settled();
    expect(set).toEqual([]);
  });

  it("holds the young generation once, when streamed text and thinking pass the bound", async () => {
    const { young, set } = watched(100);
    young.watch(text(60));
    young.watch(thinking(39));
    young.watch(answer(99));
    await settled();
    expect(set).toEqual([]);
    young.watch(text(1));
    await settled();
    expect(set).toEqual(["--semi-space-growth-factor=1"]);
    for (const event of [text(500), thinking(500)]) young.watch(event);
    await settled();
    expect(set).toEqual(["--semi-space-growth-factor=1"]);
  });

  it("goes on as before where the flag cannot be set", async () => {
    const failures: unknown[] = [];
    const onRejection = (reason: unknown) => failures.push(reason);
    process.on("unhandledRejection", onRejection);
    try {
      const throwing = watched(10, () => {
        throw new Error("no such flag");
      });
      const rejecting = watched(10, () => Promise.reject(new Error("no node:v8")));
      expect(() => throwing.young.watch(text(10))).not.toThrow();
      expect(() => rejecting.young.watch(text(10))).not.toThrow();
      await settled();
      await settled();
    } finally {
      process.off("unhandledRejection", onRejection);
    }
    expect(failures).toEqual([]);
  });
});
