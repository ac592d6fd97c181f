// `mini-agent rules explain --stdin` over a few thousand distinct, varied commands (reads, writes
// inside the workspace, builds and tests, commands that reach outside, chains, pipes, redirects,
// substitutions), the whole process timed from spawn to its last line: the commands a second,
// beside the same process given one command (its start-up). Three configurations: the sandbox as
// it is here, `--sandbox off` (most reads ask, and each question is asked again as the run with
// the sandbox would decide it, to name the sandbox), and JSON lines that each set a mode, a
// sandbox and rules.
import { closeSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Distinct commands in the shapes models issue, each with its own file names and numbers. */
export function explainCorpus(count) {
  const shapes = [
    (i) => `sed -n '${i},${i + 20}p' src/module${i % 97}.py`,
    (i) => `nl -ba src/module${i % 89}.py | sed -n '${i},${i + 15}p'`,
    (i) => `cd src && grep -n "name${i}" module${i % 83}.py`,
    (i) => `grep -rn "symbol_${i}" src --include="*.py" | head -${(i % 20) + 1}`,
    (i) => `cat README.md | head -${i % 50}`,
    (i) => `ls -la src/pkg${i % 31}`,
    (i) => `find . -name "*_${i}.py" -type f`,
    (i) => `find src -name "*.py" -exec grep -l "token${i}" {} \\;`,
    (i) => `git log --oneline -${(i % 30) + 1} -- src/module${i % 71}.py`,
    (i) => `git diff HEAD~${(i % 5) + 1} -- src/module${i % 67}.py`,
    (i) => `git show ${(0x1000000 + i * 7919).toString(16)} --stat`,
    (i) => `wc -l src/module${i % 61}.py tests/test_${i % 59}.py`,
    (i) => `head -n ${(i % 40) + 5} tests/test_${i % 53}.py 2>/dev/null`,
    (i) => `echo "value ${i}" > notes/out${i}.txt`,
    (i) => `sed -i 's/old${i}/new${i}/' src/module${i % 47}.py`,
    (i) => `python3 -m pytest tests/test_${i % 43}.py -k case${i} -x -q`,
    (i) => `python3 -c 'import module${i % 41}; print(module${i % 41}.VERSION)'`,
    (i) => `npm test -- --grep case${i}`,
    (i) => `cat ~/.ssh/id_rsa${i % 3 === 0 ? "" : `_${i}`}`,
    (i) => `curl -s https://example.com/api/${i} | head -5`,
    (i) => `rm -rf /tmp/build-${i}`,
    (i) => `pip install package-${i}==1.${i % 10}`,
    (i) => `echo ${i} >> ~/.bashrc`,
    (i) => `ls $(dirname src/module${i % 37}.py)`,
    (i) => `for f in src/*.py; do wc -l "$f"; done | sort -n | tail -${(i % 9) + 1}`,
    (i) => `git push origin branch-${i}`,
    (i) => `timeout ${(i % 60) + 1} make test-${i % 13}`,
    (i) => `tail -n ${(i % 100) + 1} logs/run${i % 29}.log | grep -c ERROR`,
  ];
  return Array.from({ length: count }, (_, i) => shapes[i % shapes.length](i));
}

export async function rulesExplainBench({ run, row, envNote, scratch, bin, probe }) {
  const work = join(scratch, "explain-work");
  const home = join(scratch, "explain-home");
  mkdirSync(join(work, "src"), { recursive: true });
  mkdirSync(join(work, "notes"), { recursive: true });
  writeFileSync(join(work, "README.md"), "hello\n");
  const commands = explainCorpus(5000);
  const jsonLines = commands.map((command, i) =>
    JSON.stringify({
      command,
      mode: ["code", "ask", "plan"][i % 3],
      sandbox: i % 2 ? "bwrap" : "off",
      rules: i % 3 === 0 ? [{ allow: "npm test" }, { deny: "git push" }] : [{ deny: "rm" }],
    }),
  );
  const file = (name, lines) => {
    const path = join(scratch, name);
    writeFileSync(path, `${lines.join("\n")}\n`);
    return path;
  };
  const inputs = {
    one: file("explain-one.txt", commands.slice(0, 1)),
    plain: file("explain-plain.txt", commands),
    json: file("explain-json.txt", jsonLines),
    many: file("explain-many.txt", explainCorpus(50000)),
  };
  const env = { MINI_AGENT_HOME: home };
  const explain = async (input, flags) => {
    const fd = openSync(input, "r");
    try {
      const result = await run(
        process.execPath,
        ["--import", probe, bin, "rules", "explain", "--stdin", ...flags],
        { cwd: work, env, stdin: fd },
      );
      const answered = result.stdout.trim().split("\n");
      const errors = answered.filter((line) => line.startsWith('{"line"')).length;
      if (errors > 0) throw new Error(`rules explain --stdin: ${errors} error lines`);
      return { ...result, lines: answered.length };
    } finally {
      closeSync(fd);
    }
  };
  const cases = [
    ["the sandbox as it is here", inputs.plain, []],
    ["`--sandbox off`", inputs.plain, ["--sandbox", "off"]],
    ["JSON lines, each with a mode, a sandbox and rules", inputs.json, []],
    [
      "the sandbox as it is here, ten times as many (the rate once compiled code is warm)",
      inputs.many,
      [],
    ],
  ];
  const one = await explain(inputs.one, []);
  await explain(inputs.plain, []); // warm-up: the page cache, the kept sandbox answer
  for (const [what, input, flags] of cases) {
    const result = await explain(input, flags);
    const rate = (time) => Math.round(result.lines / (time / 1000)).toLocaleString("en");
    row(
      `rules explain --stdin: ${result.lines.toLocaleString("en")} distinct varied commands, ${what} (whole process)`,
      `${rate(result.wall)} commands/s (${Math.round(result.wall)} ms; CPU ${Math.round(result.cpu)} ms: ${rate(result.cpu)}/s)`,
      `${Math.round(one.wall)} ms, CPU ${Math.round(one.cpu)} ms (one command: the start-up)`,
      `${rate(result.wall - one.wall)}/s after start-up`,
      "≥ 5,000 commands/s",
      envNote(one, result),
    );
  }
}
