import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSession } from "../src/session.js";
import { startAnthropicServer, stream, turn } from "./support/anthropic-server.js";
import { useCleanup } from "./support/cleanup.js";
import { bin, cliEnv } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/** The interactive session on a real terminal: `script` gives the CLI a pseudo-terminal. */

const tempDir = useTempDirs();
const track = useCleanup();

/** Drives the CLI in a pty: waits for each expected text on screen, then types the answer. */
function converse(env: NodeJS.ProcessEnv, cwd: string, steps: [string, string][]) {
  return new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    const child = spawn("script", ["-q", "-e", "-c", `${process.execPath} ${bin}`, "/dev/null"], {
      cwd,
      env: { ...env, TERM: "dumb" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    let step = 0;
    let from = 0;
    const advance = () => {
      const next = steps[step];
      if (!next) return;
      const at = screen.indexOf(next[0], from);
      if (at === -1) return;
      from = at + next[0].length;
      step++;
      child.stdin.write(next[1]);
      advance();
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no ${JSON.stringify(steps[step]?.[0])} on screen:\n${screen}`));
    }, 15_000);
    child.stdout.on("data", (chunk: Buffer) => {
      screen += chunk.toString();
      advance();
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

describe.skipIf(!existsSync("/usr/bin/script"))("interactive session on a terminal", () => {
  it("answers prompts, asks before bash, records the answer, and leaves on /exit", async () => {
    const server = track(
      await startAnthropicServer([
        stream(turn({ text: ["Hello there."] })),
        stream(
          turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "echo from-bash" } }] }),
        ),
        stream(turn({ text: ["It printed from-bash."] })),
      ]),
    );
    const home = await tempDir();
    const workspace = await tempDir();
    const { code, screen } = await converse(cliEnv(home, server.url), workspace, [
      ["› ", "hi\r"],
      ["Hello there.", ""],
      ["› ", "run it\r"],
      ["[y]es, [n]o, [a]lways for this session? ", "y\r"],
      ["It printed from-bash.", ""],
      ["› ", "/exit\r"],
    ]);
    expect(code).toBe(0);
    expect(screen).toContain("Allow bash: echo from-bash");
    expect(screen).toContain("✓ bash echo from-bash");
    expect(server.rejections).toEqual([]);
    const dir = join(home, "state", "sessions");
    const [folder] = await readdir(dir);
    const [file] = await readdir(join(dir, folder ?? ""));
    const path = join(dir, folder ?? "", file ?? "");
    const records = (await readFile(path, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records.filter((record) => record.type === "approval")).toEqual([
      { type: "approval", toolCallId: "toolu_1", tool: "bash", approved: true, by: "user" },
    ]);
    const session = await readSession(path);
    expect(session.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "hi",
      "run it",
    ]);
    const result = session.messages.find((m) => m.role === "tool");
    expect(result).toMatchObject({
      toolCallId: "toolu_1",
      content: "from-bash\n[exit code 0]",
      isError: false,
    });
  });
});
