import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decideCommand, type RulesContext } from "../src/rules/decide.js";
import { versionOnly } from "../src/rules/version.js";

/**
 * The read-only set on the reads real models issue (the shapes asked about most on public
 * traffic), each allowed in the sandbox, and the dangerous variant of each entry asking. `<ws>`
 * stands for the workspace's real path.
 */

const workspace = realpathSync(mkdtempSync(join(tmpdir(), "mini-agent-reads-")));
mkdirSync(join(workspace, "src/sub"), { recursive: true });
mkdirSync(join(workspace, "tests"));
writeFileSync(join(workspace, "src/a.py"), "x\n");
symlinkSync("/etc", join(workspace, "etc-link"));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

const context: RulesContext = { rules: [], workspace, sandboxed: true };
const inWorkspace = (command: string) => command.replaceAll("<ws>", workspace);
const decision = async (command: string) =>
  (await decideCommand(inWorkspace(command), context)).decision;

/** The evidence's shapes, as issued (the workspace was /testbed), then the everyday reads. */
const realReads = [
  // sed with a print-only script, alone, after nl/cat, before grep
  "sed -n '206,220p' ./django/contrib/admin/helpers.py",
  "nl -ba sympy/printing/mathml.py | sed -n '795,805p'",
  "cd <ws> && sed -n '810,830p' src/sqlfluff/core/parser/segments/base.py",
  "cat <ws>/django/db/migrations/operations/fields.py | sed -n '340,350p'",
  "cd <ws> && cat django/db/migrations/operations/fields.py | sed -n '305,320p'",
  "cat -n pydicom/jsonrep.py | sed -n '225,235p'",
  "sed -n '99,538p' django/contrib/admin/options.py | grep \"inlines\"",
  "sed -n '198,300p' django/db/migrations/operations/fields.py | grep -n \"def reduce\"",
  "sed -n 1,5p README.md",
  "sed -n '10p;20p' README.md",
  "sed -n '/^def /,/^$/p' a.py",
  "sed -n '$p' a.py",
  "sed -n '0~4p' a.py",
  "sed -n '10,+5p' a.py",
  "sed -n -e '1p' -e '3p' a.py",
  "sed -ne 5p a.py",
  "sed -n '/x/{p;q}' a.py",
  "sed -n '1,/end/!p' a.py",
  "sed -n '=' a.py",
  "sed -n '5,10{=;p}' a.py",
  "sed 's/foo/bar/g' a.py",
  "sed -n 's/^\\s*def \\(\\w*\\).*/\\1/p' a.py",
  "sed -n --quiet -E '/a|b/p' a.py",
  "sed '20q' a.py",
  "sed -n -- '1,3p' a.py",
  "sed -n '1,3p' -- a.py",
  // cd to a folder inside the workspace
  'cd <ws> && grep -n "check_still_complete" src/sqlfluff/core/parser/segments/base.py',
  'cd <ws> && grep -n "costheta" pvlib/iam.py | head -20',
  "cd <ws> && cat patch.txt",
  'cd <ws> && grep -r "Unable to load file" --include="*.py"',
  'cd <ws> && grep -n "class Ellipsis" astroid/nodes/node_classes.py -A 10',
  'cd <ws> && grep -r "from.*helpers import check_still_complete" src/',
  'cd <ws> && grep -n "imported_member" ./tests/unittest_raw_building.py -B 2 -A 10',
  'cd <ws> && grep -n "__init__\\.py" astroid/modutils.py -B2 -A2',
  "cd <ws> && git show 51f552ce --stat",
  "cd src && ls",
  "cd src && git status",
  "cd src/sub && cat ../a.py",
  "cd <ws>/src && cd sub && ls",
  "cd src; ls; cd <ws>; ls",
  "(cd tests && ls) && ls",
  "cd missing-folder && ls",
  "cd <ws> && ls 2>/dev/null",
  // find -exec of a read-only program
  'find . -name "*.py" -type f -exec grep -l "_golden_sect_DataFrame" {} \\;',
  'find ./pydicom/tests -name "*.py" -type f -exec grep -l "logging\\|logger" {} \\; | head -10',
  'find <ws> -type f -name "*.py" -exec grep -l "class Unknown" {} \\;',
  'find pydicom -name "*.py" -exec grep -l "class UID" {} \\;',
  'cd <ws> && find tests -name "*.py" -type f -exec grep -l "Unknown" {} \\;',
  'cd <ws> && find tests -name "*.py" -type f -exec grep -l "namespace" {} \\; | head -10',
  "find . -name '*.py' -exec grep -n TODO {} +",
  "find . -type f -execdir wc -l {} \\;",
  "find . -exec cat {} \\;",
  "find src -name '*.py' -exec sed -n 1,3p {} \\;",
  "find . -name x -exec ls -la {} \\; -print",
  'cd <ws> && grep -n "sys.modules\\[modname\\].__path__" ./astroid/x.py -B 5 -A 5',
  'cd <ws> && grep -B5 -A5 "without_ordering = self.ordering_parts.search" django/db/models/sql/compiler.py',
  // the everyday reads (the evidence's table (b))
  "cat patch.txt",
  'grep "FILE_UPLOAD_PERMISSIONS" django/conf/global_settings.py',
  'grep -r "def where" xarray',
  "ls tests",
  'find tests -name "*autoreload*"',
  'grep -n "test_reindl" ./pvlib/tests/test_irradiance.py -A 20',
  'grep -n "ghi" ./pvlib/irradiance.py | head -20',
  'grep -n "_golden_sect_DataFrame" ./pvlib/singlediode.py -B 5 -A 5',
  'grep -C 5 "genindex.html" reproduce_issue/_build/index.html',
  'grep -A 2 "def equals" django/db/models/sql/datastructures.py',
  'grep -r "def add_new" pydicom --include="*.py"',
  'nl -ba django/core/management/commands/flush.py | grep -C 5 "execute_sql_flush"',
  'grep -r "add_new" pydicom --include="*.py" | head -20',
  'grep -B5 -A5 "n=1" ./pvlib/tests/test_iam.py',
  'cat django/forms/models.py | grep -n "def apply_limit_choices_to_to_formfield" -A 10',
  'grep -n "class PyTypedField" sphinx/domains/python.py',
  'nl -ba lib/matplotlib/legend.py | grep -A 5 "def draw"',
  "ls -la <ws>/",
  "ls -R django/db/migrations",
  "head -n 50 django/db/models/sql/query.py",
  // git's read-only subcommands
  "git blame README.md",
  "git blame -L 10,20 README.md",
  "git rev-parse HEAD",
  "git rev-parse --show-toplevel",
  "git rev-parse --abbrev-ref HEAD",
  "git ls-files",
  "git ls-files -m src",
  "git grep foo",
  "git grep -n foo -- '*.py'",
  "git tag -l",
  "git tag",
  "git tag --list 'v1.*'",
  "git describe --tags",
  "git shortlog -sn",
  "git branch --list 'feat*'",
  "git remote",
  "git config --get user.name",
  "git config --get-all user.email",
  "git config --get branch.main.remote",
  // jq, awk, tree, --version
  "jq . package.json",
  "jq -r '.scripts | keys[]' package.json",
  "jq --arg name x '.[$name]' package.json",
  "jq -n --rawfile text README.md '$text'",
  "awk '{print $1}' README.md",
  "awk 'NR>486 && /def / {print NR, $0; exit}' a.py",
  "awk -F: '{ if ($3 > 100) print $1 }' a.txt",
  "awk -v n=3 'NR==n' a.txt",
  "awk '/a|b/ {n++} END {print n}' a.txt",
  "awk '{printf \"%s %d\\n\", $1, ($2 > 5)}' a.txt",
  "tree",
  "tree -L 2",
  "tree -a -I node_modules src",
  "node --version",
  "file README.md",
  "xxd README.md",
  "xxd -l 64 -c 16 a.bin",
  "od -c README.md",
  "hexdump -C README.md",
  "strings -n 8 a.bin",
  "cd src/ && ls",
  "git --version",
  // a substitution whose inner command is read-only, its output an operand or printed text
  "echo $(git log --oneline -1)",
  "echo $(ls)",
  'echo "$(pwd)"',
  "wc -l -- $(git ls-files)",
];

/** Each entry's dangerous variants: a file written, a program run, a folder outside. */
const dangerous = [
  // sed: w, W, e, r, R, in place, script files, unknown or abbreviated options
  "sed -n '1p;w /tmp/x' a.py",
  "sed -n 'w /tmp/x' a.py",
  "sed -n '1W /tmp/x' a.py",
  "sed -n 1e a.py",
  "sed 's/x/id/e' a.py",
  "sed 's/x/y/w /tmp/x' a.py",
  "sed '1r /etc/passwd' a.py",
  "sed '1R /etc/passwd' a.py",
  "sed -i '1d' a.py",
  "sed -ni '1p' a.py",
  "sed -n -i.bak 1p a.py",
  "sed --in-place 1p a.py",
  "sed --in-pl 1p a.py",
  "sed --in-place=.bak 1p a.py",
  "sed --follow-symlinks -i 1p a.py",
  "sed -f script.sed a.py",
  "sed --file=script.sed a.py",
  "sed --expr=1e a.py",
  "sed --quie 1p a.py",
  "sed -n -e 1p -e 'w /tmp/x' a.py",
  "sed -n --expression='1,2w /tmp/x' a.py",
  'sed -n "$S" a.py',
  "sed -n a.py",
  "sed -n '1{p;e id' a.py",
  "sed -n '1ihello' a.py",
  "cat a.py | sed -n 'w /tmp/x'",
  "sed -n 's/x/y/pw /tmp/x' a.py",
  // cd: outside, up, home, a substitution, a symlink out, after another cd
  "cd /etc && cat passwd",
  "cd .. && ls",
  "cd ../.. && ls",
  "cd <ws>/.. && ls",
  "cd && ls",
  "cd ~ && ls",
  "cd - && ls",
  "cd $(dirname x) && ls",
  'cd "$D" && ls',
  "cd etc-link && cat passwd",
  "cd etc-link/.. && ls",
  "cd src && cd ../.. && ls",
  "cd src && cd .. && cd .. && ls",
  "cd src && ls > listing.txt",
  "cd src x && ls",
  "cd -e src",
  "pushd src && ls",
  "while true; do cd src; done",
  // find: a program that writes or runs, interactive, writing primaries
  "find . -exec rm {} \\;",
  "find . -exec sh -c 'cat {}' \\;",
  "find . -exec bash -c id \\;",
  "find . -execdir rm {} +",
  "find . -ok cat {} \\;",
  "find . -okdir cat {} \\;",
  "find . -fprint /tmp/x",
  "find . -fprint0 /tmp/x",
  "find . -fprintf /tmp/x %p",
  "find . -fls /tmp/x",
  "find . -delete",
  "find . -exec sed -i 1d {} \\;",
  "find . -exec grep x {} + -delete",
  "find . -exec grep + x {} \\;",
  "find . -exec grep -f{} x \\;",
  "find $D -exec cat {} \\;",
  "find . -exec cat {}",
  "find . -exec \\;",
  "find . -exec xargs rm \\;",
  // git: subcommands that write or show secrets, options that run programs
  "git remote -v",
  "git config --list",
  "git config --get remote.origin.url",
  "git config --get http.https://example.com/.extraheader",
  "git config --get core.pager",
  "git config --get core.fsmonitor",
  "git config --get credential.helper",
  "git config user.name",
  "git config user.name x",
  "git config --get user.name x",
  "git config --get --show-origin user.name",
  "git tag v1",
  "git tag -d v1",
  "git tag -v v1",
  "git branch new",
  "git branch --list -D main",
  "git branch -l new",
  "git describe --dirty",
  "git grep -O foo",
  "git grep --open-files-in-pager=vim foo",
  "git grep --ext-grep foo",
  "git blame --contents=/etc/passwd a",
  "git rev-parse --parseopt",
  "git ls-files --format='%(objectname)' -z --recurse-submodules",
  // jq: nothing unknown
  "jq --unknown-option . a.json",
  "jq . $F",
  "jq -- . -L /tmp a.json",
  "jq . --from-file x.jq",
  // awk: system, redirects, pipes, getline, extensions, program files
  "awk 'BEGIN{system(\"id\")}'",
  "awk '{print > \"f\"}' a.txt",
  "awk '{print $1 >> \"/tmp/x\"}' a.txt",
  'awk \'{printf "%s", $1 > "/tmp/x"}\' a.txt',
  "awk '{print | \"sh\"}' a.txt",
  "awk '{print |& \"sh\"}' a.txt",
  "awk 'BEGIN {\"id\" | getline x; print x}'",
  "awk 'BEGIN {getline x < \"/etc/shadow\"}'",
  "awk '@load \"inplace\"; {print}' a.txt",
  "awk '@include \"x.awk\"' a.txt",
  "awk -f prog.awk a.txt",
  "awk -i inplace '{print}' a.txt",
  "awk -l filefuncs '{print}' a.txt",
  "awk -E prog.awk a.txt",
  "awk --exec=prog.awk a.txt",
  'awk "$P" a.txt',
  "awk '{print a++ / 2 > \"/tmp/x\"}' a.txt",
  "gawk '{print > \"/tmp/x\"}' a.txt",
  // tree: files it writes
  "tree -o out",
  "tree -oout",
  "tree -R -H . -o x",
  "tree -H .",
  "tree --output=x",
  "tree -aR",
  // file, xxd: decompressors, a magic file compiled, an output operand, reverse
  "file -z a.gz",
  "file -C -m magic",
  "file -p a",
  "xxd a.bin out.bin",
  "xxd -r a.hex a.bin",
  "xxd -r a.hex",
  // --version and --help of launchers and shims, and anything more
  "yarn --version",
  "pnpm --version",
  "corepack --version",
  "cargo --version",
  "rustup --version",
  "go version",
  "mvn --version",
  "gradle --version",
  "npx --version",
  "node --version x.js",
  "node --versio",
  "python3 --version -c 'import os'",
  // substitutions that run more, or become options
  "echo $(rm -rf x)",
  "ls $(echo -la)",
  "cat $(ls)",
  "echo $(sed -n 'w /tmp/x' a)",
  "$(echo ls)",
  "echo `ls`",
  "X=$(ls) && echo $X",
  "echo $(cat < /etc/shadow > x)",
];

describe("the read-only set on real reads", () => {
  it.each(realReads)("allows %j in the sandbox", async (command) => {
    expect(await decideCommand(inWorkspace(command), context)).toMatchObject({
      decision: "allow",
    });
  });

  it.each(dangerous)("asks before %j", async (command) => {
    expect(await decision(command)).toBe("ask");
  });

  it("allows none of it without the sandbox when a path leaves the workspace", async () => {
    for (const command of realReads.slice(0, 5))
      expect(
        (
          await decideCommand(`${inWorkspace(command)} /etc/hostname`, {
            ...context,
            sandboxed: false,
          })
        ).decision,
      ).toBe("ask");
  });

  it("asks before a substitution under --allow-bash when a deny rule is set", async () => {
    const rules = [{ effect: "deny" as const, words: ["git", "push"] }];
    expect(
      (await decideCommand("echo $(ls)", { ...context, rules, allowAll: true })).decision,
    ).toBe("ask");
  });

  it("names the entries that allowed a line", async () => {
    expect(await decideCommand("cd src && sed -n 1,5p a.py | nl -ba", context)).toEqual({
      decision: "allow",
      by: "read-only set: cd, sed, nl",
    });
  });

  it("allows --version and --help of a vetted program only when PATH finds the program itself", () => {
    const bin = join(workspace, "bin");
    const shims = join(workspace, "shims");
    mkdirSync(bin);
    mkdirSync(shims);
    copyFileSync(process.execPath, join(bin, "python3"));
    writeFileSync(join(shims, "node"), '#!/bin/sh\nexec asdf exec node "$@"\n');
    chmodSync(join(shims, "node"), 0o755);
    symlinkSync(join(bin, "python3"), join(shims, "mise"));
    symlinkSync(join(shims, "mise"), join(shims, "gcc"));
    const path = `${shims}:${bin}`;
    expect(versionOnly("python3", ["--version"], path)).toBe(true);
    expect(versionOnly("python3", ["--help"], path)).toBe(true);
    expect(versionOnly("python3", ["--version", "x"], path)).toBe(false);
    expect(versionOnly("python3", ["-c"], path)).toBe(false);
    // a shim script, a link to a shim program under another name, a relative folder first
    expect(versionOnly("node", ["--version"], path)).toBe(false);
    expect(versionOnly("gcc", ["--version"], path)).toBe(false);
    expect(versionOnly("python3", ["--version"], `.:${bin}`)).toBe(false);
    expect(versionOnly("python3", ["--version"], `:${bin}`)).toBe(false);
    // not vetted: launchers read the workspace first
    copyFileSync(process.execPath, join(bin, "yarn"));
    expect(versionOnly("yarn", ["--version"], bin)).toBe(false);
  });
});
