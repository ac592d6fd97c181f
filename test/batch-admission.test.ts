import { describe, expect, it } from "vitest";
import { Admission, type AdmissionClock, type Entry } from "../src/batch/admission.js";

/** A clock the test moves: delays end when `advance` passes their end, or when aborted. */
class ManualClock implements AdmissionClock {
  private at = 0;
  private sleeps: { end: number; wake: () => void }[] = [];
  randomValue = 0;

  now(): number {
    return this.at;
  }

  delay(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      this.sleeps.push({ end: this.at + ms, wake: resolve });
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  random(): number {
    return this.randomValue;
  }

  advance(ms: number): void {
    this.at += ms;
    const due = this.sleeps.filter((sleep) => sleep.end <= this.at);
    this.sleeps = this.sleeps.filter((sleep) => sleep.end > this.at);
    for (const sleep of due) sleep.wake();
  }
}

/** Whether `promise` has settled once every pending callback has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

function admission(workers: number, budget?: number, spent = 0) {
  const clock = new ManualClock();
  const said: string[] = [];
  const stop = new AbortController();
  const gate = new Admission({
    workers,
    budget,
    spent,
    signal: stop.signal,
    say: (line) => said.push(line),
    clock,
  });
  return { gate, clock, said, stop };
}

const started = (entry: Entry) => {
  if (entry.kind !== "start") throw new Error(`expected a start, got ${entry.kind}`);
  return entry;
};

const limit = { errorKind: "rate_limited", reason: "429 rate_limit_error: slow down" } as const;

describe("the batch's admission of starts", () => {
  it("starts nothing while the provider asks to wait, however many slots are free, then one at once", async () => {
    const { gate, clock, said } = admission(4);
    const first = started(await gate.enter(undefined));
    gate.wait({ ...limit, retryAfterMs: 2000, where: "a #1" });
    expect(said).toEqual([
      "batch: a #1 met a rate limit (429 rate_limit_error: slow down): new starts paused for 2 s as retry-after asks, then 2 at once",
    ]);
    const second = gate.enter(undefined);
    expect(await settled(second)).toBe(false);
    clock.advance(1999);
    expect(await settled(second)).toBe(false);
    clock.advance(1);
    started(await second);
    // Concurrency was halved to 2: a third waits for one to end, and the end of one that met the
    // limit gives nothing back.
    const third = gate.enter(undefined);
    expect(await settled(third)).toBe(false);
    gate.leave(first, 0, true);
    started(await third);
    const fourth = gate.enter(undefined);
    expect(await settled(fourth)).toBe(false);
  });

  it("halves once per pause, and gives a slot back for each attempt that met no limit", async () => {
    const { gate, clock, said } = admission(4);
    const entries = [
      started(await gate.enter(undefined)),
      started(await gate.enter(undefined)),
      started(await gate.enter(undefined)),
    ];
    gate.wait({ ...limit, retryAfterMs: 100, where: "a #1" });
    gate.wait({ ...limit, retryAfterMs: 300, where: "b #1" });
    expect(said).toHaveLength(1);
    clock.advance(100);
    // The pause lasts the longest wait asked.
    const next = gate.enter(undefined);
    expect(await settled(next)).toBe(false);
    clock.advance(200);
    expect(await settled(next)).toBe(false); // 3 running, 2 at once
    for (const entry of entries) gate.leave(entry, 0, false);
    started(await next);
    expect(said.at(-1)).toBe("batch: no 429 or overload since: 4 at once again");
  });

  it("backs off 1 s, 2 s, 4 s… less up to half at random when the provider names no wait", async () => {
    const { gate, clock, said } = admission(2);
    clock.randomValue = 0.5;
    gate.wait({
      errorKind: "overloaded",
      retryAfterMs: undefined,
      reason: "Overloaded",
      where: "a #1",
    });
    expect(said.at(-1)).toBe(
      "batch: a #1 met an overload (Overloaded): new starts paused for 750 ms backing off, then 1 at once",
    );
    clock.advance(750);
    clock.randomValue = 0;
    gate.wait({
      errorKind: "overloaded",
      retryAfterMs: undefined,
      reason: "Overloaded",
      where: "b #1",
    });
    expect(said.at(-1)).toContain("paused for 2 s backing off");
    clock.advance(2000);
    gate.wait({
      errorKind: "overloaded",
      retryAfterMs: undefined,
      reason: "Overloaded",
      where: "c #1",
    });
    expect(said.at(-1)).toContain("paused for 4 s backing off");
  });

  it("reserves each task's budget, or what is left, waits for running tasks to give some back, and skips when none runs", async () => {
    const { gate } = admission(3, 100, 10);
    const a = started(await gate.enter(40));
    const b = started(await gate.enter(40));
    expect([a.reserved, b.reserved]).toEqual([40, 40]);
    const c = started(await gate.enter(40));
    expect(c.reserved).toBe(10);
    // None left: the next waits while tasks run.
    const d = gate.enter(40);
    expect(await settled(d)).toBe(false);
    gate.leave(a, 25, false); // gives back 15
    expect(started(await d).reserved).toBe(15);
    gate.leave(b, 40, false);
    gate.leave(c, 16, false); // one request past its 10
    expect(gate.spent).toBe(10 + 25 + 40 + 16);
    const e = gate.enter(40);
    expect(await settled(e)).toBe(false);
    gate.leave(await d.then(started), 15, false);
    expect(await e).toEqual({ kind: "budget" });
    expect(await gate.enter(40)).toEqual({ kind: "budget" });
  });

  it("lets no one through once stopped, or once the batch is aborted", async () => {
    const { gate } = admission(1);
    const a = started(await gate.enter(undefined));
    const waiting = gate.enter(undefined);
    gate.stop("2 attempts in a row ended in an error");
    expect(await waiting).toEqual({ kind: "stopped" });
    gate.leave(a, 0, false);
    expect(await gate.enter(undefined)).toEqual({ kind: "stopped" });
    const other = admission(1);
    other.stop.abort();
    expect(await other.gate.enter(undefined)).toEqual({ kind: "stopped" });
  });
});
