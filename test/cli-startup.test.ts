import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { stream, turn } from "../src/testing/anthropic-server.js";
import { bin, runBin, toolResults, useCliSetup } from "./support/cli.js";

const setup = useCliSetup();

/**
 * The CLI starts the bwrap probe before it loads the turn, so the probe runs meanwhile; the
 * turn then awaits that same probe, for its warning, its system prompt and bash's first command.
 */
/** A bwrap on `PATH` that notes each start in `log` and cannot build the sandbox. */
async function failingBwrap(home: string, env: NodeJS.ProcessEnv) {
  const fakeBin = join(home, "fake-bin");
  const log = join(home, "bwrap.log");
  await mkdir(fakeBin);
  await writeFile(
    join(fakeBin, "bwrap"),
    `#!/bin/sh\necho started >> '${log}'\necho 'no user namespaces' >&2\nexit 1\n`,
  );
  await chmod(join(fakeBin, "bwrap"), 0o755);
  return { log, env: { ...env, PATH: `${fakeBin}:${process.env.PATH}` } };
}

describe("the CLI's start-up", () => {
  it("keeps the entry light: every command's code is loaded from the turn's file, not inlined", async () => {
    // `--version` and `--help` load the entry alone; a command imported from it without the
    // bundle routing it to the turn would be inlined, with the schema library and the rest.
    // The bin itself is a few lines before the entry: Node started with `--import` scans the
    // bin's whole source for exports, not what it requires.
    const stub = await readFile(bin, "utf8");
    const name = readdirSync(dirname(bin)).find((file) => /^cli-[0-9a-f]{16}\.cjs$/.test(file));
    const entry = await readFile(join(dirname(bin), name ?? "no entry"), "utf8");
    expect({
      stubRequiresEntry: stub.includes('require("./load.cjs")') && stub.includes(`/${name}\``),
      stubUnderLimit: stub.length < 1024,
      schemaLibrary: entry.includes("TypeBox"),
      underLimit: entry.length < 64 * 1024,
    }).toEqual({
      stubRequiresEntry: true,
      stubUnderLimit: true,
      schemaLibrary: false,
      underLimit: true,
    });
  });

  it("runs the bwrap probe once per run, started before the turn and reused by bash", async () => {
    const { server, home, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "bash", input: { command: "echo hi" } }] })),
      stream(turn({ text: ["done"] })),
    ]);
    const { log, env } = await failingBwrap(home, options.env);
    const run = await runBin(["--allow-bash", "task"], { ...options, env });
    expect(run).toEqual({
      code: 0,
      stdout: "done\n",
      stderr:
        "mini-agent: warning: bash runs without a sandbox: bwrap cannot create the sandbox here: no user namespaces\n  ✓ bash echo hi\n",
    });
    expect(toolResults(server.requests[1]?.body ?? {})).toEqual([
      { id: "toolu_1", content: "hi\n[exit code 0]", isError: false },
    ]);
    expect(await readFile(log, "utf8")).toBe("started\n");
  });

  it("runs no probe for what never runs bash: the session list, the rules list", async () => {
    const { home, options } = await setup([]);
    const { log, env } = await failingBwrap(home, options.env);
    expect(await runBin(["--sessions"], { ...options, env })).toMatchObject({
      code: 0,
      stderr: "",
    });
    expect(await runBin(["rules", "list"], { ...options, env })).toMatchObject({
      code: 0,
      stderr: "",
    });
    expect(await readFile(log, "utf8").catch(() => "no probe")).toBe("no probe");
  });

  it("loads none of Node's modules a turn does not use: fetch, web streams, readline, v8, child_process, perf_hooks, the argument parser, crypto", async () => {
    const { home, workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }] })),
      stream(turn({ text: ["hello"] })),
      stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }] })),
      stream(turn({ text: ["hello"] })),
    ]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    // A bwrap that works: the first run keeps its answer, so the second starts no process.
    const works = join(home, "works-bin");
    await mkdir(works);
    await writeFile(join(works, "bwrap"), "#!/bin/sh\nexit 0\n");
    await chmod(join(works, "bwrap"), 0o755);
    const list = join(home, "modules.txt");
    const preload = join(home, "modules.cjs");
    await writeFile(
      preload,
      `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join("\\n")));`,
    );
    const env = {
      ...options.env,
      PATH: `${works}:${process.env.PATH}`,
      NODE_OPTIONS: `--require ${preload}`,
    };
    for (let run = 0; run < 2; run++)
      expect(await runBin(["what do the notes say?"], { ...options, env })).toMatchObject({
        code: 0,
        stdout: "hello\n",
      });
    const loaded = (await readFile(list, "utf8")).split("\n");
    // The list is real: it holds what a turn does load.
    expect(loaded).toContain("NativeModule http");
    const unwanted = loaded.filter((name) =>
      /^NativeModule (internal\/deps\/undici|internal\/webstreams\/readablestream|readline|v8$|module$|child_process$|perf_hooks$|timers\/promises$|internal\/util\/parse_args|crypto$)/.test(
        name,
      ),
    );
    expect(unwanted).toEqual([]);
  });
  // ICU's number formatting loads its locale data on first use: 10 to 50 ms of a short run.
  it("formats no number with ICU's locale data in a turn", async () => {
    const { home, workspace, options } = await setup([
      stream(turn({ calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }] })),
      stream(turn({ text: ["hello"] })),
    ]);
    await writeFile(join(workspace, "notes.txt"), "hello\n");
    const log = join(home, "icu.txt");
    const preload = join(home, "icu.cjs");
    await writeFile(
      preload,
      `const fs = require("fs");
const note = (what) => fs.appendFileSync(${JSON.stringify(log)}, what + "\\n");
const toLocale = Number.prototype.toLocaleString;
Number.prototype.toLocaleString = function (...args) { note("toLocaleString"); return toLocale.apply(this, args); };
const Format = Intl.NumberFormat;
Intl.NumberFormat = function (...args) { note("NumberFormat"); return new Format(...args); };
fs.writeFileSync(${JSON.stringify(log)}, "");`,
    );
    const env = { ...options.env, NODE_OPTIONS: `--require ${preload}` };
    expect(await runBin(["what do the notes say?"], { ...options, env })).toMatchObject({
      code: 0,
      stdout: "hello\n",
    });
    expect(await readFile(log, "utf8")).toBe("");
    // The probe is real: it logs a call made under it.
    execFileSync(process.execPath, ["-e", "(5000).toLocaleString('en-US')"], { env });
    expect(await readFile(log, "utf8")).toBe("toLocaleString\n");
  });
  // Node makes `process.stdin` (a stream over the pipe, file or terminal) when it is first read:
  // a millisecond of a short run. Whether it is a terminal is asked of the descriptor instead.
  it("opens no stream on stdin for a task given on the command line", async () => {
    const { home, options } = await setup([stream(turn({ text: ["done"] }))]);
    const watch = join(home, "watch-stdin.cjs");
    await writeFile(
      watch,
      `const made = Object.getOwnPropertyDescriptor(process, "stdin");
Object.defineProperty(process, "stdin", {
  configurable: true,
  get() {
    require("node:fs").writeSync(2, "stdin opened\\n");
    return made.get.call(process);
  },
});
`,
    );
    const env = { ...options.env, NODE_OPTIONS: `--require ${watch}` };
    expect(await runBin(["task"], { ...options, env })).toEqual({
      code: 0,
      stdout: "done\n",
      stderr: "",
    });
    // The watch can fail: a run that reads its task from stdin opens it.
    const { options: again } = await setup([stream(turn({ text: ["done"] }))]);
    const piped = await runBin([], {
      ...again,
      env: { ...again.env, NODE_OPTIONS: env.NODE_OPTIONS },
      input: "task",
    });
    expect(piped).toMatchObject({ code: 0, stderr: "stdin opened\n" });
  });
});
