import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { summaryPrompt } from "../src/compaction/summary.js";
import { historyProblem } from "../src/history/valid.js";
import { Session } from "../src/session/session.js";
import { startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import type { Body, Reply } from "../src/testing/sse-server.js";
import { loadTrust } from "../src/trust/trust.js";
import type { Message } from "../src/types.js";
import { useCleanup } from "./support/cleanup.js";
import {
  cliEnv,
  runBin,
  sessionFiles,
  sessionRecords,
  toolResults,
  useCliSetup,
} from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";

/** Skills through the built CLI against the strict local Messages server. */

const setup = useCliSetup();
const tempDir = useTempDirs();
const track = useCleanup();
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

  it("runs the skill's scripts/x.sh in the sandbox, and keeps the skill's text after a compaction", async () => {
    if (!(await realSandbox())) return;
    const home = await tempDir();
    const workspace = await tempDir();
    const folder = await userSkill(home);
    await writeFile(join(workspace, "big.txt"), "a line of a rather large file\n".repeat(200));
    const summary =
      "## Goal\nrelease\n## Decisions\n-\n## Done\nread the skill\n## In progress\n-\n## Next\nanswer";
    let round = 0;
    let summarized = false;
    const dispatch = (body: Body): Reply => {
      if (systemText(body) === summaryPrompt) {
        summarized = true;
        return stream(turn({ text: [summary] }));
      }
      round++;
      const call = (name: string, input: Record<string, unknown>) =>
        stream(turn({ calls: [{ id: `toolu_${round}`, name, input }] }));
      if (round === 1) return call("read", { path: join(folder, "SKILL.md") });
      if (round === 2) return call("bash", { command: join(folder, "scripts", "x.sh") });
      if (!summarized && round <= 12) return call("read", { path: "big.txt" });
      return stream(turn({ text: ["released"] }));
    };
    const server = track(
      await startAnthropicServer(
        Array.from({ length: 40 }, () => dispatch),
        { contextLimit: 8000 },
      ),
    );
    const options = { cwd: workspace, env: cliEnv(home, server.url) };
    const run = await runBin(
      ["--allow-bash", "--sandbox", "required", "--context-window", "8000", "release it"],
      options,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(server.rejections).toEqual([]);
    expect(summarized).toBe(true);
    const results = toolResults(server.requests[2]?.body ?? {});
    expect(results.at(-1)).toEqual({
      id: "toolu_2",
      content: "skill script ran\n[exit code 0]",
      isError: false,
    });
    const last = server.requests.at(-1)?.body;
    expect(systemText(last)).toContain(
      "Skills read before the conversation was compacted (read again from disk; their instructions still apply):",
    );
    expect(systemText(last)).toContain("Run scripts/x.sh, then read references/x.md.");
    // The whole session, the messages the compaction covered included, is a valid history.
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    const messages = records.flatMap((record) =>
      record.type === "message" ? [record.message as Message] : [],
    );
    expect(messages.length).toBeGreaterThan(10);
    expect(historyProblem(messages)).toBeUndefined();
    expect(records.filter((record) => record.type === "compaction")).toHaveLength(1);
  }, 60_000);

  it("tells at most 20 skill warnings in a run, then how many more", async () => {
    const { workspace, options } = await setup([stream(turn({ text: ["ok"] }))]);
    for (let i = 0; i < 60; i++) {
      const name = `s${String(i).padStart(2, "0")}`;
      await mkdir(join(workspace, ".agents", "skills", name), { recursive: true });
      await writeFile(
        join(workspace, ".agents", "skills", name, "SKILL.md"),
        `---\nname: ${name}\ndescription: Skill ${name}.\n---\nSteps.\n`,
      );
    }
    const run = await runBin(["hello"], options);
    expect(run.code).toBe(0);
    const lines = run.stderr.split("\n").filter((line) => line.startsWith("mini-agent: skill"));
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toBe(
      "mini-agent: skills: 40 more warnings (mini-agent skills lists them all)",
    );
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
      stderr: 'mini-agent: no skill named "nope": mini-agent skills lists them\n',
    });
    expect((await runBin(["--skill", " ", "go"], options)).stderr).toBe(
      'mini-agent: no skill named " ": mini-agent skills lists them\n',
    );
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
    const { contentHash } = await import("../src/crypto.js");
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
