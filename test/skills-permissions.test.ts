import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { discoverSkills } from "../src/skills/discover.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Skills folders the user cannot read: said, never taken for empty. Root reads past file modes,
 * so these run without privileges only (`.ci/as-nobody` runs them as nobody).
 */

const tempDir = useTempDirs();
const asRoot = process.getuid?.() === 0;

const skillText = (name: string) =>
  `---\nname: ${name}\ndescription: What ${name} does.\n---\nDo.\n`;

describe("a skills folder that cannot be read", () => {
  it.skipIf(asRoot)("is a warning, for the whole folder and for one skill's", async () => {
    const home = await tempDir();
    const workspace = await tempDir();
    const state = join(home, "state");
    const skills = join(state, "skills");
    for (const name of ["open", "shut"]) {
      await mkdir(join(skills, name), { recursive: true });
      await writeFile(join(skills, name, "SKILL.md"), skillText(name));
    }
    const places = { workspace, home, state, now: () => Date.now() + 5000 };
    await chmod(join(skills, "shut"), 0o000);
    try {
      const one = await discoverSkills(places);
      expect(one.skills.map((skill) => skill.name)).toEqual(["open"]);
      expect(one.warnings).toEqual([
        {
          name: "-",
          path: join(skills, "shut"),
          reason: "cannot be read (permission denied): the skills in it are not loaded",
        },
      ]);
      await chmod(skills, 0o000);
      const none = await discoverSkills(places);
      expect(none.skills).toEqual([]);
      expect(none.warnings).toEqual([
        {
          name: "-",
          path: skills,
          reason: "cannot be read (permission denied): the skills in it are not loaded",
        },
      ]);
    } finally {
      await chmod(skills, 0o755);
      await chmod(join(skills, "shut"), 0o755);
    }
  });
});
