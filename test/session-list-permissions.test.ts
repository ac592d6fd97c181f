import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allSessions } from "../src/app/sessions.js";
import { useTempDirs } from "./support/temp.js";

/**
 * `--sessions --all` over a state folder one of whose sessions folders the user cannot read:
 * the others are listed, and the one left out is said. Root reads past file modes, so this runs
 * without privileges only (`.ci/as-nobody` runs it as nobody).
 */

const tempDir = useTempDirs();
const asRoot = process.getuid?.() === 0;

const header = (id: string) =>
  `${JSON.stringify({ type: "session", version: 1, id, createdAt: "2026-12-05T08:00:00.000Z", workspace: "/w", model: "m" })}\n`;

describe("listing every folder's sessions", () => {
  it.skipIf(asRoot)("lists the folders it can read and says which it cannot", async () => {
    const state = await tempDir();
    const open = join(state, "sessions", "open-1");
    const shut = join(state, "sessions", "shut-2");
    for (const [folder, id] of [
      [open, "20261205-080000-aaaaaa"],
      [shut, "20261205-080000-bbbbbb"],
    ] as const) {
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, `${id}.jsonl`), header(id));
    }
    await chmod(shut, 0o000);
    const told: string[] = [];
    try {
      const listed = await allSessions(state, (line) => told.push(line));
      expect(listed.map((session) => session.id)).toEqual(["20261205-080000-aaaaaa"]);
      expect(told).toEqual([
        `cannot list ${shut}: permission denied (EACCES): its sessions are left out`,
      ]);
    } finally {
      await chmod(shut, 0o755);
    }
  });
});
