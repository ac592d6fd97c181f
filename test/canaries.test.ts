import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAnthropicServer, status, stream, turn } from "../src/testing/anthropic-server.js";
import { useCleanup } from "./support/cleanup.js";
import { cliEnv, runBin } from "./support/cli.js";
import { useTempDirs } from "./support/temp.js";

/** Secret canaries in the environment, a tool's output and a thrown error: none reaches a session file or bash. */

const tempDir = useTempDirs();
const track = useCleanup();

async function allFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("secret canaries", () => {
  it("never reach the session file or bash's environment", async () => {
    const canaries = {
      key: "canary-anthropic-key-0123456789",
      fake: "canary-fake-api-key-0123456789",
      token: "canary-gh-token-0123456789",
      aws: "canary-aws-secret-0123456789",
      pg: "canary-pgpassword-0123456789",
      url: "canary-url-password-0123456789",
    };
    const server = await startAnthropicServer([
      stream(
        turn({
          calls: [
            { id: "toolu_1", name: "read", input: { path: "leak.txt" } },
            { id: "toolu_2", name: "bash", input: { command: 'env; echo "fake=$FAKE_API_KEY"' } },
          ],
        }),
      ),
      status(400, undefined, `request echoes ${canaries.fake} and ${canaries.key}`),
    ]);
    track(server);
    const workspace = await tempDir();
    const home = await tempDir();
    await writeFile(
      join(workspace, "leak.txt"),
      `config: ${canaries.fake} ${canaries.token} ${canaries.aws} ${canaries.pg} ${canaries.url}\n`,
    );
    const env = cliEnv(home, server.url, {
      ANTHROPIC_API_KEY: canaries.key,
      FAKE_API_KEY: canaries.fake,
      GH_TOKEN: canaries.token,
      AWS_SECRET_ACCESS_KEY: canaries.aws,
      PGPASSWORD: canaries.pg,
      DATABASE_URL: `postgres://app:${canaries.url}@db:5432/app`,
    });
    const run = await runBin(["--allow-bash", "read the config"], { cwd: workspace, env });
    expect(run.code).toBe(1);

    // The session file, and the sandbox's kept answer when bwrap ran here: no secret in either.
    // The snapshot bash is undone from keeps the workspace's files as they are (leak.txt too):
    // 0600 copies in the state folder, which the sandbox never sees and no export reads.
    const all = await allFiles(join(home, "state"));
    const kept = all.filter((file) => /\.snapshot\/[0-9a-f]{64}$/.test(file));
    expect(kept).toHaveLength(1);
    expect(await readFile(kept[0] ?? "")).toEqual(await readFile(join(workspace, "leak.txt")));
    expect((await stat(kept[0] ?? "")).mode & 0o777).toBe(0o600);
    const files = all.filter((file) => !kept.includes(file));
    const sessions = files.filter((file) => file.endsWith(".jsonl"));
    expect(sessions).toHaveLength(1);
    expect(files.filter((file) => !file.endsWith(".jsonl"))).toEqual(
      files.length > 1 ? [join(home, "state", "cache", "sandbox.json")] : [],
    );
    for (const file of files) {
      const text = await readFile(file, "utf8");
      for (const canary of Object.values(canaries)) expect(text).not.toContain(canary);
    }
    const session = await readFile(sessions[0] ?? "", "utf8");
    expect(session).toContain("config: [redacted] [redacted] [redacted] [redacted] [redacted]");

    const results = (
      (server.requests[1]?.body.messages ?? []) as { content: Record<string, unknown>[] }[]
    )
      .flatMap((message) => message.content)
      .filter((block) => block.type === "tool_result");
    const bashOutput = String(results[1]?.content);
    expect(bashOutput).toContain("fake=\n");
    for (const canary of Object.values(canaries)) expect(bashOutput).not.toContain(canary);
  });
});
