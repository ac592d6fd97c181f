import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type Answer,
  type CliPolicyOptions,
  cliPolicy,
  type Decision,
  type Question,
} from "../src/app/policy.js";
import type { Rule } from "../src/rules/rule.js";
import { toolCall } from "../src/testing/fake-client.js";
import { asksOutside } from "../src/tools/bash.js";

/**
 * The sandbox as the boundary, decided by the CLI's policy: inside a working sandbox bash runs
 * without asking in code mode (deny rules first); a call that asks to leave it is a person's
 * question every time, or an explicit `allow-unsandboxed` rule's.
 */

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "mini-agent-boundary-")));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

const inside = (id: string, command: string) => toolCall(id, "bash", { command });
const outside = (id: string, command: string, reason = "it needs the network") =>
  toolCall(id, "bash", { command, outside_sandbox: true, reason });

function boundaryPolicy(
  options: Partial<CliPolicyOptions> & { answers?: Answer[]; noOne?: boolean },
  rules: Rule[] = [],
) {
  const decisions: Decision[] = [];
  const asked: Question[] = [];
  const saved: Rule[] = [];
  const answers = options.answers ?? [];
  const ask: CliPolicyOptions["ask"] = async (_call, question) => {
    asked.push(question);
    return answers.shift() ?? "no";
  };
  const policy = cliPolicy({
    ...(!options.noOne && { ask }),
    bash: "ask",
    workspace,
    sandboxed: true,
    boundary: true,
    lowSpace: () => undefined,
    rules: { current: () => [...saved, ...rules], save: async (add) => void saved.push(...add) },
    record: async (decision) => void decisions.push(decision),
    ...options,
  });
  const by = () => decisions.map((d) => `${d.toolCallId} ${d.approved} ${d.by}`);
  return { policy, asked, saved, by };
}

const allow = (words: string): Rule => ({ effect: "allow", words: words.split(" ") });
const deny = (words: string): Rule => ({ effect: "deny", words: words.split(" ") });
const unsandboxed = (words: string): Rule => ({
  effect: "allow-unsandboxed",
  words: words.split(" "),
});

describe("inside a working sandbox, in code mode", () => {
  it("runs test, build and write commands without a question, recorded as decided by the sandbox", async () => {
    const { policy, asked, by } = boundaryPolicy({});
    const commands = ["pytest -q", "npm test", 'python3 -c \'open("x","w")\'', "rm -rf build"];
    for (const [i, command] of commands.entries())
      expect(await policy(inside(`c${i}`, command))).toEqual({ approved: true });
    expect(asked).toEqual([]);
    expect(by()).toEqual([
      "c0 true sandbox",
      "c1 true sandbox",
      "c2 true sandbox",
      "c3 true sandbox",
    ]);
  });

  it("lets a deny rule decide first, and a rule or the read-only set keep their names", async () => {
    const { policy, by } = boundaryPolicy({}, [deny("git push"), allow("npm test")]);
    expect(await policy(inside("d", "git push -f"))).toMatchObject({ approved: false });
    await policy(inside("r", "npm test"));
    await policy(inside("l", "ls"));
    expect(by()).toEqual([
      "d false rule:deny git push",
      "r true rule:allow npm test",
      "l true read-only set: ls",
    ]);
  });

  it("still asks about a redirect into a protected file, and runs without asking even with no one to ask", async () => {
    const { policy, asked } = boundaryPolicy({ answers: ["no"] });
    await policy(inside("p", "echo x > .git/config"));
    expect(asked.map((q) => q.reason)).toEqual([
      expect.stringContaining("a redirect that writes the protected file .git/config"),
    ]);
    const headless = boundaryPolicy({ noOne: true });
    expect(await headless.policy(inside("h", "make test"))).toEqual({ approved: true });
    expect(headless.by()).toEqual(["h true sandbox"]);
  });

  it("leaves ask and plan modes as the rules decide", async () => {
    const ask = boundaryPolicy({ mode: () => "ask", answers: ["yes"] });
    await ask.policy(inside("a", "make"));
    expect(ask.asked.map((q) => q.reason)).toEqual([
      "the session is in ask mode: no rule allows make",
    ]);
    const plan = boundaryPolicy({ mode: () => "plan" });
    await plan.policy(inside("p", "make"));
    await plan.policy(inside("l", "ls"));
    expect(plan.by()).toEqual(["p false mode:plan", "l true read-only set: ls"]);
  });

  it("is the rules as they are when the sandbox does not work, or without the boundary", async () => {
    for (const options of [{ sandboxed: false }, { boundary: false }]) {
      const { policy, asked, by } = boundaryPolicy({ ...options, answers: ["no"] });
      await policy(inside("m", "make"));
      expect(asked.map((q) => q.reason)).toEqual(["no rule allows make"]);
      expect(by()).toEqual(["m false user"]);
    }
  });
});

describe("the way out of the sandbox", () => {
  it("is asked as a question that says it leaves the sandbox, with the model's reason, and saves at most the exact command", async () => {
    const { policy, asked, saved, by } = boundaryPolicy({
      answers: ["always", { always: [unsandboxed("npm")] }],
    });
    expect(await policy(outside("o1", "npm install left-pad"))).toEqual({ approved: true });
    expect(asked[0]).toEqual({
      decision: "ask",
      reason:
        "this command asks to run OUTSIDE the sandbox, with the user's full rights: every file the user can change, the network, the credential stores; the model's reason: it needs the network",
      save: [{ effect: "allow-unsandboxed", words: ["npm", "install", "left-pad"], exact: true }],
      outside: { reason: "it needs the network" },
    });
    // The exact rule now covers that command alone; a broader answer saves no broader rule.
    expect(await policy(outside("o2", "npm install left-pad"))).toEqual({ approved: true });
    await policy(outside("o3", "npm install other"));
    expect(saved).toEqual([
      { effect: "allow-unsandboxed", words: ["npm", "install", "left-pad"], exact: true },
      { effect: "allow-unsandboxed", words: ["npm", "install", "other"], exact: true },
    ]);
    expect(by()).toEqual([
      "o1 true user-always (saved: allow-unsandboxed npm install left-pad (exactly))",
      "o2 true rule:allow-unsandboxed npm install left-pad (exactly)",
      "o3 true user-always (saved: allow-unsandboxed npm install other (exactly))",
    ]);
  });

  it("is not covered by --allow-bash, an allow rule or the read-only set", async () => {
    const { policy, asked, by } = boundaryPolicy({ bash: "allow" }, [allow("curl")]);
    await policy(outside("b", "make"));
    await policy(outside("r", "curl -sS https://example.org"));
    await policy(outside("l", "ls"));
    expect(asked.map((q) => q.outside)).toEqual([
      { reason: "it needs the network" },
      { reason: "it needs the network" },
      { reason: "it needs the network" },
    ]);
    expect(by()).toEqual(["b false user", "r false user", "l false user"]);
  });

  it("is allowed by an allow-unsandboxed rule only for every command of the line, and a deny rule still wins", async () => {
    const { policy, asked, by } = boundaryPolicy({ noOne: true }, [
      unsandboxed("npm install"),
      deny("npm install evil"),
    ]);
    expect(await policy(outside("y", "npm install"))).toEqual({ approved: true });
    expect(await policy(outside("n", "npm install && curl x"))).toMatchObject({ approved: false });
    expect(await policy(outside("d", "npm install evil"))).toMatchObject({ approved: false });
    expect(asked).toEqual([]);
    expect(by()).toEqual([
      "y true rule:allow-unsandboxed npm install",
      "n false no-terminal",
      "d false rule:deny npm install evil",
    ]);
  });

  it("is refused in plan mode, asked without saving in ask mode, denied with no one to ask", async () => {
    const plan = boundaryPolicy({ mode: () => "plan" }, [unsandboxed("npm install")]);
    expect(await plan.policy(outside("p", "npm install"))).toEqual({
      approved: false,
      reason:
        "the session is in plan mode: bash is not allowed, as it may change something (the user can change the mode)",
    });
    const ask = boundaryPolicy({ mode: () => "ask", answers: ["always"] }, [
      unsandboxed("npm install"),
    ]);
    expect(await ask.policy(outside("a", "npm install"))).toEqual({ approved: true });
    expect(ask.asked.map((q) => [q.save, q.outside])).toEqual([
      [[], { reason: "it needs the network" }],
    ]);
    expect(ask.saved).toEqual([]);
    const headless = boundaryPolicy({ noOne: true, bash: "allow" });
    expect(await headless.policy(outside("h", "npm install"))).toEqual({
      approved: false,
      reason:
        'bash outside the sandbox needs the user\'s approval, and no one can be asked here: run the command inside the sandbox (without outside_sandbox); the user may allow exactly this with --allow-unsandboxed "npm install"',
    });
    expect([plan.by(), ask.by(), headless.by()]).toEqual([
      ["p false mode:plan"],
      [
        "a true user-always (not saved: the session is in ask mode, which asks before every change)",
      ],
      ["h false no-terminal"],
    ]);
  });

  it("needs a reason, and reads any outside_sandbox but false as asking to leave", async () => {
    const { policy, asked, by } = boundaryPolicy({ answers: ["no", "no"] });
    await policy(toolCall("r", "bash", { command: "make", outside_sandbox: true }));
    await policy(toolCall("s", "bash", { command: "make", outside_sandbox: "yes", reason: "x" }));
    await policy(toolCall("f", "bash", { command: "make", outside_sandbox: false }));
    expect(asked.map((q) => q.outside)).toEqual([{ reason: "x" }]);
    expect(by()).toEqual(["r false sandbox", "s false user", "f true sandbox"]);
    expect([{ outside_sandbox: 0 }, { outside_sandbox: null }, {}].map(asksOutside)).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("marks every question about it, a hook's or a nearly full disk's too", async () => {
    const { policy, asked } = boundaryPolicy(
      { lowSpace: () => "the disk is nearly full", answers: ["yes"] },
      [unsandboxed("npm install")],
    );
    await policy(outside("l", "npm install"));
    expect(asked.map((q) => [q.reason, q.outside])).toEqual([
      ["the disk is nearly full", { reason: "it needs the network" }],
    ]);
  });
});
