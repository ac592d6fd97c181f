import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { summaryPrompt } from "../src/compaction/summary.js";
import { stream, turn } from "../src/testing/anthropic-server.js";
import type { Body, Reply } from "../src/testing/sse-server.js";
import { invalidLines, noAnswer, withAcpAgent } from "./support/acp.js";
import { runBin, systemText, useCliSetup } from "./support/cli.js";
import { gitRepository } from "./support/repository.js";
import { protocolLines } from "./support/stream-json.js";
import { hasTmux, useTmux } from "./support/tmux.js";
import { until } from "./support/until.js";

/**
 * The user's commands through the built CLI against the strict local server: a project command
 * and a user command with arguments, as a one-shot task, in stream-json input, at the terminal
 * (tmux: listed by /help, completed by Tab) and in an editor (ACP, the SDK's client side); a
 * command named like a built-in is refused with its one warning line, a bad file said in one line.
 */

const setup = useCliSetup();
const tmux = useTmux();

/** The text of the last block of each request: the prompt it carries. */
const prompts = (requests: { body: Record<string, unknown> }[]) =>
  requests.map((request) => {
    const messages = (request.body.messages ?? []) as { content: { text?: string }[] }[];
    return messages.at(-1)?.content.at(-1)?.text;
  });

const review =
  "---\ndescription: Review the code in a folder\nargument-hint: [folder] [focus]\n---\nReview $1, looking for $2.\nAll of it: $ARGUMENTS\n";
const notes = "Write the release notes since $ARGUMENTS.\n";

/** A workspace (its own repository) with a project command, and a user command in the state folder. */
async function commandSetup(replies: number, more: Record<string, string> = {}) {
  const parts = await setup(
    Array.from({ length: replies }, (_, at) => stream(turn({ text: [`answer ${at + 1}`] }))),
  );
  await gitRepository(parts.workspace);
  const files: Record<string, string> = {
    [join(parts.workspace, ".agents/commands/review.md")]: review,
    [join(parts.home, "state/commands/notes.md")]: notes,
    ...more,
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }
  return parts;
}

const reviewed = 'Review src, looking for error paths.\nAll of it: src "error paths"\n';
const noted = "Write the release notes since v1.2.\n";

describe("the user's commands in the CLI", () => {
  it("runs a project command and a user command with arguments as one-shot tasks", async () => {
    const { server, options } = await commandSetup(2);
    const first = await runBin(['/review src "error paths"'], options);
    expect(first).toEqual({ code: 0, stdout: "answer 1\n", stderr: "" });
    const second = await runBin(["/notes v1.2"], options);
    expect(second).toEqual({ code: 0, stdout: "answer 2\n", stderr: "" });
    expect(prompts(server.requests)).toEqual([reviewed, noted]);
    expect(server.rejections).toEqual([]);
  });

  it("takes them as prompts in stream-json input, other lines as they are", async () => {
    const { server, options } = await commandSetup(3);
    const input = ['/review src "error paths"', "/notes v1.2", "/help me"]
      .map((text) => `${JSON.stringify({ type: "user", text })}\n`)
      .join("");
    const run = await runBin(["--input-format", "stream-json", "--output-format", "stream-json"], {
      ...options,
      input,
    });
    expect(run.code).toBe(0);
    expect(protocolLines(run.stdout).filter((line) => line.type === "result")).toHaveLength(3);
    expect(prompts(server.requests)).toEqual([reviewed, noted, "/help me"]);
  });

  it("answers a stream-json line naming a bad command with an error line, and runs the next", async () => {
    const { workspace, server, options } = await commandSetup(1);
    await writeFile(join(workspace, ".agents/commands/bad.md"), "---\ndescription: x\n");
    const input = ["/bad now", "/notes v1.2"]
      .map((text) => `${JSON.stringify({ type: "user", text })}\n`)
      .join("");
    const run = await runBin(["--input-format", "stream-json", "--output-format", "stream-json"], {
      ...options,
      input,
    });
    expect(run.code).toBe(0);
    const why =
      "command /bad (.agents/commands/bad.md): the front matter has no closing --- line: not loaded";
    const lines = protocolLines(run.stdout);
    expect(
      lines
        .filter((line) => line.type === "error" || line.type === "result")
        .map((line) => (line.type === "error" ? line : "result")),
    ).toEqual([
      {
        version: 1,
        type: "error",
        message: `input line 1 was not run: ${why}, so nothing was sent`,
      },
      "result",
    ]);
    expect(run.stderr).toBe(`mini-agent: ${why}\nmini-agent: ${why}, so nothing was sent\n`);
    expect(prompts(server.requests)).toEqual([noted]);
  });

  it("refuses a command named like a built-in with its one warning line, and runs the rest", async () => {
    const { workspace, server, options } = await commandSetup(1, {});
    await writeFile(join(workspace, ".agents/commands/compact.md"), "my own compact");
    const run = await runBin(["/review src"], options);
    expect(run).toEqual({
      code: 0,
      stdout: "answer 1\n",
      stderr:
        "mini-agent: command /compact (.agents/commands/compact.md): named like the built-in /compact: not loaded\n",
    });
    expect(prompts(server.requests)).toEqual(["Review src, looking for .\nAll of it: src\n"]);
  });

  it("says in one line why a command's file is bad, sends nothing, and exits 2", async () => {
    const { workspace, server, options } = await commandSetup(0);
    await writeFile(join(workspace, ".agents/commands/bad.md"), Buffer.from([0x63, 0xe9, 0x0a]));
    const run = await runBin(["/bad now"], options);
    const line =
      "mini-agent: command /bad (.agents/commands/bad.md): the file is not UTF-8 text: not loaded\n";
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `${line}${line.replace(/\n$/, ", so nothing was sent\n")}`,
    });
    expect(server.requests).toEqual([]);
  });
});

describe.skipIf(!hasTmux)("the user's commands at the terminal, in tmux", () => {
  it("lists them in /help, completes a name with Tab, and sends the command's prompt", async () => {
    const { server, workspace, options } = await commandSetup(2);
    const term = tmux({ cwd: workspace, env: options.env });
    await term.waitFor(/^›/m);
    term.type("/help");
    term.keys("Enter");
    const help = await term.waitFor("Your commands:");
    expect(help).toContain(
      "Your commands:\n/notes arguments         Write the release notes since $ARGUMENTS.\n/review [folder] [focus] Review the code in a folder\n",
    );
    term.type("/rev");
    term.keys("Tab");
    await term.waitFor("› /review");
    term.type(' src "error paths"');
    term.keys("Enter");
    await term.waitFor("answer 1");
    term.type("/no");
    term.keys("Tab");
    term.type(" v1.2");
    term.keys("Enter");
    await term.waitFor("answer 2");
    term.type("/exit");
    term.keys("Enter");
    expect(prompts(server.requests)).toEqual([reviewed, noted]);
    expect(server.rejections).toEqual([]);
  });
});

describe("the user's commands in mini-agent acp", () => {
  it("lists them with /compact and /mode, runs them, and switches the mode with /mode", async () => {
    const { server, workspace, options } = await commandSetup(2);
    const { value, run } = await withAcpAgent(
      ["--sandbox", "off"],
      options,
      noAnswer,
      async (agent, seen) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", {
          cwd: workspace,
          mcpServers: [],
        });
        await until(() => seen.commands.length > 0);
        const send = (text: string) =>
          agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
        return [
          await send('/review src "error paths"'),
          await send("/notes v1.2"),
          await send("/mode plan"),
        ];
      },
    );
    expect(value).toEqual([
      { stopReason: "end_turn" },
      { stopReason: "end_turn" },
      { stopReason: "end_turn" },
    ]);
    expect(run.commands.map((note) => note.update)).toEqual([
      {
        sessionUpdate: "available_commands_update",
        availableCommands: [
          {
            name: "compact",
            description: "Summarise the conversation so far, to free context",
            input: { hint: "what to keep" },
          },
          {
            name: "mode",
            description: "Show the session mode, or switch to another",
            input: { hint: "code|ask|plan" },
          },
          {
            name: "notes",
            description: "Write the release notes since $ARGUMENTS.",
            input: { hint: "arguments" },
          },
          {
            name: "review",
            description: "Review the code in a folder",
            input: { hint: "[folder] [focus]" },
          },
        ],
      },
    ]);
    expect(prompts(server.requests)).toEqual([reviewed, noted]);
    expect(run.updates.map((note) => note.update).slice(-2)).toEqual([
      { sessionUpdate: "current_mode_update", currentModeId: "plan" },
      {
        sessionUpdate: "agent_message_chunk",
        content: {
          type: "text",
          text: "mode plan (reads and plans; edits, commands beyond reading and MCP calls are denied)",
        },
      },
    ]);
    expect(invalidLines(run.lines)).toEqual([]);
  });
});

describe("/compact in mini-agent acp", () => {
  const summary = "## Goal\nsum up\n## Decisions\n-\n## Done\nread\n## In progress\n-\n## Next\n-";
  const isSummary = (body: Body) => systemText(body) === summaryPrompt;

  /** Each request: a summary request gets the summary, the others the next of `rounds`. */
  async function compactSetup(rounds: Reply[]) {
    const dispatch = (body: Body): Reply =>
      isSummary(body)
        ? stream(turn({ text: [summary] }))
        : (rounds.shift() ?? stream(turn({ text: ["no round was queued"] })));
    const parts = await setup(
      Array.from({ length: 10 }, () => dispatch),
      { contextLimit: 8000 },
    );
    await writeFile(
      join(parts.workspace, "big.txt"),
      "a line of a rather large file\n".repeat(200),
    );
    return parts;
  }

  /** The agent's message chunks after each prompt, as the editor got them. */
  async function prompts(
    options: Parameters<typeof withAcpAgent>[1],
    cwd: string,
    texts: string[],
  ) {
    return await withAcpAgent(
      ["--sandbox", "off", "--context-window", "8000"],
      options,
      noAnswer,
      async (agent, seen) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const { sessionId } = await agent.request("session/new", { cwd, mcpServers: [] });
        const said: string[][] = [];
        for (const text of texts) {
          const from = seen.updates.length;
          await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
          said.push(
            seen.updates
              .slice(from)
              .map((note) => note.update)
              .flatMap((update) =>
                update.sessionUpdate === "agent_message_chunk" && update.content.type === "text"
                  ? [update.content.text]
                  : [],
              ),
          );
        }
        return said;
      },
    );
  }

  it("compacts the conversation now and says so in the answer", async () => {
    const read = (id: string) =>
      stream(turn({ calls: [{ id, name: "read", input: { path: "big.txt" } }] }));
    const { server, workspace, options } = await compactSetup([
      read("toolu_1"),
      read("toolu_2"),
      stream(turn({ text: ["read twice"] })),
    ]);
    const { value } = await prompts(options, workspace, [
      "read big.txt twice",
      "/compact keep the notes",
    ]);
    expect(value[0]).toEqual(["read twice"]);
    expect(value[1]).toEqual([
      expect.stringMatching(/^compacted the conversation: \d+k? → \d+k? tokens \(1 compaction\)$/),
    ]);
    const summaries = server.requests.filter((request) => isSummary(request.body));
    expect(summaries).toHaveLength(1);
    expect(JSON.stringify(summaries[0]?.body.messages)).toContain(
      "The user asks the notes to keep this in view: keep the notes",
    );
  });

  it("says in the answer why a short conversation is not compacted, and sends nothing", async () => {
    const { server, workspace, options } = await compactSetup([stream(turn({ text: ["hello"] }))]);
    const { value } = await prompts(options, workspace, ["hi", "/compact"]);
    expect(value).toEqual([
      ["hello"],
      [expect.stringMatching(/^mini-agent: nothing to compact yet: /)],
    ]);
    expect(server.requests).toHaveLength(1);
  });
});
