import { parseArgs } from "node:util";
import { describe, expect, it } from "vitest";
import { UsageError } from "../src/app/exit.js";
import { options, parseFlags } from "../src/cli/flags.js";

/** What Node's own parser makes of `argv`, strict, with words: the reference for the usual forms. */
const byNode = (argv: string[]) => {
  const { values, positionals } = parseArgs({
    args: argv,
    options,
    strict: true,
    allowPositionals: true,
  });
  return { values: { ...values }, positionals };
};

const mine = (argv: string[]) => {
  const { values, positionals } = parseFlags(argv);
  return { values, positionals };
};

const refusal = (argv: string[]) => {
  try {
    parseFlags(argv);
    return "parsed";
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
};

describe("the command line's flags", () => {
  it.each([
    [[]],
    [["fix the bug"]],
    [["-p", "task"]],
    [["--print=task"]],
    [["--print="]],
    [["-ptask"]],
    [["-c", "-h"]],
    [["-ch"]],
    [["-chm", "opus"]],
    [["-chmopus"]],
    [["--model", "a", "--model", "b", "task"]],
    [["--allow", "ls", "--deny", "rm", "--allow=git status"]],
    [["--allow-bash", "--no-mcp", "--sandbox", "off", "task", "more"]],
    [["task", "--", "--max-turns", "-1", "-x"]],
    [["-", "--cwd", "-"]],
    [["--cwd", "/tmp", "--", "--"]],
    [["--image", "a.png", "--image", "b.png", "look"]],
    [["config", "path"]],
    [["rules", "explain", "ls", "-la"]],
  ])("reads %j as Node's parser does", (argv) => {
    // `rules explain ls -la` is refused by both: -l is no flag.
    let node: unknown;
    try {
      node = byNode(argv);
    } catch {
      node = "refused";
    }
    let ours: unknown;
    try {
      ours = mine(argv);
    } catch {
      ours = "refused";
    }
    expect(ours).toEqual(node);
  });

  it.each([
    [["--frobnicate", "task"], "unknown option --frobnicate (mini-agent --help lists the options)"],
    [["--frobnicate=1"], "unknown option --frobnicate (mini-agent --help lists the options)"],
    [["--__proto__"], "unknown option --__proto__ (mini-agent --help lists the options)"],
    [["--constructor=x"], "unknown option --constructor (mini-agent --help lists the options)"],
    [["--p", "task"], "unknown option --p (mini-agent --help lists the options)"],
    [["-x", "task"], "unknown option -x (mini-agent --help lists the options)"],
    [["-cx"], "unknown option -x (mini-agent --help lists the options)"],
    [["-1"], "unknown option -1 (mini-agent --help lists the options)"],
    [["--max-turns"], "--max-turns needs a value"],
    [["-m"], "--model needs a value"],
    [
      ["--model", "--cwd", "x"],
      '--model needs a value (to give one that starts with "-", write --model=VALUE)',
    ],
    [["-m", "-x"], '--model needs a value (to give one that starts with "-", write --model=VALUE)'],
    [["-p", "--"], '--print needs a value (to give one that starts with "-", write --print=VALUE)'],
    [["--allow-bash=yes", "task"], "--allow-bash takes no value"],
    [["--help="], "--help takes no value"],
  ])("refuses %j: %s", (argv, message) => {
    expect(refusal(argv)).toBe(message);
  });

  it("takes a negative number after a flag as its value, and a lone resume as the picker's", () => {
    expect(mine(["--max-turns", "-1", "task"]).values).toEqual({ "max-turns": "-1" });
    expect(mine(["-m", "-1"]).values).toEqual({ model: "-1" });
    expect(mine(["--resume"]).values).toEqual({ resume: "" });
    expect(mine(["-r", "--continue", "task"])).toEqual({
      values: { resume: "", continue: true },
      positionals: ["task"],
    });
    expect(mine(["--resume", "20261205-101010-abcdef"]).values).toEqual({
      resume: "20261205-101010-abcdef",
    });
  });

  it("keeps every flag's value in the order given, for the rules' order", () => {
    expect(
      parseFlags(["--deny", "rm", "-m", "x", "--allow=ls", "--deny", "git push"]).tokens,
    ).toEqual([
      { name: "deny", value: "rm" },
      { name: "model", value: "x" },
      { name: "allow", value: "ls" },
      { name: "deny", value: "git push" },
    ]);
  });
});
