import {
  link,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SNAPSHOT_FILE_CAP } from "../src/rewind/snapshot.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { bashThenDone, runBin, sessionId, toolResults, useCliSetup } from "./support/cli.js";
import { realSandbox } from "./support/sandbox.js";
import { protocolLines } from "./support/stream-json.js";

/**
 * What the snapshot cannot keep cannot change without a question: in the sandbox it is read-only
 * for the call (a write fails, and the result says why); outside it (the call ran because a rule
 * or a person said yes), the rewind names what it could not put back. Through the built CLI.
 */

const setup = useCliSetup();
const sandboxed = await realSandbox({ mode: "auto" });

const BIG = SNAPSHOT_FILE_CAP + 1024 * 1024;
const overLimit = `the file is ${BIG} bytes, over the ${SNAPSHOT_FILE_CAP} bytes the snapshot keeps of one file`;

/** A file over the snapshot's size limit, sparse: it takes no disk. */
async function bigFile(workspace: string): Promise<string> {
  const path = join(workspace, "big.bin");
  await writeFile(path, "");
  await truncate(path, BIG);
  return path;
}

/** A git-ignored folder of over 5,000 entries: the snapshot leaves it out. */
async function dependencies(workspace: string): Promise<void> {
  await writeFile(join(workspace, ".gitignore"), "node_modules/\n");
  for (let d = 0; d < 11; d++) {
    const folder = join(workspace, "node_modules", `pkg${d}`);
    await mkdir(folder, { recursive: true });
    await Promise.all(
      Array.from({ length: 460 }, (_, f) => writeFile(join(folder, `f${f}.js`), "x")),
    );
  }
}

const linked = "it has other hard links, which a rewind could not put back";

/** linked.txt in the workspace, a hard link to a file outside it (as pnpm's store links). */
async function hardLinked(
  workspace: string,
): Promise<{ outside: string; done: () => Promise<void> }> {
  const folder = await mkdtemp(join(tmpdir(), "mini-agent-store-"));
  const outside = join(folder, "store.txt");
  await writeFile(outside, "good\n");
  await link(outside, join(workspace, "linked.txt"));
  return { outside, done: () => rm(folder, { recursive: true, force: true }) };
}

const leftOut = "git ignores it and it holds over 5,000 entries: the snapshot leaves it out";

describe("what the snapshot cannot keep, in the sandbox", () => {
  it.skipIf(!sandboxed)(
    "keeps a file over the size limit read-only for the call: rm -f, a write and a rename fail, and the result says why",
    async () => {
      const command = "rm -f big.bin; echo more >> big.bin; mv big.bin moved.bin; mv . ../x";
      const { workspace, options, server } = await setup(bashThenDone(command));
      await bigFile(workspace);
      const run = await runBin(["--allow-bash", "--sandbox", "required", "go"], options);
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
      expect((await stat(join(workspace, "big.bin"))).size).toBe(BIG);
      expect(await readdir(workspace)).toEqual(["big.bin"]);
      const [result] = toolResults(server.requests[1]?.body ?? {});
      expect(String(result?.content)).toMatch(
        /^rm: cannot remove 'big\.bin': Device or resource busy\n.*big\.bin: Read-only file system\nmv: cannot move 'big\.bin' to 'moved\.bin': Device or resource busy\n/,
      );
      expect(String(result?.content)).toContain(
        `\n[rewind: what a rewind could not put back was read-only for this command]\n- big.bin: ${overLimit}`,
      );
    },
  );

  it.skipIf(!sandboxed)("keeps a folder holding such a file from being renamed away", async () => {
    const command = "mv deep moved; rm -rf deep";
    const { workspace, options } = await setup(bashThenDone(command));
    await mkdir(join(workspace, "deep", "er"), { recursive: true });
    await writeFile(join(workspace, "deep", "er", "small.txt"), "small\n");
    await truncate(join(workspace, "deep", "er", "small.txt"), BIG);
    const run = await runBin(["--allow-bash", "--sandbox", "required", "go"], options);
    expect(run.code).toBe(0);
    expect((await stat(join(workspace, "deep", "er", "small.txt"))).size).toBe(BIG);
    expect(await readdir(workspace)).toEqual(["deep"]);
  });

  it.skipIf(!sandboxed)(
    "keeps a git-ignored folder of over 5,000 entries read-only, and says so once per session",
    async () => {
      const { workspace, options, server } = await setup([
        stream(turn({ calls: [{ id: "b1", name: "bash", input: { command: "true" } }] })),
        stream(turn({ calls: [{ id: "b2", name: "bash", input: { command: "true" } }] })),
        stream(
          turn({ calls: [{ id: "b3", name: "bash", input: { command: "rm -r node_modules" } }] }),
        ),
        stream(turn({ text: ["done"] })),
      ]);
      await dependencies(workspace);
      const run = await runBin(["--allow-bash", "--sandbox", "required", "go"], options);
      expect(run.code).toBe(0);
      expect((await readdir(join(workspace, "node_modules"))).length).toBe(11);
      const results = toolResults(server.requests[3]?.body ?? {}).map((r) => String(r.content));
      const note = `[rewind: what a rewind could not put back was read-only for this command]\n- node_modules/: ${leftOut}`;
      expect(results[0]).toBe(`[exit code 0]\n${note}`);
      // Said once: the next call that succeeds is quiet.
      expect(results[1]).toBe("[exit code 0]");
      expect(results[2]).toMatch(/Read-only file system/);
      expect(results[2]).toContain(note);
    },
  );
});

describe("a file with other hard links", () => {
  it.skipIf(!sandboxed)(
    "is read-only for a sandboxed call: a write through it cannot change the file outside, and the result says why",
    async () => {
      const { workspace, options, server } = await setup(bashThenDone("echo x >> linked.txt"));
      const store = await hardLinked(workspace);
      try {
        const run = await runBin(["--allow-bash", "--sandbox", "required", "go"], options);
        expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "done\n" });
        expect(await readFile(store.outside, "utf8")).toBe("good\n");
        expect(await readFile(join(workspace, "linked.txt"), "utf8")).toBe("good\n");
        const [result] = toolResults(server.requests[1]?.body ?? {});
        expect(String(result?.content)).toMatch(/linked\.txt: Read-only file system/);
        expect(String(result?.content)).toContain(
          `\n[rewind: what a rewind could not put back was read-only for this command]\n- linked.txt: ${linked}`,
        );
      } finally {
        await store.done();
      }
    },
  );

  it("is named by the rewind as not restored when the call ran outside the sandbox", async () => {
    const { workspace, home, options } = await setup(bashThenDone("echo x >> linked.txt"));
    const store = await hardLinked(workspace);
    try {
      const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
      expect(run.code).toBe(0);
      const id = await sessionId(home);
      const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
      expect(rewind).toEqual({
        code: 1,
        stderr: "",
        stdout: [
          `rewinding the files of session ${id} to just before prompt 1 ("go"):`,
          `not restored linked.txt: its bytes before prompt 1 were not kept (${linked})`,
          "",
        ].join("\n"),
      });
      // The link is not broken: both names still hold the command's bytes.
      expect(await readFile(store.outside, "utf8")).toBe("good\nx\n");
      expect((await stat(join(workspace, "linked.txt"))).nlink).toBe(2);
    } finally {
      await store.done();
    }
  });
});

describe("what the snapshot cannot keep, outside the sandbox", () => {
  it("names a removed file over the size limit in the rewind, with why it is not put back", async () => {
    const { workspace, home, options } = await setup(bashThenDone("rm -f big.bin"));
    await bigFile(workspace);
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    const id = await sessionId(home);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        `rewinding the files of session ${id} to just before prompt 1 ("go"):`,
        `not restored big.bin: its bytes before prompt 1 were not kept (${overLimit})`,
        "",
      ].join("\n"),
    });
  });

  it("never removes a file that holds the only copy of bytes it did not keep (a move)", async () => {
    const { workspace, home, options } = await setup(bashThenDone("mv big.bin moved.bin"));
    await bigFile(workspace);
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    const id = await sessionId(home);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind).toEqual({
      code: 1,
      stderr: "",
      stdout: [
        `rewinding the files of session ${id} to just before prompt 1 ("go"):`,
        `not restored big.bin: its bytes before prompt 1 were not kept (${overLimit})`,
        "not restored moved.bin: it holds the bytes big.bin had before prompt 1, which were not kept: it is kept",
        "",
      ].join("\n"),
    });
    expect((await stat(join(workspace, "moved.bin"))).size).toBe(BIG);
  });

  it("names a folder the snapshot left out, whose changes it cannot know", async () => {
    const command = "rm -r node_modules/pkg3 && echo changed > kept.txt";
    const { workspace, home, options } = await setup(bashThenDone(command));
    await dependencies(workspace);
    await writeFile(join(workspace, "kept.txt"), "kept\n");
    const run = await runBin(["--allow-bash", "--sandbox", "off", "go"], options);
    expect(run.code).toBe(0);
    const id = await sessionId(home);
    const rewind = await runBin(["rewind", "--to", "1", "--files-only"], options);
    expect(rewind).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        `rewinding the files of session ${id} to just before prompt 1 ("go"):`,
        "restored kept.txt",
        `note: what bash changed in node_modules/ from prompt 1 on is not known (${leftOut}); it is not restored`,
        "",
      ].join("\n"),
    });
    expect(await readFile(join(workspace, "kept.txt"), "utf8")).toBe("kept\n");
  });

  it("says on stream-json's bash_change line which folders the snapshot left out", async () => {
    const command = "rm -r node_modules/pkg3 && echo changed > kept.txt";
    const { workspace, options } = await setup(bashThenDone(command));
    await dependencies(workspace);
    await writeFile(join(workspace, "kept.txt"), "kept\n");
    const args = ["--allow-bash", "--sandbox", "off", "--output-format", "stream-json", "go"];
    const run = await runBin(args, options);
    expect(run.code).toBe(0);
    expect(protocolLines(run.stdout).filter((line) => line.type === "bash_change")).toEqual([
      {
        version: 1,
        type: "bash_change",
        id: "b1",
        paths: ["kept.txt"],
        leftOut: [{ path: "node_modules", why: leftOut }],
      },
    ]);
  });
});
