import { describe, expect, it } from "vitest";
import { hasProgram } from "./support/programs.js";

describe("tests that need a program the machine may lack", () => {
  it("find it on PATH, skip without it, and fail in CI without it", () => {
    expect(hasProgram("sh", { PATH: process.env.PATH })).toBe(true);
    expect(hasProgram("sh", { PATH: "/nonexistent" })).toBe(false);
    expect(() => hasProgram("sh", { PATH: "/nonexistent", CI: "true" })).toThrow(
      "CI must run every test: sh is not installed (.ci/run installs it)",
    );
  });
});
