import { type Rule, ruleWords } from "../rules/rule.js";
import { type HookCommand, parseHooks } from "./hooks.js";
import type { ConfigLayer } from "./load.js";
import { ConfigError } from "./parse.js";
import type { ConfigFile } from "./schema.js";
import { sizeInBytes } from "./size.js";

/** A value and the file it came from. */
export interface FromFile<T> {
  value: T;
  file: string;
}

export type Provider = NonNullable<ConfigFile["provider"]>;
export type Thinking = NonNullable<ConfigFile["thinking"]>;
export type SandboxMode = "auto" | "required" | "off";

/**
 * What the configuration files say, the project file over the user file, each value with its
 * file. Lists add up (hidden paths, deny rules, skills folders); limits take the lower.
 */
export interface FileSettings {
  provider?: FromFile<Provider>;
  model?: FromFile<string>;
  baseURL?: FromFile<string>;
  thinking?: FromFile<Thinking>;
  contextWindow?: FromFile<number>;
  maxTurns?: FromFile<number>;
  sandboxMode?: FromFile<SandboxMode>;
  processes?: FromFile<number>;
  memoryBytes?: FromFile<number>;
  fileBytes?: FromFile<number>;
  /** Absolute paths, with the file that names each. */
  hide: FromFile<string>[];
  rules: FromFile<Rule>[];
  mcpServers?: FromFile<NonNullable<ConfigFile["mcpServers"]>>;
  /** Skills folders: the user file's hold user skills, the project file's project skills. */
  skills: (FromFile<string> & { scope: "user" | "project" })[];
  /** Command hooks, the user file's first (each names its file). */
  hooks: HookCommand[];
  /** A line each for a hook that is never fired (an unknown event or handler type). */
  hookWarnings: string[];
}

/** The limits a project file may only lower: what holds without one. */
export interface Ceilings {
  processes: number;
  memoryBytes: number;
  fileBytes: number;
}

const scalars = ["provider", "model", "baseURL", "thinking", "contextWindow", "maxTurns"] as const;

/**
 * Merges the user layer and the project layer (already limited to what a project may set). A
 * project limit above the user's (or the default) is refused: a project only lowers limits.
 * `resolvePath` makes a listed path absolute for the file it is in.
 */
export function mergeConfig(
  user: ConfigLayer | undefined,
  project: ConfigLayer | undefined,
  ceilings: Ceilings,
  resolvePath: (path: string, layer: ConfigLayer, field: string) => string,
): FileSettings {
  const settings: FileSettings = { hide: [], rules: [], skills: [], hooks: [], hookWarnings: [] };
  const set = settings as unknown as Record<string, unknown>;
  for (const layer of [user, project]) {
    if (layer === undefined) continue;
    const { values, file } = layer;
    for (const name of scalars) {
      if (values[name] !== undefined) set[name] = { value: values[name], file };
    }
    if (values.sandbox?.mode !== undefined)
      settings.sandboxMode = { value: values.sandbox.mode, file };
    for (const path of values.sandbox?.hide ?? [])
      settings.hide.push({ value: resolvePath(path, layer, "sandbox.hide"), file });
    for (const path of values.skills?.paths ?? [])
      settings.skills.push({
        value: resolvePath(path, layer, "skills.paths"),
        file,
        scope: layer === project ? "project" : "user",
      });
    for (const effect of ["allow", "deny"] as const) {
      for (const text of values.rules?.[effect] ?? [])
        settings.rules.push({ value: { effect, words: ruleWords(text) }, file });
    }
    if (values.mcpServers !== undefined) settings.mcpServers = { value: values.mcpServers, file };
    const hooks = parseHooks(values.hooks, file, layer === project ? "project" : "user");
    settings.hooks.push(...hooks.hooks);
    settings.hookWarnings.push(...hooks.warnings);
    mergeLimits(settings, layer, layer === project, ceilings);
  }
  return settings;
}

function mergeLimits(
  settings: FileSettings,
  layer: ConfigLayer,
  narrowOnly: boolean,
  ceilings: Ceilings,
): void {
  const limits = layer.values.sandbox?.limits;
  const processes = limits?.processes;
  const memory = limits?.memory === undefined ? undefined : sizeInBytes(limits.memory);
  const fileSize = limits?.fileSize === undefined ? undefined : sizeInBytes(limits.fileSize);
  const fields = { processes: "processes", memoryBytes: "memory", fileBytes: "fileSize" } as const;
  for (const [name, value] of [
    ["processes", processes],
    ["memoryBytes", memory],
    ["fileBytes", fileSize],
  ] as const) {
    if (value === undefined) continue;
    const current = settings[name]?.value ?? ceilings[name];
    if (narrowOnly && value > current) {
      const field = fields[name];
      throw new ConfigError(
        `${layer.file}: sandbox.limits.${field} cannot be raised by a project file (${value} is above ${current})`,
      );
    }
    settings[name] = { value, file: layer.file };
  }
}
