// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the generator writes shell text
import { spawn } from "node:child_process";
import { chmod, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideCommand, type RulesContext } from "../src/rules/decide.js";
import { gitPrograms, readOnlyPrograms } from "../src/rules/read-only-table.js";
import { type Rule, ruleWords } from "../src/rules/rule.js";
import { wrappers } from "../src/rules/wrapper-table.js";
import { useTempDirs } from "./support/temp.js";

/**
 * Commands generated from the shell's grammar (lists, pipelines, subshells, groups, if, while,
 * until, negation, background jobs, redirects, quoting, substitutions, arithmetic, builtins that
 * run code, wrappers, read-only programs, allowed words), decided by the rules; each one they
 * allow runs for real in bash, in a workspace whose PATH holds only logging shims. The programs
 * that ran must be ones the rules let run, the decoy outside the workspace must not change, no
 * program may have been given a file outside the workspace (or a socket) to read, and no
 * connection may reach the loopback listener a `/dev/tcp` redirect names: what ran is seen by
 * bash and the system, not by the rules.
 */

const tempDir = useTempDirs();

/** Runs `line` in bash with no input and no output kept; resolves when bash has ended. */
function runBash(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn("/bin/bash", ["-c", line], { cwd, env, stdio: "ignore", timeout: 5000 });
    child.on("close", () => resolve());
    child.on("error", () => resolve());
  });
}
const rule = (effect: Rule["effect"], text: string): Rule => ({ effect, words: ruleWords(text) });
const allowed = ["ls", "cat", "echo", "grep", "make", "git status"];
const decoy = "../outside/decoy.txt";

/** Names the shims answer to: everything the generator can put in the program position. */
const programs = [
  ...allowed.map((text) => text.split(" ")[0] ?? ""),
  ...["evil", "touch", "rm", "sh", "bash", "python3", "perl", "node", "sed", "tar", "sudo", "at"],
  ...Object.keys(readOnlyPrograms),
  ...Object.keys(wrappers),
  "git",
];

/**
 * A shim logs its name and words, and what its input and descriptors 3 to 9 are open on; the
 * wrappers' shims do what the real one does with them.
 */
function shim(name: string): string {
  const fds =
    'for n in 0 3 4 5 6 7 8 9; do t=$(/usr/bin/readlink "/proc/$$/fd/$n" 2>/dev/null) && printf "%s\\n" "$t" >> "$SHIM_FDS"; done';
  const log = `printf "%s\\n" "\${0##*/} $*" >> "$SHIM_LOG"\n${fds}`;
  const wrap: Record<string, string> = {
    timeout: 'shift; exec "$@"',
    nice: '[ "$1" = -n ] && shift 2; exec "$@"',
    strace:
      'while [ "${1#-}" != "$1" ]; do [ "$1" = -o ] && : > "$2" && shift; shift; done; exec "$@"',
    flock: ': >> "$1"; shift; exec "$@"',
    env: 'while [ "${1#-}" != "$1" ] || [ "${1#*=}" != "$1" ]; do shift; done; exec "$@"',
  };
  return `#!/bin/bash\n${log}\n${wrap[name] ?? "exit 0"}\n`;
}

const plain = fc.constantFrom(
  "decoy.txt",
  "x",
  "-n",
  "-l",
  "-",
  "--",
  "-o",
  "a=b",
  "'a b'",
  '"q"',
  "status",
  "log",
  decoy,
  `--output=${decoy}`,
);
const dynamic = fc.constantFrom(
  "'x[$(evil)]'",
  '"x[$(evil)]"',
  "x[\\$\\(evil\\)]",
  "$_",
  "$X",
  '"$X"',
  "*",
  "{a,b}",
  "$'\\x65vil'",
  "$((_))",
  "${a[_]}",
  "'a[_]'",
  "$(evil)",
  "`evil`",
  "<(evil)",
  "~",
);
const word = fc.oneof({ weight: 6, arbitrary: plain }, { weight: 1, arbitrary: dynamic });
const program = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      ...allowed,
      ...["sort", "uniq", "find", "head", "wc", "git log", "true", "pwd", "cut -c1", "tr a b"],
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      ...["timeout 1", "nice -n 5", "env", "env -i", "xargs", "strace -f", `strace -o ${decoy}`],
      ...[`flock ${decoy}`, "sudo", "command -p", "exec -a x", "nohup", "time -p"],
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      ...["evil", "touch", "sed", "tar", "sh -c", "python3", "at now", "eval", "source", "."],
      ...["exec", "command", "builtin", "trap", "enable", "set -k", "set -e", "compgen -C evil"],
      ...["mapfile -C evil a", "printf -v", "read", "let", "test -v", "[ -n"],
    ),
  },
);
/** The port of the loopback listener a `/dev/tcp` redirect names, known once it listens. */
let port = 0;
const inputRedirect = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      ` < ${decoy}`,
      ` 0< ${decoy}`,
      ` 3< ${decoy}`,
      " < link",
      " < dirlink/decoy.txt",
      " < decoy.txt",
      " 0<decoy.txt",
      " < missing.txt",
      " < /dev/null",
      ' < "$X"',
      " < ~/x",
      ' <<< "$X"',
      " <&3",
      " 0<&0",
      " <&-",
      " < <(evil)",
    ),
  },
  fc.constant("").map(() => ` < /dev/tcp/127.0.0.1/${port}`),
  fc.constant("").map(() => ` 4< /dev/tcp/127.0.0.1/${port}`),
);
const redirect = fc.oneof(
  { weight: 3, arbitrary: inputRedirect },
  {
    weight: 10,
    arbitrary: fc.constantFrom(
      ...Array(8).fill(""),
      " > out.txt",
      " > dangling",
      " >> dirlink/new",
      " 2> link",
      ` > ${decoy}`,
      ` >> ${decoy}`,
      " 2>&1",
      " 2>/dev/null",
      " < decoy.txt",
      " {a[_]}>/dev/null",
      " {fd}>/dev/null",
      " <<< 'x[$(evil)]'",
      " <<< x",
      " > /dev/null x",
    ),
  },
);
const simple = fc
  .tuple(program, fc.array(word, { maxLength: 3 }), redirect)
  .map(([p, words, r]) => [p, ...words].join(" ") + r);

const { command } = fc.letrec<{ command: string }>((tie) => ({
  command: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: simple },
    fc.constantFrom("((_))", "((x=1))", "(( $X ))", "let _"),
    fc
      .tuple(tie("command"), fc.constantFrom("; ", " && ", " || ", " & ", "\n"), tie("command"))
      .map(([a, op, b]) => `${a}${op}${b}`),
    fc.tuple(tie("command"), tie("command")).map(([a, b]) => `${a} | ${b}`),
    tie("command").map((c) => `( ${c} )`),
    tie("command").map((c) => `{ ${c}; }`),
    tie("command").map((c) => `! ${c}`),
    fc.tuple(tie("command"), tie("command")).map(([a, b]) => `if ${a}; then ${b}; fi`),
    fc.tuple(tie("command"), tie("command")).map(([a, b]) => `while ${a}; do ${b}; break; done`),
    fc.tuple(tie("command"), tie("command")).map(([a, b]) => `until ${a}; do ${b}; break; done`),
    tie("command").map((c) => `echo "$(${c})"`),
    tie("command").map((c) => `eval '${c.replaceAll("'", "")}'`),
  ),
}));

/** The seed that starts every priming command: `$_` then names `x[$(evil)]`. */
const primed = fc
  .tuple(fc.constantFrom("", "ls 'x[$(evil)]'; ", "cat 'x[$(evil)]' 2>/dev/null; "), command)
  .map(([prime, c]) => prime + c);

async function workspaceWithShims() {
  const root = await tempDir();
  const [ws, outside, bin] = ["ws", "outside", "bin"].map((name) => join(root, name));
  for (const dir of [ws, outside, bin]) await mkdir(dir as string);
  await writeFile(join(outside as string, "decoy.txt"), "decoy\n");
  await writeFile(join(ws as string, "decoy.txt"), "inside\n");
  await symlink(join(outside as string, "decoy.txt"), join(ws as string, "link"));
  await symlink(outside as string, join(ws as string, "dirlink"));
  await symlink(join(outside as string, "not-yet"), join(ws as string, "dangling"));
  for (const name of new Set(programs)) {
    const path = join(bin as string, name);
    await writeFile(path, shim(name));
    await chmod(path, 0o755);
  }
  return {
    ws: ws as string,
    outside: outside as string,
    bin: bin as string,
    log: join(root, "log"),
    fds: join(root, "fds"),
  };
}

/** The read-only set's names, the allow rules' programs, and the wrappers the shims emulate. */
const permitted = new Set([
  ...allowed.map((text) => text.split(" ")[0]),
  ...Object.keys(readOnlyPrograms),
  ...(Object.keys(gitPrograms).length > 0 ? ["git"] : []),
  ...Object.keys(wrappers),
]);

/**
 * What a program may find open to read: a file inside the workspace, `/dev/null`, a pipe, or the
 * temporary file bash holds a here-document or here-string in.
 */
function readable(target: string, ws: string): boolean {
  return (
    target.startsWith(`${ws}/`) ||
    target === "/dev/null" ||
    /^pipe:\[\d+\]$/.test(target) ||
    /^\/tmp\/sh-thd[^/]*( \(deleted\))?$/.test(target)
  );
}

/** Simple and compound commands the rules allow by their words, each with an input redirect. */
const withInput = fc
  .tuple(
    fc.constantFrom("cat", "ls", "grep x", "head -n 1", "wc -l", "sort", "echo", "cat decoy.txt"),
    inputRedirect,
    fc.constantFrom("plain", "group", "subshell", "pipe", "if", "list"),
  )
  .map(([p, r, shape]) => {
    if (shape === "group") return `{ ${p}; }${r}`;
    if (shape === "subshell") return `( ${p} )${r}`;
    if (shape === "pipe") return `${p}${r} | cat`;
    if (shape === "if") return `if true; then ${p}; fi${r}`;
    if (shape === "list") return `ls; ${p}${r} && echo`;
    return `${p}${r}`;
  });

/**
 * A workspace with shims and a loopback listener; `check` decides a line and, when the rules
 * allow it, runs it and asserts what ran, what was open to read, what connected and what changed.
 * It resolves to whether the line ran.
 */
async function harness() {
  const place = await workspaceWithShims();
  let connections = 0;
  const listener = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((done) => listener.listen(0, "127.0.0.1", done));
  const address = listener.address();
  port = typeof address === "object" && address ? address.port : 0;
  const contexts: RulesContext[] = [
    { rules: allowed.map((text) => rule("allow", text)), workspace: place.ws, sandboxed: true },
    { rules: [rule("deny", "evil")], workspace: place.ws, sandboxed: true, allowAll: true },
  ];
  const check = async (line: string, which: number): Promise<boolean> => {
    const context = contexts[which] as RulesContext;
    const verdict = await decideCommand(line, context);
    if (verdict.decision !== "allow") return false;
    await writeFile(place.log, "");
    await writeFile(place.fds, "");
    connections = 0;
    await rm(place.outside, { recursive: true, force: true });
    await mkdir(place.outside);
    await writeFile(join(place.outside, "decoy.txt"), "decoy\n");
    await runBash(line, place.ws, { PATH: place.bin, SHIM_LOG: place.log, SHIM_FDS: place.fds });
    const names = (await readFile(place.log, "utf8")).split("\n").filter(Boolean);
    const ranPrograms = names.map((entry) => entry.split(" ")[0]);
    const forbidden = which === 0 ? ranPrograms.filter((name) => !permitted.has(name)) : [];
    const denied = ranPrograms.filter((name) => name === "evil");
    expect({ line, forbidden, denied }).toEqual({ line, forbidden: [], denied: [] });
    // --allow-bash lets any command read and write anywhere; the rules alone do not
    if (which === 1) return true;
    const opened = (await readFile(place.fds, "utf8")).split("\n").filter(Boolean);
    const foreign = opened.filter((target) => !readable(target, place.ws));
    expect({ line, foreign, connections }).toEqual({ line, foreign: [], connections: 0 });
    const outside = await readdir(place.outside);
    const content = await readFile(join(place.outside, "decoy.txt"), "utf8");
    expect({ line, outside, content }).toEqual({
      line,
      outside: ["decoy.txt"],
      content: "decoy\n",
    });
    return true;
  };
  const close = () => new Promise((done) => listener.close(done));
  return { check, close };
}

describe("commands generated from the grammar", () => {
  it("run only permitted programs and leave the decoy alone whenever the rules allow them", async () => {
    const { check, close } = await harness();
    let ran = 0;
    await fc.assert(
      fc.asyncProperty(primed, fc.constantFrom(0, 0, 1), async (line, which) => {
        if (await check(line, which)) ran++;
      }),
      { numRuns: 400, seed: 20261201 },
    );
    await close();
    expect(ran).toBeGreaterThan(60);
  }, 120_000);

  it("give no program a file outside the workspace or a connection to read when the rules allow them", async () => {
    const { check, close } = await harness();
    let ran = 0;
    await fc.assert(
      fc.asyncProperty(withInput, async (line) => {
        if (await check(line, 0)) ran++;
      }),
      { numRuns: 150, seed: 20261202 },
    );
    await close();
    expect(ran).toBeGreaterThan(30);
  }, 120_000);
});
