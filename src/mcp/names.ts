import { sha256Hex } from "../crypto.js";

/**
 * The names the model sees for MCP tools: `mcp__<server>__<tool>`, fitted to what every
 * provider accepts, `^[a-zA-Z0-9_-]{1,64}$`. A name that fits is used as is. One that does not
 * (a character outside the set becomes `_`, a name over 64 characters is cut), or that two of a
 * server's tools would share after that, ends in `_` and 8 hex digits of the sha256 of the server
 * and the raw tool name; so a name depends only on its own server and tool, never on the order
 * tools came in or on the other servers. Server names are checked by the configuration (letters,
 * digits, `-`, single `_`), so the server part ends at the first `__`.
 */

export const MAX_TOOL_NAME = 64;
const ALLOWED = /^[a-zA-Z0-9_-]+$/;
const HASH_CHARS = 8;

/** The model-visible name of each raw tool name of `server`, in the same order. */
export function modelToolNames(server: string, rawNames: readonly string[]): string[] {
  const fits = rawNames.map((raw) => fitted(server, raw));
  const count = new Map<string, number>();
  for (const name of fits) count.set(name, (count.get(name) ?? 0) + 1);
  return rawNames.map((raw, index) => {
    const name = fits[index] ?? "";
    const exact = name === `mcp__${server}__${raw}`;
    return exact && count.get(name) === 1 ? name : hashed(server, raw);
  });
}

function fitted(server: string, raw: string): string {
  const full = `mcp__${server}__${[...raw].map((c) => (ALLOWED.test(c) ? c : "_")).join("")}`;
  return full.length > MAX_TOOL_NAME ? full.slice(0, MAX_TOOL_NAME) : full;
}

function hashed(server: string, raw: string): string {
  const digest = sha256Hex(`${server}\0${raw}`);
  const base = fitted(server, raw).slice(0, MAX_TOOL_NAME - HASH_CHARS - 1);
  return `${base}_${digest.slice(0, HASH_CHARS)}`;
}
