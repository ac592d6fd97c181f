import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decideCommand } from "../src/rules/decide.js";
import { gitPrograms, readOnlyPrograms } from "../src/rules/read-only-table.js";

/**
 * A hostile pass over the read-only set: for each program in it, the options and operands that
 * write a file or run code (GTFOBins-style), each asking with no rule, in the sandbox and
 * without it. A program that joins the set without rows here fails the first test.
 */

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "mini-agent-hostile-")));
mkdirSync(join(workspace, ".git/hooks"), { recursive: true });
writeFileSync(join(workspace, ".git/HEAD"), "ref: refs/heads/main\n");
writeFileSync(join(workspace, "a.txt"), "x\n");
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

/** Each read-only entry, and what would turn it into a write or a program run. */
const hostile: Record<string, string[]> = {
  ls: ["ls --color=auto > /tmp/x", "ls -la 2>/tmp/x", "ls --dired -D a.txt > .git/config"],
  cat: ["cat a.txt > /tmp/x", "cat a.txt >> .git/hooks/pre-commit", "cat a.txt | sh"],
  head: ["head -c 10 a.txt > /tmp/x", "head --lines=1 a.txt | tee /tmp/x"],
  tail: [
    "tail -f a.txt",
    "tail --follow a.txt",
    "tail --pid=1 -f a.txt",
    "tail -n1 a.txt > /tmp/x",
  ],
  wc: ["wc -l a.txt > /tmp/x", "wc --files0-from=a.txt | sh"],
  pwd: ["pwd > /tmp/x", "pwd -L x"],
  echo: ["echo x > /tmp/x", "echo x >> .git/config", "echo '[core] fsmonitor = x' >> .git/config"],
  true: ["true > /tmp/x", "true && sh -c x"],
  false: ["false || sh -c x", "false > .git/hooks/pre-commit"],
  basename: ["basename a > /tmp/x", "basename $(touch x)"],
  dirname: ["dirname a > /tmp/x", "dirname `touch x`"],
  realpath: ["realpath a > /tmp/x", "realpath --relative-to=$(touch x) a"],
  readlink: ["readlink -f a > /tmp/x", "readlink $(sh -c x)"],
  stat: ["stat a.txt > /tmp/x", "stat --format=%n a.txt | sh"],
  du: ["du -sh . > /tmp/x", "du --time-style=x --exclude=$(touch x) ."],
  df: ["df --output=source", "df -h > /tmp/x"],
  which: ["which ls > /tmp/x", "which $(touch x)"],
  whoami: ["whoami > /tmp/x", "whoami x"],
  id: ["id > /tmp/x", "id -u | sh"],
  uname: ["uname -a > /tmp/x", "uname x"],
  grep: ["grep x a.txt > /tmp/x", "grep -r x . | sh", "grep --exclude-from=x -e $(touch y) a"],
  egrep: ["egrep x a.txt > /tmp/x", "egrep x a.txt | xargs rm"],
  fgrep: ["fgrep x a.txt > /tmp/x", "fgrep x a.txt | sh"],
  cut: ["cut -c1 a.txt > /tmp/x", "cut -f1 a.txt | sh"],
  tr: ["tr a b < a.txt > /tmp/x", "tr a b a.txt"],
  nl: ["nl a.txt > /tmp/x", "nl a.txt | sh"],
  rev: ["rev a.txt > /tmp/x", "rev a.txt | sh"],
  tac: ["tac a.txt > /tmp/x", "tac a.txt | bash"],
  cmp: ["cmp a.txt a.txt > /tmp/x", "cmp a b c d e"],
  comm: ["comm a.txt a.txt > /tmp/x", "comm a b c"],
  diff: ["diff -l a b", "diff --paginate a b", "diff a b > /tmp/x", "diff a b c"],
  md5sum: ["md5sum a.txt > /tmp/x", "md5sum a.txt | sh"],
  sha1sum: ["sha1sum a.txt > /tmp/x", "sha1sum a.txt | sh"],
  sha256sum: ["sha256sum a.txt > /tmp/x", "sha256sum a.txt | sh"],
  sha512sum: ["sha512sum a.txt > /tmp/x", "sha512sum a.txt | sh"],
  type: ["type ls > /tmp/x", "type $(touch x)"],
  printenv: ["printenv > /tmp/x", "printenv | sh"],
  seq: ["seq 3 > /tmp/x", "seq 3 | sh"],
  sort: [
    "sort -o /tmp/x a.txt",
    "sort --output=a.txt a.txt",
    "sort -T /tmp a.txt",
    "sort --compress-program=sh -S 1 a.txt",
    "sort --compress-prog=sh a.txt",
  ],
  uniq: ["uniq a.txt /tmp/x", "uniq a.txt out.txt", "uniq - out.txt", "uniq a.txt .git/config"],
  file: ["file -z a.gz", "file -Z a.gz", "file -C -m x", "file -p a.txt"],
  xxd: ["xxd -r a.txt /tmp/x", "xxd a.txt /tmp/x", "xxd -r a.txt"],
  od: ["od -c a.txt > /tmp/x", "od a.txt | sh"],
  hexdump: ["hexdump -C a.txt > /tmp/x", "hexdump a.txt | sh"],
  strings: ["strings a.txt > /tmp/x", "strings a.txt | sh"],
  tree: ["tree -o /tmp/x", "tree -R -H .", "tree -H . -o x.html", "tree -o/tmp/x"],
  rg: ["rg --pre sh x", "rg --pre=sh x", "rg -z x", "rg --hostname-bin=sh x", "rg x > /tmp/x"],
};

/** git's read-only subcommands, and what would turn each into a write or a program run. */
const hostileGit: Record<string, string[]> = {
  status: ["git status > /tmp/x", "git -c core.fsmonitor=sh status", "git -c core.pager=sh status"],
  diff: ["git diff --output=/tmp/x", "git diff --ext-diff", "git diff --textconv"],
  log: ["git log --output=/tmp/x", "git log --show-signature", "git log --format=%GG"],
  show: ["git show --output=/tmp/x", "git show --show-signature", "git show --ext-diff HEAD"],
  branch: [
    "git branch new",
    "git branch -d main",
    "git branch --edit-description",
    "git branch -m a b",
  ],
  tag: ["git tag v1", "git tag -d v1", "git tag -v v1", "git tag -s v1 -m x"],
  remote: ["git remote add x /tmp", "git remote -v", "git remote set-url origin x"],
  blame: ["git blame a.txt > /tmp/x", "git -c core.pager=sh blame a.txt"],
  "rev-parse": ["git rev-parse HEAD > /tmp/x", "git --exec-path=/tmp rev-parse HEAD"],
  "ls-files": ["git ls-files > /tmp/x", "git --config-env=core.pager=X ls-files"],
  grep: ["git grep -O sh x", "git grep --open-files-in-pager=sh x", "git grep --textconv x"],
  describe: ["git describe --dirty", "git describe --broken", "git describe > /tmp/x"],
  shortlog: ["git shortlog --format=%GG", "git shortlog > /tmp/x"],
};

/** The entries with a grammar of their own. */
const hostileSpecial: Record<string, string[]> = {
  sed: [
    "sed -n 'w /tmp/x' a.txt",
    "sed 's/a/b/w /tmp/x' a.txt",
    "sed -i s/a/b/ a.txt",
    "sed 1e a.txt",
    "sed -f x a.txt",
    "sed -n '1p;W /tmp/x' a.txt",
    "sed --follow-symlinks -n 1p a.txt",
    "sed -n '1r /etc/passwd' a.txt",
  ],
  cd: ["cd /tmp && touch x", "cd .. && ls", "cd $(touch x)", "cd - && ls"],
  find: [
    "find . -delete",
    "find . -fprint /tmp/x",
    "find . -fls /tmp/x",
    "find . -exec rm {} \\;",
    "find . -exec sh -c x \\;",
    "find . -ok cat {} \\;",
  ],
  jq: ["jq -f /tmp/x a.json", "jq -L /tmp 'import \"x\" as x; .' a.json", "jq . a.json > /tmp/x"],
  awk: [
    "awk 'BEGIN {system(\"x\")}'",
    "awk '{print > \"/tmp/x\"}' a.txt",
    "awk '{print | \"sh\"}' a.txt",
    "awk -f x a.txt",
    "awk -i inplace '{print}' a.txt",
    "awk 'BEGIN {\"date\" | getline}'",
    "awk '@load \"x\"'",
  ],
  test: ["test -v 'a[$(touch x)]'", "test -f a > /tmp/x"],
  "[": ["[ -v 'a[$(touch x)]' ]", "[ -R x ]"],
  env: ["env sh -c x", "env X=1 ls", "env -u PATH ls"],
  command: ["command sh -c x", "command -p touch x"],
  "--version": ["npm --version", "cargo --version", "node --version > /tmp/x"],
};

describe("a hostile pass over the read-only set", () => {
  it("has rows for every program of the set", () => {
    expect(Object.keys(readOnlyPrograms).filter((name) => !(name in hostile))).toEqual([]);
    expect(Object.keys(gitPrograms).filter((name) => !(name in hostileGit))).toEqual([]);
  });

  const rows = [
    ...Object.entries(hostile),
    ...Object.entries(hostileGit).map(([name, c]) => [`git ${name}`, c] as const),
    ...Object.entries(hostileSpecial),
  ].flatMap(([name, commands]) => commands.map((command) => [name, command] as const));

  for (const sandboxed of [true, false])
    it.each(rows)(
      `${sandboxed ? "in the sandbox" : "with --sandbox off"}, %s asks: %s`,
      async (_name, command) => {
        const verdict = await decideCommand(command, { rules: [], workspace, sandboxed });
        expect([command, verdict.decision]).toEqual([command, "ask"]);
      },
    );
});
