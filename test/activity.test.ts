import { describe, expect, it } from "vitest";
import { Activity, elapsed, type Ticker } from "../src/cli/terminal/activity.js";
import { styles } from "../src/render/style.js";

/** A ticker the test moves by hand. */
function manualTicker() {
  let now = 0;
  let tick: (() => void) | undefined;
  const ticker: Ticker = {
    now: () => now,
    every(_ms, fn) {
      tick = fn;
      return () => {
        tick = undefined;
      };
    },
  };
  return {
    ticker,
    advance(ms: number) {
      now += ms;
      tick?.();
    },
    get ticking() {
      return tick !== undefined;
    },
  };
}

describe("activity indicator", () => {
  it("draws one line with the elapsed time, redraws it in place, and erases it", () => {
    const writes: string[] = [];
    const clock = manualTicker();
    const activity = new Activity(
      (t) => writes.push(t),
      styles(false),
      () => 80,
      clock.ticker,
    );
    activity.start("waiting for the model");
    clock.advance(1500);
    activity.stop();
    expect(writes).toEqual([
      "\r⠋ waiting for the model · 0.0s",
      "\r⠙ waiting for the model · 1.5s",
      `\r${" ".repeat(30)}\r`,
    ]);
    expect(clock.ticking).toBe(false);
    expect(activity.running).toBe(false);
  });

  it("fits a label of wide characters to the terminal's columns, not its length", () => {
    const writes: string[] = [];
    const clock = manualTicker();
    const activity = new Activity(
      (t) => writes.push(t),
      styles(false),
      () => 20,
      clock.ticker,
    );
    activity.start("bash echo 漢字漢字漢字漢字漢字");
    activity.stop();
    // 19 columns at most (one is left free so the line never wraps): 漢 takes two.
    expect(writes).toEqual(["\r⠋ bash echo 漢字漢…", `\r${" ".repeat(19)}\r`]);
  });

  it("covers a longer earlier label with blanks and fits the line to the terminal", () => {
    const writes: string[] = [];
    const clock = manualTicker();
    const activity = new Activity(
      (t) => writes.push(t),
      styles(false),
      () => 20,
      clock.ticker,
    );
    activity.start("bash a-command-longer-than-the-screen");
    activity.start("ls");
    expect(writes).toEqual(["\r⠋ bash a-command-l…", `\r⠙ ls · 0.0s${" ".repeat(8)}`]);
  });

  it("erases itself before other text and draws again below it on the next tick", () => {
    const writes: string[] = [];
    const clock = manualTicker();
    const activity = new Activity(
      (t) => writes.push(t),
      styles(false),
      () => 80,
      clock.ticker,
    );
    activity.start("x");
    activity.clear();
    activity.clear();
    clock.advance(100);
    expect(writes).toEqual(["\r⠋ x · 0.0s", `\r${" ".repeat(10)}\r`, "\r⠙ x · 0.1s"]);
  });

  it("draws nothing once muted, until unmuted", () => {
    const writes: string[] = [];
    const clock = manualTicker();
    const activity = new Activity(
      (t) => writes.push(t),
      styles(false),
      () => 80,
      clock.ticker,
    );
    activity.start("a");
    activity.mute();
    activity.start("b");
    clock.advance(100);
    activity.unmute();
    activity.start("c");
    expect(writes).toEqual(["\r⠋ a · 0.0s", `\r${" ".repeat(10)}\r`, "\r⠙ c · 0.0s"]);
  });

  it("says the time in seconds, then minutes", () => {
    expect([elapsed(400), elapsed(12_000), elapsed(125_000)]).toEqual(["0.4s", "12.0s", "2m 05s"]);
  });
});
