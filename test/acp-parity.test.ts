import { mkdir, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { response, startResponsesServer, stream } from "../src/testing/responses-server.js";
import { noAnswer, withAcpAgent } from "./support/acp.js";
import { useCleanup } from "./support/cleanup.js";
import { runBin, sessionFiles, useCliSetup } from "./support/cli.js";

/**
 * An editor session is assembled as a terminal session is (`openAgentSession`): in the same
 * folder, with the same flags, its requests carry the same system prompt (the skill catalog
 * among it) and a prompt-cache key that is its session's id, the terminal's own key when it goes
 * on from the terminal's session.
 */

const setup = useCliSetup();
const track = useCleanup();

const text = (value: string): acp.ContentBlock[] => [{ type: "text", text: value }];

describe("an editor session and a terminal session in the same folder", () => {
  it("see the same skill catalog and send the same prompt-cache key", async () => {
    const server = track(
      await startResponsesServer([
        stream(response({ text: ["from the terminal"] }, "gpt-5.5")),
        stream(response({ text: ["from a new editor session"] }, "gpt-5.5")),
        stream(response({ text: ["from the terminal's session, in the editor"] }, "gpt-5.5")),
      ]),
    );
    const { workspace, home, options } = await setup([]);
    const skill = join(home, "state", "skills", "release");
    await mkdir(skill, { recursive: true });
    await writeFile(
      join(skill, "SKILL.md"),
      "---\nname: release\ndescription: How this project cuts a release.\n---\nTag, then push.\n",
    );
    const env = {
      ...options.env,
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "sk-test-key-0123456789",
      OPENAI_BASE_URL: `${server.url}/v1`,
    };
    const flags = ["--provider", "openai-responses", "--model", "gpt-5.5", "--sandbox", "off"];
    const both = [...flags, "--allow-bash"];
    const terminal = await runBin([...both, "hello"], { ...options, env });
    expect(terminal).toMatchObject({ code: 0, stdout: "from the terminal\n" });
    const [file = ""] = await sessionFiles(home);
    const terminalId = basename(file, ".jsonl");
    const { value, code } = await withAcpAgent(
      both,
      { ...options, env },
      noAnswer,
      async (agent) => {
        await agent.request("initialize", { protocolVersion: 1 });
        const fresh = await agent.request("session/new", { cwd: workspace, mcpServers: [] });
        await agent.request("session/prompt", { sessionId: fresh.sessionId, prompt: text("hi") });
        const sessionId = terminalId;
        await agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
        await agent.request("session/prompt", { sessionId, prompt: text("and now?") });
        return fresh.sessionId;
      },
    );
    expect(code).toBe(0);
    expect(server.rejections).toEqual([]);
    const [fromTerminal, fromNew, fromLoaded] = server.requests.map(({ body }) => body);
    expect(fromTerminal?.instructions).toContain(
      "<name>release</name>\n<description>How this project cuts a release.</description>",
    );
    expect(fromNew?.instructions).toBe(fromTerminal?.instructions);
    expect(fromLoaded?.instructions).toBe(fromTerminal?.instructions);
    expect(server.requests.map(({ body }) => body.prompt_cache_key)).toEqual([
      terminalId,
      value,
      terminalId,
    ]);
  });
});
