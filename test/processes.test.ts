import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { processesWith } from "./support/processes.js";

describe("processesWith", () => {
  it("finds a process left running, by its command line with spaces", async () => {
    const left = spawn("sleep", ["317"], { detached: true, stdio: "ignore" });
    left.unref();
    try {
      await new Promise((resolve) => left.once("spawn", resolve));
      expect(await processesWith("sleep 317")).toEqual([`${left.pid} sleep 317`]);
    } finally {
      left.kill("SIGKILL");
    }
    await new Promise((resolve) => left.once("exit", resolve));
    expect(await processesWith("sleep 317")).toEqual([]);
  });
});
