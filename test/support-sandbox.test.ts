import { stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { realSandbox, useOutsideFolders } from "./support/sandbox.js";

describe("the sandbox test helpers", () => {
  const outsideFolder = useOutsideFolders();
  let made = "";

  it("fail the suite in CI when the sandbox cannot be built, and only skip elsewhere", async () => {
    const missing = { mode: "required" as const, bwrap: "/nonexistent/bwrap" };
    await expect(realSandbox(missing, { CI: "true" })).rejects.toThrow(
      "CI must exercise the real sandbox: bwrap is not installed",
    );
    await expect(realSandbox(missing, {})).resolves.toBe(false);
  });

  it("make folders outside /tmp", async () => {
    made = await outsideFolder("helper");
    expect(made.startsWith("/var/tmp/mini-agent-helper-")).toBe(true);
    expect((await stat(made)).isDirectory()).toBe(true);
  });

  it("remove them after the test", async () => {
    await expect(stat(made)).rejects.toMatchObject({ code: "ENOENT" });
  });
});
