import { ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import { firstDuplicateKey } from "../json-duplicates.js";
import { parseMcpConfig } from "../mcp/config.js";
import { RuleError, ruleWords } from "../rules/rule.js";
import { isSecretVariable } from "../secrets.js";
import { MIN_FILE_SIZE, MIN_MEMORY } from "./bounds.js";
import {
  type ConfigFile,
  ConfigSchema,
  elementValues,
  expectedValues,
  projectFields,
} from "./schema.js";
import { sizeInBytes } from "./size.js";

/** A configuration file that cannot be used: one line naming the file, the field and why. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export type ConfigPlace = "user" | "project";

/**
 * Checks the text of a configuration file and returns its values, or throws one `ConfigError`
 * line: not JSON, a value that looks like a key, a field a project file may not set, a value of
 * the wrong kind, or a rule that cannot be read.
 */
export function parseConfigText(text: string, file: string, place: ConfigPlace): ConfigFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw new ConfigError(`${file}: must be a JSON object`);
  const twice = firstDuplicateKey(text);
  if (twice !== undefined) throw new ConfigError(`${file}: ${twice} is given twice`);
  checkShape(value, file);
  refuseKeys(value, file);
  if (place === "project") checkProjectFields(value, file);
  checkSchema(value, file);
  const config = value as ConfigFile;
  checkRules(config, file);
  checkMemory(config, file);
  return config;
}

/** Deeper than any field of the schema nests (an MCP server's `env` is the deepest, at 4). */
export const MAX_CONFIG_DEPTH = 16;

/**
 * Refuses what no configuration holds before anything walks the value: nesting deeper than
 * `MAX_CONFIG_DEPTH` levels (checked without recursion), and a control character in a name or a
 * string (it would reach a terminal or a request as it is).
 */
function checkShape(value: unknown, file: string): void {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: "", depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.depth > MAX_CONFIG_DEPTH) {
      throw new ConfigError(`${file}: nested deeper than ${MAX_CONFIG_DEPTH} levels`);
    }
    const item = next.value;
    if (typeof item === "string" && CONTROL.test(item)) {
      throw new ConfigError(`${file}: ${next.path || "a value"} holds a control character`);
    }
    if (item === null || typeof item !== "object") continue;
    for (const [name, child] of Object.entries(item)) {
      const path = Array.isArray(item)
        ? `${next.path}[${name}]`
        : next.path === ""
          ? name
          : `${next.path}.${name}`;
      if (CONTROL.test(name)) {
        throw new ConfigError(
          `${file}: the name ${JSON.stringify(name)} holds a control character`,
        );
      }
      stack.push({ value: child, path, depth: next.depth + 1 });
    }
  }
}

// C0 controls, DEL and C1 controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Throws one line naming the first value of `value` that looks like a credential, if any. */
export function refuseKeys(value: unknown, file: string): void {
  const key = keyLooking(value, "");
  if (key !== undefined) {
    throw new ConfigError(
      `${file}: ${key} looks like an API key: keys belong in the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, or \${VAR} in an MCP server's env), never in a file`,
    );
  }
}

/** The first string that looks like a credential, by its path (`mcpServers.gh.env.TOKEN`). */
function keyLooking(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return looksLikeKey(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = keyLooking(item, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
  } else if (isObject(value)) {
    for (const [name, item] of Object.entries(value)) {
      const found = keyLooking(item, path === "" ? name : `${path}.${name}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * A key's usual shapes: a provider's prefix (`sk-`, `sk-ant-`, GitHub's `ghp_`, Slack's `xoxb-`,
 * AWS's `AKIA…`), or what the one secrets rule finds in a value (a URL with a password, a
 * `?key=` pair, a webhook URL). A `${VAR}` reference is no key (`http://me:${PW}@host`): it is
 * read as empty, and a `${VAR:-default}` as its default, which the file does hold.
 */
export function looksLikeKey(written: string): boolean {
  const value = written.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::-([^}]*))?\}/g, (_, fallback) =>
    typeof fallback === "string" ? fallback : "",
  );
  if (/^(sk|rk|pk)-[A-Za-z0-9_-]{8,}/.test(value)) return true;
  if (/^(gh[pousr]_|github_pat_|xox[abpr]-|glpat-)[A-Za-z0-9_-]{8,}/.test(value)) return true;
  if (/^AKIA[0-9A-Z]{16}$/.test(value)) return true;
  return isSecretVariable("VALUE", value);
}

/** Every path of a leaf (a value that is not an object) in the document. */
function leafPaths(value: Record<string, unknown>, prefix: string): string[] {
  return Object.entries(value).flatMap(([name, item]) => {
    const path = prefix === "" ? name : `${prefix}.${name}`;
    return isObject(item) ? leafPaths(item, path) : [path];
  });
}

function checkProjectFields(value: Record<string, unknown>, file: string): void {
  for (const path of leafPaths(value, "")) {
    // A project field, or an object holding some (the schema then says what it must be).
    if (projectFields.some((field) => field === path || field.startsWith(`${path}.`))) continue;
    // Hooks are checked whole (`parseHooks`), whatever their events.
    if (path.startsWith("hooks.")) continue;
    const top = path.split(".")[0] ?? path;
    if (
      !Object.hasOwn(expectedValues, path) &&
      !["mcpServers", "provider", "baseURL"].includes(top)
    ) {
      throw new ConfigError(
        `${file}: ${path} is not a known field (docs/configuration.md lists them)`,
      );
    }
    const field = top === "mcpServers" || top === "provider" || top === "baseURL" ? top : path;
    const where = top === "mcpServers" ? " (a project's servers belong in .mcp.json)" : "";
    throw new ConfigError(
      `${file}: ${field} cannot be set by a project file, only narrowed: set it in your own config.json or with a flag${where}`,
    );
  }
  const sandbox = value.sandbox;
  if (isObject(sandbox) && sandbox.mode !== undefined && sandbox.mode !== "required") {
    throw new ConfigError(
      `${file}: sandbox.mode may only be "required" in a project file, not ${JSON.stringify(sandbox.mode)}`,
    );
  }
}

function checkSchema(value: Record<string, unknown>, file: string): void {
  const first = Value.Errors(ConfigSchema, value).First();
  if (first === undefined) return;
  const parts = first.path.split("/").filter((part) => part !== "");
  if (parts[0] === "mcpServers") {
    const problem = parseMcpConfig({ mcpServers: value.mcpServers }, file).problems[0];
    throw new ConfigError(problem ?? `${file}: mcpServers must be ${expectedValues.mcpServers}`);
  }
  const field = parts.map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`)).join("");
  const name = field.replace(/^\./, "").replace(/\.\[/g, "[");
  if (first.type === ValueErrorType.ObjectAdditionalProperties) {
    throw new ConfigError(
      `${file}: ${name} is not a known field (docs/configuration.md lists them)`,
    );
  }
  const key = parts.filter((part) => !/^\d+$/.test(part)).join(".");
  const element = /^\d+$/.test(parts[parts.length - 1] ?? "");
  const table = element ? elementValues : expectedValues;
  const expected = (Object.hasOwn(table, key) ? table[key] : undefined) ?? "valid";
  const got =
    first.value === undefined
      ? "nothing"
      : typeof first.value === "number" && !Number.isFinite(first.value)
        ? "a number too large to hold"
        : JSON.stringify(first.value);
  throw new ConfigError(`${file}: ${name} must be ${expected}, not ${got}`);
}

function checkRules(config: ConfigFile, file: string): void {
  for (const effect of ["allow", "deny"] as const) {
    for (const [index, rule] of (config.rules?.[effect] ?? []).entries()) {
      try {
        ruleWords(rule);
      } catch (error) {
        if (!(error instanceof RuleError)) throw error;
        throw new ConfigError(`${file}: rules.${effect}[${index}]: ${error.message}`);
      }
    }
  }
}

/** A memory or file size limit bash cannot work under is refused here, as the flag refuses it. */
function checkMemory(config: ConfigFile, file: string): void {
  const memory = config.sandbox?.limits?.memory;
  const bytes = memory === undefined ? 0 : sizeInBytes(memory);
  if (memory !== undefined && (bytes < MIN_MEMORY || !Number.isSafeInteger(bytes))) {
    throw new ConfigError(
      `${file}: sandbox.limits.memory must be a size of at least 16M, such as 512M or 16G, not ${JSON.stringify(memory)}`,
    );
  }
  const fileSize = config.sandbox?.limits?.fileSize;
  const fileBytes = fileSize === undefined ? 0 : sizeInBytes(fileSize);
  if (fileSize !== undefined && (fileBytes < MIN_FILE_SIZE || !Number.isSafeInteger(fileBytes))) {
    throw new ConfigError(
      `${file}: sandbox.limits.fileSize must be a size of at least 1M, such as 1G or 4G, not ${JSON.stringify(fileSize)}`,
    );
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
