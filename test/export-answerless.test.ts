import { describe, expect, it } from "vitest";
import { header, useExportSetup } from "./support/export.js";

/** A usage record no answer follows, without any compaction: the export does not call it one. */

const setup = useExportSetup();

describe("a request whose answer line was torn", () => {
  it("is shown as a request with no answer in the file, not as a compaction's summary", async () => {
    const s = await setup();
    await s.raw("s1", [
      header("s1"),
      { type: "message", message: { role: "user", content: "hello" } },
      { type: "usage", inputTokens: 12, outputTokens: 3 },
      '{"type":"message","message":{"role":"assistant","content":"h',
      { type: "message", message: { role: "user", content: "again" } },
    ]);
    const run = await s.run(["s1", "--format", "md"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      "_Request with no answer in the file (the summary of a compaction, or an answer lost): 12 input · 3 output tokens_\n",
    );
    expect(run.stdout).toContain("- Compactions: 0\n");
  }, 30_000);
});
