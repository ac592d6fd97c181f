import { describe, expect, it } from "vitest";
import { useExportSetup } from "./support/export.js";

/** A rewind in an exported session: the files it put back, and where the conversation went back. */

const setup = useExportSetup();

describe("exporting a rewound session", () => {
  it("shows each file a rewind put back and the point the conversation went back to", async () => {
    const s = await setup();
    await s.session("s1", async (session) => {
      await session.append({ role: "user", content: "one" });
      await session.append({ role: "assistant", content: "a1", toolCalls: [] });
      await session.append({ role: "user", content: "two" });
      await session.append({ role: "assistant", content: "a2", toolCalls: [] });
      const hash = "0".repeat(64);
      await session.record({
        type: "file_restore",
        to: 2,
        path: "a.txt",
        before: hash,
        after: hash,
        mode: 420,
      });
      await session.record({
        type: "file_restore",
        to: 2,
        path: "b.txt",
        before: hash,
        after: null,
        mode: null,
      });
      await session.record({ type: "rewind", to: 2 });
      await session.append({ role: "user", content: "two again" });
    });
    const md = await s.run(["--format", "md"]);
    expect(md.stdout).toContain(
      [
        "_A rewind put back `a.txt` as it was just before prompt 2_",
        "",
        "_A rewind removed `b.txt`, which the agent created from prompt 2 on_",
        "",
        "## Rewound to just before prompt 2",
        "",
        "The conversation went back to just before prompt 2: what follows is a new branch; the prompts above from prompt 2 on stay in the session file.",
        "",
      ].join("\n"),
    );
    const page = await s.run(["-o", "-"]);
    expect(page.stdout).toContain(
      '<p class="entry rewind">A rewind put back <code>a.txt</code> as it was just before prompt 2</p>',
    );
    expect(page.stdout).toContain(
      '<section class="entry rewind"><h2>Rewound to just before prompt 2</h2>',
    );
  });
});
