import { realpath } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { allSessions } from "../app/sessions.js";
import { listSessions, type SessionSummary } from "../session/read.js";
import { sessionsDir, stateHome } from "../session/store.js";
import { headOf } from "../text.js";
import { visible } from "../visible.js";

/** How many sessions one `session/list` answer holds; `nextCursor` leads to the rest. */
export const sessionsPerPage = 50;
/** How long a title is: the first prompt on one line, cut with `…`. */
const titleChars = 100;

/**
 * `session/list`: the sessions of the folder `cwd` names (every folder's without it), newest
 * first, as `mini-agent --sessions` lists them, less those that cannot be resumed (damaged or
 * unreadable: `--sessions` shows them and why). The cursor is the last entry's place in that
 * order, so a session written between two pages moves no other from one page to the next.
 */
export async function sessionList(
  env: NodeJS.ProcessEnv,
  params: acp.ListSessionsRequest,
): Promise<acp.ListSessionsResponse> {
  const after = params.cursor == null ? undefined : cursorPlace(params.cursor);
  const sessions = (
    params.cwd == null
      ? // A folder that cannot be listed is left out, as a session that cannot be resumed is.
        await allSessions(stateHome(env), () => {})
      : await listSessions(sessionsDir(env, await folderOf(params.cwd)))
  ).filter((s) => s.damaged === undefined && s.unreadable === undefined);
  const start = after === undefined ? 0 : sessions.findIndex((s) => comesAfter(s, after));
  const page = start === -1 ? [] : sessions.slice(start, start + sessionsPerPage);
  const last = page.at(-1);
  const more = last !== undefined && start + page.length < sessions.length;
  return {
    sessions: page.map(sessionInfo),
    ...(more && { nextCursor: cursorOf(last) }),
  };
}

/**
 * The real path of the folder whose sessions are asked for; a folder gone since keeps its path
 * (its sessions are still listed). The protocol asks for an absolute path: anything else is the
 * request's error.
 */
async function folderOf(cwd: string): Promise<string> {
  return await realpath(absolute(cwd)).catch(() => resolve(cwd));
}

/**
 * `cwd` when it is an absolute path, as the protocol requires of every `cwd`; anything else is
 * the request's error (resolved against the agent's own folder it would name another folder).
 */
export function absolute(cwd: string): string {
  if (!isAbsolute(cwd))
    throw acp.RequestError.invalidParams({ cwd }, `cwd must be an absolute path: ${visible(cwd)}`);
  return cwd;
}

function sessionInfo(session: SessionSummary): acp.SessionInfo {
  const prompt = visible(session.firstPrompt.replace(/[ \t\r\n]+/g, " ").trim());
  const title = prompt.length > titleChars ? `${headOf(prompt, titleChars - 1)}…` : prompt;
  return {
    sessionId: session.id,
    cwd: session.workspace,
    title: title === "" ? null : title,
    updatedAt: session.updatedAt,
  };
}

interface Place {
  updatedAt: string;
  id: string;
}

/** Whether `session` comes after `place` in the listing's order (newest first, then by id). */
const comesAfter = (session: SessionSummary, place: Place) =>
  session.updatedAt < place.updatedAt ||
  (session.updatedAt === place.updatedAt && session.id < place.id);

const cursorOf = (session: SessionSummary) =>
  Buffer.from(JSON.stringify([session.updatedAt, session.id])).toString("base64url");

/** The place a cursor of ours names; anything else is the request's error. */
function cursorPlace(cursor: string): Place {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2) {
      const [updatedAt, id] = value as unknown[];
      if (typeof updatedAt === "string" && typeof id === "string") return { updatedAt, id };
    }
  } catch {
    // not JSON: said below
  }
  throw acp.RequestError.invalidParams(
    { cursor },
    "not a cursor this agent gave: start again without one",
  );
}
