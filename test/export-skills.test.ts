import { describe, expect, it } from "vitest";
import type { LoadedSkill } from "../src/session/records.js";
import type { Session } from "../src/session/session.js";
import { useExportSetup } from "./support/export.js";

/** `mini-agent export`: which skills a session loaded, and which of them were used. */

const setup = useExportSetup();

const home = "/home/me/.agents/skills";
const project = "/work/project/.agents/skills";
const hash = (c: string) => c.repeat(64);
const loaded: LoadedSkill[] = [
  {
    name: "deploy",
    scope: "user",
    location: `${home}/deploy/SKILL.md`,
    hash: hash("a"),
    listed: false,
  },
  {
    name: "release",
    scope: "user",
    location: `${home}/release/SKILL.md`,
    hash: hash("b"),
    listed: true,
  },
  {
    name: "review",
    scope: "project",
    location: `${project}/review/SKILL.md`,
    hash: hash("c"),
    listed: true,
  },
];

/**
 * A turn whose prompt carries the review skill (`/skill review`), in which the model reads the
 * release skill's SKILL.md (absolute) and fails to read deploy's; then a turn whose catalog
 * changed (deploy gone) and in which the model reads review's SKILL.md by a relative path.
 */
async function withSkills(session: Session): Promise<void> {
  await session.append({ role: "user", content: "[skill review (...)]\n\nCheck the diff." });
  await session.record({ type: "skills", loaded, sent: ["review"] });
  await session.append({
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "c1", name: "read", input: { path: `${home}/release/SKILL.md` } },
      { id: "c2", name: "read", input: { path: `${home}/deploy/SKILL.md` } },
    ],
  });
  await session.append({
    role: "tool",
    toolCallId: "c1",
    content: "release steps",
    isError: false,
  });
  await session.append({
    role: "tool",
    toolCallId: "c2",
    content: "file not found",
    isError: true,
  });
  await session.append({ role: "assistant", content: "done", toolCalls: [] });
  await session.append({ role: "user", content: "again" });
  await session.record({ type: "skills", loaded: loaded.slice(1) });
  await session.append({
    role: "assistant",
    content: "",
    toolCalls: [{ id: "c3", name: "read", input: { path: ".agents/skills/review/SKILL.md" } }],
  });
  await session.append({ role: "tool", toolCallId: "c3", content: "review steps", isError: false });
  await session.append({ role: "assistant", content: "ok", toolCalls: [] });
}

const markdown = `# mini-agent session \`s1\`

- Created: 2026\\-11\\-30T12:00:00\\.000Z
- Workspace: \`/work/project\`
- Model: \`claude-sonnet-5-5\`
- Sandbox: bubblewrap: bash could write only the workspace and had no network

## Prompt 1

\`\`\`text
[skill review (...)]

Check the diff.
\`\`\`

### Skills loaded: 3 \\(2 in the catalog, 1 left out of it by its budget\\)

- \`deploy\` \\(user, left out of the catalog\\): \`${home}/deploy/SKILL.md\`
- \`release\` \\(user\\): \`${home}/release/SKILL.md\`
- \`review\` \\(project\\): \`${project}/review/SKILL.md\`

Sent with the prompt: \`review\`

### Answer

_No text, only tool calls._

#### Tool call 1: \`read\` \`${home}/release/SKILL.md\` — skill \`release\`

Result:

\`\`\`text
release steps
\`\`\`

#### Tool call 2: \`read\` \`${home}/deploy/SKILL.md\` — **ERROR**

Result (error):

\`\`\`text
file not found
\`\`\`

### Answer

\`\`\`text
done
\`\`\`

## Prompt 2

\`\`\`text
again
\`\`\`

### Skills loaded: 2 \\(2 in the catalog\\)

- \`release\` \\(user\\): \`${home}/release/SKILL.md\`
- \`review\` \\(project\\): \`${project}/review/SKILL.md\`

### Answer

_No text, only tool calls._

#### Tool call 3: \`read\` \`.agents/skills/review/SKILL.md\` — skill \`review\`

Result:

\`\`\`text
review steps
\`\`\`

### Answer

\`\`\`text
ok
\`\`\`

## Summary

- Prompts: 2
- Answers: 4
- Tool calls: 3 \\(0 denied, 1 failed\\)
- Requests: 0: 0 input · 0 output tokens
- Retries: 0
- Compactions: 0
- Skills: 3 loaded; used: review \\(sent with the prompt, read by the model\\), release \\(read by the model\\)
`;

describe("the skills of a session", () => {
  it("shows in Markdown the skills loaded, those sent with a prompt, the SKILL.md reads and what was used", async () => {
    const s = await setup();
    await s.session("s1", withSkills);
    expect(await s.run(["--format", "md"])).toEqual({ code: 0, stdout: markdown, stderr: "" });
  });

  it("shows the same in HTML, each value escaped", async () => {
    const s = await setup();
    await s.session("s1", withSkills);
    const run = await s.run(["-o", "-"]);
    expect(run.code).toBe(0);
    const first = run.stdout.slice(
      run.stdout.indexOf('<section class="entry skills">'),
      run.stdout.indexOf('<section class="entry answer">'),
    );
    expect(first).toBe(
      `<section class="entry skills"><details open><summary>Skills loaded: 3 <span class="note">(2 in the catalog, 1 left out of it by its budget)</span></summary><ul>` +
        `<li><code>deploy</code> <span class="note">user, left out of the catalog</span> <code>${home}/deploy/SKILL.md</code></li>` +
        `<li><code>release</code> <span class="note">user</span> <code>${home}/release/SKILL.md</code></li>` +
        `<li><code>review</code> <span class="note">project</span> <code>${project}/review/SKILL.md</code></li>` +
        `</ul></details><p>Sent with the prompt: <code>review</code></p></section>\n`,
    );
    expect(run.stdout).toContain(
      `<h4><span class="num">#1</span> read <code>${home}/release/SKILL.md</code> <span class="skill">skill release</span></h4>`,
    );
    expect(run.stdout).toContain(
      "<dt>Skills</dt><dd>3 loaded; used: review (sent with the prompt, read by the model), release (read by the model)</dd>",
    );
  });

  it("folds a long list of skills, and says none was used", async () => {
    const s = await setup();
    const many: LoadedSkill[] = Array.from({ length: 300 }, (_, i) => ({
      name: `skill-${String(i).padStart(3, "0")}`,
      scope: "user",
      location: `${home}/skill-${String(i).padStart(3, "0")}/SKILL.md`,
      hash: hash("d"),
      listed: i < 250,
    }));
    await s.session("s1", async (session) => {
      await session.append({ role: "user", content: "hello" });
      await session.record({ type: "skills", loaded: many });
      await session.append({ role: "assistant", content: "hi", toolCalls: [] });
    });
    const page = await s.run(["-o", "-"]);
    expect(page.stdout).toContain(
      '<section class="entry skills"><details><summary>Skills loaded: 300 <span class="note">(250 in the catalog, 50 left out of it by its budget)</span></summary><ul><li><code>skill-000</code>',
    );
    expect(page.stdout).toContain("<dt>Skills</dt><dd>300 loaded; none used</dd>");
    const md = await s.run(["--format", "md"]);
    expect(md.stdout).toContain(
      `### Skills loaded: 300 \\(250 in the catalog, 50 left out of it by its budget\\)\n\n<details><summary>300 skills</summary>\n\n- \`skill-000\` \\(user\\): \`${home}/skill-000/SKILL.md\`\n`,
    );
    expect(md.stdout).toContain(
      `- \`skill-299\` \\(user, left out of the catalog\\): \`${home}/skill-299/SKILL.md\`\n\n</details>\n\n### Answer`,
    );
    expect(md.stdout).toContain("- Skills: 300 loaded; none used\n");
  });
});
