import * as sdkErrors from "@anthropic-ai/sdk/core/error";
import { describe, expect, it } from "vitest";
import { describeError } from "../src/app/errors.js";
import { parseCliArgs, UsageError } from "../src/cli/args.js";
import { providerErrorFrom } from "../src/providers/provider-error.js";
import type { Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/store.js";
import { systemErrorMeaning } from "../src/system-errors.js";
import { scrubURLs, shownURL } from "../src/url.js";
import { streamError } from "./support/provider-errors.js";

describe("describeError", () => {
  it("gives a mid-stream provider error the same one-line form as a status error", () => {
    expect(describeError(streamError("overloaded_error", "Overloaded"), undefined)).toBe(
      "provider error overloaded_error: Overloaded (the provider is overloaded; try again later)",
    );
    expect(describeError(streamError("api_error", "Internal server error"), undefined)).toBe(
      "provider error api_error: Internal server error (the provider failed; try again later)",
    );
    expect(describeError(streamError("something_new", "odd"), undefined)).toBe(
      "provider error something_new: odd (the answer stopped mid-stream; try again)",
    );
  });

  it("reads the SDK's own mid-stream error without printing its raw JSON", () => {
    const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    const sdkError = new sdkErrors.APIError(undefined, body, undefined, new Headers());
    expect(sdkError.message).toBe(JSON.stringify(body));
    expect(describeError(providerErrorFrom("anthropic", sdkError, sdkErrors), undefined)).toBe(
      "provider error overloaded_error: Overloaded (the provider is overloaded; try again later)",
    );
  });

  it("makes control characters in a provider's message visible", () => {
    expect(describeError(streamError("api_error", "bad\x1b[2J\nthing"), undefined)).toBe(
      "provider error api_error: bad␛[2J␊thing (the provider failed; try again later)",
    );
  });

  it("never shows the credentials of the base URL, wherever the error puts them", () => {
    const url = "https://alice:hunter2-secret@llm.example:8443/v1?key=sk-live-123456&mode=fast";
    const connection = providerErrorFrom(
      "anthropic",
      new sdkErrors.APIConnectionError({ message: "Connection error." }),
      sdkErrors,
    );
    expect(describeError(connection, url)).toBe(
      "could not reach https://***@llm.example:8443/v1?key=***&mode=fast (Connection error): check --base-url and the network",
    );
    const echoed = new Error(`fetch failed for ${url} (sk-live-123456, hunter2-secret)`);
    const line = describeError(echoed, url);
    expect(line).not.toContain("hunter2-secret");
    expect(line).not.toContain("sk-live-123456");
    expect(line).not.toContain("alice");
  });
});

describe("shownURL", () => {
  it.each([
    ["http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"],
    ["https://user:pass@host/v1", "https://***@host/v1"],
    ["https://token@host", "https://***@host"],
    ["https://host/v1?key=abc", "https://host/v1?key=***"],
    ["https://host/v1?api_key=abc&x=1", "https://host/v1?api_key=***&x=1"],
    ["https://host/?token=abc#top", "https://host/?token=***#top"],
    [
      "https://host/?X-Api-Key=abc&access_token=t&sig=s",
      "https://host/?X-Api-Key=***&access_token=***&sig=***",
    ],
    ["https://host/?model=x&page=2", "https://host/?model=x&page=2"],
    ["notaurl", "notaurl"],
    ["//u:p@host?password=x", "//***@host?password=***"],
  ])("%s is shown as %s", (url, shown) => {
    expect(shownURL(url)).toBe(shown);
  });

  it("scrubs every URL in a text, and the secrets of a known URL even where they stand alone", () => {
    const url = "https://bob:s3cr3t-pass@h/v1?key=k-123456";
    expect(scrubURLs(`see https://x:y@other/?token=zzz; s3cr3t-pass k-123456`, url)).toBe(
      "see https://***@other/?token=***; *** ***",
    );
  });
});

describe("configuration errors", () => {
  const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    try {
      parseCliArgs(argv, env);
      return "parsed";
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
  };

  it.each([
    [["--frobnicate", "task"], "unknown option --frobnicate (mini-agent --help lists the options)"],
    [["-x", "task"], "unknown option -x (mini-agent --help lists the options)"],
    [
      ["--max-turns", "-1", "task"],
      '--max-turns must be a whole number from 1 to 100000000, not "-1"',
    ],
    [["--max-turns"], "--max-turns needs a value"],
    [
      ["--model", "--cwd", "x"],
      '--model needs a value (to give one that starts with "-", write --model=VALUE)',
    ],
    [["--allow-bash=yes", "task"], "--allow-bash takes no value"],
    [["-p", "a", "--print", "b"], "--print is given twice: give the task once"],
    [
      ["--sandbox", "off", "--sandbox-hide", "secrets", "task"],
      "--sandbox-hide hides nothing with --sandbox off: bash can read every file",
    ],
    [["-m", "", "task"], "--model is empty: name a model, or leave the flag out"],
    [
      ["--base-url", "notaurl", "task"],
      '--base-url must be an http(s) address such as http://127.0.0.1:11434/v1, not "notaurl"',
    ],
    [
      ["--base-url", "ftp://u:p@host/", "task"],
      '--base-url must be an http(s) address such as http://127.0.0.1:11434/v1, not "ftp://***@host/"',
    ],
    [["--cwd", "", "task"], "--cwd is empty: name a folder, or leave the flag out"],
    [["--skill", "", "task"], "--skill is empty: name a skill (mini-agent skills lists them)"],
    [["--sessions", "hi"], "--sessions lists the sessions: it takes no task"],
    [["--sessions", "-c"], "--continue has no use with --sessions: it lists the sessions"],
    [["--sessions", "-r", "abc"], "--resume has no use with --sessions: it lists the sessions"],
    [
      ["--sessions", "--output-format", "json"],
      "--output-format has no use with --sessions: it lists the sessions",
    ],
    [
      ["--sessions", "--image", "x.png"],
      "--image has no use with --sessions: it lists the sessions",
    ],
    [["acp", "--image", "x.png"], "--image has no use with acp"],
    [["acp", "--hide-thinking"], "--hide-thinking has no use with acp"],
    [["acp", "--print=x"], "--print has no use with acp"],
    [["rules", "-p", "hi"], "--print has no use with rules"],
    [["config", "--image", "x.png"], "--image has no use with config"],
    [["skills", "-c"], "--continue has no use with skills"],
    [["mcp", "list", "-r", "zzz"], "--resume has no use with mcp list"],
    [["mcp", "trust", "x", "--mcp-config", "f.json"], "--mcp-config has no use with mcp trust"],
    [["rules", "add", "deny", "git push", "--allow", "ls"], "--allow has no use with rules add"],
    [["rules", "--sandbox-hide", "/x"], "--sandbox-hide has no use with rules"],
    [
      ["rules", "explain", "--mode", "plan", "--allow-bash", "rm x"],
      "--allow-bash has no use with --mode plan: allow rules and --allow-bash count only in code mode",
    ],
    [
      ["rules", "explain", "--stdin", "--mode", "ask", "--allow", "ls"],
      "--allow has no use with --mode ask: allow rules and --allow-bash count only in code mode",
    ],
    [
      ["rules", "explain", "--sandbox", "off", "mcp__github__create_issue"],
      "--sandbox has no use with an MCP tool: tool rules and the mode decide it",
    ],
    [
      ["rules", "explain", "--stdin", "ls"],
      "rules explain --stdin reads the commands on stdin, one a line: give none as an argument",
    ],
    [
      ["rules", "explain"],
      'rules explain needs a command: mini-agent rules explain "COMMAND", or --stdin for one a line',
    ],
    [["rules", "list", "--stdin"], "--stdin has no use with rules list"],
    [["--stdin", "task"], "--stdin is for mini-agent rules explain --stdin (one command a line)"],
    [["config", "path", "-m", "x"], "--model has no use with config path"],
    [
      ["--no-mcp", "--mcp-config", "f.json", "task"],
      "--mcp-config has no use with --no-mcp: no MCP server is started",
    ],
    [["export", "-o=-"], "-o=- is unclear: write -o - or --output=-"],
    [["-p=hi"], "-p=hi is unclear: write -p hi or --print=hi"],
    [["export", "--sessions"], "--sessions has no use with export"],
    [["rewind", "--to", "1", "--model", "m"], "--model has no use with rewind"],
    [["trust", "--model", "m"], "--model has no use with trust"],
    [["-c=1"], "-c takes no value"],
    [["--image=", "look"], "--image is empty: name an image file"],
    [
      ["--hide-thinking", "--output-format", "json", "task"],
      "--hide-thinking has no use with --output-format json: thinking is shown only on a terminal",
    ],
    [
      ["--sandbox", "off", "--sandbox-processes", "5", "task"],
      "--sandbox-processes limits nothing with --sandbox off: only the sandbox applies it",
    ],
    [
      ["--sandbox", "off", "--sandbox-memory", "1G", "task"],
      "--sandbox-memory limits nothing with --sandbox off: only the sandbox applies it",
    ],
    [
      ["--sandbox", "off", "--sandbox-file-size", "1G", "task"],
      "--sandbox-file-size limits nothing with --sandbox off: only the sandbox applies it",
    ],
    [
      ["--skill", "x", "--input-format", "stream-json", "--output-format", "stream-json"],
      "--skill goes with a task on the command line, which --input-format stream-json does not take",
    ],
    [["-vc=1"], "-c takes no value"],
    [["--sessions", "-p", "hi"], "--sessions lists the sessions: it takes no task"],
    [
      ["--approval-timeout", "5", "task"],
      "--approval-timeout goes with --input-format stream-json (the approvals asked on stdin) or acp",
    ],
  ])("%j is refused: %s", (argv, message) => {
    expect(parse(argv)).toBe(message);
  });

  it("takes --approval-timeout where approvals are asked of a program: stream-json input, acp", () => {
    const json = ["--input-format", "stream-json", "--output-format", "stream-json"];
    expect(parseCliArgs([...json, "--approval-timeout", "5"], {})).toMatchObject({
      approvalTimeoutMs: 5000,
    });
    expect(parseCliArgs(["acp", "--approval-timeout", "60"], {})).toMatchObject({
      acpCommand: true,
      approvalTimeoutMs: 60_000,
    });
  });

  it.each([
    [["--sessions", "--all", "--cwd", "/tmp", "--debug"]],
    [["acp", "--model", "x", "--mode", "plan", "--allow-bash", "--token-budget", "5"]],
    [["acp", "--max-turns", "2", "--no-mcp", "--sandbox", "off", "--thinking", "high"]],
    [
      [
        "acp",
        "--allow",
        "ls",
        "--deny",
        "rm",
        "--context-window",
        "8192",
        "--base-url",
        "http://h",
      ],
    ],
    [["config", "--model", "m", "--sandbox", "off", "--max-turns", "3", "--allow", "ls"]],
    [["rules", "explain", "--allow-bash", "--sandbox", "off", "--deny", "rm", "ls"]],
    [["rules", "explain", "--mode", "plan", "--sandbox", "off", "--deny", "rm", "ls"]],
    [["rules", "explain", "--stdin", "--mode", "ask", "--cwd", "/tmp", "--deny", "rm"]],
    [["skills", "--model", "m", "--context-window", "8192"]],
    [["mcp", "list", "--mcp-config", "f.json"]],
    [["export", "--format", "md", "-o", "x.md", "--force"]],
    [["rewind", "--to", "1", "--dry-run", "--files-only"]],
    [["trust", "--revoke", "--cwd", "/tmp"]],
  ])("%j is taken: each flag has a use there", (argv) => {
    expect(parse(argv)).toBe("parsed");
  });

  it("names a command only before --: after it every word is the task's", () => {
    expect(parseCliArgs(["--", "trust"], {})).toMatchObject({ task: "trust" });
    expect(parseCliArgs(["--", "trust"], {})).not.toHaveProperty("trustCommand");
    expect(parseCliArgs(["--", "export", "x"], {})).not.toHaveProperty("exportCommand");
    expect(parseCliArgs(["rules", "explain", "--", "-rf /"], {})).toMatchObject({
      rulesCommand: ["explain", "-rf /"],
    });
  });

  it("reads a negative number after a flag as its value, and leaves words that look like flags alone", () => {
    expect(parseCliArgs(["-m", "-1", "task"], {})).toMatchObject({ model: "-1", task: "task" });
    expect(parse(["model", "-1"])).toBe("unknown option -1 (mini-agent --help lists the options)");
    expect(parseCliArgs(["--", "--max-turns", "-1"], {})).toMatchObject({
      task: "--max-turns -1",
      maxTurns: 50,
    });
  });

  it.each([
    [
      ["--sandbox-processes", "0", "t"],
      '--sandbox-processes must be a whole number from 1 to 4194304, not "0"',
    ],
    [
      ["--sandbox-processes", "many", "t"],
      '--sandbox-processes must be a whole number from 1 to 4194304, not "many"',
    ],
    [
      ["--sandbox-memory", "lots", "t"],
      '--sandbox-memory must be a size of at least 16M, such as 512M or 16G, not "lots"',
    ],
    [
      ["--sandbox-memory", "0", "t"],
      '--sandbox-memory must be a size of at least 16M, such as 512M or 16G, not "0"',
    ],
    [
      ["--sandbox-file-size", "100K", "t"],
      '--sandbox-file-size must be a size of at least 1M, such as 1G or 4G, not "100K"',
    ],
    [["--sandbox-hide", "", "t"], "--sandbox-hide is empty: name a file or folder to hide"],
  ])("sandbox flag %j is refused: %s", (argv, message) => {
    expect(parse(argv)).toBe(message);
  });

  it("reads the sandbox's hidden paths (relative to --cwd) and its limits", () => {
    const args = parseCliArgs(
      [
        "--cwd",
        "/w",
        "--sandbox-hide",
        "secrets",
        "--sandbox-hide",
        "/etc/x",
        "--sandbox-processes",
        "64",
        "--sandbox-memory",
        "1.5G",
        "--sandbox-file-size",
        "2G",
        "t",
      ],
      {},
    );
    expect(args.sandboxHide).toEqual(["/w/secrets", "/etc/x"]);
    expect(args.sandboxLimits).toEqual({
      processes: 64,
      memoryBytes: 1.5 * 2 ** 30,
      fileBytes: 2 * 2 ** 30,
    });
    expect(parseCliArgs(["--sandbox-memory", "512m", "t"], {}).sandboxLimits).toEqual({
      memoryBytes: 512 * 2 ** 20,
    });
    expect(parseCliArgs(["--sandbox-memory", "16777216", "t"], {}).sandboxLimits).toEqual({
      memoryBytes: 16 * 2 ** 20,
    });
    expect(parseCliArgs(["t"], {})).toMatchObject({ sandboxHide: [], sandboxLimits: {} });
  });

  it("checks a base URL from the environment the same way and names the variable", () => {
    expect(parse(["task"], { ANTHROPIC_BASE_URL: "localhost:8080?key=zzz" })).toBe(
      'ANTHROPIC_BASE_URL must be an http(s) address such as http://127.0.0.1:11434/v1, not "localhost:8080?key=***"',
    );
    expect(parse(["task"], { ANTHROPIC_BASE_URL: "http://127.0.0.1:1" })).toBe("parsed");
  });
});

describe("a session that cannot be written", () => {
  const failing = (code: string | undefined) => async (): Promise<Session> => {
    const cause = Object.assign(new Error(`${code}: failed, open`), { code, syscall: "open" });
    throw code === "EIO" ? new Error("wrapped", { cause }) : cause;
  };
  const attempt = async (code: string | undefined) => {
    const store = new SessionStore("/state", failing(code));
    const error = await store
      .record({ type: "message", message: { role: "user", content: "x" } })
      .catch((e: Error) => e);
    return describeError(error, undefined);
  };

  it.each([
    ["ENOSPC", "no space left on device (free space, or set MINI_AGENT_HOME to another folder)"],
    ["EDQUOT", "disk quota exceeded (free space, or set MINI_AGENT_HOME to another folder)"],
    [
      "EACCES",
      "permission denied (make it writable, or set MINI_AGENT_HOME to a folder you can write)",
    ],
    [
      "EPERM",
      "operation not permitted (make it writable, or set MINI_AGENT_HOME to a folder you can write)",
    ],
    ["EROFS", "read-only file system (set MINI_AGENT_HOME to a folder you can write)"],
    [
      "ENOTDIR",
      "a part of the path is not a folder (set MINI_AGENT_HOME to a folder you can write)",
    ],
    ["EIO", "input/output error (set MINI_AGENT_HOME to a folder you can write)"],
  ])("%s is one line naming the state folder, with a hint", async (code, text) => {
    expect(await attempt(code)).toBe(`cannot write the session in /state: ${text}`);
  });

  it("names the file in the state folder that failed when it is not the folder itself", async () => {
    const blobs = "/state/sessions/w/s1.blobs";
    const store = new SessionStore("/state", async () => {
      throw Object.assign(new Error("EACCES: permission denied, open"), {
        code: "EACCES",
        path: `${blobs}/.tmp-1`,
      });
    });
    const error = await store
      .record({ type: "message", message: { role: "user", content: "x" } })
      .catch((e: Error) => e);
    expect(describeError(error, undefined)).toBe(
      `cannot write the session in /state: permission denied: ${blobs}/.tmp-1 (make it writable, or set MINI_AGENT_HOME to a folder you can write)`,
    );
  });

  it("lets an error that is not a failed system call through as it is", async () => {
    expect(await attempt(undefined)).toBe("undefined: failed, open");
  });
});

describe("system errors in words", () => {
  it("says what a system call that failed was doing, where, why, and names the state folder", () => {
    const failed = (code: string, syscall: string, path: string) =>
      Object.assign(new Error(`${code}: raw, ${syscall} '${path}'`), { code, syscall, path });
    const env = { MINI_AGENT_HOME: "/h/state" };
    expect(describeError(failed("ENOTDIR", "scandir", "/h/state/sessions/w"), undefined, env)).toBe(
      "cannot list /h/state/sessions/w: a part of the path is not a folder (ENOTDIR); it is in the state folder /h/state (MINI_AGENT_HOME)",
    );
    expect(describeError(failed("EACCES", "open", "/elsewhere/f"), undefined, env)).toBe(
      "cannot open /elsewhere/f: permission denied (EACCES)",
    );
    expect(describeError(failed("EIO", "fsync", "/h/state/x"), undefined, env)).toBe(
      "cannot fsync /h/state/x: input/output error (EIO); it is in the state folder /h/state (MINI_AGENT_HOME)",
    );
    // An error that is not a failed call's keeps its own words, even one that carries a call's fields.
    expect(describeError(new Error("plain"), undefined, env)).toBe("plain");
    const own = Object.assign(new Error("cannot write the session: disk full"), {
      code: "ENOSPC",
      syscall: "write",
      path: "/h/state/s.jsonl",
    });
    expect(describeError(own, undefined, env)).toBe("cannot write the session: disk full");
  });

  it.each([
    ["ENXIO", "no such device or address"],
    ["ENOTDIR", "a part of the path is not a folder"],
    ["ELOOP", "too many links in the path"],
    ["ENAMETOOLONG", "the name is too long"],
    ["EWHATEVER", "EWHATEVER"],
  ])("%s reads as %s", (code, words) => {
    expect(systemErrorMeaning(code)).toBe(words);
  });
});
