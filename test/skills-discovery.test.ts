import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { discoverSkills } from "../src/skills/discover.js";
import { parseSkill } from "../src/skills/parse.js";
import { loadTrust } from "../src/trust/trust.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();

const skillText = (name: string, description: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n\nDo the thing.\n`;

async function writeSkill(folder: string, text: string): Promise<void> {
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, "SKILL.md"), text);
}

async function places() {
  const home = await tempDir();
  const workspace = await tempDir();
  const state = join(home, "state");
  await mkdir(state);
  return { home, workspace, state, user: join(home, ".agents", "skills") };
}

describe("reading SKILL.md front matter", () => {
  it("reads the specification's fields and the body; unknown fields are ignored", () => {
    const text = [
      "---",
      "name: pdf-tools",
      'description: "Extract text: from PDFs"',
      "license: Apache-2.0",
      "compatibility: needs python3",
      "metadata:",
      "  author: someone",
      '  version: "1.0"',
      "allowed-tools:",
      "  - Bash(python:*)",
      "  - Read",
      "disable-model-invocation: true",
      "hooks:",
      "  pre: { deep: [1, 2] }",
      "---",
      "",
      "Body text.",
    ].join("\n");
    expect(parseSkill(text, "pdf-tools")).toEqual({
      name: "pdf-tools",
      description: "Extract text: from PDFs",
      license: "Apache-2.0",
      compatibility: "needs python3",
      metadata: { author: "someone", version: "1.0" },
      allowedTools: ["Bash(python:*)", "Read"],
      body: "Body text.",
    });
  });

  it("reads allowed-tools as a space-separated string, block scalars and folded plain lines", () => {
    const text = "---\nname: a\ndescription: >\n  one\n  two\nallowed-tools: Read Grep\n---\nx";
    expect(parseSkill(text, "a")).toEqual({
      name: "a",
      description: "one two\n",
      allowedTools: ["Read", "Grep"],
      body: "x",
    });
    const plain = "---\nname: a\ndescription: one\n  two # a comment\n---\n";
    expect(parseSkill(plain, "a")).toMatchObject({ description: "one two" });
  });

  it("reads an unquoted colon in the description as the rest of the line, with a warning", () => {
    expect(parseSkill(skillText("a", "Use when: the user asks"), "a")).toEqual({
      name: "a",
      description: "Use when: the user asks",
      body: "# a\n\nDo the thing.\n",
      warning:
        'an unquoted ": " in description (YAML refuses it); read as the whole rest of the line: quote the value',
    });
  });

  it("refuses a front matter with a line break a YAML reader would see and this one would not", () => {
    for (const [text, code] of [
      ["abc\rFAKE LINE", "000D"],
      ["line\u2028sep", "2028"],
      ["para\u2029sep", "2029"],
      ["next\u0085line", "0085"],
    ]) {
      expect(parseSkill(`---\nname: cr\ndescription: ${text}\n---\nbody\n`, "cr")).toEqual({
        refused: `the front matter holds a line break other than a newline (U+${code})`,
      });
    }
  });

  it("refuses what breaks the specification, each with its reason", () => {
    const refused = (text: string, folder = "a") => {
      const parsed = parseSkill(text, folder);
      return "refused" in parsed ? parsed.refused : "loaded";
    };
    expect(refused(skillText("PDF", "x"), "PDF")).toBe(
      'the name "PDF" is not lowercase a-z, 0-9 and single hyphens',
    );
    expect(refused(skillText("a--b", "x"), "a--b")).toBe(
      'the name "a--b" is not lowercase a-z, 0-9 and single hyphens',
    );
    const long = "a".repeat(65);
    expect(refused(skillText(long, "x"), long)).toBe("the name is 65 characters (at most 64)");
    expect(refused(skillText("a".repeat(64), "x"), "a".repeat(64))).toBe("loaded");
    expect(refused(skillText("a", "d".repeat(1025)))).toBe(
      "the description is 1025 characters (at most 1024)",
    );
    expect(refused(skillText("a", "d".repeat(1024)))).toBe("loaded");
    expect(refused("---\nname: a\n---\nbody")).toBe("no description in the front matter");
    expect(refused(skillText("b", "x"))).toBe('the name b is not its folder\'s name ("a")');
    expect(refused("# no front matter")).toBe("no front matter (the file must begin with ---)");
    expect(refused("---\nname: a\ndescription: x\n")).toBe(
      "the front matter has no closing --- line",
    );
    expect(refused("---\nname: a\nname: a\ndescription: x\n---\n")).toBe(
      "front matter line 3: name is given twice",
    );
    expect(refused('---\nname: a\ndescription: "open\n---\n')).toBe(
      'front matter line 3: an unterminated "quoted" value, or text after its closing quote',
    );
    expect(refused("---\nname: a\ndescription: x\nmetadata:\n  a:\n    b: c\n---\n")).toBe(
      "front matter line 4: metadata.a has no value (a map one level deep, every value a string)",
    );
  });
});

describe("discovering skills", () => {
  it("loads valid user skills and warns once per bad one, with its name, path and reason", async () => {
    const { home, workspace, state, user } = await places();
    await writeSkill(join(user, "valid"), skillText("valid", "A valid skill."));
    await writeSkill(join(user, "Upper"), skillText("Upper", "x"));
    await writeSkill(join(user, "unknown"), skillText("unknown", "x", "x-custom: 1\n"));
    await writeSkill(join(user, "colon"), skillText("colon", "Use when: asked"));
    await writeSkill(join(user, "folder"), skillText("other", "x"));
    await writeSkill(join(user, "nodesc"), "---\nname: nodesc\n---\n");
    const outside = await tempDir();
    await writeFile(join(outside, "SKILL.md"), skillText("linked", "x"));
    await mkdir(join(user, "linked"));
    await symlink(join(outside, "SKILL.md"), join(user, "linked", "SKILL.md"));
    await writeSkill(join(user, "a", "b", "c", "d", "deep"), skillText("deep", "x"));
    await writeSkill(join(state, "skills", "mine"), skillText("mine", "From the state folder."));
    const set = await discoverSkills({ workspace, home, state });
    expect(set.skills.map((skill) => [skill.name, skill.scope, skill.location])).toEqual([
      ["colon", "user", join(user, "colon", "SKILL.md")],
      ["mine", "user", join(state, "skills", "mine", "SKILL.md")],
      ["unknown", "user", join(user, "unknown", "SKILL.md")],
      ["valid", "user", join(user, "valid", "SKILL.md")],
    ]);
    expect(set.warnings).toEqual([
      {
        name: "Upper",
        path: join(user, "Upper", "SKILL.md"),
        reason: 'the name "Upper" is not lowercase a-z, 0-9 and single hyphens: not loaded',
      },
      {
        name: "deep",
        path: join(user, "a", "b", "c", "d", "deep"),
        reason: `nested deeper than 4 folders below ${user}: not searched`,
      },
      {
        name: "colon",
        path: join(user, "colon", "SKILL.md"),
        reason:
          'an unquoted ": " in description (YAML refuses it); read as the whole rest of the line: quote the value',
      },
      {
        name: "folder",
        path: join(user, "folder", "SKILL.md"),
        reason: 'the name other is not its folder\'s name ("folder"): not loaded',
      },
      {
        name: "linked",
        path: join(user, "linked", "SKILL.md"),
        reason: "SKILL.md is a link leading out of its folder: not loaded",
      },
      {
        name: "nodesc",
        path: join(user, "nodesc", "SKILL.md"),
        reason: "no description in the front matter: not loaded",
      },
    ]);
  });

  it("loads a skill nested up to the bound", async () => {
    const { home, workspace, state, user } = await places();
    await writeSkill(join(user, "a", "b", "c", "deep"), skillText("deep", "x"));
    const set = await discoverSkills({ workspace, home, state });
    expect(set.skills.map((skill) => skill.name)).toEqual(["deep"]);
    expect(set.warnings).toEqual([]);
  });

  it("loads a project skill only when trusted with its hash; a changed one is untrusted again", async () => {
    const { home, workspace, state, user } = await places();
    await writeSkill(join(user, "review"), skillText("review", "The user's review."));
    const folder = join(workspace, ".agents", "skills", "review");
    await writeSkill(folder, skillText("review", "The project's review."));
    const first = await discoverSkills({ workspace, home, state });
    expect(first.skills.map((s) => [s.name, s.scope])).toEqual([["review", "user"]]);
    expect(first.warnings).toEqual([
      {
        name: "review",
        path: join(folder, "SKILL.md"),
        reason:
          "not trusted (new, or changed since it was trusted): not loaded; run `mini-agent trust` to trust it",
      },
    ]);
    expect(first.untrusted.map((s) => s.entry.name)).toEqual([".agents/skills/review/SKILL.md"]);
    const trust = await loadTrust(state, workspace);
    await trust.trust(first.untrusted.map((s) => s.entry));
    const second = await discoverSkills({ workspace, home, state });
    expect(second.skills.map((s) => [s.name, s.scope, s.description])).toEqual([
      ["review", "project", "The project's review."],
    ]);
    expect(second.warnings).toEqual([
      {
        name: "review",
        path: join(user, "review", "SKILL.md"),
        reason: `overridden by the project skill ${join(folder, "SKILL.md")}`,
      },
    ]);
    await writeFile(join(folder, "SKILL.md"), skillText("review", "Changed by someone."));
    const third = await discoverSkills({ workspace, home, state });
    expect(third.skills.map((s) => [s.name, s.scope])).toEqual([["review", "user"]]);
    expect(third.untrusted).toHaveLength(1);
  });

  it("finds project skills from the project root down to the working folder, .claude/skills too", async () => {
    const { home, state } = await places();
    const repo = await tempDir();
    const { execFileSync } = await import("node:child_process");
    execFileSync("git", ["init", "-q", repo]);
    const sub = join(repo, "pkg");
    await writeSkill(join(repo, ".claude", "skills", "top"), skillText("top", "At the root."));
    await writeSkill(join(sub, ".agents", "skills", "low"), skillText("low", "In pkg."));
    const untrusted = await discoverSkills({ workspace: sub, home, state });
    expect(untrusted.untrusted.map((s) => s.entry.name)).toEqual([
      ".claude/skills/top/SKILL.md",
      "pkg/.agents/skills/low/SKILL.md",
    ]);
    await (await loadTrust(state, repo)).trust(untrusted.untrusted.map((s) => s.entry));
    const set = await discoverSkills({ workspace: sub, home, state });
    expect(set.skills.map((s) => s.name)).toEqual(["low", "top"]);
    expect(set.warnings).toEqual([]);
  });
});
