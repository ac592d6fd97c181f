import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { bashTool } from "../src/tools/bash.js";

import { realSandbox, useOutsideFolders } from "./support/sandbox.js";

/**
 * Credential stores and other projects' sessions, in a fake HOME outside /tmp (which is private
 * inside the sandbox anyway, so a HOME there would prove nothing), each holding a canary.
 */

const outsideFolder = useOutsideFolders();

const sandboxed = await realSandbox();

/**
 * Files of a home folder: credential stores (in a hidden folder, or hidden files), another
 * project's session under the default state folder, and ordinary files.
 */
const inHiddenFolders = [
  ".ssh/id_ed25519",
  ".aws/credentials",
  ".config/gcloud/credentials.db",
  ".kube/config",
  ".gnupg/private-keys-v1.d/key.key",
  ".azure/msal_token_cache.json",
  ".config/gh/hosts.yml",
  ".mini-agent/sessions/other-project-0123456789ab/s.jsonl",
];
const hiddenFiles = [".netrc", ".docker/config.json", ".git-credentials", ".npmrc", ".pgpass"];
const stores = [...inHiddenFolders, ...hiddenFiles];
const ordinary = [".bashrc", ".config/editor/settings", ".docker/daemon.json"];

async function fakeHome(): Promise<string> {
  const home = await outsideFolder("home");
  for (const file of [...stores, ...ordinary]) {
    await mkdir(dirname(join(home, file)), { recursive: true });
    await writeFile(join(home, file), `canary ${file}`);
  }
  return home;
}

/** A bash command printing `path=[content]` for each path under $HOME, errors included. */
const catEach = (paths: string[]) =>
  `for f in ${paths.join(" ")}; do printf '%s=[%s]\\n' "$f" "$(cat "$HOME/$f" 2>&1)"; done`;

/** What `catEach` prints for the stores: hidden folders are empty, hidden files read empty. */
const hiddenView = (home: string) => [
  ...inHiddenFolders.map((path) => `${path}=[cat: ${home}/${path}: No such file or directory]`),
  ...hiddenFiles.map((path) => `${path}=[]`),
];

const env = (home: string, extra: NodeJS.ProcessEnv = {}) => ({
  PATH: process.env.PATH,
  HOME: home,
  ...extra,
});

describe.skipIf(!sandboxed)("what the sandbox hides", () => {
  it("hides every credential store and the state folder; ordinary files stay readable", async () => {
    const home = await fakeHome();
    const root = join(home, "project");
    await mkdir(root);
    const bash = bashTool(root, { env: env(home), sandbox: { mode: "required" } });
    const result = await bash.execute({ command: catEach([...stores, ...ordinary]) });
    expect(result.content.split("\n")).toEqual([
      ...hiddenView(home),
      ...ordinary.map((file) => `${file}=[canary ${file}]`),
      "[exit code 0]",
    ]);
    const listing = await bash.execute({ command: "ls -A ~/.ssh ~/.aws ~/.mini-agent" });
    expect(listing.content).toBe(
      `${home}/.aws:\n\n${home}/.mini-agent:\n\n${home}/.ssh:\n[exit code 0]`,
    );
  });

  it("hides $MINI_AGENT_HOME wherever it is, and the paths the user adds", async () => {
    const home = await fakeHome();
    const state = join(home, "elsewhere-state");
    await mkdir(join(state, "sessions"), { recursive: true });
    await writeFile(join(state, "sessions", "s.jsonl"), "canary session");
    await writeFile(join(home, "vault.txt"), "canary vault");
    await mkdir(join(home, "keys"));
    await writeFile(join(home, "keys", "k"), "canary key");
    const root = join(home, "project");
    await mkdir(root);
    const bash = bashTool(root, {
      env: env(home, { MINI_AGENT_HOME: state }),
      sandbox: { mode: "required", hide: [join(home, "vault.txt"), join(home, "keys")] },
    });
    const result = await bash.execute({
      command: catEach(["elsewhere-state/sessions/s.jsonl", "vault.txt", "keys/k"]),
    });
    expect(result.content).toBe(
      [
        `elsewhere-state/sessions/s.jsonl=[cat: ${state}/sessions/s.jsonl: No such file or directory]`,
        "vault.txt=[]",
        `keys/k=[cat: ${home}/keys/k: No such file or directory]`,
        "[exit code 0]",
      ].join("\n"),
    );
    expect(await readFile(join(home, "vault.txt"), "utf8")).toBe("canary vault");
  });

  it("keeps a workspace inside a hidden folder usable while its siblings stay hidden", async () => {
    const home = await fakeHome();
    const root = join(home, ".aws", "project");
    await mkdir(root);
    await writeFile(join(root, "notes.txt"), "workspace file\n");
    const bash = bashTool(root, { env: env(home), sandbox: { mode: "required" } });
    const result = await bash.execute({
      command: `cat notes.txt; echo made > new.txt; ${catEach([".aws/credentials"])}`,
    });
    expect(result.content).toBe(
      `workspace file\n.aws/credentials=[cat: ${home}/.aws/credentials: No such file or directory]\n[exit code 0]`,
    );
    expect(await readFile(join(root, "new.txt"), "utf8")).toBe("made\n");
  });

  it("hides the stores inside a workspace that is the home folder itself", async () => {
    const home = await fakeHome();
    const bash = bashTool(home, { env: env(home), sandbox: { mode: "required" } });
    const result = await bash.execute({
      command: `${catEach([".ssh/id_ed25519", ".netrc", ".bashrc"])}; echo x > mine.txt`,
    });
    expect(result.content).toBe(
      [
        `.ssh/id_ed25519=[cat: ${home}/.ssh/id_ed25519: No such file or directory]`,
        ".netrc=[]",
        ".bashrc=[canary .bashrc]",
        "[exit code 0]",
      ].join("\n"),
    );
    expect(await readFile(join(home, "mine.txt"), "utf8")).toBe("x\n");
    expect(await readFile(join(home, ".netrc"), "utf8")).toBe("canary .netrc");
  });
});
