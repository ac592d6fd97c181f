import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { historyProblem } from "../src/history/valid.js";
import { Session } from "../src/session/session.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import type { Body, Reply } from "../src/testing/sse-server.js";
import { loadTrust } from "../src/trust/trust.js";
import type { Message } from "../src/types.js";
import { runBin, sessionFiles, toolResults, useCliSetup } from "./support/cli.js";

/** Skills through the built CLI against the strict local Messages server. */

const setup = useCliSetup();
const systemText = (body: Body | undefined) =>
  ((body?.system ?? []) as { text: string }[]).map((block) => block.text).join("");

const skillMd =
  "---\nname: release\ndescription: How to cut a release of this project.\n---\n# Release\n\nRun scripts/x.sh, then read references/x.md.\n";

async function userSkill(home: string): Promise<string> {
  const folder = join(home, ".agents", "skills", "release");
  await mkdir(join(folder, "references"), { recursive: true });
  await mkdir(join(folder, "scripts"));
  await writeFile(join(folder, "SKILL.md"), skillMd);
  await writeFile(join(folder, "references", "x.md"), "the reference text\n");
  await writeFile(join(folder, "scripts", "x.sh"), "#!/bin/sh\necho skill script ran\n");
  await chmod(join(folder, "scripts", "x.sh"), 0o755);
  return folder;
}

type Call = { name: string; input: Record<string, unknown> };
/** A script whose calls are known only once the home exists: each round asks `list()` then. */
const calls = (list: () => Call[]): ((body: Body) => Reply)[] =>
  Array.from({ length: 6 }, (_, round) => () => {
    const call = list()[round];
    return call
      ? stream(turn({ calls: [{ id: `toolu_${round + 1}`, ...call }] }))
      : stream(turn({ text: ["done"] }));
  });

describe("skills in the CLI", () => {
  it("lists a user skill in the system prompt; the model reads its SKILL.md, then a reference", async () => {
    let folder = "";
    const { server, home, options } = await setup(
      calls(() => [
        { name: "read", input: { path: join(folder, "SKILL.md") } },
        { name: "read", input: { path: join(folder, "references", "x.md") } },
      ]),
    );
    folder = await userSkill(home);
    const run = await runBin(["release it"], options);
    expect(run.stderr.startsWith(`  ✓ read ${join(folder, "SKILL.md")}\n  ✓ read `)).toBe(true);
    expect(run.code).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(systemText(server.requests[0]?.body)).toContain(
      `<skill>\n<name>release</name>\n<description>How to cut a release of this project.</description>\n<location>${join(folder, "SKILL.md")}</location>\n</skill>`,
    );
    expect(toolResults(server.requests[2]?.body ?? {})).toEqual([
      { id: "toolu_1", content: skillMd.trimEnd(), isError: false },
      { id: "toolu_2", content: "the reference text", isError: false },
    ]);
    const [file] = await sessionFiles(home);
    const { messages } = await Session.open(file ?? "");
    expect(historyProblem(messages as Message[])).toBeUndefined();
  });

  it("puts --skill's text before the task", async () => {
    const { server, home, options } = await setup([stream(turn({ text: ["ok"] }))]);
    const folder = await userSkill(home);
    const run = await runBin(["--skill", "release", "go"], options);
    expect(run.code).toBe(0);
    const first = (
      (server.requests[0]?.body.messages ?? []) as { content: { text: string }[] }[]
    )[0];
    expect(first?.content[0]?.text).toBe(
      `[skill release (${join(folder, "SKILL.md")}): follow these instructions; the files they name are relative to ${folder}]\n\n# Release\n\nRun scripts/x.sh, then read references/x.md.\n\ngo`,
    );
    const unknown = await runBin(["--skill", "nope", "go"], options);
    expect(unknown).toEqual({
      code: 2,
      stdout: "",
      stderr: "mini-agent: no skill named nope: mini-agent skills lists them\n",
    });
  });

  it("does not load an untrusted project skill, says how to trust it, and loads it once trusted", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ text: ["one"] })),
      stream(turn({ text: ["two"] })),
      stream(turn({ text: ["three"] })),
    ]);
    const folder = join(workspace, ".agents", "skills", "review");
    await mkdir(folder, { recursive: true });
    const text =
      "---\nname: review\ndescription: The project's review checklist.\n---\nCheck it.\n";
    await writeFile(join(folder, "SKILL.md"), text);
    const first = await runBin(["go"], options);
    expect(first.stderr).toBe(
      `mini-agent: skill review (${join(folder, "SKILL.md")}): not trusted (new, or changed since it was trusted): not loaded; run \`mini-agent trust\` to trust it\n`,
    );
    expect(systemText(server.requests[0]?.body)).not.toContain("<available_skills>");
    // Trusted through the trust record's API, as `mini-agent trust` records it.
    const { contentHash } = await import("../src/trust/trust.js");
    const trust = await loadTrust(join(home, "state"), workspace);
    await trust.trust([
      { kind: "skill", name: ".agents/skills/review/SKILL.md", hash: contentHash(text) },
    ]);
    const second = await runBin(["go"], options);
    expect(second.stderr).toBe("");
    expect(systemText(server.requests[1]?.body)).toContain("<name>review</name>");
    await writeFile(join(folder, "SKILL.md"), `${text}Also push to main.\n`);
    const third = await runBin(["go"], options);
    expect(third.stderr).toContain("skill review");
    expect(systemText(server.requests[2]?.body)).not.toContain("<available_skills>");
  });

  it("mini-agent skills lists what was found, with the warnings", async () => {
    const { home, options } = await setup([]);
    const folder = await userSkill(home);
    await mkdir(join(home, ".agents", "skills", "Bad"));
    await writeFile(
      join(home, ".agents", "skills", "Bad", "SKILL.md"),
      "---\nname: Bad\ndescription: x\n---\n",
    );
    const run = await runBin(["skills"], options);
    expect(run).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `user    release  ${join(folder, "SKILL.md")}`,
        "        How to cut a release of this project.",
        "warnings:",
        `  skill Bad (${join(home, ".agents", "skills", "Bad", "SKILL.md")}): the name "Bad" is not lowercase a-z, 0-9 and single hyphens: not loaded`,
        "",
      ].join("\n"),
    });
  });
});
