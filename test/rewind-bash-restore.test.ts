import {
  chmod,
  lstat,
  mkdir,
  readFile,
  readlink,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../src/crypto.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import {
  bashThenDone,
  runBin,
  sessionFiles,
  sessionId,
  sessionRecords,
  toolResults,
  useCliSetup,
} from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";

/**
 * What bash changed is put back by a rewind, byte for byte, through the built CLI: the workspace
 * is walked before and after each bash call, each file copied the first time it is seen, and the
 * call's record says what differs; a path someone changed since is named and left.
 */

const setup = useCliSetup();
const sandboxed = await realSandbox({ mode: "auto" });

const BINARY = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x0d, 0x0a, 0x80, 0]);
const CRLF = "one\r\ntwo\r\n";

/** A workspace of every kind of thing bash can change. */
async function everything(workspace: string): Promise<void> {
  await writeFile(join(workspace, "bin.dat"), BINARY);
  await writeFile(join(workspace, "crlf.txt"), CRLF);
  await writeFile(join(workspace, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  await chmod(join(workspace, "run.sh"), 0o755);
  await writeFile(join(workspace, "gone.txt"), "soon removed\n");
  await symlink("crlf.txt", join(workspace, "link"));
  await mkdir(join(workspace, "tree", "sub"), { recursive: true });
  await writeFile(join(workspace, "tree", "a.txt"), "a\n");
  await writeFile(join(workspace, "tree", "sub", "b.txt"), BINARY);
  await mkdir(join(workspace, "keep"));
  await chmod(join(workspace, "keep"), 0o755);
}

const everyChange = [
  "printf 'X\\000Y' > bin.dat",
  "printf 'three\\r\\n' >> crlf.txt",
  "chmod 644 run.sh",
  "ln -sfn bin.dat link",
  "rm -rf tree",
  "rm gone.txt",
  "chmod 700 keep",
  "mkdir -p made/deep",
  "echo new > made/deep/n.txt",
  "echo top > new.txt",
  "ln -s new.txt newlink",
].join(" && ");

async function expectEverythingBack(workspace: string): Promise<void> {
  expect(await readFile(join(workspace, "bin.dat"))).toEqual(BINARY);
  expect(await readFile(join(workspace, "crlf.txt"), "utf8")).toBe(CRLF);
  expect((await stat(join(workspace, "run.sh"))).mode & 0o777).toBe(0o755);
  expect(await readFile(join(workspace, "gone.txt"), "utf8")).toBe("soon removed\n");
  expect(await readlink(join(workspace, "link"))).toBe("crlf.txt");
  expect(await readFile(join(workspace, "tree", "a.txt"), "utf8")).toBe("a\n");
  expect(await readFile(join(workspace, "tree", "sub", "b.txt"))).toEqual(BINARY);
  expect((await stat(join(workspace, "keep"))).mode & 0o777).toBe(0o755);
  for (const created of ["made", "new.txt", "newlink"])
    await expect(lstat(join(workspace, created))).rejects.toThrow(/ENOENT/);
}

async function restoresEverything(sandbox: string) {
  const { workspace, home, options, server } = await setup(bashThenDone(everyChange));
  await everything(workspace);
  const run = await runBin(["--allow-bash", "--sandbox", sandbox, "first"], options);
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
  expect(server.rejections).toEqual([]);
  expect(await readlink(join(workspace, "link"))).toBe("bin.dat");
  const id = await sessionId(home);
  const rewind = await runBin(["rewind", "--to", "1"], options);
  expect(rewind).toEqual({
    code: 0,
    stderr: "",
    stdout: [
      `rewinding the files and the conversation of session ${id} to just before prompt 1 ("first"):`,
      "restored tree/",
      "restored tree/sub/",
      "restored bin.dat",
      "restored crlf.txt",
      "restored gone.txt",
      "restored link",
      "deleted made/deep/n.txt (the agent created it)",
      "deleted new.txt (the agent created it)",
      "deleted newlink (the agent created it)",
      "restored run.sh",
      "restored tree/a.txt",
      "restored tree/sub/b.txt",
      "removed made/deep/ (the agent made the folder)",
      "removed made/ (the agent made the folder)",
      "restored keep/",
      "the conversation goes on from just before prompt 1 (mini-agent --continue); prompt 1 stays in the session file as a branch",
      "",
    ].join("\n"),
  });
  await expectEverythingBack(workspace);
  // Run again, there is nothing left to do.
  const again = await runBin(["rewind", "--to", "1", "--files-only", "--dry-run"], options);
  expect(again.stdout).toContain("nothing to rewind");
}

describe("a rewind of what bash changed", () => {
  it("puts back files, folders, modes, links and binary bytes, and removes what bash made (--sandbox off)", async () => {
    await restoresEverything("off");
  });

  it.skipIf(!sandboxed)(
    "puts back everything a sandboxed bash call changed, and removes what it made",
    async () => {
      await restoresEverything("required");
    },
  );

  it("leaves a file the user changed after the call, names it with its diff, and puts back the rest", async () => {
    const { workspace, home, options } = await setup(
      bashThenDone("printf 'A2\\n' > a.txt && printf 'B2\\n' > b.txt"),
    );
    await writeFile(join(workspace, "a.txt"), "A1\n");
    await writeFile(join(workspace, "b.txt"), "B1\n");
    const run = await runBin(["--allow-bash", "--sandbox", "off", "first"], options);
    expect(run.code).toBe(0);
    await writeFile(join(workspace, "b.txt"), "B3 by hand\n");
    const id = await sessionId(home);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        `rewinding the files of session ${id} to just before prompt 1 ("first"):`,
        "restored a.txt",
        "not restored b.txt: it changed since the agent's last change",
        "    --- b.txt before prompt 1",
        "    +++ b.txt now",
        "    -B1",
        "    +B3 by hand",
        "",
      ].join("\n"),
    });
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("A1\n");
    expect(await readFile(join(workspace, "b.txt"), "utf8")).toBe("B3 by hand\n");
  });

  it("leaves a file the user changed between two bash calls, and says the change would be lost", async () => {
    const bash = (id: string, command: string) =>
      stream(turn({ calls: [{ id, name: "bash", input: { command } }] }));
    const { workspace, home, options } = await setup([
      bash("b1", "printf 'agent 1\\n' > a.txt"),
      stream(turn({ text: ["done"] })),
      bash("b2", "printf 'agent 2\\n' >> a.txt"),
      stream(turn({ text: ["done"] })),
    ]);
    await writeFile(join(workspace, "a.txt"), "original\n");
    const first = await runBin(["--allow-bash", "--sandbox", "off", "first"], options);
    expect(first.code).toBe(0);
    await writeFile(join(workspace, "a.txt"), "user's line\n");
    const args = ["--allow-bash", "--sandbox", "off", "--continue", "second"];
    expect((await runBin(args, options)).code).toBe(0);
    const id = await sessionId(home);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        `rewinding the files of session ${id} to just before prompt 1 ("first"):`,
        "not restored a.txt: it changed between the agent's changes (before call b2): that change would be lost",
        "    --- a.txt before prompt 1",
        "    +++ a.txt now",
        "    -original",
        "    +user's line",
        "    +agent 2",
        "",
      ].join("\n"),
    });
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("user's line\nagent 2\n");
  });

  it.skipIf(!sandboxed)(
    "restores a file the read-only set emptied in the sandbox, never read by the agent (default flags)",
    async () => {
      const { workspace, home, options } = await setup(bashThenDone("true > notes.txt"));
      const notes = "my uncommitted notes, never read by the agent\n";
      await writeFile(join(workspace, "notes.txt"), notes);
      const run = await runBin(["first"], options);
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
      expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe("");
      const [file] = (await sessionFiles(home)).filter((path) => path.endsWith(".jsonl"));
      const approvals = (await sessionRecords(file ?? "")).filter((r) => r.type === "approval");
      expect(approvals).toEqual([
        {
          type: "approval",
          toolCallId: "b1",
          tool: "bash",
          approved: true,
          by: "read-only set: true",
        },
      ]);
      const id = await sessionId(home);
      const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
      expect(rewind).toEqual({
        code: 0,
        stderr: "",
        stdout: [
          `rewinding the files of session ${id} to just before prompt 1 ("first"):`,
          "restored notes.txt",
          "",
        ].join("\n"),
      });
      expect(await readFile(join(workspace, "notes.txt"), "utf8")).toBe(notes);
    },
  );

  it("restores what a call killed at its timeout changed, in one line per path and no note", async () => {
    const command = "printf 'changed\\n' > a.txt && sleep 30";
    const { workspace, home, options } = await setup([
      stream(turn({ calls: [{ id: "b1", name: "bash", input: { command, timeout: 1 } }] })),
      stream(turn({ text: ["done"] })),
    ]);
    await writeFile(join(workspace, "a.txt"), "mine\n");
    const run = await runBin(["--allow-bash", "--sandbox", "off", "first"], options);
    expect(run.code).toBe(0);
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("changed\n");
    const id = await sessionId(home);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `rewinding the files of session ${id} to just before prompt 1 ("first"):`,
        "restored a.txt",
        "",
      ].join("\n"),
    });
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("mine\n");
  });

  it.skipIf(!sandboxed)("keeps its copies where a sandboxed command cannot read them", async () => {
    const command = 'cat "$MINI_AGENT_HOME"/sessions/*/*.snapshot/* 2>/dev/null | wc -c';
    const { workspace, home, options, server } = await setup(bashThenDone(command));
    await writeFile(join(workspace, ".env"), "TOKEN=kept-but-hidden\n");
    const run = await runBin(["--allow-bash", "--sandbox", "required", "first"], options);
    expect(run.code).toBe(0);
    const [file] = (await sessionFiles(home)).filter((path) => path.endsWith(".jsonl"));
    const store = `${file?.slice(0, -".jsonl".length)}.snapshot`;
    expect((await stat(store)).mode & 0o777).toBe(0o700);
    // The store does hold the workspace's .env: the command read nothing of it.
    expect(await readFile(join(store, contentHash("TOKEN=kept-but-hidden\n")), "utf8")).toBe(
      "TOKEN=kept-but-hidden\n",
    );
    const results = toolResults(server.requests[1]?.body ?? {});
    expect(results).toEqual([{ id: "b1", content: "0\n[exit code 0]", isError: false }]);
  });

  it("restores a same-size write that keeps the file's modification time", async () => {
    const { workspace, options } = await setup(
      bashThenDone("printf 'BBBB' > same.txt && touch -d @1700000000 same.txt"),
    );
    await writeFile(join(workspace, "same.txt"), "AAAA");
    await utimes(join(workspace, "same.txt"), 1_700_000_000, 1_700_000_000);
    const run = await runBin(["--allow-bash", "--sandbox", "off", "first"], options);
    expect(run.code).toBe(0);
    const after = await stat(join(workspace, "same.txt"));
    expect({ size: after.size, mtime: after.mtimeMs }).toEqual({
      size: 4,
      mtime: 1_700_000_000_000,
    });
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind.code).toBe(0);
    expect(await readFile(join(workspace, "same.txt"), "utf8")).toBe("AAAA");
  });
});
