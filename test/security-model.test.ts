import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAnthropicServer, stream, turn } from "../src/testing/anthropic-server.js";
import { useCleanup } from "./support/cleanup.js";
import { cliEnv, runBin } from "./support/cli.js";
import { realSandbox, useOutsideFolders } from "./support/sandbox.js";
import { useTempDirs } from "./support/temp.js";

/**
 * What the "Security model" (README, docs/sandbox.md) claims of each `--sandbox` mode, through
 * the real CLI: the model reads the agent's own environment (the provider key) and a credential
 * store.
 */

const tempDir = useTempDirs();
const track = useCleanup();
const outsideFolder = useOutsideFolders();

const sandboxed = await realSandbox();

const key = "sk-canary-agent-key-0123456789";
const steal = [
  "tr '\\0' '\\n' < /proc/$PPID/environ > parent-env.txt",
  "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' > all-env.txt",
  'cat "$HOME/.ssh/id_ed25519" > ssh-key.txt',
  `python3 -c 'import os, socket; s = socket.socket(socket.AF_UNIX); s.connect(os.environ["HOME"] + "/agent.sock"); print(s.recv(100).decode(), end="")' > unix.txt 2>&1`,
].join("; ");

/** Runs the CLI with `--sandbox mode`; the model's one call tries `steal`. Returns the loot. */
async function attack(mode: string) {
  const server = await startAnthropicServer([
    stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: steal } }] })),
    stream(turn({ text: ["done"] })),
  ]);
  track(server);
  const workspace = await tempDir();
  // Outside /tmp, which is private inside the sandbox: the store must be hidden for itself.
  const home = await outsideFolder("home");
  await mkdir(join(home, ".ssh"));
  await writeFile(join(home, ".ssh", "id_ed25519"), "canary ssh key\n");
  // A daemon's socket in $HOME, outside the hidden stores (an agent, a docker socket).
  const daemon = createServer((socket) => socket.end("daemon answered\n"));
  await new Promise<void>((resolve) => daemon.listen(join(home, "agent.sock"), resolve));
  track({ close: () => new Promise<void>((resolve) => daemon.close(() => resolve())) });
  const env = cliEnv(home, server.url, { ANTHROPIC_API_KEY: key });
  const run = await runBin(["--sandbox", mode, "--allow-bash", "look around"], {
    cwd: workspace,
    env,
  });
  expect(run.code).toBe(0);
  const loot = (name: string) => readFile(join(workspace, name), "utf8");
  return {
    parent: await loot("parent-env.txt"),
    all: await loot("all-env.txt"),
    ssh: await loot("ssh-key.txt"),
    unix: await loot("unix.txt"),
  };
}

describe("the security model of each --sandbox mode", () => {
  it("off: the command reads the agent's own environment, provider key included, and $HOME, and reaches a host socket", async () => {
    const loot = await attack("off");
    expect(loot.parent.split("\n")).toContain(`ANTHROPIC_API_KEY=${key}`);
    expect(loot.ssh).toBe("canary ssh key\n");
    expect(loot.unix).toBe("daemon answered\n");
  });

  it.skipIf(!sandboxed)(
    "required: no process the command can see holds the key, the stores are hidden, no host socket answers",
    async () => {
      const loot = await attack("required");
      expect(loot.parent).not.toContain(key);
      expect(loot.all).not.toContain(key);
      expect(loot.all).not.toContain("ANTHROPIC_API_KEY");
      expect(loot.ssh).toBe("");
      expect(loot.unix.trim().split("\n").at(-1)).toBe(
        "PermissionError: [Errno 13] Permission denied",
      );
    },
  );
});

describe("the sandbox flags of the command", () => {
  it.skipIf(!sandboxed)(
    "--sandbox-hide hides the user's own path and --sandbox-processes/--sandbox-memory bound the command",
    async () => {
      const outside = await outsideFolder("hide");
      const secret = join(outside, "notes.txt");
      await writeFile(secret, "private notes\n");
      const command = `cat ${secret} > seen.txt; ulimit -u > processes.txt; ulimit -d > memory.txt`;
      const server = track(
        await startAnthropicServer([
          stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command } }] })),
          stream(turn({ text: ["done"] })),
        ]),
      );
      const workspace = await tempDir();
      const flags = ["--sandbox", "required", "--allow-bash", "--sandbox-hide", secret];
      const limits = ["--sandbox-processes", "77", "--sandbox-memory", "1G"];
      const run = await runBin([...flags, ...limits, "look"], {
        cwd: workspace,
        env: cliEnv(await tempDir(), server.url),
      });
      expect(run.code).toBe(0);
      const read = (name: string) => readFile(join(workspace, name), "utf8");
      expect(await read("seen.txt")).toBe("");
      expect(await read("processes.txt")).toBe("77\n");
      expect(await read("memory.txt")).toBe(`${2 ** 20}\n`);
    },
  );
});
