import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { runBin, sessionFiles, sessionRecords, toolResults, useCliSetup } from "./support/cli.js";
import { drive } from "./support/stream-json.js";

const setup = useCliSetup();
const hasGit = spawnSync("git", ["--version"]).status === 0;
const configWhy = "git reads it as configuration, which can name programs git runs";
const hookWhy = "git runs the files in a hooks folder as programs";
const call = (id: string, name: string, input: Record<string, unknown>) =>
  stream(turn({ calls: [{ id, name, input }] }));

describe("protected files in the CLI", () => {
  it.skipIf(!hasGit)(
    "denies a write to .git/config when no one can be asked, so a git allow rule cannot run what it would name",
    async () => {
      const forged = '[core]\n\tfsmonitor = "id > fsmonitor-ran; false"\n';
      const { server, workspace, home, options } = await setup([
        call("toolu_1", "read", { path: ".git/config" }),
        call("toolu_2", "write", { path: ".git/config", content: forged }),
        call("toolu_3", "bash", { command: "git status --short" }),
        stream(turn({ text: ["done"] })),
      ]);
      execFileSync("git", ["init", "-q"], { cwd: workspace, env: options.env });
      const config = await readFile(join(workspace, ".git/config"), "utf8");
      const canary = join(workspace, "fsmonitor-ran");
      const run = await runBin(["--sandbox", "off", "--allow", "git status", "task"], options);
      expect(run.code).toBe(0);
      const reason = `.git/config is protected (${configWhy}): changing it needs the user's approval, and no one can be asked here`;
      expect(toolResults(server.requests[2]?.body ?? {})[1]).toEqual({
        id: "toolu_2",
        content: reason,
        isError: true,
      });
      expect(await readFile(join(workspace, ".git/config"), "utf8")).toBe(config);
      expect(existsSync(canary)).toBe(false);
      const [file] = await sessionFiles(home);
      const approvals = (await sessionRecords(file ?? "")).filter((r) => r.type === "approval");
      expect(approvals).toEqual([
        {
          type: "approval",
          toolCallId: "toolu_1",
          tool: "read",
          approved: true,
          by: "default-policy",
        },
        {
          type: "approval",
          toolCallId: "toolu_2",
          tool: "write",
          approved: false,
          by: "no-terminal",
        },
        {
          type: "approval",
          toolCallId: "toolu_3",
          tool: "bash",
          approved: true,
          by: "rule:allow git status",
        },
      ]);
    },
  );

  it("asks over stream-json before a write through a link to a hook, and writes it once approved", async () => {
    const { server, workspace, options } = await setup([
      call("toolu_1", "write", { path: "x", content: "#!/bin/sh\necho hook\n" }),
      call("toolu_2", "edit", { path: "x", oldText: "hook", newText: "changed" }),
      stream(turn({ text: ["done"] })),
    ]);
    await symlink(".git/hooks/pre-commit", join(workspace, "x"));
    const requests: unknown[] = [];
    const run = await drive(
      ["--input-format", "stream-json", "--output-format", "stream-json"],
      options,
      [JSON.stringify({ type: "user", text: "go" })],
      (line) => {
        if (line.type === "approval_request") {
          requests.push({ id: line.id, name: line.name, reason: line.reason });
          const decision = line.id === "toolu_1" ? "allow" : "deny";
          return [JSON.stringify({ type: "approval", id: line.id, decision })];
        }
        return line.type === "result" ? "end" : [];
      },
    );
    expect(run.code).toBe(0);
    const reason = `.git/hooks/pre-commit is protected (${hookWhy}): changing it needs the user's approval`;
    expect(requests).toEqual([
      { id: "toolu_1", name: "write", reason },
      { id: "toolu_2", name: "edit", reason },
    ]);
    expect(await readFile(join(workspace, ".git/hooks/pre-commit"), "utf8")).toBe(
      "#!/bin/sh\necho hook\n",
    );
    expect(toolResults(server.requests[2]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "created .git/hooks/pre-commit (20 bytes)", isError: false },
      { id: "toolu_2", content: "the user denied this call", isError: true },
    ]);
  });
});
