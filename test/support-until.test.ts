import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { sampleEvery, signalWhen, until, watchdog } from "./support/until.js";

describe("until", () => {
  it("resolves once the fact holds, after looking as often as it took", async () => {
    let looks = 0;
    await until(() => ++looks === 3);
    expect(looks).toBe(3);
  });

  it("takes a check that answers later", async () => {
    let looks = 0;
    await until(async () => ++looks === 2);
    expect(looks).toBe(2);
  });

  it("rejects, naming the check, when the fact never comes", async () => {
    await expect(until(() => false, 100)).rejects.toThrow(
      new Error("until: () => false did not hold after 100 ms"),
    );
  });

  it("rejects with the fact's name when it is given one", async () => {
    await expect(until(() => false, 50, { what: "the file `begun`" })).rejects.toThrow(
      new Error("until: the file `begun` did not hold after 50 ms"),
    );
  });

  it("rejects with the check's own error when the check throws", async () => {
    const check = (): boolean => {
      throw new Error("no such process");
    };
    await expect(until(check)).rejects.toThrow(new Error("no such process"));
  });
});

describe("signalWhen", () => {
  it("sends the signal once the fact holds, not before", async () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    let ready = false;
    let looks = 0;
    signalWhen(
      child,
      () => {
        looks++;
        return ready;
      },
      "SIGTERM",
    );
    await until(() => looks >= 3);
    expect(child.signalCode).toBe(null);
    ready = true;
    await once(child, "exit");
    expect(child.signalCode).toBe("SIGTERM");
  });
});

describe("watchdog", () => {
  it("runs its action when the wait outlasts it", async () => {
    let fired = false;
    watchdog(10, () => {
      fired = true;
    });
    await until(() => fired, 5_000);
    expect(fired).toBe(true);
  });

  it("never runs once disarmed", async () => {
    let fired = false;
    const disarm = watchdog(10, () => {
      fired = true;
    });
    disarm();
    let looks = 0;
    // A sampler that has run a few times has let more than the watchdog's 10 ms pass.
    const stop = sampleEvery(10, () => looks++);
    await until(() => looks >= 5);
    stop();
    expect(fired).toBe(false);
  });
});
