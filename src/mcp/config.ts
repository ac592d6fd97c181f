import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import { contentHash } from "../crypto.js";
import { firstDuplicateKey } from "../json-duplicates.js";
import { canonicalJson, type TrustEntry, type WorkspaceTrust } from "../trust/trust.js";

/**
 * MCP server configuration in the shape every peer reads:
 * `{"mcpServers": {NAME: {command, args, env, cwd} | {type: "http", url, headers}}}`.
 * Parsing checks the shape only; `${VAR}` expansion happens when a server starts
 * (`expandServer`), so an unset variable fails that server, not the file.
 */

/**
 * A server name: letters, digits, `-` and single `_`, so `mcp__<server>__<tool>` says where the
 * server part ends.
 */
const NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
const MAX_NAME = 40;

const Strings = Type.Record(Type.String(), Type.String());
/** Per call, milliseconds without an answer or progress before the call times out. */
const Timeout = Type.Integer({ minimum: 1 });
export const StdioSchema = Type.Object(
  {
    type: Type.Optional(Type.Literal("stdio")),
    command: Type.String({ minLength: 1 }),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(Strings),
    cwd: Type.Optional(Type.String({ minLength: 1 })),
    timeout: Type.Optional(Timeout),
  },
  { additionalProperties: false },
);
export const HttpSchema = Type.Object(
  {
    type: Type.Literal("http"),
    url: Type.String({ minLength: 1 }),
    headers: Type.Optional(Strings),
    timeout: Type.Optional(Timeout),
  },
  { additionalProperties: false },
);

export type StdioServerEntry = Static<typeof StdioSchema>;
export type HttpServerEntry = Static<typeof HttpSchema>;
export type McpServerEntry = StdioServerEntry | HttpServerEntry;

/** One configured server, as written (before `${}` expansion). */
export interface McpServerConfig {
  name: string;
  /** The file it came from (or `<options>` for a library caller's object). */
  file: string;
  entry: McpServerEntry;
  /**
   * sha256 of the entry as canonical JSON: what the trust record keeps. For a project server
   * whose command line names workspace files, of the entry and those files' content together.
   */
  hash: string;
  /** Those workspace files, relative to the project root (`programs.ts`). */
  programs?: readonly string[];
  /**
   * Why what its command line runs is not known in full, a phrase each (`sh runs the text of its
   * -c option, …`): the model may be able to change what it runs.
   */
  unknown?: readonly string[];
  /**
   * Values taken as written: no `${}` is expanded. An editor's servers (ACP) come as values the
   * editor's user set, not as templates over the agent's environment.
   */
  literal?: boolean;
}

/** What a configuration file holds: the valid servers, and one line per problem. */
export interface ParsedMcpConfig {
  servers: McpServerConfig[];
  problems: string[];
}

/** Parses the text of one configuration file. Every problem names the file, server and field. */
export function parseMcpConfigText(text: string, file: string): ParsedMcpConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { servers: [], problems: [`${file}: not valid JSON (${(error as Error).message})`] };
  }
  const twice = firstDuplicateKey(text);
  if (twice !== undefined) return { servers: [], problems: [`${file}: ${twice} is given twice`] };
  return parseMcpConfig(value, file);
}

/** Checks a parsed `{"mcpServers": {...}}` value; each server is valid or a problem on its own. */
export function parseMcpConfig(value: unknown, file: string): ParsedMcpConfig {
  if (!isObject(value)) return { servers: [], problems: [`${file}: must be a JSON object`] };
  const servers = value.mcpServers;
  if (servers === undefined) return { servers: [], problems: [] };
  if (!isObject(servers)) {
    return { servers: [], problems: [`${file}: mcpServers must be an object`] };
  }
  const parsed: ParsedMcpConfig = { servers: [], problems: [] };
  for (const [name, entry] of Object.entries(servers)) {
    const problem = nameProblem(name) ?? entryProblem(entry);
    if (problem !== undefined) {
      parsed.problems.push(`${file}: server ${JSON.stringify(name)}: ${problem}`);
      continue;
    }
    const checked = entry as McpServerEntry;
    parsed.servers.push({ name, file, entry: checked, hash: contentHash(canonicalJson(checked)) });
  }
  return parsed;
}

function nameProblem(name: string): string | undefined {
  if (name.length > MAX_NAME) return `the name is longer than ${MAX_NAME} characters`;
  if (!NAME.test(name)) return "the name may hold only letters, digits, - and single _";
  return undefined;
}

function entryProblem(entry: unknown): string | undefined {
  if (!isObject(entry)) return "must be an object";
  if (entry.type !== undefined && entry.type !== "stdio" && entry.type !== "http") {
    return `type must be "stdio" or "http" (Streamable HTTP), not ${JSON.stringify(entry.type)}`;
  }
  const schema: TSchema = entry.type === "http" ? HttpSchema : StdioSchema;
  const first = Value.Errors(schema, entry).First();
  if (first === undefined) return undefined;
  const field = first.path.replace(/^\//, "").replaceAll("/", ".");
  if (first.type === ValueErrorType.ObjectAdditionalProperties)
    return `${field} is not a known field`;
  if (field === "") return "must be an object";
  if (first.value === undefined) return `${field} is required`;
  return `${field} must be ${expected[field.split(".")[0] ?? ""] ?? "valid"}`;
}

const expected: Record<string, string> = {
  type: '"stdio" or "http"',
  command: "a non-empty string",
  args: "an array of strings",
  env: "an object of strings",
  cwd: "a non-empty string",
  url: "a non-empty string",
  headers: "an object of strings",
  timeout: "a positive whole number of milliseconds",
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A configuration source, highest precedence first: `--mcp-config` files, project, user. */
export interface McpConfigLayer {
  servers: McpServerConfig[];
}

/**
 * Merges layers given highest precedence first (`--mcp-config` > project > user; among several
 * `--mcp-config` files, the first named wins). Each server a higher layer shadows is a warning
 * naming both files.
 */
export function mergeMcpServers(layers: readonly McpConfigLayer[]): {
  servers: McpServerConfig[];
  warnings: string[];
} {
  const chosen = new Map<string, McpServerConfig>();
  const warnings: string[] = [];
  for (const layer of layers) {
    for (const server of layer.servers) {
      const winner = chosen.get(server.name);
      if (winner === undefined) chosen.set(server.name, server);
      else {
        warnings.push(
          `mcp server "${server.name}" of ${server.file} is shadowed by the one of ${winner.file}`,
        );
      }
    }
  }
  const servers = [...chosen.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  return { servers, warnings };
}

/**
 * A project's servers split by the trust record: those trusted with exactly their current entry
 * may start; the others (new, or changed since they were trusted) are only listed.
 */
export function splitByTrust(
  servers: readonly McpServerConfig[],
  trust: Pick<WorkspaceTrust, "isTrusted">,
): { trusted: McpServerConfig[]; untrusted: McpServerConfig[] } {
  const trusted = servers.filter((server) => trust.isTrusted("mcp", server.name, server.hash));
  return { trusted, untrusted: servers.filter((server) => !trusted.includes(server)) };
}

/** What `trust()` records for these servers: each one's name and entry hash. */
export function trustEntriesOf(servers: readonly McpServerConfig[]): TrustEntry[] {
  return servers.map(({ name, hash }) => ({ kind: "mcp", name, hash }));
}

/** A server ready to start: its entry with every `${}` expanded. */
export type ExpandedServer = { ok: true; entry: McpServerEntry } | { ok: false; reason: string };

/**
 * Expands `${VAR}` and `${VAR:-default}` in `env` values, `headers` values and `url` (nowhere
 * else: a command line is never rewritten from the environment). An unset variable without a
 * default, or a `${` that does not close, fails the server with a reason naming the field.
 */
export function expandServer(entry: McpServerEntry, env: NodeJS.ProcessEnv): ExpandedServer {
  try {
    if (entry.type === "http") {
      const headers = expandValues(entry.headers, "headers", env);
      return {
        ok: true,
        entry: {
          type: "http",
          url: expandText(entry.url, "url", env),
          ...(headers && { headers }),
        },
      };
    }
    const expanded = expandValues(entry.env, "env", env);
    return { ok: true, entry: { ...entry, ...(expanded && { env: expanded }) } };
  } catch (error) {
    if (error instanceof ExpansionError) return { ok: false, reason: error.message };
    throw error;
  }
}

class ExpansionError extends Error {}

function expandValues(
  values: Record<string, string> | undefined,
  field: string,
  env: NodeJS.ProcessEnv,
): Record<string, string> | undefined {
  if (values === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(values).map(([key, text]) => [key, expandText(text, `${field}.${key}`, env)]),
  );
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

function expandText(text: string, field: string, env: NodeJS.ProcessEnv): string {
  const expanded = text.replace(REFERENCE, (_, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (fallback !== undefined) return value === undefined || value === "" ? fallback : value;
    if (value !== undefined) return value;
    throw new ExpansionError(`${field}: the variable ${name} is not set`);
  });
  // What is left of `${` after expansion was not a reference: a typo, never passed on as is.
  if (text.replace(REFERENCE, "").includes("${")) {
    throw new ExpansionError(`${field}: \${ without a variable name and a closing }`);
  }
  return expanded;
}
