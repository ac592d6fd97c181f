import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ruleBook } from "../src/app/rules.js";
import { decideCommand, type RulesContext } from "../src/rules/decide.js";
import { ruleCovers } from "../src/rules/granted.js";
import { type Rule, ruleWords } from "../src/rules/rule.js";

/**
 * An allow rule grants what it names, no more (issue 51, item 3): a rule for a program with a
 * table allows it only with the options its table knows to be inert; an option that runs a
 * program asks; an option or operand that writes a file is a write like a redirect (inside the
 * workspace, never a protected file); an unknown option asks; `PROGRAM ...` grants every option.
 * Each dangerous class of the evidence file, under the narrow rule that let it through, in
 * several spellings (abbreviated long options, `=` and separate values, clustered short options,
 * options after operands), with the sandbox and without.
 */

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "mini-agent-narrow-")));
mkdirSync(join(workspace, ".git/hooks"), { recursive: true });
mkdirSync(join(workspace, "src"));
writeFileSync(join(workspace, ".git/config"), "[core]\n");
writeFileSync(join(workspace, ".git/HEAD"), "ref: refs/heads/main\n");
writeFileSync(join(workspace, "README.md"), "x\n");
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

const allow = (text: string): Rule => ({ effect: "allow", words: ruleWords(text) });

async function decision(rule: string, command: string, sandboxed: boolean) {
  const context: RulesContext = { rules: [allow(rule)], workspace, sandboxed };
  return decideCommand(command, context);
}

/** [the narrow rule, commands it must no longer grant] */
const runsAProgram: [string, string[]][] = [
  [
    "sort",
    [
      "sort --compress-program='touch x' -S 1 README.md",
      "sort --compress-prog=sh -S 1 README.md",
      "sort --compress-program sh -S 1 README.md",
      "sort -S 1 README.md --compress-program=sh",
      "sort -S1 --compress-p=sh README.md",
    ],
  ],
  [
    "sqlite3",
    [
      "sqlite3 /dev/null '.shell touch x'",
      "sqlite3 /dev/null '.system touch x'",
      "sqlite3 db.sqlite 'select 1;' '.shell touch x'",
      "sqlite3 -cmd '.shell touch x' db.sqlite 'select 1'",
      "sqlite3 --cmd '.shell touch x' db.sqlite 'select 1'",
      "sqlite3 -init /tmp/x db.sqlite 'select 1'",
      "sqlite3 db.sqlite '.load /tmp/x.so'",
      "sqlite3 db.sqlite \"select load_extension('/tmp/x.so')\"",
      "sqlite3 db.sqlite \"SELECT LOAD_EXTENSION('/tmp/x.so')\"",
      "sqlite3 db.sqlite \"select edit('x', 'touch y')\"",
      "sqlite3 db.sqlite '.read /tmp/x.sql'",
      "sqlite3 db.sqlite",
      "sqlite3 db.sqlite '.excel'",
    ],
  ],
  [
    "fd",
    [
      "fd -x touch x",
      "fd --exec touch x",
      "fd -X rm",
      "fd --exec-batch rm",
      "fd . src -x touch x",
      "fd -tf -x touch x",
      "fd -Hx touch x",
      "fd --exe touch x",
    ],
  ],
  [
    "ssh-keygen",
    [
      "ssh-keygen -D /tmp/x.so",
      "ssh-keygen -D/tmp/x.so",
      "ssh-keygen -l -D /tmp/x.so",
      "ssh-keygen -w /tmp/x.so -t ecdsa-sk -f key",
      "ssh-keygen -t ed25519 -f key -O application=ssh: -w/tmp/x.so",
    ],
  ],
  [
    "tmux",
    [
      "tmux new -d 'touch x'",
      "tmux new-session -d 'touch x'",
      "tmux",
      "tmux new-window 'touch x'",
      "tmux split-window 'touch x'",
      "tmux run-shell 'touch x'",
      "tmux run 'touch x'",
      "tmux ls \\; new -d 'touch x'",
      "tmux ls ';' new -d 'touch x'",
      "tmux send-keys -t 0 'touch x' Enter",
      "tmux -f /tmp/conf ls",
      "tmux display-message -p '#(touch x)'",
      "tmux source-file /tmp/x",
      "tmux -c 'touch x'",
      "tmux if-shell true 'run x'",
    ],
  ],
  [
    "screen",
    [
      "screen -dm touch x",
      "screen -d -m touch x",
      "screen -dmS s touch x",
      "screen -S s -X stuff 'touch x'",
      "screen",
      "screen touch x",
    ],
  ],
  [
    "tar",
    [
      "tar -cf a.tar -I 'touch x' README.md",
      "tar --use-compress-program='touch x' -cf a.tar README.md",
      "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='touch x' README.md",
      "tar -xf a.tar --to-command='touch x'",
      "tar --to-com='touch x' -xf a.tar",
      "tar -cf a.tar --rsh-command=/tmp/x host:a.tar",
      "tar -cf a.tar --no-such-option README.md",
    ],
  ],
  [
    "rg",
    [
      "rg --pre 'touch x' foo",
      "rg --pre=sh foo",
      "rg foo --pre sh",
      "rg --pre-glob '*' --pre sh foo",
      "rg -z foo",
      "rg --search-zip foo",
      "rg --hostname-bin=sh foo",
    ],
  ],
  [
    "find",
    [
      "find . -delete",
      "find . -name '*.md' -delete",
      "find . -exec touch x ';'",
      "find . -newerXY x",
    ],
  ],
  [
    "git",
    [
      "git -c core.pager='touch x' log",
      "git --config-env=core.pager=X log",
      "git fetch --upload-pack='touch x' origin",
      "git log --ext-diff",
      "git log --textconv",
      "git log --show-signature",
      "git grep -O 'touch x' foo",
      "git grep --open-files-in-pager=sh foo",
      "git tag -v v1",
      "git tag -s v1 -m x",
      "git branch --edit-description",
    ],
  ],
  [
    "git config",
    [
      "git config core.fsmonitor 'touch x'",
      "git config --add core.fsmonitor 'touch x'",
      "git config --local core.pager 'touch x'",
      "git config set core.fsmonitor 'touch x'",
      "git config -e",
      "git config --edit",
      "git config --unset core.editor",
    ],
  ],
  [
    "awk",
    [
      "awk 'BEGIN {system(\"touch x\")}'",
      "awk '{print | \"sh\"}' README.md",
      "awk 'BEGIN { \"date\" | getline d }'",
      "awk -f /tmp/prog README.md",
      "gawk -e 'BEGIN{system(\"x\")}'",
    ],
  ],
  [
    "sed",
    [
      "sed -e 1e README.md",
      "sed '1e touch x' README.md",
      "sed 's/x/touch y/e' README.md",
      "sed -f /tmp/script README.md",
      "sed --file=/tmp/script README.md",
    ],
  ],
  [
    "less",
    [
      "less '+!touch x' README.md",
      "less -k /tmp/keys README.md",
      "less --lesskey-file=/tmp/keys README.md",
      "less README.md '+!touch x'",
    ],
  ],
  [
    "openssl",
    [
      "openssl req -engine /tmp/x.so -new",
      "openssl x509 -in a.pem -provider-path /tmp -provider x",
      "openssl req -config /tmp/x.cnf -new",
      "openssl rand -writerand /tmp/x 1",
    ],
  ],
  ["file", ["file -z a.gz", "file -Z a.gz", "file -bz a.gz"]],
  ["diff", ["diff -l a b", "diff --paginate a b"]],
];

/** [the narrow rule, commands that write a file outside the workspace or a protected one] */
const writesOutside: [string, string[]][] = [
  ["sed", ["sed -n 'w /tmp/x' README.md", "sed 's/a/b/w /tmp/x' README.md"]],
  ["sed", ["sed -n 'W /tmp/x' README.md", "sed -n 1p --expression='w /tmp/x' README.md"]],
  ["sed", ["sed -i s/a/b/ /tmp/x", "sed --in-place=.bak s/a/b/ /tmp/x", "sed -ni 1p /tmp/x"]],
  ["sed", ["sed -i s/a/b/ .git/config", "sed -i -e s/a/b/ .git/hooks/pre-commit"]],
  ["find", ["find . -fprint /tmp/x", "find . -fprint0 /tmp/x", "find . -fls /tmp/x"]],
  ["find", ["find . -fprintf /tmp/x '%p'", "find . -name x -fprint .git/hooks/pre-commit"]],
  ["git log", ["git log --output=/tmp/x", "git log --output /tmp/x", "git log -p --outp=/tmp/x"]],
  ["git log", ["git log --output=.git/config", "git log --output=.git/hooks/pre-commit"]],
  ["git", ["git log --output=/tmp/x", "git --no-pager show --output=/tmp/x HEAD"]],
  ["git diff", ["git diff --output=/tmp/x", "git diff HEAD --output /tmp/x"]],
  ["git config", ["git config --global core.pager x", "git config --file /tmp/x a.b c"]],
  ["less", ["less -o /tmp/x README.md", "less -O/tmp/x README.md"]],
  ["less", ["less --log-file=/tmp/x README.md", "less README.md -o /tmp/x"]],
  ["awk", ['awk \'BEGIN {print "x" > "/tmp/x"}\'', "awk -i inplace '{print}' README.md"]],
  ["sort", ["sort -o /tmp/x README.md", "sort -o/tmp/x README.md", "sort README.md -o /tmp/x"]],
  ["sort", ["sort --output=/tmp/x README.md", "sort --outp=/tmp/x README.md"]],
  ["sort", ["sort -uo /tmp/x README.md", "sort -o .git/config README.md"]],
  ["sort", ["sort -o .git/hooks/pre-commit README.md", "sort -T /tmp/y README.md"]],
  ["uniq", ["uniq README.md /tmp/x", "uniq -c README.md /tmp/x", "uniq README.md .git/config"]],
  ["uniq", ["uniq - /tmp/x", "uniq README.md -- /tmp/x"]],
  ["xxd", ["xxd -r README.md /tmp/x", "xxd README.md /tmp/x", "xxd -r -p README.md /tmp/x"]],
  ["iconv", ["iconv -f utf8 -t utf8 -o /tmp/x README.md", "iconv --output=/tmp/x README.md"]],
  ["iconv", ["iconv -o/tmp/x README.md", "iconv README.md -o /tmp/x"]],
  ["patch", ["patch -o /tmp/x README.md x.patch", "patch --output=/tmp/x README.md x.patch"]],
  ["patch", ["patch /tmp/x x.patch", "patch -i x.patch .git/config"]],
  ["tree", ["tree -o /tmp/x", "tree -o/tmp/x", "tree -ao /tmp/x", "tree -o .mcp.json"]],
  ["sqlite3", ["sqlite3 x.db '.output /tmp/x' 'select 1;'", "sqlite3 x.db '.once /tmp/x'"]],
  ["sqlite3", ["sqlite3 x.db \"ATTACH '/tmp/x' AS x\"", "sqlite3 x.db \"vacuum into '/tmp/x'\""]],
  ["sqlite3", ["sqlite3 /tmp/x.db 'create table t(a)'", "sqlite3 x.db '.backup /tmp/x'"]],
  ["sqlite3", ["sqlite3 x.db \"select writefile('/tmp/x', 'y')\"", "sqlite3 x.db '.save /tmp/x'"]],
  ["openssl", ["openssl enc -in README.md -out /tmp/x", "openssl genrsa -out /tmp/x 2048"]],
  ["openssl", ["openssl req -new -keyout /tmp/x -out x.csr", "openssl enc -in a -out .git/config"]],
  ["ssh-keygen", ["ssh-keygen -t ed25519 -f /tmp/key -N ''", "ssh-keygen -f/tmp/key"]],
  ["tar", ["tar -cf /tmp/x.tar README.md", "tar -cf .git/hooks/pre-commit README.md"]],
  ["tar", ["tar cf /tmp/x.tar README.md", "tar --file=/tmp/x.tar -c README.md"]],
];

describe("a narrow allow rule grants what it names, no more", () => {
  for (const sandboxed of [false, true]) {
    const where = sandboxed ? "in the sandbox" : "with --sandbox off";
    for (const [rule, commands] of runsAProgram)
      it.each(commands)(`asks under "allow ${rule}" ${where}: %s`, async (command) => {
        expect((await decision(rule, command, sandboxed)).decision).toBe("ask");
      });
    for (const [rule, commands] of writesOutside)
      it.each(commands)(`asks under "allow ${rule}" ${where}: %s`, async (command) => {
        expect((await decision(rule, command, sandboxed)).decision).toBe("ask");
      });
  }

  it("says which option held a command back and how to grant every option", async () => {
    const verdict = await decision("sort", "sort --compress-program=sh -S 1 README.md", false);
    expect(verdict).toMatchObject({ decision: "ask" });
    if (verdict.decision !== "ask") return;
    expect(verdict.reason).toBe(
      'no rule allows sort --compress-program=sh -S 1 README.md (the rule "allow sort" covers sort only with the options known to be inert: --compress-program runs a program; "allow sort ..." would cover every option)',
    );
  });

  it("says a write outside the workspace is why", async () => {
    const verdict = await decision("sort", "sort -o /tmp/x README.md", false);
    expect(verdict).toMatchObject({ decision: "ask" });
    if (verdict.decision !== "ask") return;
    expect(verdict.reason).toBe(
      "the rules cannot allow sort writing a file outside the workspace (/tmp/x)",
    );
  });
});

/** [the rule, commands it still grants: inert options, and writes inside the workspace] */
const stillGranted: [string, string[]][] = [
  ["sort", ["sort -u README.md", "sort -o out.txt README.md", "sort -k2 -t, -n README.md"]],
  ["sort", ["sort -T src README.md", "sort --output=src/out README.md"]],
  ["uniq", ["uniq README.md out.txt", "uniq -c README.md"]],
  ["xxd", ["xxd -r dump.hex out.bin", "xxd README.md"]],
  ["tree", ["tree -o tree.txt", "tree -L 2 src", "tree -H . -T title"]],
  ["tail", ["tail -f log.txt", "tail -F -n 20 log.txt", "tail --follow=name log.txt"]],
  ["sed", ["sed -i s/a/b/ README.md", "sed 's/a/b/' README.md", "sed '1i x' README.md"]],
  ["sed", ["sed -i.bak -e 's/a/b/' src/a.py", "sed -n '/x/{p;q}' README.md"]],
  ["awk", ["awk '{print $1}' README.md", "awk -F, -v n=1 '{print $n}' README.md"]],
  ["find", ["find . -name '*.md' -fprint list.txt", "find -L . -type f", "find . -newer x"]],
  ["git", ["git commit -m x", "git push origin main", "git log --oneline", "git status"]],
  ["git", ["git log --output=log.txt", "git branch feature", "git tag v1", "git tag -d v1"]],
  ["git", ["git describe --dirty", "git remote -v", "git diff --stat"]],
  ["git config", ["git config --get user.name", "git config --list", "git config -l"]],
  ["git config", ["git config --get-regexp user", "git config get user.name"]],
  ["git log", ["git log --oneline -5", "git log --output=log.txt"]],
  ["fd", ["fd -e py", "fd -H -t f foo src", "fd --max-depth 2 foo"]],
  ["sqlite3", ["sqlite3 db.sqlite 'select * from t'", "sqlite3 -header -csv db.sqlite 'select 1'"]],
  ["sqlite3", ["sqlite3 db.sqlite .tables", "sqlite3 db.sqlite '.schema t'", "sqlite3 -version"]],
  ["tmux", ["tmux ls", "tmux list-sessions", "tmux kill-session -t x", "tmux has-session -t x"]],
  ["tmux", ["tmux capture-pane -p -t x", "tmux list-windows -a"]],
  ["screen", ["screen -ls", "screen -list", "screen -v"]],
  ["ssh-keygen", ["ssh-keygen -l -f key.pub", "ssh-keygen -t ed25519 -f key -N '' -C me"]],
  ["ssh-keygen", ["ssh-keygen -y -f key"]],
  ["openssl", ["openssl x509 -in cert.pem -noout -text", "openssl version"]],
  ["openssl", ["openssl enc -aes-256-cbc -pbkdf2 -in README.md -out out.enc -pass pass:x"]],
  ["openssl", ["openssl dgst -sha256 README.md", "openssl rand -hex 16"]],
  ["iconv", ["iconv -f utf8 -t ascii -o out.txt README.md", "iconv -l"]],
  ["less", ["less -N README.md", "less -RN README.md", "less -o log.txt README.md"]],
  ["patch", ["patch -p1 -i x.patch README.md", "patch -o out.txt README.md x.patch"]],
  ["tar", ["tar -czf out.tar.gz src", "tar -tf a.tar", "tar -xzf a.tar.gz -C src"]],
  ["tar", ["tar cf out.tar README.md", "tar --create --file=out.tar README.md"]],
  ["rg", ["rg -n foo src", "rg --files", "rg -L foo"]],
  ["npm test", ["npm test", "npm test -- --watch"]],
  ["diff", ["diff -u a b", "diff --color=always a b"]],
];

describe("a narrow allow rule still grants its program's inert options", () => {
  for (const sandboxed of [false, true]) {
    const where = sandboxed ? "in the sandbox" : "with --sandbox off";
    for (const [rule, commands] of stillGranted)
      it.each(commands)(`allows under "allow ${rule}" ${where}: %s`, async (command) => {
        expect(await decision(rule, command, sandboxed)).toMatchObject({
          decision: "allow",
          by: `rule:allow ${rule}`,
        });
      });
  }
});

describe('"PROGRAM ..." grants every option', () => {
  it.each([
    ["sort ...", "sort --compress-program=sh -S 1 README.md"],
    ["sort ...", "sort -o /tmp/x README.md"],
    ["fd ...", "fd -x touch x"],
    ["tmux ...", "tmux new -d 'touch x'"],
    ["git log ...", "git log --output=/tmp/x"],
    ["sqlite3 ...", "sqlite3 /dev/null '.shell touch x'"],
  ])('allows under "allow %s": %s', async (rule, command) => {
    expect(await decision(rule, command, false)).toMatchObject({
      decision: "allow",
      by: `rule:allow ${rule}`,
    });
  });

  it("still asks for what the rules cannot read (a program's options that hide code from deny rules)", async () => {
    expect((await decision("tar ...", "tar -xf a.tar --to-command=sh", false)).decision).toBe(
      "ask",
    );
  });

  it("still asks before a write into a protected file", async () => {
    expect((await decision("sort ...", "sort -o x README.md > .git/config", false)).decision).toBe(
      "ask",
    );
  });

  it("grants what an exact rule names, as it named it", async () => {
    const exact: Rule = {
      effect: "allow",
      words: ["sort", "--compress-program=gzip", "big.txt"],
      exact: true,
    };
    const verdict = await decideCommand("sort --compress-program=gzip big.txt", {
      rules: [exact],
      workspace,
      sandboxed: false,
    });
    expect(verdict.decision).toBe("allow");
  });

  it("grants an option the rule's own words name", async () => {
    expect(
      (await decision("sort --compress-program=gzip", "sort --compress-program=gzip -S 1 a", false))
        .decision,
    ).toBe("allow");
  });
});

describe("what a rule covers", () => {
  it.each([
    ["sort", 'sort with the options known to be inert; "allow sort ..." covers every option'],
    [
      "git log",
      'git log with the options known to be inert; "allow git log ..." covers every option',
    ],
    ["sort ...", "sort with every option"],
    ["npm test", undefined],
  ])("says what %j covers", (rule, covers) => {
    expect(ruleCovers(allow(rule))).toBe(covers);
  });
});

describe("saved rules take the new meaning", () => {
  const saved = (rules: object[]) => JSON.stringify({ version: 1, rules });

  it("says once per rules file of the earlier version what its allow rules grant now", async () => {
    const file = join(workspace, "..", `${basename(workspace)}-rules.json`);
    const sort = { effect: "allow", words: ["sort"] };
    const npm = { effect: "allow", words: ["npm", "test"] };
    await writeFile(file, saved([sort, npm]));
    const told: string[] = [];
    const book = await ruleBook(file, [], (line) => told.push(line));
    expect(book.current()).toEqual([sort, npm]);
    expect(told).toEqual([
      `the saved rules "allow sort" (${file}) now grant only the options known to be inert, as every allow rule for a program with a table does: an option that runs a program or writes outside the workspace asks. A rule that ends in ... grants every option ("allow sort ..."). Said once.`,
    ]);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ version: 2, rules: [sort, npm] });
    await ruleBook(file, [], (line) => told.push(line));
    expect(told).toHaveLength(1);
    await rm(file);
  });

  it("says nothing when no saved allow rule names a program with a table", async () => {
    const file = join(workspace, "..", `${basename(workspace)}-quiet.json`);
    const npm = { effect: "allow", words: ["npm", "test"] };
    await writeFile(file, saved([npm, { effect: "deny", words: ["sort"] }]));
    const told: string[] = [];
    await ruleBook(file, [], (line) => told.push(line));
    expect(told).toEqual([]);
    expect(JSON.parse(await readFile(file, "utf8")).version).toBe(2);
    await rm(file);
  });
});
