import { execFileSync } from "node:child_process";
import {
  chmod,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { skillCacheFile, skillCacheFolder } from "../src/skills/cache.js";
import { discoverSkills, type SkillPlaces } from "../src/skills/discover.js";
import { staleAfterMs, sweepCaches, sweepLimit } from "../src/skills/sweep.js";
import { loadTrust } from "../src/trust/trust.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";

/**
 * The cache of each SKILL.md's reading (its parse and hash) in the state folder: used only for a
 * file that is exactly as it was read, never a source of trust.
 */

const tempDir = useTempDirs();

const skillText = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n\nDo the thing.\n`;

/** A clock far enough ahead that no entry is made in the second its file last changed. */
const later = () => Date.now() + 5000;

/**
 * A cache file: each entry an array of its file's path below the skills folder, device, inode,
 * size, mtime, ctime and when the reading began, then its hash, name and description (or why it
 * was refused).
 */
interface CacheFile {
  version: number;
  entries: (string | number | object)[][];
}
const HASH = 7;
const DESCRIPTION = 9;
/** The entry with its part `at` made `value`. */
const forge = (entry: CacheFile["entries"][number] | undefined, at: number, value: string) =>
  (entry ?? []).map((part, index) => (index === at ? value : part));

async function setupProject() {
  const home = await tempDir();
  const workspace = await tempDir();
  const state = join(home, "state");
  await mkdir(state);
  const folder = join(workspace, ".agents", "skills", "review");
  await mkdir(folder, { recursive: true });
  const file = join(folder, "SKILL.md");
  await writeFile(file, skillText("review", "The project's review."));
  const places: SkillPlaces = { workspace, home, state, now: later };
  const cacheFile = skillCacheFile(state, join(workspace, ".agents", "skills"));
  const readCache = async () => JSON.parse(await readFile(cacheFile, "utf8")) as CacheFile;
  return { home, workspace, state, folder, file, places, cacheFile, readCache };
}

/** A project whose review skill is trusted and whose cache holds its entry. */
async function trustedProject() {
  const s = await setupProject();
  const first = await discoverSkills(s.places);
  await (await loadTrust(s.state, s.workspace)).trust(first.untrusted.map((u) => u.entry));
  const second = await discoverSkills(s.places);
  expect(second.skills.map((skill) => [skill.name, skill.scope])).toEqual([["review", "project"]]);
  expect((await s.readCache()).entries.map((entry) => entry[0])).toEqual(["review/SKILL.md"]);
  // Whatever changes the file next does it in a later tick of the file system's clock.
  const probe = join(s.state, "clock-probe");
  const read = (await stat(s.file)).mtimeMs;
  await until(async () => {
    await writeFile(probe, "");
    return (await stat(probe)).mtimeMs > read;
  });
  await rm(probe);
  return s;
}

const untrustedWarning = (file: string) => ({
  name: "review",
  path: file,
  reason:
    "not trusted (new, or changed since it was trusted): not loaded; run `mini-agent trust` to trust it",
});

describe("the skill cache", () => {
  it("keeps each SKILL.md's reading in a 0600 file of the state folder, and uses it while the file is as it was", async () => {
    const s = await trustedProject();
    expect((await stat(s.cacheFile)).mode & 0o777).toBe(0o600);
    const cache = await s.readCache();
    const [entry] = cache.entries;
    expect(entry?.[HASH]).toBe(contentHash(skillText("review", "The project's review.")));
    // An entry is what the next look takes instead of the file: changed here, it shows.
    const forged = forge(entry, DESCRIPTION, "From the cache.");
    await writeFile(s.cacheFile, JSON.stringify({ ...cache, entries: [forged] }));
    const set = await discoverSkills(s.places);
    expect(set.skills.map((skill) => skill.description)).toEqual(["From the cache."]);
  });

  it("reads again a file changed to the same size with its mtime put back (its ctime moved)", async () => {
    const s = await trustedProject();
    const before = await stat(s.file, { bigint: true });
    const times = join(s.folder, "times");
    execFileSync("touch", ["-r", s.file, times]);
    await writeFile(s.file, skillText("review", "The project's RIVIEW."));
    execFileSync("touch", ["-m", "-r", times, s.file]);
    const after = await stat(s.file, { bigint: true });
    expect([after.size, after.mtimeNs, after.ino]).toEqual([
      before.size,
      before.mtimeNs,
      before.ino,
    ]);
    expect(after.ctimeNs).not.toBe(before.ctimeNs);
    const set = await discoverSkills(s.places);
    expect(set.skills).toEqual([]);
    expect(set.warnings).toEqual([untrustedWarning(s.file)]);
  });

  it("reads again a file replaced by another (renamed over it) of the same size and times", async () => {
    const s = await trustedProject();
    const before = await stat(s.file);
    const other = join(s.folder, "other.md");
    await writeFile(other, skillText("review", "The project's RIVIEW."));
    await utimes(other, before.atime, before.mtime);
    await rename(other, s.file);
    const set = await discoverSkills(s.places);
    expect(set.skills).toEqual([]);
    expect(set.warnings).toEqual([untrustedWarning(s.file)]);
  });

  it("never takes an entry for trust: a forged entry with an untrusted file's own hash loads nothing", async () => {
    const s = await setupProject();
    const first = await discoverSkills(s.places);
    expect(first.skills).toEqual([]);
    const cache = await s.readCache();
    const [entry] = cache.entries;
    const text = skillText("review", "The project's review.");
    expect(entry?.[HASH]).toBe(contentHash(text));
    const forged = forge(entry, DESCRIPTION, "Trusted, says the cache.");
    await writeFile(s.cacheFile, JSON.stringify({ ...cache, trusted: true, entries: [forged] }));
    const set = await discoverSkills(s.places);
    expect(set.skills).toEqual([]);
    expect(set.warnings).toEqual([untrustedWarning(s.file)]);
    expect(set.untrusted.map((u) => u.entry)).toEqual([
      { kind: "skill", name: ".agents/skills/review/SKILL.md", hash: contentHash(text) },
    ]);
  });

  it("is not read for a trust decision: uncached, each SKILL.md's bytes are hashed", async () => {
    const s = await setupProject();
    await discoverSkills(s.places);
    const cache = await s.readCache();
    const other = contentHash("other content");
    const forged = forge(cache.entries[0], HASH, other);
    await writeFile(s.cacheFile, JSON.stringify({ ...cache, entries: [forged] }));
    const cached = await discoverSkills(s.places);
    expect(cached.untrusted.map((u) => u.entry.hash)).toEqual([other]);
    const fresh = await discoverSkills({ ...s.places, uncached: true });
    expect(fresh.untrusted.map((u) => u.entry.hash)).toEqual([
      contentHash(skillText("review", "The project's review.")),
    ]);
  });

  it("does not use an entry made in the second the file last changed (the racy case)", async () => {
    const s = await setupProject();
    const places = { ...s.places, now: () => Date.now() };
    await (await loadTrust(s.state, s.workspace)).trust([
      {
        kind: "skill",
        name: ".agents/skills/review/SKILL.md",
        hash: contentHash(skillText("review", "The project's review.")),
      },
    ]);
    await discoverSkills(places);
    const cache = await s.readCache();
    const forged = forge(cache.entries[0], DESCRIPTION, "From the cache.");
    await writeFile(s.cacheFile, JSON.stringify({ ...cache, entries: [forged] }));
    const set = await discoverSkills(places);
    expect(set.skills.map((skill) => skill.description)).toEqual(["The project's review."]);
  });

  it("finds the skills all the same where no cache can be written (a file in the way)", async () => {
    const { places, state } = await setupProject();
    // The cache's folder cannot be made: a file stands where it would be.
    await writeFile(join(state, "cache"), "in the way");
    const user = join(state, "skills", "notes");
    await mkdir(user, { recursive: true });
    await writeFile(join(user, "SKILL.md"), skillText("notes", "The user's notes."));
    const set = await discoverSkills(places);
    expect(set.skills.map((skill) => skill.name)).toEqual(["notes"]);
    expect(await readFile(join(state, "cache"), "utf8")).toBe("in the way");
  });

  it("ignores a cache file others may write, and one that is not a cache", async () => {
    const s = await trustedProject();
    const cache = await s.readCache();
    const forged = forge(cache.entries[0], DESCRIPTION, "From the cache.");
    await writeFile(s.cacheFile, JSON.stringify({ ...cache, entries: [forged] }));
    await chmod(s.cacheFile, 0o666);
    const shared = await discoverSkills(s.places);
    expect(shared.skills.map((skill) => skill.description)).toEqual(["The project's review."]);
    const entry = cache.entries[0] ?? [];
    for (const damaged of [
      "{not json",
      JSON.stringify({ version: 2, entries: { [s.file]: 7 } }),
      JSON.stringify({ version: 3, entries: { "review/SKILL.md": forged } }),
      JSON.stringify({ version: 3, entries: [forge(entry, HASH, "not a hash")] }),
      JSON.stringify({ version: 3, entries: [[...forged, "more"]] }),
      JSON.stringify({ version: 3, entries: [forge(entry, 4, "7")] }),
    ]) {
      await writeFile(s.cacheFile, damaged);
      const set = await discoverSkills(s.places);
      expect(set.skills.map((skill) => skill.description)).toEqual(["The project's review."]);
    }
    expect((await stat(s.cacheFile)).mode & 0o777).toBe(0o600);
  });

  it("reads afresh a SKILL.md swapped for a link, then for a link to a file of the same size and times", async () => {
    const s = await trustedProject();
    const before = await stat(s.file);
    const same = join(s.folder, "same.md");
    const evil = join(s.folder, "evil.md");
    await writeFile(same, skillText("review", "The project's review."));
    await writeFile(evil, skillText("review", "The project's RIVIEW."));
    for (const target of [same, evil]) await utimes(target, before.atime, before.mtime);
    const link = join(s.folder, "link");
    await symlink("same.md", link);
    await rename(link, s.file);
    // The link leads to the trusted bytes: loaded, read through the link.
    const linked = await discoverSkills(s.places);
    expect(linked.skills.map((skill) => skill.description)).toEqual(["The project's review."]);
    await symlink("evil.md", link);
    await rename(link, s.file);
    const swapped = await discoverSkills(s.places);
    expect(swapped.skills).toEqual([]);
    expect(swapped.warnings).toEqual([untrustedWarning(s.file)]);
  });
});

describe("the sweep of the skill caches", () => {
  const day = 24 * 60 * 60 * 1000;

  async function cacheFolder(names: string[], age: number) {
    const dir = join(await tempDir(), "cache", "skills");
    await mkdir(dir, { recursive: true });
    const then = new Date(Date.now() - age);
    for (const name of names) {
      await writeFile(join(dir, name), "{}");
      await utimes(join(dir, name), then, then);
    }
    return dir;
  }

  it("removes the caches no look used for a month and a write's leftovers, nothing else", async () => {
    const old = ["0".repeat(32), "1".repeat(32)].map((name) => `${name}.json`);
    const dir = await cacheFolder([...old, ".a.tmp", "notes.txt", "x.json"], staleAfterMs + day);
    await cacheFolder([], 0);
    const fresh = `${"2".repeat(32)}.json`;
    await writeFile(join(dir, fresh), "{}");
    await mkdir(join(dir, `${"3".repeat(32)}.json`));
    await utimes(join(dir, `${"3".repeat(32)}.json`), new Date(0), new Date(0));
    sweepCaches(dir);
    expect((await readdir(dir)).sort()).toEqual(
      [".swept", fresh, `${"3".repeat(32)}.json`, "notes.txt", "x.json"].sort(),
    );
  });

  it("sweeps at most once a day, and looks at a bounded number of entries", async () => {
    const name = (i: number) => `${i.toString(16).padStart(32, "0")}.json`;
    const count = sweepLimit + 200;
    const dir = await cacheFolder(
      Array.from({ length: count }, (_, i) => name(i)),
      staleAfterMs + day,
    );
    sweepCaches(dir);
    const left = (await readdir(dir)).filter((entry) => entry !== ".swept");
    expect(left.length).toBe(count - sweepLimit);
    // The next sweep within the day does nothing; a day later, it takes the rest.
    sweepCaches(dir);
    expect((await readdir(dir)).filter((entry) => entry !== ".swept")).toEqual(left);
    sweepCaches(dir, Date.now() + day + 1000);
    expect(await readdir(dir)).toEqual([".swept"]);
  });

  it("is run by a look that writes a cache, and a cache in use is stamped once a day", async () => {
    const s = await trustedProject();
    const dir = skillCacheFolder(s.state);
    const stale = join(dir, `${"0".repeat(32)}.json`);
    await writeFile(stale, "{}");
    const month = new Date(Date.now() - staleAfterMs - 24 * 60 * 60 * 1000);
    await utimes(stale, month, month);
    await utimes(s.cacheFile, month, month);
    await rm(join(dir, ".swept"), { force: true });
    // Nothing changed: the cache in use is stamped, not written; no sweep.
    await discoverSkills(s.places);
    expect((await stat(s.cacheFile)).mtimeMs).toBeGreaterThan(Date.now() - 60_000);
    expect((await readdir(dir)).sort()).toEqual(
      [stale, s.cacheFile].map((p) => p.slice(dir.length + 1)).sort(),
    );
    // A new skill writes the cache, which sweeps the stale one away.
    await mkdir(join(s.workspace, ".agents", "skills", "lint"));
    await writeFile(
      join(s.workspace, ".agents", "skills", "lint", "SKILL.md"),
      skillText("lint", "Lint."),
    );
    await discoverSkills(s.places);
    expect((await readdir(dir)).sort()).toEqual(
      [".swept", s.cacheFile.slice(dir.length + 1)].sort(),
    );
  });
});
