import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { defaultModel } from "../app/provider.js";
import { type LoadedConfig, userConfigFile } from "../config/load.js";
import type { FileSettings } from "../config/merge.js";
import { ConfigError, parseConfigText } from "../config/parse.js";
import { within } from "../paths.js";
import { showRule } from "../rules/rule.js";
import { defaultLimits } from "../sandbox/bwrap.js";
import { stateHome } from "../session/store.js";
import { loadTrust, type TrustEntry } from "../trust/trust.js";
import { visible } from "../visible.js";
import { type CliArgs, exitCodes, UsageError } from "./args.js";
import { type Configured, mergedSettings } from "./configured.js";

type Out = (text: string) => void;

/** `mini-agent config`: every effective value and where it came from; `config path`: the user file. */
export function configCommand(
  { args, config, files }: Configured,
  env: NodeJS.ProcessEnv,
  out: Out,
): number {
  if (args.configCommand === "path") {
    out(`${visible(userConfigFile(stateHome(env)))}\n`);
    return exitCodes.done;
  }
  out(
    configLines(args, config, files)
      .map((line) => `${visible(line)}\n`)
      .join(""),
  );
  return exitCodes.done;
}

/** The lines of `mini-agent config`: name, value, source. */
export function configLines(args: CliArgs, config: LoadedConfig, files: FileSettings): string[] {
  const source = (field: keyof CliArgs["sources"]) => args.sources[field] ?? "default";
  const row = (name: string, value: string, from: string) =>
    `${name.padEnd(26)}${value}  (${from})`;
  const limits = args.sandboxLimits;
  const flagRules = args.rules.slice(files.rules.length);
  const flagHides = args.sandboxHide.slice(files.hide.length);
  return [
    row("user file", config.user ? "read" : "none", userConfigFile(config.stateHome)),
    row("project file", projectState(config), config.project.file),
    row("provider", args.provider, source("provider")),
    row("model", args.model ?? defaultModel, source("model")),
    row("baseURL", args.baseURL ?? "(the provider's)", source("baseURL")),
    row("thinking", args.thinking ?? "(the model's default)", source("thinking")),
    row(
      "contextWindow",
      args.contextWindow?.toString() ?? "(the model's)",
      source("contextWindow"),
    ),
    row("maxTurns", String(args.maxTurns), source("maxTurns")),
    row("sandbox.mode", args.sandbox, source("sandbox")),
    row(
      "sandbox.limits.processes",
      String(limits.processes ?? defaultLimits.processes),
      source("processes"),
    ),
    row(
      "sandbox.limits.memory",
      String(limits.memoryBytes ?? defaultLimits.memoryBytes),
      source("memory"),
    ),
    row(
      "sandbox.limits.fileSize",
      String(limits.fileBytes ?? defaultLimits.fileBytes),
      source("fileSize"),
    ),
    ...files.hide.map((path) => row("sandbox.hide", path.value, path.file)),
    ...flagHides.map((path) => row("sandbox.hide", path, "--sandbox-hide")),
    ...files.rules.map(({ value, file }) => row("rules", showRule(value), file)),
    ...flagRules.map((rule) => row("rules", showRule(rule), `--${rule.effect}`)),
    ...Object.keys(files.mcpServers?.value ?? {}).map((name) =>
      row("mcpServers", name, files.mcpServers?.file ?? ""),
    ),
    ...files.skills.map((path) => row("skills.paths", path.value, path.file)),
    ...files.hooks.map((hook) =>
      row(
        "hooks",
        `${hook.event}${hook.matcher === undefined ? "" : ` [${hook.matcher}]`} ${hook.command} (timeout ${hook.timeoutSeconds} s${hook.sandboxed ? ", in the sandbox" : ""})`,
        hook.file,
      ),
    ),
    ...files.hookWarnings.map((warning) => `${"hooks (never fired)".padEnd(26)}${warning}`),
  ];
}

function projectState(config: LoadedConfig): string {
  switch (config.project.state) {
    case "none":
      return "none";
    case "unusable":
      return `unusable, skipped: ${config.project.problem.slice(config.project.file.length + 2)}`;
    case "trusted":
      return "trusted, read";
    case "untrusted":
      return "not trusted, not read (mini-agent trust)";
  }
}

/** One thing of the project `mini-agent trust` approves: its entry, and what it is. */
interface Trustable {
  entry: TrustEntry;
  /** What it is, for the listing: a file, a server of `.mcp.json`, a skill. */
  shown: string;
}

/**
 * The project's configuration file when the trust record does not hold its content, checked as
 * a run would use it, over the user's file: a bad or forbidden field, or a limit above the
 * user's, is one line (`not trusted`), never trusted into a project where every run stops. With
 * it, the settings a run would have once it is trusted (its skills folders are looked at now).
 */
async function untrustedOfProject(
  config: LoadedConfig,
): Promise<{ item?: Trustable; settings?: FileSettings }> {
  const project = config.project;
  if (project.state === "unusable") throw new UsageError(`${project.problem} (not trusted)`);
  if (project.state !== "untrusted") return {};
  try {
    const values = parseConfigText(project.text, project.file, "project");
    const settings = mergedSettings(config, { file: project.file, values });
    // A folder inside by its name may be a link out: where it really is must be inside too.
    for (const folder of settings.skills) {
      if (folder.scope !== "project") continue;
      const real = await realpath(folder.value).catch(() => undefined);
      if (real !== undefined && !within(config.root, real))
        throw new ConfigError(
          `${project.file}: skills.paths must name folders inside the project, not ${JSON.stringify(folder.value)} (a link to ${real})`,
        );
    }
    return { item: { entry: project.entry, shown: project.file }, settings };
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`${error.message} (not trusted)`);
    throw error;
  }
}

/**
 * The rest of what the project has now that the trust record does not hold: each `.mcp.json`
 * entry (with the workspace files its command line names) and each valid project skill, the
 * configured skills folders included.
 */
async function untrustedOfWorkspace(
  config: LoadedConfig,
  workspace: string,
  settings: FileSettings,
): Promise<{ items: Trustable[]; problems: string[] }> {
  const [{ projectMcpServers }, { splitByTrust }, { discoverSkills }] = await Promise.all([
    import("../app/mcp-sources.js"),
    import("../mcp/config.js"),
    import("../skills/discover.js"),
  ]);
  const trust = await loadTrust(config.stateHome, config.root);
  const mcp = await projectMcpServers(config.root, workspace);
  const { untrusted: servers } = splitByTrust(mcp.servers, trust);
  const skills = await discoverSkills({
    workspace,
    home: homedir(),
    state: config.stateHome,
    trust,
    folders: settings.skills.map(({ value, scope }) => ({ path: value, scope })),
    uncached: true,
  });
  const hooks = await untrustedHooks(config, workspace, settings);
  const items = [
    ...hooks,
    ...servers.map((server) => ({
      entry: { kind: "mcp" as const, name: server.name, hash: server.hash },
      shown: `${server.name} of ${server.file}`,
    })),
    ...skills.untrusted.map((skill) => ({
      entry: skill.entry,
      shown: `${skill.name} (${skill.path})`,
    })),
  ];
  return { items, problems: mcp.problems };
}

/**
 * The project's hooks with the files they run, when the trust record does not hold them as they
 * are now (docs/hooks.md).
 */
async function untrustedHooks(
  config: LoadedConfig,
  workspace: string,
  settings: FileSettings,
): Promise<Trustable[]> {
  const project = settings.hooks.filter((hook) => hook.scope === "project");
  if (project.length === 0) return [];
  const { projectHooksTrust, shownHooks } = await import("../hooks/trust.js");
  const folders = { root: config.root, workspace, env: process.env };
  const { entry, coverage } = await projectHooksTrust(project, folders);
  const trust = await loadTrust(config.stateHome, config.root);
  if (trust.isTrusted(entry.kind, entry.name, entry.hash)) return [];
  return [{ entry, shown: `hooks of ${project[0]?.file ?? ""}: ${shownHooks(project, coverage)}` }];
}

/**
 * `mini-agent trust`: approves everything of the project that is not trusted yet, the project
 * file checked first (a file with a forbidden field is refused, and nothing is trusted);
 * `--revoke` forgets every approval of this project.
 */
export async function trustCommand(
  { args, config, files, workspace }: Configured,
  out: Out,
): Promise<number> {
  const trust = await loadTrust(config.stateHome, config.root);
  if (args.trustCommand === "revoke") {
    const count = trust.entries().length;
    await trust.revoke();
    out(
      `revoked ${count} trusted ${count === 1 ? "entry" : "entries"} of ${visible(config.root)}\n`,
    );
    return exitCodes.done;
  }
  const project = await untrustedOfProject(config);
  const rest = await untrustedOfWorkspace(config, workspace, project.settings ?? files);
  // What cannot be trusted as it is (a broken .mcp.json entry, or the whole file) is said so.
  for (const problem of rest.problems)
    process.stderr.write(`mini-agent: warning: ${visible(problem)} (not trusted)\n`);
  const pending = [...(project.item ? [project.item] : []), ...rest.items];
  if (pending.length === 0) {
    const all = rest.problems.length === 0 ? "everything it has is trusted" : "nothing else";
    out(`nothing to trust in ${visible(config.root)}: ${all}\n`);
    return exitCodes.done;
  }
  await trust.trust(pending.map((item) => item.entry));
  out(pending.map((item) => `trusted ${item.entry.kind}: ${visible(item.shown)}\n`).join(""));
  return exitCodes.done;
}
