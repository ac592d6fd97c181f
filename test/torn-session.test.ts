import { readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { receipts } from "../src/receipts.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";

/** A session file torn by a crash, then `--continue`, through the real CLI and the strict server. */

const setup = useCliSetup();

/** One run with a tool round, then the session file, cut by `tear`, resumed with `--continue`. */
async function tornThenContinued(tear: (lines: string[]) => string) {
  const { server, workspace, home, options } = await setup([
    stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }] })),
    stream(turn({ text: ["first"] })),
    stream(turn({ text: ["resumed"] })),
  ]);
  await writeFile(join(workspace, "a.txt"), "hi\n");
  const first = await runBin(["read a.txt"], options);
  expect(first.code).toBe(0);
  const [file = ""] = await sessionFiles(home);
  await writeFile(file, tear((await readFile(file, "utf8")).split("\n")));
  const run = await runBin(["--continue", "again"], options);
  const listing = await runBin(["--sessions"], options);
  return { run, server, file, listing };
}

describe("a torn session file resumed with --continue", () => {
  it("whose first user record is torn and glued to the next starts with a placeholder the strict server accepts", async () => {
    const { run, server } = await tornThenContinued(
      ([header = "", first = "", ...rest]) =>
        `${header}\n${first.slice(0, first.length >> 1)}${rest.join("\n")}`,
    );
    expect(run).toEqual({ code: 0, stdout: "resumed\n", stderr: "" });
    const messages = server.requests[2]?.body.messages as { role: string; content: unknown }[];
    expect(messages[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: receipts.firstMessageLost }],
    });
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
  });

  it.each([
    ["alone", false],
    ["glued to the records after it", true],
  ])("whose header is torn (%s) says in one line that the file is damaged", async (_, glued) => {
    const { run, server, file, listing } = await tornThenContinued(
      ([header = "", ...rest]) => `${header.slice(0, 40)}${glued ? rest.join("\n") : ""}`,
    );
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: `mini-agent: session file ${file} is damaged: its first line is a torn session header; it cannot be resumed (remove it to continue an earlier session)\n`,
    });
    expect(server.requests).toHaveLength(2);
    const id = basename(file, ".jsonl");
    expect(listing.stdout).toMatch(
      new RegExp(
        `^${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  damaged: cannot be resumed \\(its first line is a torn session header\\)\n$`,
      ),
    );
  });
});
