import type { ReadStream } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { sessionToResume } from "../src/app/sessions.js";
import { listSessions, readSession } from "../src/session/session.js";
import { headOf } from "../src/text.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Every byte the code under test reads from a file, whichever of Node's file APIs it uses: read
 * streams, file handles and whole-file reads are wrapped to count what they return.
 */
const counted = vi.hoisted(() => ({ bytes: 0, streams: [] as { bytesRead: number }[] }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const createReadStream = (...args: Parameters<typeof real.createReadStream>): ReadStream => {
    const stream = real.createReadStream(...args);
    counted.streams.push(stream);
    return stream;
  };
  const readSync = (...args: Parameters<typeof real.readSync>): number => {
    const n = real.readSync(...args);
    counted.bytes += n;
    return n;
  };
  const readFileSync = ((...args: Parameters<typeof real.readFileSync>) => {
    const data = real.readFileSync(...args);
    counted.bytes += Buffer.byteLength(data);
    return data;
  }) as typeof real.readFileSync;
  const wrapped = { ...real, createReadStream, readSync, readFileSync };
  return { ...wrapped, default: wrapped };
});

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const open = async (...args: Parameters<typeof real.open>): Promise<FileHandle> => {
    const handle = await real.open(...args);
    const read = handle.read.bind(handle) as (...a: unknown[]) => Promise<{ bytesRead: number }>;
    Object.assign(handle, {
      read: async (...a: unknown[]) => {
        const result = await read(...a);
        counted.bytes += result.bytesRead;
        return result;
      },
      readFile: async () => {
        throw new Error("the byte counter does not wrap FileHandle.readFile");
      },
      createReadStream: () => {
        throw new Error("the byte counter does not wrap FileHandle.createReadStream");
      },
    });
    return handle;
  };
  const readFile = (async (...args: Parameters<typeof real.readFile>) => {
    const data = await real.readFile(...args);
    counted.bytes += Buffer.byteLength(data);
    return data;
  }) as typeof real.readFile;
  const wrapped = { ...real, open, readFile };
  return { ...wrapped, default: wrapped };
});

const bytesRead = () => counted.bytes + counted.streams.reduce((sum, s) => sum + s.bytesRead, 0);
beforeEach(() => {
  counted.bytes = 0;
  counted.streams = [];
});

const tempDir = useTempDirs();
const header = (id: string) =>
  JSON.stringify({
    type: "session",
    version: 1,
    id,
    createdAt: "2026-01-01T00:00:00.000Z",
    workspace: "/w",
    model: "m",
  });
const record = (message: object) => JSON.stringify({ type: "message", message });

/** A session of `rounds` read rounds with 20 KB results after its first prompt: ~20 KB a round. */
async function bigSession(dir: string, id: string, prompt: string, rounds: number) {
  const lines = [header(id), record({ role: "user", content: prompt })];
  const result = "a line of a file the agent read\n".repeat(640);
  for (let i = 0; i < rounds; i++) {
    const call = { id: `c${i}`, name: "read", input: { path: `f${i}` } };
    lines.push(record({ role: "assistant", content: "", toolCalls: [call] }));
    lines.push(record({ role: "tool", toolCallId: call.id, content: result, isError: false }));
    lines.push(record({ role: "user", content: `task ${i}` }));
  }
  const path = join(dir, `${id}.jsonl`);
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

describe("listing sessions", () => {
  it("the byte counter sees every byte a whole read of a session takes", async () => {
    const dir = await tempDir();
    const path = await bigSession(dir, "a", "first", 50);
    await readSession(path);
    expect(bytesRead()).toBeGreaterThan(1_000_000);
  });

  it("reads only the head of each file for --sessions and --continue, whatever the history's size", async () => {
    const dir = await tempDir();
    const older = await bigSession(dir, "a", "the older task", 200);
    const newer = await bigSession(dir, "b", "the newer task", 200);
    const { utimes, stat } = await import("node:fs/promises");
    await utimes(older, new Date("2026-01-01T00:00:00Z"), new Date("2026-01-01T00:00:00Z"));
    await utimes(newer, new Date("2026-01-02T00:00:00Z"), new Date("2026-01-02T00:00:00Z"));
    const [a, b] = [(await stat(older)).size, (await stat(newer)).size];
    expect(a + b).toBeGreaterThan(8_000_000);

    const listed = await listSessions(dir);
    expect(listed).toEqual([
      {
        id: "b",
        path: newer,
        createdAt: "2026-01-01T00:00:00.000Z",
        updatedAt: "2026-01-02T00:00:00.000Z",
        workspace: "/w",
        model: "m",
        firstPrompt: "the newer task",
        bytes: b,
      },
      {
        id: "a",
        path: older,
        createdAt: "2026-01-01T00:00:00.000Z",
        updatedAt: "2026-01-01T00:00:00.000Z",
        workspace: "/w",
        model: "m",
        firstPrompt: "the older task",
        bytes: a,
      },
    ]);
    expect(bytesRead()).toBeLessThanOrEqual(2 * 64 * 1024);

    counted.bytes = 0;
    counted.streams = [];
    expect(await sessionToResume(dir, undefined)).toBe(newer);
    expect(bytesRead()).toBeLessThanOrEqual(2 * 64 * 1024);
  });

  it("shows the beginning of a first prompt too long for the head it reads", async () => {
    const dir = await tempDir();
    const prompt = `${'é"\\\n\u{1F600}'.repeat(100_000)}end`;
    await bigSession(dir, "long", prompt, 1);
    const [summary] = await listSessions(dir);
    expect(summary?.firstPrompt).toBe(headOf(prompt, 1000));
    expect(bytesRead()).toBeLessThanOrEqual(64 * 1024);
  });

  it("leaves out a FIFO named like a session instead of waiting on it", async () => {
    const dir = await tempDir();
    await bigSession(dir, "real", "a task", 1);
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [join(dir, "pipe.jsonl")]);
    expect((await listSessions(dir)).map((s) => s.id)).toEqual(["real"]);
  }, 5000);
});
