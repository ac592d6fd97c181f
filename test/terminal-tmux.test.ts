import { readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import {
  bin,
  runBin,
  sessionFiles,
  sessionRecords,
  toolResults,
  useCliSetup,
} from "./support/cli.js";
import { hasTmux, useTmux } from "./support/tmux.js";

/**
 * The terminal as a person meets it, driven in tmux against the kit's strict server: the banner,
 * the recap, the picker, a diff, pastes, a denial with a reason.
 */

const setup = useCliSetup();
const tmux = useTmux();
/** The text of the last block of each request: the prompt it carries. */
const prompts = (requests: { body: Record<string, unknown> }[]) =>
  requests.map((request) => {
    const messages = (request.body.messages ?? []) as { content: { text?: string }[] }[];
    return messages.at(-1)?.content.at(-1)?.text;
  });

describe.skipIf(!hasTmux)("the terminal, driven in tmux", () => {
  it("starts with the banner, and the prompt after it", async () => {
    const { workspace, options } = await setup([]);
    const term = tmux({ cwd: workspace, env: options.env });
    const screen = await term.waitFor(/^›/m);
    expect(screen).toMatch(
      /^mini-agent · model claude-sonnet-5-5 · provider anthropic · sandbox \w+\n/,
    );
    expect(screen).toContain(`folder ${workspace} · /help lists the commands, /exit leaves\n`);
    term.type("/exit");
    term.keys("Enter");
  });

  it("clears what is typed on Ctrl-C, as a shell does: nothing of it reaches the next prompt", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["Got it."] })),
      stream(turn({ text: ["Got the second."] })),
    ]);
    const term = tmux({ cwd: workspace, env: options.env });
    await term.waitFor(/^›/m);
    term.type("draft two");
    await term.waitFor("› draft two");
    term.keys("C-c");
    term.type("hello after ctrl-c");
    term.keys("Enter");
    await term.waitFor("Got it.");
    // A kept line (Alt-Enter) and the current one: both cleared; a bare Enter then sends nothing.
    term.type("line one");
    term.keys("M-Enter");
    term.type("line two");
    await term.waitFor("… line two");
    term.keys("C-c");
    term.keys("Enter");
    term.type("the second prompt");
    term.keys("Enter");
    await term.waitFor("Got the second.");
    // Clearing typed text does not count toward quitting: the session is still there.
    await term.waitFor(/Got the second\.\n.*\n›/);
    term.type("abc");
    term.keys("C-c");
    term.type("def");
    term.keys("C-c");
    term.type("/exit");
    term.keys("Enter");
    expect(server.rejections).toEqual([]);
    expect(prompts(server.requests)).toEqual(["hello after ctrl-c", "the second prompt"]);
  });

  it("lets what was typed during a turn be edited at the prompt, the cursor after it", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "sleep 1.5" } }] })),
      stream(turn({ text: ["Slept."] })),
      stream(turn({ text: ["Edited prompt."] })),
    ]);
    const term = tmux({
      cwd: workspace,
      env: options.env,
      args: ["--allow-bash", "--sandbox", "off"],
    });
    await term.waitFor(/^›/m);
    term.type("sleep");
    term.keys("Enter");
    await term.waitFor("bash sleep 1.5");
    term.type("bbb");
    await term.waitFor(/Slept\.\n.*\n› bbb/);
    term.keys("C-u");
    term.type("ccc");
    term.keys("Enter");
    await term.waitFor("Edited prompt.");
    expect(prompts(server.requests)).toEqual(["sleep", undefined, "ccc"]);
  });

  it("keeps a paste made at the question for the next prompt, which Enter sends", async () => {
    const { server, workspace, options } = await setup([
      stream(
        turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "touch made.txt" } }] }),
      ),
      stream(turn({ text: ["Ran it."] })),
      stream(turn({ text: ["Got the paste."] })),
    ]);
    const term = tmux({ cwd: workspace, env: options.env, args: ["--sandbox", "off"] });
    await term.waitFor(/^›/m);
    term.type("run it");
    term.keys("Enter");
    await term.waitFor("[y/N/a]");
    term.paste("pasted one\npasted two");
    await term.waitFor("(kept for the next prompt)");
    term.type("y");
    term.keys("Enter");
    // The prompt is back, holding the paste, and nothing more was sent.
    await term.waitFor(/Ran it\.\n.*\n…$/m);
    expect(server.requests).toHaveLength(2);
    term.keys("Enter");
    await term.waitFor("Got the paste.");
    expect(prompts(server.requests).at(-1)).toBe("pasted one\npasted two");
  });

  it("leaves on Ctrl-D at the prompt with a newline: what the shell writes next starts a line", async () => {
    const { workspace, options } = await setup([]);
    // A shell that runs mini-agent, then writes a word, as the shell's own prompt would come.
    const script = `"${process.execPath}" "${bin}"; printf AFTER`;
    const term = tmux({ cwd: workspace, env: options.env, command: ["sh", "-c", script] });
    await term.waitFor(/^›/m);
    term.keys("C-d");
    const screen = await term.waitFor("AFTER");
    expect(screen).toMatch(/^›\nAFTER/m);
  });

  it("after Ctrl-Z and fg during a turn draws no prompt: the turn goes on and ends as usual", async () => {
    const { workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "sleep 2" } }] })),
      stream(turn({ text: ["Slept."] })),
    ]);
    const term = tmux({
      cwd: workspace,
      env: { ...options.env, PS1: "SHELL$ " },
      command: ["bash", "--norc", "--noprofile", "-i"],
    });
    await term.waitFor("SHELL$");
    term.type(`"${process.execPath}" "${bin}" --allow-bash --sandbox off`);
    term.keys("Enter");
    await term.waitFor(/^›/m);
    term.type("sleep");
    term.keys("Enter");
    await term.waitFor("bash sleep 2");
    term.keys("C-z");
    await term.waitFor("Stopped");
    term.type("fg");
    term.keys("Enter");
    const screen = await term.waitFor("Slept.");
    // From fg to the answer: the tool's line, and no prompt drawn while the turn ran.
    const during = screen.slice(screen.lastIndexOf("fg\n"), screen.lastIndexOf("Slept."));
    expect(during).toMatch(/^ {2}✓ bash sleep 2/m);
    expect(during.split("\n").filter((line) => line.startsWith("›"))).toEqual([]);
    // Leaves before the test's folders are removed: the shell's prompt is back.
    term.type("/exit");
    term.keys("Enter");
    await term.waitFor(/Slept\.[\s\S]*\nSHELL\$/);
  });

  it("recaps the session --continue takes up", async () => {
    const { workspace, options } = await setup([
      stream(turn({ text: ["It is 42."] })),
      stream(turn({ text: ["Still 42."] })),
    ]);
    expect((await runBin(["what is it?"], options)).code).toBe(0);
    const term = tmux({ cwd: workspace, env: options.env, args: ["--continue"] });
    const screen = await term.waitFor("last answer: It is 42.");
    expect(screen).toMatch(
      /resumed session \d{8}-\d{6}-\w+, last used just now\n {2}last prompt: what is it\?\n/,
    );
    term.type("and now?");
    term.keys("Enter");
    await term.waitFor("Still 42.");
  });

  it("resumes the session chosen in the picker", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ text: ["Older."] })),
      stream(turn({ text: ["Newer."] })),
      stream(turn({ text: ["Back in the older one."] })),
    ]);
    expect((await runBin(["the older prompt"], options)).code).toBe(0);
    // Listed newest first by the time of their last write: the older a minute before.
    const [older = ""] = await sessionFiles(home);
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(older, minuteAgo, minuteAgo);
    expect((await runBin(["the newer prompt"], options)).code).toBe(0);
    const term = tmux({ cwd: workspace, env: options.env, args: ["--resume"] });
    const list = await term.waitFor("resume which session?");
    expect(list).toMatch(
      /› {2}1 {2}\d{8}-\d{6}-\w+ .*the newer prompt\n {3}2 {2}.*the older prompt/,
    );
    term.keys("Down");
    await term.waitFor(/› {2}2 {2}.*the older prompt/);
    term.keys("Enter");
    await term.waitFor("last answer: Older.");
    term.type("go on");
    term.keys("Enter");
    await term.waitFor("Back in the older one.");
    expect(server.rejections).toEqual([]);
    const history = (server.requests[2]?.body.messages ?? []) as { content: { text?: string }[] }[];
    expect(history.map((message) => message.content.at(-1)?.text)).toEqual([
      "the older prompt",
      "Older.",
      "go on",
    ]);
  });

  it("cancels the picker with Esc, resuming nothing", async () => {
    const { workspace, options } = await setup([stream(turn({ text: ["One."] }))]);
    expect((await runBin(["a prompt"], options)).code).toBe(0);
    const term = tmux({ cwd: workspace, env: options.env, args: ["--resume"] });
    await term.waitFor("resume which session?");
    term.keys("Escape");
    const screen = await term.waitFor("no session chosen; nothing resumed");
    expect(screen).not.toContain("resumed session");
    expect(screen).not.toContain("› \n");
  });

  it("shows a diff for an edit", async () => {
    const { workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }] })),
      stream(
        turn({
          calls: [
            {
              id: "toolu_2",
              name: "edit",
              input: { path: "a.txt", oldText: "beta", newText: "BETA" },
            },
          ],
        }),
      ),
      stream(turn({ text: ["Edited."] })),
    ]);
    await writeFile(join(workspace, "a.txt"), "alpha\nbeta\ngamma\n");
    const term = tmux({ cwd: workspace, env: options.env });
    await term.waitFor(/^›/m);
    term.type("edit it");
    term.keys("Enter");
    const screen = await term.waitFor("Edited.");
    expect(screen).toMatch(
      /✓ edit a\.txt · \d+\.\ds\n {4}│ --- a\.txt\n {4}│ \+\+\+ a\.txt\n {4}│ @@ -2 \+2 @@\n {4}│ -beta\n {4}│ \+BETA\n/,
    );
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("alpha\nBETA\ngamma\n");
  });

  it("sends a bracketed paste of 3 lines, and one of 2,000 lines, each as one request", async () => {
    const { server, workspace, options } = await setup([
      stream(turn({ text: ["Three lines."] })),
      stream(turn({ text: ["Many lines."] })),
    ]);
    const term = tmux({ cwd: workspace, env: options.env });
    await term.waitFor(/^›/m);
    term.paste("first line\nsecond line\nthird line");
    await term.waitFor("[pasted 3 lines");
    term.keys("Enter");
    // The next prompt, after the answer and the status line.
    await term.waitFor(/Three lines\.\n.*session 10\/5\n›/);
    const long = Array.from({ length: 2_000 }, (_, i) => `${i}`.padEnd(59, "x")).join("\n");
    term.paste(long);
    await term.waitFor("[pasted 2,000 lines");
    term.keys("Enter");
    await term.waitFor("Many lines.");
    expect(server.rejections).toEqual([]);
    expect(prompts(server.requests)).toEqual(["first line\nsecond line\nthird line", long]);
  });

  it("sends a denial's reason to the model, as the strict server logs it, and records it", async () => {
    const { server, workspace, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "npm install" } }] })),
      stream(turn({ text: ["Using pnpm."] })),
    ]);
    const term = tmux({ cwd: workspace, env: options.env, args: ["--sandbox", "off"] });
    await term.waitFor(/^›/m);
    term.type("install");
    term.keys("Enter");
    await term.waitFor("[y/N/a]");
    term.type("n");
    term.keys("Enter");
    await term.waitFor("why not (for the model; Enter for none)?");
    term.type("use pnpm instead");
    term.keys("Enter");
    await term.waitFor("Using pnpm.");
    expect(server.rejections).toEqual([]);
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "the user denied this call: use pnpm instead", isError: true },
    ]);
    term.type("/exit");
    term.keys("Enter");
    const [file] = await sessionFiles(home);
    const approvals = (await sessionRecords(file ?? "")).filter((r) => r.type === "approval");
    expect(approvals).toEqual([
      {
        type: "approval",
        toolCallId: "toolu_1",
        tool: "bash",
        approved: false,
        by: "user",
        reason: "use pnpm instead",
      },
    ]);
  });
});
