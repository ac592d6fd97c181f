import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { decideCommand, type RulesContext } from "../src/rules/decide.js";
import {
  gitPrograms,
  type ReadOnlyProgram,
  readOnlyPrograms,
} from "../src/rules/read-only-table.js";
import { useTempDirs } from "./support/temp.js";

/**
 * The read-only set only reads: each entry, with every option it allows and as many operands as
 * it allows, runs for real against a decoy file, and nothing in the folder changes. The rules
 * say which commands are allowed; the file system says whether they were harmless.
 */

const tempDir = useTempDirs();
const run = promisify(execFile);
const context: RulesContext = { rules: [], workspace: "/work/project", sandboxed: true };
const decoy = "decoy.txt";

/** Each allowed option once: alone, or with the decoy (a file to write, if any) and with 1. */
/** The value each option is tried with: the decoy, or one its value check allows. */
const sample = (spec: ReadOnlyProgram, option: string) =>
  spec.values?.[option] && !spec.values[option](decoy) ? "%h" : decoy;

function optionWords(spec: ReadOnlyProgram): string[][] {
  const letters = (text = "") => [...text];
  return [
    ...letters(spec.short).map((l) => [`-${l}`]),
    ...letters(spec.shortValued).flatMap((l) => [[`-${l}`, decoy], [`-${l}1`]]),
    ...letters(spec.shortOptional).flatMap((l) => [[`-${l}`], [`-${l}${decoy}`]]),
    ...(spec.long ?? []).map((o) => [o]),
    ...(spec.longValued ?? []).flatMap((o) => [
      [`${o}=${sample(spec, o)}`],
      [o, sample(spec, o)],
      [`${o}=${spec.values?.[o] ? "%s" : "1"}`],
    ]),
    ...(spec.longOptional ?? []).flatMap((o) => [[o], [`${o}=${sample(spec, o)}`]]),
    ...(spec.numeric ? [["-1"]] : []),
  ];
}

/** Every operand count it allows (up to three), the decoy each time, and `-` first. */
function operandWords(spec: ReadOnlyProgram): string[][] {
  const most = Math.min(spec.operands, 3);
  const lists: string[][] = [];
  for (let n = 0; n <= most; n++) {
    lists.push(Array(n).fill(decoy));
    if (n > 0) lists.push(["-", ...Array(n - 1).fill(decoy)]);
  }
  return lists;
}

function commandsOf(program: string, spec: ReadOnlyProgram): string[] {
  if (spec.anyWords) return [`${program} -n -e ${decoy}`, `${program} ${decoy} --help`];
  return [
    ...optionWords(spec).map((option) =>
      [program, ...option, ...(spec.operands > 0 ? [decoy] : [])].join(" "),
    ),
    ...operandWords(spec).map((operands) => [program, ...operands].join(" ")),
  ];
}

/** Every file under `dir`: its size, change time and content hash (git's index excluded). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const name = relative(dir, path);
    if (!entry.isFile() || name === ".git/index") continue;
    const info = await stat(path);
    const hash = createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
    files[name] = `${info.size} ${info.mtimeMs} ${hash}`;
  }
  return files;
}

async function decoyFolder(): Promise<string> {
  const dir = await tempDir();
  await writeFile(join(dir, decoy), "b\na\na\n");
  const git = (...args: string[]) =>
    run("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir });
  await git("init", "-q");
  await git("add", decoy);
  await git("commit", "-qm", "decoy");
  await writeFile(join(dir, decoy), "b\na\na\nc\n");
  return dir;
}

/** Runs the commands one after another in `dir`, input from /dev/null, output dropped. */
async function runAll(dir: string, commands: string[]): Promise<void> {
  const script = commands.map((c) => `${c} </dev/null >/dev/null 2>&1\n`).join("");
  // each command's exit status is its own business: the script ends well when all have run
  await run("bash", ["-c", `${script}exit 0`], {
    cwd: dir,
    timeout: 60_000,
    env: { ...process.env, HOME: dir },
  });
}

const special = [
  ...["test -f decoy.txt", "[ -n decoy.txt ]", "[ decoy.txt = decoy.txt ]", "[ ! -e x ]"],
  ...["test decoy.txt -nt decoy.txt", "[ -s decoy.txt -a -r decoy.txt ]", "env"],
  ...["command -v ls", "find", "find . -name decoy.txt -print", "find -L . -type f -ls"],
  ...["find . -newer decoy.txt -printf x", "find . '(' -size 1 -o -empty ')' -prune"],
  ...["find . -name decoy.txt -exec grep -l a {} \\;", "find . -type f -execdir wc -l {} +"],
  ...["sed -n 1,2p decoy.txt", "sed -n '/a/{=;p;q}' decoy.txt", "sed -E 's/(a)/\\1b/g' decoy.txt"],
  ...["sed -nse '$p' -- decoy.txt", "sed 'y/ab/ba/' decoy.txt", "sed -z 2q decoy.txt"],
  ...["awk '{print $1}' decoy.txt", "awk -F: -v n=1 'NR==n {print NR, $0; exit}' decoy.txt"],
  ...["jq -n --rawfile t decoy.txt '$t'", "jq -R . decoy.txt", "echo $(ls)"],
];

describe("the read-only set", () => {
  const programs = Object.entries(readOnlyPrograms);
  it.each(programs)("%s, with every option it allows, changes no file", async (name, spec) => {
    const commands = commandsOf(name, spec);
    for (const command of commands)
      expect([command, (await decideCommand(command, context)).decision]).toEqual([
        command,
        "allow",
      ]);
    const dir = await decoyFolder();
    const before = await snapshot(dir);
    await runAll(dir, commands);
    expect(await snapshot(dir)).toEqual(before);
  });

  it.each(Object.entries(gitPrograms))(
    "git %s, with every option it allows, changes no file",
    async (name, spec) => {
      const commands = commandsOf(`git ${name}`, spec);
      for (const command of commands)
        expect([command, (await decideCommand(command, context)).decision]).toEqual([
          command,
          "allow",
        ]);
      const dir = await decoyFolder();
      const before = await snapshot(dir);
      await runAll(dir, commands);
      expect(await snapshot(dir)).toEqual(before);
    },
  );

  it("test, [, find, env, command -v, sed, awk and jq change no file", async () => {
    for (const command of special)
      expect([command, (await decideCommand(command, context)).decision]).toEqual([
        command,
        "allow",
      ]);
    const dir = await decoyFolder();
    const before = await snapshot(dir);
    await runAll(dir, special);
    expect(await snapshot(dir)).toEqual(before);
  });

  it.each([
    "uniq - decoy.txt",
    "uniq -- - decoy.txt",
    "uniq -i - decoy.txt",
    "cat a | uniq - decoy.txt",
    "uniq decoy.txt out.txt",
    "uniq decoy.txt $OUT",
    "uniq *.txt",
    "sort -o decoy.txt decoy.txt",
    "sort -T /tmp decoy.txt",
    "tail -f decoy.txt",
    "diff -l a b",
    "rg -z x",
    "rg --pre cat x",
    "df --output",
    "ls --colo",
    "ls $X",
    "cat *",
    "cat -- $X | sort $Y",
    "find . -fprint decoy.txt",
    "find . -name",
    "git log --output=decoy.txt",
    "git log --show-signature",
    "git log --format=%GG",
    "git log '--format=%G?'",
    "git show --pretty=%GG HEAD",
    "git log --format=tformat:%GS",
    "git log --pretty=format:%GK",
    "git log --format %GF",
    "git log --pretty=myalias",
    "git branch --format='%(signature)'",
    "git diff --ext-diff",
    "git branch new",
    "test -v 'a[$(touch x)]'",
  ])("asks before %j", async (command) => {
    expect((await decideCommand(command, context)).decision).toBe("ask");
  });

  it.each([
    "cat src/*.ts",
    "wc -l -- $FILES",
    "ls ~/x",
    "grep -rn TODO src/{a,b}",
    "git log --format=%H%n%an",
    "git log --pretty=oneline",
    "git log --pretty",
    "git log '--format=tformat:%h %s'",
  ])("allows %j, whose words known only at run time are operands", async (command) => {
    expect((await decideCommand(command, context)).decision).toBe("allow");
  });
});
