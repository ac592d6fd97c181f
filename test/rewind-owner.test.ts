import { execFileSync } from "node:child_process";
import { chown, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, useCliSetup } from "./support/cli.js";

/**
 * A rewind keeps the owner and group a file had: run as root, it never gives another user's file
 * to root (a setuid program of that user would become a setuid-root one). Through the built CLI.
 */

const setup = useCliSetup();
const root = process.getuid?.() === 0;

/** The ids of user `nobody` and of its group, when there is one. */
function nobody(): { uid: number; gid: number } | undefined {
  try {
    const [uid, gid] = ["-u", "-g"].map((flag) =>
      Number(execFileSync("id", [flag, "nobody"], { encoding: "utf8" }).trim()),
    );
    return uid === undefined || gid === undefined ? undefined : { uid, gid };
  } catch {
    return undefined;
  }
}

const user = nobody();

describe("a rewind run as root", () => {
  it.skipIf(!root || !user)(
    "puts back a setuid file of another user with its owner, group and mode",
    async () => {
      const { workspace, options } = await setup([
        stream(
          turn({ calls: [{ id: "b1", name: "bash", input: { command: "printf x >> tool" } }] }),
        ),
        stream(turn({ text: ["done"] })),
      ]);
      const path = join(workspace, "tool");
      await writeFile(path, "#!/bin/sh\nid\n", { mode: 0o755 });
      const { uid, gid } = user ?? { uid: 0, gid: 0 };
      await chown(path, uid, gid);
      execFileSync("chmod", ["4755", path]);
      const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
      expect(run.code).toBe(0);
      expect(await readFile(path, "utf8")).toBe("#!/bin/sh\nid\nx");
      const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
      expect(rewind.code).toBe(0);
      expect(rewind.stdout).toContain("\nrestored tool\n");
      const info = await stat(path);
      expect({
        bytes: await readFile(path, "utf8"),
        uid: info.uid,
        gid: info.gid,
        mode: (info.mode & 0o7777).toString(8),
      }).toEqual({ bytes: "#!/bin/sh\nid\n", uid, gid, mode: "4755" });
    },
  );
});
