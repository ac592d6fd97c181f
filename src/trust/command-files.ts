import { constants } from "node:fs";
import { access, readFile, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { within } from "../paths.js";

/**
 * What a command line will run and load from the folders the model can write, found the way the
 * program does it, so trusting the command can cover those files by content (an MCP server's
 * entry; a hook's command later).
 *
 * - The program itself: a word with a `/` from the working folder, any other through the `PATH`
 *   the command runs with (relative entries from the working folder, as the process sees them).
 * - Node (`node`, `nodejs`): its script and each `--require`/`-r`/`--import`/`--loader`/
 *   `--experimental-loader` value, in its argv and in `NODE_OPTIONS`, resolved as node resolves a
 *   main module (the file, then `.js`, `.json`, `.node`, `.mjs`, `.cjs`, then a folder's
 *   `package.json` `main` and `index.*`); an `--env-file` too.
 * - A shell given a script file runs that file.
 * - Any other word, and each `--flag=VALUE`'s value, in the arguments and the `env` values: a file.
 *
 * Each path tried before the one found counts too while it is absent (`present: false`): a file
 * the model creates there (`srv` before `srv.js`, `bin/node` before `/usr/bin/node`) would run
 * instead. Where what runs cannot be known from the command line (a shell's `-c` text, node's
 * `-e`/`-p`, an interpreter this does not follow, a module node finds in `node_modules`), `unknown`
 * says so in words: the model may be able to change what it runs.
 */

export interface CommandToResolve {
  command: string;
  args: readonly string[];
  /** The variables the command line itself sets: their values may name files. */
  env: Readonly<Record<string, string>>;
  /** The environment it inherits: `PATH` and `NODE_OPTIONS` come from here unless `env` sets them. */
  inherited: Readonly<Record<string, string | undefined>>;
  /** Its working folder, absolute. */
  cwd: string;
}

/** The folders the model can write: files elsewhere are not the model's to change. */
export interface WritableFolders {
  root: string;
  workspace: string;
}

export interface CommandFile {
  /** The real path (case and links as the file system has them), or the path tried when absent. */
  path: string;
  present: boolean;
}

export interface ResolvedCommand {
  /** Each file in the writable folders that runs, is loaded or is read as named, in order. */
  files: CommandFile[];
  /** Why what the command runs is not known in full, a phrase each (none when it is). */
  unknown: string[];
}

/** The extensions node tries for a main module or a `--require` value, in its order. */
const NODE_EXTENSIONS = ["", ".js", ".json", ".node", ".mjs", ".cjs"];
const NODE_INDEX = ["index.js", "index.json", "index.node", "index.mjs", "index.cjs"];
/** Node options whose value is a module node loads before the script. */
const NODE_PRELOADS = ["--require", "-r", "--import", "--loader", "--experimental-loader"];
/** Node options whose value is a file node reads. */
const NODE_FILES = ["--env-file", "--env-file-if-exists"];
/** Node options whose value is code node runs. */
const NODE_CODE = ["--eval", "-e", "--print", "-p"];
/** Other node options that take the next word as their value. */
const NODE_VALUED = ["--input-type", "--title", "--conditions", "-C", "--inspect-port"];
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox"]);
/** Programs that run code they find themselves (a script, a package, an image): not followed. */
const INTERPRETERS =
  /^(python[\d.]*|pypy[\d.]*|deno|bun|bunx|npx|npm|pnpm|pnpx|yarn|uv|uvx|pipx|ruby|perl|php|java|dotnet|go|cargo|tsx|ts-node|env|xargs|docker|podman)$/;

export async function resolveCommand(
  line: CommandToResolve,
  folders: WritableFolders,
): Promise<ResolvedCommand> {
  const resolver = new Resolver(line, await realFolders(folders));
  await resolver.run();
  return { files: resolver.files, unknown: resolver.unknown };
}

class Resolver {
  readonly files: CommandFile[] = [];
  readonly unknown: string[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly line: CommandToResolve,
    private readonly folders: WritableFolders,
  ) {}

  async run(): Promise<void> {
    const { command, args, env } = this.line;
    const program = await this.program(command);
    const name = basename(program ?? command).toLowerCase();
    if (/^node(js)?[\d.]*$/.test(name)) {
      await this.node(args, this.variable("NODE_OPTIONS"));
    } else if (SHELLS.has(name)) {
      await this.shell(name, args);
    } else {
      if (INTERPRETERS.test(name)) {
        this.unknown.push(`${name} runs what it finds itself, which mini-agent does not follow`);
      }
      await this.words(args);
    }
    // An env value names files too: PYTHONSTARTUP=x.py.
    await this.words(Object.values(env).flatMap((value) => value.split(/\s+/)));
  }

  private variable(name: string): string | undefined {
    const { env, inherited } = this.line;
    return Object.hasOwn(env, name) ? env[name] : inherited[name];
  }

  /** The program a command word runs: a path, or the first executable file on `PATH`. */
  private async program(command: string): Promise<string | undefined> {
    if (command.includes("/")) {
      await this.tried(resolve(this.line.cwd, command), true);
      return command;
    }
    const path = this.variable("PATH") ?? "";
    for (const entry of path.split(":")) {
      const candidate = resolve(this.line.cwd, entry === "" ? "." : entry, command);
      if (await executable(candidate)) {
        await this.tried(candidate, true);
        return candidate;
      }
      await this.tried(candidate, false);
    }
    return undefined;
  }

  private async node(args: readonly string[], options: string | undefined): Promise<void> {
    await this.nodeOptions(
      (options ?? "").split(/\s+/).filter((word) => word !== ""),
      false,
    );
    const rest = await this.nodeOptions(args, true);
    const [script, ...scriptArgs] = rest;
    if (script !== undefined && script !== "-") await this.module(script);
    await this.words(scriptArgs);
  }

  /** Reads node's options; returns the words from the script on (none in `NODE_OPTIONS`). */
  private async nodeOptions(words: readonly string[], argv: boolean): Promise<readonly string[]> {
    for (let i = 0; i < words.length; i++) {
      const word = words[i] ?? "";
      if (word === "--") return words.slice(i + 1);
      if (!word.startsWith("-") || word === "-") return argv ? words.slice(i) : [];
      const equals = word.indexOf("=");
      const flag = equals > 0 ? word.slice(0, equals) : word;
      const short = /^-[rpeC]./.test(word) && equals < 0 ? word.slice(0, 2) : undefined;
      const takes = [...NODE_PRELOADS, ...NODE_FILES, ...NODE_CODE, ...NODE_VALUED];
      let value: string | undefined;
      if (short !== undefined) value = word.slice(2);
      else if (equals > 0) value = word.slice(equals + 1);
      else if (takes.includes(flag)) value = words[++i];
      const option = short ?? flag;
      if (NODE_CODE.includes(option)) {
        this.unknown.push(
          `node runs the code of its ${option} option, which mini-agent does not follow`,
        );
      } else if (value !== undefined && NODE_PRELOADS.includes(option)) {
        await this.module(value, option);
      } else if (value !== undefined && NODE_FILES.includes(option)) {
        await this.tried(resolve(this.line.cwd, value), false);
      }
    }
    return [];
  }

  /** A module node loads by this specifier: a path resolved as node does, or a package. */
  private async module(specifier: string, option?: string): Promise<void> {
    const path = specifier.startsWith("file:") ? fileUrlPath(specifier) : specifier;
    const relativeOrAbsolute = /^\.\.?(\/|$)/.test(path) || isAbsolute(path);
    if (option !== undefined && !relativeOrAbsolute) {
      this.unknown.push(
        `node loads ${JSON.stringify(specifier)} (${option}) from node_modules, which mini-agent does not follow`,
      );
      return;
    }
    await this.nodeFile(resolve(this.line.cwd, path));
  }

  /** Node's main-module resolution of `path`: the file with each extension, then a folder. */
  private async nodeFile(path: string, depth = 0): Promise<boolean> {
    for (const extension of NODE_EXTENSIONS) {
      if (await this.tried(`${path}${extension}`, false)) return true;
    }
    if (!(await isFolder(path)) || depth > 2) return false;
    const manifest = join(path, "package.json");
    if (await this.tried(manifest, false)) {
      const main = await mainOf(manifest);
      if (main !== undefined && (await this.nodeFile(resolve(path, main), depth + 1))) return true;
    }
    for (const index of NODE_INDEX) if (await this.tried(join(path, index), false)) return true;
    return false;
  }

  private async shell(name: string, args: readonly string[]): Promise<void> {
    const firstWord = args.findIndex((word) => !word.startsWith("-") && !word.startsWith("+"));
    const options = firstWord < 0 ? args : args.slice(0, firstWord);
    if (options.some((word) => /^-[A-Za-z]*c/.test(word))) {
      this.unknown.push(`${name} runs the text of its -c option, which mini-agent does not follow`);
      // Its words may still name files: those are covered as far as they go.
      await this.words(args.flatMap((word) => word.split(/\s+/)));
      return;
    }
    const [script, ...rest] = firstWord < 0 ? [] : args.slice(firstWord);
    if (script !== undefined) await this.tried(resolve(this.line.cwd, script), false);
    await this.words(rest);
  }

  /** Each word, and each `--flag=VALUE`'s value, that is a file in the writable folders. */
  private async words(words: readonly string[]): Promise<void> {
    for (const word of words) {
      if (word === "") continue;
      await this.existing(resolve(this.line.cwd, word));
      const equals = word.indexOf("=");
      if (word.startsWith("-") && equals > 0 && equals < word.length - 1) {
        await this.existing(resolve(this.line.cwd, word.slice(equals + 1)));
      }
    }
  }

  private async existing(path: string): Promise<void> {
    const real = await realpath(path).catch(() => undefined);
    if (real !== undefined && (await isFile(real))) this.add(real, true);
  }

  /**
   * A path tried: true when it is a file (kept when in the writable folders; `executableOnly`: an
   * executable one); an absent one in those folders is kept as absent.
   */
  private async tried(path: string, executableOnly: boolean): Promise<boolean> {
    const real = await realpath(path).catch(() => undefined);
    if (real !== undefined && (await isFile(real))) {
      if (executableOnly && !(await executable(real))) return false;
      this.add(real, true);
      return true;
    }
    if (real === undefined) {
      const parent = await realpath(dirname(path)).catch(() => dirname(path));
      this.add(join(parent, basename(path)), false);
    }
    return false;
  }

  private add(path: string, present: boolean): void {
    const { root, workspace } = this.folders;
    if (this.seen.has(path) || (!within(root, path) && !within(workspace, path))) return;
    this.seen.add(path);
    this.files.push({ path, present });
  }
}

async function realFolders(folders: WritableFolders): Promise<WritableFolders> {
  const real = (path: string) => realpath(path).catch(() => path);
  return { root: await real(folders.root), workspace: await real(folders.workspace) };
}

const isFile = (path: string) =>
  stat(path).then(
    (info) => info.isFile(),
    () => false,
  );

const isFolder = (path: string) =>
  stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );

async function executable(path: string): Promise<boolean> {
  if (!(await isFile(path))) return false;
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** A package's `main`, when its `package.json` names one. */
async function mainOf(manifest: string): Promise<string | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(manifest, "utf8"));
    const main = (parsed as { main?: unknown } | null)?.main;
    return typeof main === "string" && main !== "" ? main : undefined;
  } catch {
    return undefined;
  }
}

function fileUrlPath(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname);
  } catch {
    return url;
  }
}
