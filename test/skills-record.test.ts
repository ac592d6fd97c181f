import { createHash } from "node:crypto";
import { mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RunSkills } from "../src/app/skills.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, sessionRecords, useCliSetup } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/** The session's skills record: the skills loaded for a turn, and those sent with its prompt. */

const tempDir = useTempDirs();
const setup = useCliSetup();
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const skillMd = (name: string) =>
  `---\nname: ${name}\ndescription: What ${name} is for, in a sentence.\n---\nSteps of ${name}.\n`;

async function userSkill(home: string, name: string): Promise<string> {
  const folder = join(home, ".agents", "skills", name);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, "SKILL.md"), skillMd(name));
  return join(await realpath(folder), "SKILL.md");
}

describe("what a run records of its skills", () => {
  it("tells the loaded set at the first turn and again only when it changed, and each skill sent", async () => {
    const home = await tempDir();
    const workspace = await tempDir();
    const release = await userSkill(home, "release");
    const skills = new RunSkills(
      { workspace, home, state: join(home, "state") },
      undefined,
      () => {},
    );
    await skills.refresh();
    await skills.prompt(undefined);
    const releaseLoaded = {
      name: "release",
      scope: "user",
      location: release,
      hash: sha256(skillMd("release")),
      listed: true,
    };
    expect(skills.notice()).toEqual({ loaded: [releaseLoaded] });
    await skills.prompt(undefined);
    expect(skills.notice()).toBeUndefined();
    const review = await userSkill(home, "review");
    await skills.refresh();
    await skills.message(["review", "release"], "go");
    await skills.prompt(undefined);
    const reviewLoaded = {
      ...releaseLoaded,
      name: "review",
      location: review,
      hash: sha256(skillMd("review")),
    };
    expect(skills.notice()).toEqual({
      loaded: [releaseLoaded, reviewLoaded],
      sent: ["review", "release"],
    });
    await skills.prompt(undefined);
    expect(skills.notice()).toBeUndefined();
    await rm(join(home, ".agents"), { recursive: true });
    await skills.prompt(undefined);
    expect(skills.notice()).toEqual({ loaded: [] });
    await skills.prompt(undefined);
    expect(skills.notice()).toBeUndefined();
  });

  it("tells nothing in a run that never loaded a skill", async () => {
    const home = await tempDir();
    const skills = new RunSkills(
      { workspace: await tempDir(), home, state: join(home, "state") },
      undefined,
      () => {},
    );
    await skills.prompt(undefined);
    expect(skills.notice()).toBeUndefined();
  });

  it("writes one skills record after the prompt that --skill sent, through the CLI", async () => {
    const { home, options } = await setup([() => stream(turn({ text: ["released"] }))]);
    const release = await userSkill(home, "release");
    const run = await runBin(["--skill", "release", "release it"], options);
    expect(run.code, run.stderr).toBe(0);
    const [file] = await sessionFiles(home);
    const records = await sessionRecords(file ?? "");
    expect(records.map((record) => record.type)).toEqual([
      "session",
      "message",
      "skills",
      "usage",
      "message",
      "turn_end",
    ]);
    expect(records[2]).toEqual({
      type: "skills",
      loaded: [
        {
          name: "release",
          scope: "user",
          location: release,
          hash: sha256(skillMd("release")),
          listed: true,
        },
      ],
      sent: ["release"],
    });
  });
});

describe("the skills a compaction covered", () => {
  it("gives again the text of every skill one prompt sent with several --skill flags", async () => {
    const home = await tempDir();
    const workspace = await tempDir();
    const release = await userSkill(home, "release");
    const review = await userSkill(home, "review");
    const skills = new RunSkills(
      { workspace, home, state: join(home, "state") },
      undefined,
      () => {},
    );
    await skills.refresh();
    const message = await skills.message(["review", "release"], "go");
    const facts = { filesRead: [], filesChanged: [], commands: [], refused: [], omitted: 0 };
    const compaction = {
      firstKept: 1,
      count: 1,
      trigger: "manual" as const,
      userMessages: [message],
      facts,
      summary: "",
      tokensBefore: 0,
      tokensAfter: 0,
    };
    const prompt = await skills.prompt(compaction);
    const kept = prompt.slice(prompt.indexOf("\n\nSkills read before the conversation"));
    expect(kept).toBe(
      [
        "",
        "Skills read before the conversation was compacted (read again from disk; their instructions still apply):",
        `Skill release (${release}):\n\nSteps of release.\n`,
        `Skill review (${review}):\n\nSteps of review.\n`,
      ].join("\n\n"),
    );
  });
});
