import { spawn } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { readdir, readFile, rename, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { toAnthropicMessages } from "../src/providers/anthropic-protocol.js";
import { receipts } from "../src/receipts.js";
import { secretRedactor } from "../src/secrets.js";
import { listSessions, newSessionId, readSession, Session } from "../src/session/session.js";
import { validate as validateAnthropic } from "../src/testing/anthropic-server.js";
import { toolCall } from "../src/testing/fake-client.js";
import type { Message } from "../src/types.js";
import { useTempDirs } from "./support/temp.js";

const tempDir = useTempDirs();
const env = {};
const user: Message = { role: "user", content: "fix the build — ünïcödé 🚀" };
const asks: Message = {
  role: "assistant",
  content: "reading",
  toolCalls: [
    toolCall("c1", "read", { path: "a.ts" }),
    toolCall("c2", "write", { path: "b", content: "x" }),
  ],
};
const result1: Message = { role: "tool", toolCallId: "c1", content: "file a", isError: false };
const result2: Message = { role: "tool", toolCallId: "c2", content: "wrote b", isError: false };
const answer: Message = { role: "assistant", content: "done 🚀", toolCalls: [] };

async function newSession(dir: string, id = "s1") {
  return Session.create({ dir, workspace: "/ws", model: "m", id, env, now: new Date(0) });
}

async function writeSession(dir: string, messages: Message[], id = "s1") {
  const session = await newSession(dir, id);
  for (const message of messages) await session.append(message);
  await session.close();
  return session.path;
}

describe("session file", () => {
  // Ids tell apart the sessions of one second by six random hex digits: a clash must never share
  // a file.
  it("refuses a session whose id another session already has, and leaves that one whole", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user]);
    const before = await readFile(path, "utf8");
    await expect(
      Session.create({ dir, workspace: "/ws", model: "m", id: "s1", env }),
    ).rejects.toThrow(/a session with this id exists/);
    expect(await readFile(path, "utf8")).toBe(before);
  });

  it("round-trips the header and the history", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user, asks, result1, result2, answer]);
    const loaded = await Session.open(path, { env });
    await loaded.session.close();
    expect(loaded.session.header).toEqual({
      type: "session",
      version: 1,
      id: "s1",
      createdAt: "1970-01-01T00:00:00.000Z",
      workspace: "/ws",
      model: "m",
    });
    expect(loaded.messages).toEqual([user, asks, result1, result2, answer]);
    expect(loaded.repaired).toBe(0);
    expect(loaded.skipped).toBe(0);
    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines).toHaveLength(7);
    expect(lines[6]).toBe("");
  });

  it("tolerates a last line torn at every byte and appends cleanly after it", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user, asks, result1, result2, answer]);
    const bytes = await readFile(path);
    const lastStart = bytes.subarray(0, bytes.length - 1).lastIndexOf(10) + 1;
    const later: Message = { role: "user", content: "next" };
    for (let cut = lastStart; cut <= bytes.length; cut++) {
      await writeFile(path, bytes.subarray(0, cut));
      const complete = cut >= bytes.length - 1;
      const expected = complete
        ? [user, asks, result1, result2, answer]
        : [user, asks, result1, result2];
      const loaded = await Session.open(path, { env });
      expect(loaded.messages).toEqual(expected);
      expect(loaded.skipped).toBe(cut === lastStart || complete ? 0 : 1);
      await loaded.session.append(later);
      await loaded.session.close();
      const reread = await readSession(path);
      expect(reread.messages).toEqual([...expected, later]);
      expect(reread.torn).toBe(false);
    }
  });

  it("reads a torn record glued to the next one, and two whole records glued together", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user]);
    const head = await readFile(path, "utf8");
    const record = (message: Message) => JSON.stringify({ type: "message", message });
    const tornPiece = record(answer).slice(0, 25);
    await writeFile(
      path,
      `${head}${tornPiece}${record(asks)}${record(result1)}\n${record(result2)}\n`,
    );
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual([user, asks, result1, result2]);
    expect(loaded.skipped).toBe(1);
  });

  it("loads a session whose first user record is torn and glued to the next, with a placeholder the strict servers accept", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user, asks, result1, result2, answer]);
    const lines = (await readFile(path, "utf8")).split("\n");
    const [header = "", first = "", ...rest] = lines;
    const lost: Message = { role: "user", content: receipts.firstMessageLost };
    for (const cut of [1, 20, first.length >> 1, first.length - 1]) {
      await writeFile(path, `${header}\n${first.slice(0, cut)}${rest.join("\n")}`);
      const loaded = await Session.open(path, { env });
      await loaded.session.close();
      expect(loaded.messages).toEqual([lost, asks, result1, result2, answer]);
      expect([loaded.repaired, loaded.skipped]).toEqual([0, 1]);
      const body = {
        model: "m",
        max_tokens: 100,
        messages: toAnthropicMessages([...loaded.messages, { role: "user", content: "again" }]),
      };
      expect(validateAnthropic(body)).toBeUndefined();
    }
  });

  it("says a file whose header is torn is damaged, with or without the records after it, and lists it as damaged", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user, asks, result1]);
    const [header = "", ...rest] = (await readFile(path, "utf8")).split("\n");
    const damaged = (what: string) =>
      `session file ${path} is damaged: ${what}; it cannot be resumed (remove it to continue an earlier session)`;
    const torn = "its first line is a torn session header";
    const cases: [string, string][] = [["", "it is empty"]];
    for (let cut = 1; cut < header.length; cut++) {
      const piece = header.slice(0, cut);
      cases.push([piece, torn]);
      cases.push([`${piece}${rest.join("\n")}`, torn]);
    }
    for (const [text, reason] of cases) {
      await writeFile(path, text);
      await expect(readSession(path)).rejects.toHaveProperty("message", damaged(reason));
      await expect(Session.open(path, { env })).rejects.toHaveProperty("message", damaged(reason));
      const listed = await listSessions(dir);
      expect(listed.map(({ id, damaged: why, bytes }) => ({ id, why, bytes }))).toEqual([
        { id: "s1", why: reason, bytes: Buffer.byteLength(text) },
      ]);
    }
    expect(await readdir(dir)).toEqual(["s1.jsonl"]);
  });

  it("repairs a call left without a result, writes the repair once and is idempotent", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user, asks, result1]);
    const unknown: Message = {
      role: "tool",
      toolCallId: "c2",
      content:
        "outcome unknown: the session ended before this call reported a result; it may or may not have run",
      isError: true,
    };
    const first = await Session.open(path, { env });
    await first.session.close();
    expect(first.messages).toEqual([user, asks, result1, unknown]);
    expect(first.repaired).toBe(1);
    const second = await Session.open(path, { env });
    await second.session.close();
    expect(second.messages).toEqual([user, asks, result1, unknown]);
    expect(second.repaired).toBe(0);
    const lines = (await readFile(path, "utf8")).trim().split("\n");
    expect(lines.filter((line) => line.includes("outcome unknown"))).toHaveLength(1);
  });

  it("answers a dangling call in the middle of the file and drops results without a call", async () => {
    const dir = await tempDir();
    const orphan: Message = { role: "tool", toolCallId: "nobody", content: "?", isError: false };
    const path = await writeSession(dir, [orphan, user, asks, result1, result1, user, answer]);
    const loaded = await readSession(path);
    expect(
      loaded.messages.map((m) => (m.role === "tool" ? `${m.toolCallId}:${m.isError}` : m.role)),
    ).toEqual(["user", "assistant", "c1:false", "c2:true", "user", "assistant"]);
    expect(loaded.repaired).toBe(1);
    expect(loaded.trailingRepairs).toEqual([]);
  });

  it("gives repeated and invalid call ids valid unique ones on load, and keeps them on the next", async () => {
    const dir = await tempDir();
    const twice: Message = {
      role: "assistant",
      content: "",
      toolCalls: [
        toolCall("x", "read", {}),
        toolCall("x", "read", {}),
        toolCall("bad id", "ls", {}),
      ],
    };
    const first: Message = { role: "tool", toolCallId: "x", content: "one", isError: false };
    const path = await writeSession(dir, [user, twice, first]);
    const loaded = await Session.open(path, { env });
    await loaded.session.close();
    const [x, second, third] =
      loaded.messages[1]?.role === "assistant" ? loaded.messages[1].toolCalls : [];
    expect(x?.id).toBe("x");
    expect([second?.id, third?.id].map((id) => /^call_[0-9a-f]{24}$/.test(id ?? ""))).toEqual([
      true,
      true,
    ]);
    expect(second?.id).not.toBe(third?.id);
    const unknown = (toolCallId: string): Message => ({
      role: "tool",
      toolCallId,
      content:
        "outcome unknown: the session ended before this call reported a result; it may or may not have run",
      isError: true,
    });
    const repairedHistory = [
      user,
      {
        ...twice,
        toolCalls: [
          toolCall("x", "read", {}),
          { ...twice.toolCalls[1], id: second?.id },
          { ...twice.toolCalls[2], id: third?.id },
        ],
      },
      first,
      unknown(second?.id ?? ""),
      unknown(third?.id ?? ""),
    ];
    expect(loaded.messages).toEqual(repairedHistory);
    expect(loaded.repaired).toBe(2);
    const again = await Session.open(path, { env });
    await again.session.close();
    expect(again.messages).toEqual(repairedHistory);
    expect(again.repaired).toBe(0);
  });

  it("writes lone surrogates as U+FFFD and redacts secrets in tool input keys, in one walk", async () => {
    const dir = await tempDir();
    const secret = "sk-canary-key-as-key-01";
    const session = await Session.create({
      dir,
      workspace: "/ws",
      model: "m",
      id: "s1",
      env: { FAKE_API_KEY: secret },
    });
    await session.append({ role: "user", content: "A\ud83dB" });
    await session.append({
      role: "assistant",
      content: "c\udc00 🚀",
      toolCalls: [
        toolCall("c1", "write", {
          "k\ud800": ["v\udfff", { [secret]: "p\ud83d" }],
          typeof: "toolCalls",
        }),
      ],
    });
    await session.record({
      type: "approval",
      toolCallId: "c1",
      tool: "w\ud800",
      approved: true,
      by: "u",
    });
    await session.append({ role: "tool", toolCallId: "c1", content: "r\ud800", isError: false });
    await session.close();
    const text = await readFile(session.path, "utf8");
    // JSON.stringify escapes only lone surrogates; strict readers refuse them.
    expect(text).not.toMatch(/\\u[dD][89a-fA-F][0-9a-fA-F]{2}/);
    expect(text).not.toContain(secret);
    const records = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.slice(1)).toEqual([
      { type: "message", message: { role: "user", content: "A\uFFFDB" } },
      {
        type: "message",
        message: {
          role: "assistant",
          content: "c\uFFFD 🚀",
          toolCalls: [
            toolCall("c1", "write", {
              "k\uFFFD": ["v\uFFFD", { "[redacted]": "p\uFFFD" }],
              typeof: "toolCalls",
            }),
          ],
        },
      },
      { type: "approval", toolCallId: "c1", tool: "w\uFFFD", approved: true, by: "u" },
      {
        type: "message",
        message: { role: "tool", toolCallId: "c1", content: "r\uFFFD", isError: false },
      },
    ]);
  });

  it("redacts the values of secret environment variables before writing", async () => {
    const dir = await tempDir();
    const secrets = {
      FAKE_API_KEY: "sk-canary-0123456789",
      GITHUB_TOKEN: 'ghp_"quoted"_value',
      DB_PASSWORD: "short",
      HOME_DIR: "/not/a/secret/value",
    };
    const session = await Session.create({ dir, workspace: "/ws", model: "m", env: secrets });
    await session.append({
      role: "tool",
      toolCallId: "c1",
      content: `key=sk-canary-0123456789 token=ghp_"quoted"_value pw=short dir=/not/a/secret/value`,
      isError: false,
    });
    await session.close();
    const text = await readFile(session.path, "utf8");
    expect(text).not.toContain("sk-canary-0123456789");
    expect(text).not.toContain("ghp_");
    expect(text).toContain("key=[redacted] token=[redacted] pw=short dir=/not/a/secret/value");
  });

  it("redacts secrets that are JSON words without changing a record's structure", async () => {
    const dir = await tempDir();
    const words = {
      DB_PASSWORD: "assistant",
      MY_TOKEN: "toolCallId",
      API_KEY: '"content":"',
      SOME_SECRET: '{"type":',
    };
    const session = await Session.create({
      dir,
      workspace: "/ws",
      model: "m",
      id: "s1",
      env: words,
    });
    const said: Message = {
      role: "tool",
      toolCallId: "c2",
      content: 'the assistant sent toolCallId and "content":"x" in a {"type":1}',
      isError: false,
    };
    for (const message of [user, asks, result1, said, answer]) await session.append(message);
    await session.close();
    const loaded = await readSession(session.path);
    expect(loaded.messages).toEqual([
      user,
      asks,
      result1,
      { ...said, content: 'the [redacted] sent [redacted] and [redacted]x" in a [redacted]1}' },
      answer,
    ]);
    expect([loaded.repaired, loaded.skipped]).toEqual([0, 0]);
  });

  it("redacts 8-character secrets, the longest first, and ignores unset variables", async () => {
    const redact = secretRedactor({
      A_TOKEN: "abcdefgh",
      B_TOKEN: "abcdefgh-longer",
      C_SECRET: "1234567",
      D_PASSWORD: undefined,
    });
    expect(redact("abcdefgh-longer abcdefgh 1234567")).toBe("[redacted] [redacted] 1234567");
    expect(secretRedactor({})("nothing to hide")).toBe("nothing to hide");
  });

  it("creates files 0600 in folders 0700", async () => {
    const dir = join(await tempDir(), "state", "sessions");
    const path = await writeSession(dir, [user]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it("refuses a file that is not a session and a newer format with clear errors", async () => {
    const dir = await tempDir();
    const foreign = join(dir, "notes.jsonl");
    await writeFile(foreign, "hello\n");
    await expect(readSession(foreign)).rejects.toThrow(`not a mini-agent session file: ${foreign}`);
    const newer = join(dir, "newer.jsonl");
    await writeFile(
      newer,
      `${JSON.stringify({ type: "session", version: 9, id: "x", createdAt: "", workspace: "/", model: "m" })}\n`,
    );
    await expect(readSession(newer)).rejects.toThrow(
      "session format version 9 is newer than this mini-agent supports (1)",
    );
  });

  it("writes the sandbox in the header only when given, and approvals beside the history", async () => {
    const dir = await tempDir();
    const plain = await newSession(dir, "plain");
    await plain.close();
    expect((await readSession(plain.path)).header).not.toHaveProperty("sandbox");
    const session = await Session.create({
      dir,
      workspace: "/ws",
      model: "m",
      id: "boxed",
      sandbox: "bwrap",
      env,
    });
    await session.append(user);
    await session.append(asks);
    await session.record({
      type: "approval",
      toolCallId: "c1",
      tool: "read",
      approved: true,
      by: "default-policy",
    });
    await session.append(result1);
    await session.append(result2);
    await session.close();
    await session.close();
    const lines = (await readFile(session.path, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ type: "session", sandbox: "bwrap" });
    expect(lines[3]).toEqual({
      type: "approval",
      toolCallId: "c1",
      tool: "read",
      approved: true,
      by: "default-policy",
    });
    expect((await readSession(session.path)).messages).toEqual([user, asks, result1, result2]);
  });

  it("skips lines that are JSON but not records, and blank lines, and reads records longer than a chunk", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user]);
    const long: Message = {
      role: "tool",
      toolCallId: "c1",
      content: "z".repeat(200_000),
      isError: false,
    };
    const record = (message: unknown) => JSON.stringify({ type: "message", message });
    const junk = [
      "",
      record({ role: "tool", toolCallId: "c9" }),
      record({ role: "wizard", content: "x" }),
      JSON.stringify({ type: "mystery", message: user }),
      JSON.stringify({ type: "session", version: 1, id: "x" }),
      "",
    ].join("\n");
    await writeFile(
      path,
      `${await readFile(path, "utf8")}${junk}\n${record(asks)}\n${record(long)}\n${record(result2)}\n`,
    );
    const loaded = await readSession(path);
    expect(loaded.messages).toEqual([user, asks, long, result2]);
    expect(loaded.skipped).toBe(4);
    expect(loaded.torn).toBe(false);
  });

  it("copies the bytes of a record longer than a chunk a bounded number of times", async () => {
    const dir = await tempDir();
    const big: Message = {
      role: "tool",
      toolCallId: "c1",
      content: "y".repeat(8_000_000),
      isError: false,
    };
    const path = await writeSession(dir, [user, asks, big, result2]);
    const size = (await stat(path)).size;
    const concat = vi.spyOn(Buffer, "concat");
    try {
      const loaded = await readSession(path);
      expect(loaded.messages).toEqual([user, asks, big, result2]);
      const copied = concat.mock.results.reduce(
        (sum, { value }) => sum + (value as Buffer).length,
        0,
      );
      expect(copied).toBeLessThanOrEqual(2 * size);
    } finally {
      concat.mockRestore();
    }
  });

  it("reports a file that ends without a newline as torn and starts the next record on its own line", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user]);
    const cut = JSON.stringify({ type: "message", message: answer }).slice(0, 20);
    await writeFile(path, `${await readFile(path, "utf8")}${cut}`);
    expect((await readSession(path)).torn).toBe(true);
    const { session } = await Session.open(path, { env });
    await session.append(answer);
    await session.close();
    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines.slice(-3)).toEqual([
      cut,
      JSON.stringify({ type: "message", message: answer }),
      "",
    ]);
  });

  it("makes sortable ids from the time", () => {
    expect(newSessionId(new Date("2026-11-30T12:54:19.123Z"))).toMatch(
      /^20261130-125419-[0-9a-f]{6}$/,
    );
  });

  it("refuses to append after close", async () => {
    const dir = await tempDir();
    const session = await newSession(dir);
    await session.close();
    await expect(session.append(user)).rejects.toThrow("session s1 is closed");
  });

  it("refuses to overwrite an existing session and rejects unsafe ids", async () => {
    const dir = await tempDir();
    await writeSession(dir, [user]);
    await expect(newSession(dir)).rejects.toThrow(/EEXIST/);
    await expect(newSession(dir, "../escape")).rejects.toThrow('invalid session id: "../escape"');
  });

  it("lists only .jsonl files, reports an empty session, breaks ties by id, and fails on a folder it cannot read", async () => {
    const dir = await tempDir();
    const empty = await newSession(dir, "a-empty");
    await empty.close();
    const other = await newSession(dir, "b-other");
    await other.close();
    const when = new Date("2026-01-01T00:00:00Z");
    await utimes(empty.path, when, when);
    await utimes(other.path, when, when);
    await writeFile(join(dir, "copy.txt"), await readFile(empty.path));
    expect(
      (await listSessions(dir)).map(({ id, firstPrompt, bytes }) => [id, firstPrompt, bytes]),
    ).toEqual([
      ["b-other", "", (await stat(other.path)).size],
      ["a-empty", "", (await stat(empty.path)).size],
    ]);
    await expect(listSessions(empty.path)).rejects.toThrow(/ENOTDIR/);
  });

  it("lists sessions newest first with their first prompt and size", async () => {
    const dir = await tempDir();
    const first = await writeSession(dir, [user, answer], "a");
    // Written a minute before the next, whatever the clock's grain.
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(first, minuteAgo, minuteAgo);
    await writeSession(dir, [{ role: "user", content: "second" }, answer, user, answer], "b");
    await writeFile(join(dir, "notes.jsonl"), "hello\n");
    const old = new Date("2020-01-01T00:00:00Z");
    await writeFile(join(dir, "broken.jsonl"), "{");
    await utimes(join(dir, "broken.jsonl"), old, old);
    const list = await listSessions(dir);
    expect(
      list.map(({ id, firstPrompt, bytes, damaged }) => ({ id, firstPrompt, bytes, damaged })),
    ).toEqual([
      {
        id: "b",
        firstPrompt: "second",
        bytes: (await stat(join(dir, "b.jsonl"))).size,
        damaged: undefined,
      },
      {
        id: "a",
        firstPrompt: user.content,
        bytes: (await stat(join(dir, "a.jsonl"))).size,
        damaged: undefined,
      },
      {
        id: "broken",
        firstPrompt: "",
        bytes: 1,
        damaged: "its first line is a torn session header",
      },
    ]);
    expect(await listSessions(join(dir, "missing"))).toEqual([]);
  });
});

/** The code of a failed system call on an error or on its cause, as the CLI looks for it. */
function systemCodeOf(error: unknown): string | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined) return code;
  }
  return undefined;
}

/** A write that fails once, at its `at`-th call (0 is the header): half written, or thrown. */
function failingWrite(code: string, at: number, { torn = false } = {}) {
  let calls = 0;
  return (fd: number, data: Uint8Array): number => {
    if (calls++ !== at) return writeSync(fd, data);
    if (torn) return writeSync(fd, data.subarray(0, data.length >> 1));
    throw Object.assign(new Error(`${code}: simulated, write`), { code });
  };
}

describe("failingWrite", () => {
  it.each([false, true])("writes, fails once at its turn, then writes again (torn: %s)", (torn) => {
    const write = failingWrite("ENOSPC", 1, { torn });
    const devNull = openSync("/dev/null", "w");
    try {
      expect(write(devNull, Buffer.from("abcd"))).toBe(4);
      if (torn) expect(write(devNull, Buffer.from("abcd"))).toBe(2);
      else expect(() => write(devNull, Buffer.from("abcd"))).toThrow("ENOSPC: simulated, write");
      expect(write(devNull, Buffer.from("abcd"))).toBe(4);
    } finally {
      closeSync(devNull);
    }
  });
});

describe("session file on a failing disk", () => {
  it("says in one line why the session folder cannot be made, with a hint", async () => {
    const base = await tempDir();
    await writeFile(join(base, "file"), "");
    const dir = join(base, "file", "sessions");
    await expect(newSession(dir)).rejects.toThrow(
      new Error(
        `cannot create the session folder ${dir}: ENOTDIR (set MINI_AGENT_HOME to a folder you can write)`,
      ),
    );
  });

  it.each([
    ["ENOSPC", "free space, or set MINI_AGENT_HOME to another folder"],
    ["EDQUOT", "free space, or set MINI_AGENT_HOME to another folder"],
    ["EROFS", "set MINI_AGENT_HOME to a folder you can write"],
    ["EACCES", "make it writable, or set MINI_AGENT_HOME to a folder you can write"],
  ])("fails with %s in one line with a hint and leaves no file behind", async (code, hint) => {
    const dir = await tempDir();
    const create = Session.create({
      dir,
      workspace: "/ws",
      model: "m",
      id: "s1",
      env,
      write: failingWrite(code, 0),
    });
    await expect(create).rejects.toThrow(
      new Error(`cannot write session file ${join(dir, "s1.jsonl")}: ${code} (${hint})`),
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([false, true])(
    "reports a failed append in one line and keeps what was written (torn: %s)",
    async (torn) => {
      const dir = await tempDir();
      const session = await Session.create({
        dir,
        workspace: "/ws",
        model: "m",
        id: "s1",
        env,
        write: failingWrite("ENOSPC", 2, { torn }),
      });
      await session.append(user);
      const size = Buffer.byteLength(JSON.stringify({ type: "message", message: answer })) + 1;
      const failed = torn
        ? `cannot write session file ${session.path}: only ${size >> 1} of ${size} bytes were written (the disk is probably full: free space, or set MINI_AGENT_HOME to another folder)`
        : `cannot write session file ${session.path}: ENOSPC (free space, or set MINI_AGENT_HOME to another folder)`;
      const error = await session.append(answer).catch((e: NodeJS.ErrnoException) => e);
      // A short write is a full disk in practice: it carries ENOSPC, so the CLI names the state
      // folder and what to do, as for a write that failed outright.
      expect(error).toBeInstanceOf(Error);
      expect([(error as Error).message, systemCodeOf(error)]).toEqual([failed, "ENOSPC"]);
      const later: Message = { role: "user", content: "later" };
      await session.append(later);
      await session.close();
      const lines = (await readFile(session.path, "utf8")).split("\n").slice(2);
      const record = (message: Message) => JSON.stringify({ type: "message", message });
      expect(lines).toEqual([
        torn ? record(answer).slice(0, lines[0]?.length) : "",
        record(later),
        "",
      ]);
      const loaded = await Session.open(session.path, { env });
      expect(loaded.messages).toEqual([user, later]);
      expect(loaded.skipped).toBe(torn ? 1 : 0);
      await loaded.session.close();
    },
  );
});

describe("session file replaced underneath", () => {
  const replaced = (path: string) =>
    new Error(`session file ${path} was replaced or removed while mini-agent was writing it`);

  it("refuses to append once another file was renamed over it", async () => {
    const dir = await tempDir();
    const session = await newSession(dir);
    await session.append(user);
    const other = join(dir, "other");
    await writeFile(other, "someone else's file\n");
    await rename(other, session.path);
    await expect(session.append(answer)).rejects.toThrow(replaced(session.path));
    await session.close();
    expect(await readFile(session.path, "utf8")).toBe("someone else's file\n");
  });

  it("refuses to append once it was removed", async () => {
    const dir = await tempDir();
    const session = await newSession(dir);
    await unlink(session.path);
    await expect(session.append(user)).rejects.toThrow(replaced(session.path));
    await expect(
      session.record({ type: "approval", toolCallId: "c", tool: "t", approved: true, by: "u" }),
    ).rejects.toThrow(replaced(session.path));
    await session.close();
  });
});

describe("one writer per session", () => {
  it("refuses a second writer while the first holds the session, and frees it on close", async () => {
    const dir = await tempDir();
    const first = await newSession(dir);
    const inUse = new Error(`session s1 is in use by another mini-agent (pid ${process.pid})`);
    await expect(Session.open(first.path, { env })).rejects.toThrow(inUse);
    await first.close();
    expect((await readdir(dir)).sort()).toEqual(["s1.jsonl"]);
    const second = await Session.open(first.path, { env });
    await expect(Session.open(first.path, { env })).rejects.toThrow(inUse);
    await second.session.close();
    const third = await Session.open(first.path, { env });
    await third.session.close();
    expect(await readdir(dir)).toEqual(["s1.jsonl"]);
  });

  it("takes over a lock left by a process that is gone, or by a reused pid", async () => {
    const dir = await tempDir();
    const path = await writeSession(dir, [user]);
    const child = spawn(process.execPath, ["-e", ""]);
    const pid = child.pid;
    await new Promise((resolve) => child.on("close", resolve));
    for (const left of [`${pid} 12345\n`, `${process.pid} 1\n`, "garbage"]) {
      await writeFile(join(dir, "s1.lock"), left);
      const loaded = await Session.open(path, { env });
      expect(await readFile(join(dir, "s1.lock"), "utf8")).toMatch(
        new RegExp(`^${process.pid} \\d+\n$`),
      );
      await loaded.session.close();
      expect(await readdir(dir)).toEqual(["s1.jsonl"]);
    }
  });

  it("releases the lock when the process ends without closing", async () => {
    const dir = await tempDir();
    const entry = new URL("../dist/index.js", import.meta.url).href;
    const script = `
      const { Session } = await import(${JSON.stringify(entry)});
      await Session.create({ dir: ${JSON.stringify(dir)}, workspace: "/", model: "m", id: "s1", env: {} });
      console.log(require("node:fs").readdirSync(${JSON.stringify(dir)}).sort().join(","));
    `;
    const child = spawn(process.execPath, [
      "--input-type=commonjs",
      "-e",
      `(async () => { ${script} })()`,
    ]);
    let out = "";
    child.stdout.on("data", (data) => {
      out += data;
    });
    await new Promise((resolve) => child.on("close", resolve));
    expect(out).toBe("s1.jsonl,s1.lock\n");
    expect(await readdir(dir)).toEqual(["s1.jsonl"]);
  });
});
