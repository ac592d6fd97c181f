import { describe, expect, it } from "vitest";
import { type Answer, cliPolicy, type Decision } from "../src/cli/policy.js";
import { toolCall } from "./support/fake-client.js";

const bash = (id: string) => toolCall(id, "bash", { command: "make" });

describe("the CLI approval policy", () => {
  it("asks for bash, honours yes and no, and stops asking after always", async () => {
    const answers: Answer[] = ["yes", "no", "always"];
    const asked: string[] = [];
    const decisions: Decision[] = [];
    const policy = cliPolicy({
      bash: "ask",
      ask: async (call) => {
        asked.push(call.id);
        return answers.shift() ?? "no";
      },
      record: async (decision) => void decisions.push(decision),
    });
    const outcomes = [];
    for (const id of ["b1", "b2", "b3", "b4"]) outcomes.push(await policy(bash(id)));
    outcomes.push(await policy(toolCall("r1", "read", { path: "a" })));
    expect(asked).toEqual(["b1", "b2", "b3"]);
    expect(outcomes).toEqual([
      { approved: true },
      { approved: false, reason: "the user denied this call" },
      { approved: true },
      { approved: true },
      { approved: true },
    ]);
    expect(decisions.map((d) => `${d.toolCallId} ${d.approved} ${d.by}`)).toEqual([
      "b1 true user",
      "b2 false user",
      "b3 true user-always",
      "b4 true user-always",
      "r1 true default-policy",
    ]);
  });

  it("denies bash with the default reason when there is no one to ask", async () => {
    const decisions: Decision[] = [];
    const policy = cliPolicy({
      bash: "ask",
      record: async (decision) => void decisions.push(decision),
    });
    expect(await policy(bash("b1"))).toEqual({
      approved: false,
      reason:
        "bash is denied by default: run mini-agent with --allow-bash to let the agent run shell commands",
    });
    expect(decisions).toEqual([
      { toolCallId: "b1", tool: "bash", approved: false, by: "no-terminal" },
    ]);
  });

  it("allows bash without asking under --allow-bash", async () => {
    const decisions: Decision[] = [];
    const policy = cliPolicy({
      bash: "allow",
      ask: async () => {
        throw new Error("must not ask");
      },
      record: async (decision) => void decisions.push(decision),
    });
    expect(await policy(bash("b1"))).toEqual({ approved: true });
    expect(decisions).toEqual([
      { toolCallId: "b1", tool: "bash", approved: true, by: "allow-bash-flag" },
    ]);
  });

  it("records closing the input at the question as a denial by the user, saying so", async () => {
    const decisions: Decision[] = [];
    const policy = cliPolicy({
      bash: "ask",
      ask: async () => "closed",
      record: async (decision) => void decisions.push(decision),
    });
    expect(await policy(bash("b1"))).toEqual({
      approved: false,
      reason: "the user closed the input (Ctrl-D) instead of answering; the call did not run",
    });
    expect(decisions).toEqual([{ toolCallId: "b1", tool: "bash", approved: false, by: "user" }]);
  });
});
