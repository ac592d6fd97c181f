import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, readFile, symlink, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToolResult } from "../src/types.js";
import { runToolInChild } from "./support/child-tool.js";
import { hasProgram } from "./support/programs.js";
import { useTempDirs } from "./support/temp.js";
import { until } from "./support/until.js";
import { useWorkspace, type Workspace } from "./support/workspace.js";

/**
 * `grep` asks ripgrep which files and lines hold a fixed string every match must contain, then
 * tests those lines itself. These tests compare the two paths on inputs built to make them
 * differ, check that ripgrep was really asked (a logging wrapper around the real `rg`), show that
 * its answer decides what is skipped (a lying `rg` changes the result: the comparison can fail),
 * and that no `rg` from the workspace or a relative PATH entry ever runs.
 */

const workspace = useWorkspace();
const tempDir = useTempDirs();
const MAX_LINE = 256 * 1024;
const realRg = (() => {
  try {
    return execFileSync("sh", ["-c", "command -v rg"], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
})();

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A folder outside the workspace holding `rg`: a wrapper that logs its arguments, then `body`. */
async function wrapperRg(body: string): Promise<{ folder: string; log: string }> {
  const folder = await tempDir();
  const log = join(folder, "calls.log");
  await writeFile(
    join(folder, "rg"),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> ${JSON.stringify(log)}\n${body}\n`,
  );
  await chmod(join(folder, "rg"), 0o755);
  return { folder, log };
}

async function grep(
  ws: Workspace,
  mode: "js" | "rg",
  input: Record<string, unknown>,
  path?: string,
): Promise<ToolResult> {
  vi.stubEnv("MINI_AGENT_SEARCH", mode);
  if (path !== undefined) vi.stubEnv("PATH", path);
  try {
    return await ws.run("grep", input);
  } finally {
    vi.unstubAllEnvs();
  }
}

/** Lines made to tell the two paths apart, in a file big enough for ripgrep's line mode. */
function trickyFile(): Buffer {
  const parts: Buffer[] = [Buffer.from("\ufeffNEEDLE after a byte order mark\n")];
  const text = (value: string) => parts.push(Buffer.from(value));
  text("alpha NEEDLE beta\r\n");
  parts.push(Buffer.from([0xff, 0x20]), Buffer.from("NEEDLE in bytes that are not UTF-8 "));
  parts.push(Buffer.from([0xc3, 0x0a]));
  text(`${"a".repeat(270_000)}NEEDLE beyond the searched part\n`);
  text(`${"b".repeat(100)}NEEDLE early in a long line${"b".repeat(300_000)}\n`);
  text(`${"é".repeat(200_000)}NEEDLE after two-byte characters\n`);
  text(`${"😀".repeat(140_000)}NEEDLE after four-byte characters\n`);
  text(`${"x".repeat(MAX_LINE - 6)}NEEDLE\r\n`);
  text(`${"y".repeat(MAX_LINE - 4)}wordy\n`);
  text("\u212Aelvin sign and Kelvin and kelvin\n");
  text("\uFFFD NEEDLE after a replacement character\n");
  let size = parts.reduce((sum, part) => sum + part.length, 0);
  // Ordinary lines up to 9 MB, a NEEDLE straddling a 64 KiB boundary among them.
  const filler = "log line with ordinary words in it\n";
  while (size < 9_000_000) {
    if (size < 3 * 65536 && size + filler.length > 3 * 65536) {
      text(`${"-".repeat(3 * 65536 - size - 3)}NEEDLE across a chunk boundary\n`);
      size = 3 * 65536 + "NEEDLE across a chunk boundary\n".length - 3;
      continue;
    }
    text(filler);
    size += filler.length;
  }
  text("last NEEDLE without a newline");
  return Buffer.concat(parts);
}

const patterns: Array<{ pattern: string; ignoreCase?: boolean }> = [
  { pattern: "NEEDLE" },
  { pattern: "NEEDLE$" },
  { pattern: "^alpha" },
  { pattern: "word\\b" },
  { pattern: "kelvin", ignoreCase: true },
  { pattern: "KELVIN", ignoreCase: true },
  { pattern: "NEEDLE|beta" },
  { pattern: "x+NEEDLE" },
  { pattern: "\\x{FFFD} NEEDLE" },
  { pattern: "é+NEEDLE" },
  { pattern: "(?i)needle after" },
  { pattern: "ordinary" },
];

describe.skipIf(!hasProgram("rg"))("grep with ripgrep gives the JavaScript path's result", () => {
  it("in a large file: cut long lines, CRLF, bytes that are not UTF-8, case folding, anchors", async () => {
    const ws = await workspace();
    await writeFile(join(ws.root, "big.log"), trickyFile());
    const { folder, log } = await wrapperRg(`exec ${realRg} "$@"`);
    const path = `${folder}:${process.env.PATH}`;
    for (const { pattern, ignoreCase } of patterns) {
      const input = { pattern, path: "big.log", ...(ignoreCase && { ignoreCase }) };
      const js = await grep(ws, "js", input);
      expect(js.content, pattern).not.toMatch(/^no matches/);
      expect(await grep(ws, "rg", input, path), pattern).toEqual(js);
    }
    // ripgrep was asked for lines, for every pattern with fixed strings to look for.
    const calls = (await readFile(log, "utf8")).trim().split("\n");
    expect(calls.length).toBe(patterns.length - 2);
    expect(calls.every((call) => call.includes("--line-number"))).toBe(true);
  });

  it("a line longer than 256 KiB is searched in its first 256 KiB wherever it starts", async () => {
    const ws = await workspace();
    const long = `${"a".repeat(270_000)}NEEDLE beyond the searched part\n`;
    const after = "short line\n".repeat(10_000);
    // Read in 64 KiB chunks, the line starts at a chunk's start in one file and inside one in
    // the other; ripgrep reads neither way.
    await writeFile(join(ws.root, "first.log"), `${long}${after}${"z\n".repeat(100_000)}`);
    await writeFile(join(ws.root, "later.log"), `${after}${long}${"z\n".repeat(100_000)}`);
    for (const mode of ["js", "rg"] as const) {
      for (const file of ["first.log", "later.log"]) {
        const result = await grep(ws, mode, { pattern: "NEEDLE", path: file });
        expect(result.content, `${mode} ${file}`).toBe("no matches for NEEDLE");
        const early = await grep(ws, mode, { pattern: "a{1000}", path: file });
        expect(early.content, `${mode} ${file}`).toMatch(/^(first|later)\.log:(1|10001): a{499}/);
      }
    }
  });

  it("in a tree: ignore files ripgrep reads and we do not, links, odd names, binary and special files", async () => {
    const ws = await workspace();
    await ws.files({
      ".gitignore": "ignored/\n",
      ".ignore": "dotignored.txt\n",
      ".rgignore": "*.md\n",
      "dotignored.txt": "NEEDLE in a file only ripgrep would ignore\n",
      "notes.md": "a NEEDLE in markdown\n",
      "ignored/x.txt": "NEEDLE ignored\n",
      ".hidden/h.txt": "hidden NEEDLE\n",
      "src/a.ts": "const needle = 1; // NEEDLE\n",
      "src/b.ts": "nothing here\n",
      "src/nested/.gitignore": "*.gen.ts\n",
      "src/nested/c.gen.ts": "NEEDLE generated\n",
      "src/nested/d.ts": "other NEEDLE\n",
      "bin.dat": Buffer.from("NEEDLE\0binary\n"),
      "big/big.log": trickyFile(),
    });
    await writeFile(
      Buffer.concat([Buffer.from(`${ws.root}/`), Buffer.from([0x6e, 0xff, 0x2e, 0x74])]),
      "NEEDLE in a name that is not UTF-8\n",
    );
    await symlink("src/a.ts", join(ws.root, "link-to-a.ts"));
    await symlink(join(ws.outside, "secret.txt"), join(ws.root, "outside-link.txt"));
    execFileSync("mkfifo", [join(ws.root, "pipe.txt")]);
    const { folder, log } = await wrapperRg(`exec ${realRg} "$@"`);
    const path = `${folder}:${process.env.PATH}`;
    const inputs = [
      { pattern: "NEEDLE" },
      { pattern: "needle", ignoreCase: true },
      { pattern: "NEEDLE|other" },
      { pattern: "NEEDLE", glob: "*.ts" },
      { pattern: "NEEDLE", path: "src" },
    ];
    for (const input of inputs) {
      const js = await grep(ws, "js", input);
      expect(js.content).toMatch(/NEEDLE/);
      expect(await grep(ws, "rg", input, path), JSON.stringify(input)).toEqual(js);
    }
    const calls = await readFile(log, "utf8");
    expect(calls).toContain("--files-without-match");
    expect(calls).toContain("--line-number");
  });

  it("ripgrep's answer decides what is searched: a lying rg changes the result", async () => {
    const ws = await workspace();
    const files: Record<string, string> = { "big.log": `${"NEEDLE\n".repeat(1_500_000)}` };
    for (let i = 0; i < 3000; i++) files[`many/f${String(i).padStart(4, "0")}.txt`] = "NEEDLE\n";
    await ws.files(files);
    // Finds no line, and reports every file as holding none of the strings.
    const { folder } = await wrapperRg(
      `case "$*" in *--line-number*) exit 1;; esac; for last; do :; done; exec ${realRg} --files --null -- "$last"`,
    );
    const path = `${folder}:${process.env.PATH}`;
    const honest = await grep(ws, "js", { pattern: "NEEDLE", path: "big.log" });
    expect(honest.content).toMatch(/^big\.log:1: NEEDLE\n/);
    const lied = await grep(ws, "rg", { pattern: "NEEDLE", path: "big.log" }, path);
    expect(lied.content).toBe("no matches for NEEDLE");
    // In a tree ripgrep runs beside the walk, which skips only the files already reported: its
    // answer must change the result of at least one of a few runs.
    const all = await grep(ws, "js", { pattern: "NEEDLE", path: "many" });
    let changed = false;
    for (let run = 0; run < 20 && !changed; run++)
      changed =
        (await grep(ws, "rg", { pattern: "NEEDLE", path: "many" }, path)).content !== all.content;
    expect(changed).toBe(true);
  });

  it("ripgrep gets none of the agent's environment: no secret, no config file", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "NEEDLE\n", "big.log": "NEEDLE\n".repeat(1_500_000) });
    const config = join(await tempDir(), "rgconfig");
    await writeFile(config, "--invert-match\n");
    const { folder, log } = await wrapperRg(
      `env >> "$(dirname "$0")/env.log"; exec ${realRg} "$@"`,
    );
    const path = `${folder}:${process.env.PATH}`;
    // `grep` here clears stubbed variables after each call: set again before each.
    const hostile = () => {
      vi.stubEnv("AWS_SECRET_ACCESS_KEY", "canary-secret-value");
      vi.stubEnv("RIPGREP_CONFIG_PATH", config);
    };
    for (const input of [{ pattern: "NEEDLE", path: "big.log" }, { pattern: "NEEDLE" }]) {
      hostile();
      const js = await grep(ws, "js", input);
      hostile();
      expect(await grep(ws, "rg", input, path)).toEqual(js);
    }
    expect(await readFile(log, "utf8")).toContain("--no-config");
    const seen = await readFile(join(folder, "env.log"), "utf8");
    expect(seen).not.toContain("canary-secret-value");
    expect(seen).not.toContain("RIPGREP_CONFIG_PATH");
  });

  it("a pattern without fixed strings is searched by JavaScript alone", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "x1\n" });
    const { folder, log } = await wrapperRg(`exec ${realRg} "$@"`);
    const result = await grep(ws, "rg", { pattern: "\\d" }, `${folder}:${process.env.PATH}`);
    expect(result.content).toBe("a.txt:1: x1");
    await expect(readFile(log, "utf8")).rejects.toThrow(/ENOENT/);
  });
});

describe.skipIf(!hasProgram("rg"))("ripgrep under pressure", () => {
  it("an abort ends a search waiting on ripgrep, even on one that never answers", async () => {
    const ws = await workspace();
    await ws.files({ "big.log": "NEEDLE\n".repeat(1_500_000) });
    const { folder } = await wrapperRg("exec sleep 1000");
    vi.stubEnv("MINI_AGENT_SEARCH", "rg");
    vi.stubEnv("PATH", `${folder}:${process.env.PATH}`);
    const run = await runToolInChild(ws.root, "grep", { pattern: "NEEDLE", path: "big.log" });
    expect(run).not.toBe("killed");
    if (run === "killed") return;
    expect(run.result).toEqual({ content: "grep aborted", isError: true });
    expect(run.afterAbortMs).toBeLessThan(2000);
  });

  it("a pattern whose fixed string is too long for a command line is searched by JavaScript", async () => {
    const ws = await workspace();
    const long = "é".repeat(66_000);
    await ws.files({ "a.txt": `x${long}y\nz\n` });
    const js = await grep(ws, "js", { pattern: long });
    expect(js.content).toMatch(/^a\.txt:1: xé/);
    expect(await grep(ws, "rg", { pattern: long })).toEqual(js);
  });

  it("ending ripgrep ends what it started: an rg that is a wrapper script leaves no process", async () => {
    const ws = await workspace();
    await ws.files({ "big.log": "NEEDLE\n".repeat(1_500_000) });
    const { folder } = await wrapperRg(
      `sleep 1000 & echo $! > "$(dirname "$0")/child.pid"; exec ${realRg} "$@"`,
    );
    const path = `${folder}:${process.env.PATH}`;
    const result = await grep(ws, "rg", { pattern: "NEEDLE", path: "big.log" }, path);
    expect(result.content).toMatch(/^big\.log:1: NEEDLE\n/);
    const pid = Number(await readFile(join(folder, "child.pid"), "utf8"));
    expect(pid).toBeGreaterThan(0);
    const alive = async () => {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
      return stat !== "" && !/\) Z /.test(stat);
    };
    await until(async () => !(await alive()));
    expect(await alive()).toBe(false);
  });

  it("an rg whose output is not ripgrep's answer leaves the search to JavaScript", async () => {
    const ws = await workspace();
    await ws.files({ "big.log": "NEEDLE\n".repeat(1_500_000), "many/a.txt": "NEEDLE\n" });
    const { folder } = await wrapperRg("exec yes");
    const path = `${folder}:${process.env.PATH}`;
    for (const input of [
      { pattern: "NEEDLE", path: "big.log" },
      { pattern: "NEEDLE", path: "many" },
    ])
      expect(await grep(ws, "rg", input, path)).toEqual(await grep(ws, "js", input));
  });

  it("no ripgrep is left running when a call returns, stopped at the match limit or not", async () => {
    const ws = await workspace();
    const files: Record<string, string> = { "big.log": "NEEDLE\n".repeat(1_500_000) };
    for (let i = 0; i < 2000; i++) files[`many/f${i}.txt`] = "NEEDLE\n";
    await ws.files(files);
    const { folder } = await wrapperRg(`echo $$ >> "$(dirname "$0")/pids"; exec ${realRg} "$@"`);
    const path = `${folder}:${process.env.PATH}`;
    for (const input of [{ pattern: "NEEDLE", path: "big.log" }, { pattern: "NEEDLE" }]) {
      const result = await grep(ws, "rg", input, path);
      // Read at once, without letting the event loop turn: what runs now outlived the call.
      const pids = readFileSync(join(folder, "pids"), "utf8").trim().split("\n");
      const running = pids.filter((pid) => {
        const stat = existsSync(`/proc/${pid}/stat`)
          ? readFileSync(`/proc/${pid}/stat`, "utf8")
          : "";
        return stat !== "" && !/\) Z /.test(stat);
      });
      expect(result.content).toContain("[truncated: stopped after 500 matches");
      expect(running).toEqual([]);
    }
  });

  it("a line of 900 MB costs ripgrep no buffer that size: it maps the file", async () => {
    const ws = await workspace();
    const file = join(ws.root, "sparse.log");
    await writeFile(file, "needle ".repeat(2000));
    await truncate(file, 900 * 1024 * 1024);
    // ripgrep with 300 MB of data segment: reading the line into a buffer would fail.
    const { folder, log } = await wrapperRg(
      `ulimit -d 300000; ${realRg} "$@"; echo "exit $?" >> "$(dirname "$0")/calls.log"`,
    );
    const result = await grep(
      ws,
      "rg",
      { pattern: "zzz", path: "sparse.log" },
      `${folder}:${process.env.PATH}`,
    );
    expect(result).toEqual({ content: "no matches for zzz" });
    expect((await readFile(log, "utf8")).trim().split("\n").at(-1)).toBe("exit 1");
  });
});

describe("which rg runs", () => {
  it("never one in the workspace, nor one found through a relative PATH entry", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "NEEDLE\n" });
    const marker = join(ws.outside, "ran");
    const script = `#!/bin/sh\ntouch ${JSON.stringify(marker)}\nexit 1\n`;
    await mkdir(join(ws.root, "bin"));
    for (const place of ["rg", "bin/rg"]) {
      await writeFile(join(ws.root, place), script);
      await chmod(join(ws.root, place), 0o755);
    }
    // A folder outside whose rg is a link to the workspace's.
    const elsewhere = await tempDir();
    await symlink(join(ws.root, "rg"), join(elsewhere, "rg"));
    vi.stubEnv("MINI_AGENT_SEARCH", "");
    const cwd = process.cwd();
    process.chdir(ws.root);
    try {
      for (const path of [".", "bin", `${ws.root}/bin`, elsewhere, `.:${ws.root}:${elsewhere}`]) {
        vi.stubEnv("PATH", path);
        const result = await ws.run("grep", { pattern: "NEEDLE" });
        expect(result.content, path).toBe("a.txt:1: NEEDLE");
      }
    } finally {
      process.chdir(cwd);
    }
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
  });

  it("MINI_AGENT_SEARCH=rg without an rg, or an unknown mode, is a one-line error", async () => {
    const ws = await workspace();
    await ws.files({ "a.txt": "NEEDLE\n" });
    const empty = await tempDir();
    const missing = await grep(ws, "rg", { pattern: "NEEDLE" }, empty);
    expect(missing).toEqual({
      content:
        "MINI_AGENT_SEARCH=rg, but no rg was found on PATH in an absolute folder outside the workspace",
      isError: true,
    });
    vi.stubEnv("MINI_AGENT_SEARCH", "fast");
    expect(await ws.run("grep", { pattern: "NEEDLE" })).toEqual({
      content: 'MINI_AGENT_SEARCH is "fast": use js, rg or leave it unset',
      isError: true,
    });
  });
});
