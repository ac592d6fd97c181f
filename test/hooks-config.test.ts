import { describe, expect, it } from "vitest";
import { matchesTool, parseHooks } from "../src/config/hooks.js";
import { commandWords } from "../src/hooks/trust.js";

describe("a hook's matcher", () => {
  it("takes every tool when absent, empty or *; names tools exactly; else is a regular expression", () => {
    expect([undefined, "", "*"].map((matcher) => matchesTool(matcher, "Bash"))).toEqual([
      true,
      true,
      true,
    ]);
    expect(
      ["Bash", "Edit|Write", "Edit|Write"].map((m, i) =>
        matchesTool(m, ["Bash", "Write", "NotebookEdit"][i] ?? ""),
      ),
    ).toEqual([true, true, false]);
    expect(matchesTool("mcp__github__.*", "mcp__github__search")).toBe(true);
    expect(matchesTool("mcp__github__.*", "mcp__gitlab__search")).toBe(false);
  });
});

describe("the hooks object", () => {
  it("refuses a matcher that is no regular expression, and a timeout that is no positive number", () => {
    const group = (handler: object, matcher = "Bash") => ({
      PreToolUse: [{ matcher, hooks: [{ type: "command", command: "true", ...handler }] }],
    });
    expect(() => parseHooks(group({}, "Bash("), "c.json", "user")).toThrow(
      /^c\.json: hooks\.PreToolUse\[0\]\.matcher is not a regular expression/,
    );
    expect(() => parseHooks(group({ timeout: 0 }), "c.json", "user")).toThrow(
      "c.json: hooks.PreToolUse[0].hooks[0].timeout must be a number of seconds above 0 and at most 3600, not 0",
    );
    expect(() => parseHooks(group({ sandbox: "no" }), "c.json", "user")).toThrow(
      'c.json: hooks.PreToolUse[0].hooks[0].sandbox must be true or false, not "no"',
    );
    expect(() => parseHooks([], "c.json", "user")).toThrow(
      "c.json: hooks must be an object of events, not []",
    );
  });

  it("keeps the known events it does not fire yet out, with one warning each", () => {
    const parsed = parseHooks(
      { Stop: [{ hooks: [{ type: "command", command: "true" }] }] },
      "c.json",
      "user",
    );
    expect(parsed).toEqual({
      hooks: [],
      warnings: [
        "c.json: hooks.Stop is not run by this version of mini-agent yet (only PreToolUse and PostToolUse); it is never fired",
      ],
    });
  });
});

describe("a hook command's words", () => {
  it("reads a simple line, the project folder's variables put in", () => {
    expect(commandWords('python3 "$CLAUDE_PROJECT_DIR"/hooks/check.py --fix', "/p")).toEqual({
      words: ["python3", "/p/hooks/check.py", "--fix"],
    });
    expect(commandWords(`sh '\${MINI_AGENT_PROJECT_DIR}/a b.sh'`, "/p")).toEqual({
      words: ["sh", `\${MINI_AGENT_PROJECT_DIR}/a b.sh`],
    });
    expect(commandWords(`sh \${MINI_AGENT_PROJECT_DIR}/a\\ b.sh`, "/p")).toEqual({
      words: ["sh", "/p/a b.sh"],
    });
  });

  it.each([
    ["npx prettier --write . | tee log", '"|"'],
    ["a && b", '"&"'],
    ["sh $HOME/x.sh", "a variable or substitution"],
    ['sh "$(cat x)"', "a variable or substitution"],
    ["FOO=1 sh x.sh", '"="'],
    ["sh 'x.sh", "unclosed quote"],
  ])("says %s is not a simple line", (command, why) => {
    const read = commandWords(command, "/p");
    expect(read.words).toEqual([]);
    expect(read.unknown).toContain(why);
  });
});
