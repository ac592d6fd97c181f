import { realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { HookOpinions, hookedPolicy, hookedTools } from "../hooks/compose.js";
import { RunHooks } from "../hooks/hooks.js";
import { gitConfigFiles } from "../protected/git-config.js";
import { homeLinksInto } from "../protected/home-links.js";
import { FileChanges } from "../rewind/changes.js";
import type { Rule } from "../rules/rule.js";
import { Journal } from "../runner/journal.js";
import { retryPolicy } from "../runner/retry.js";
import { SessionRunner } from "../runner/runner.js";
import { resolveSandbox, type SandboxState, sandboxName } from "../sandbox/bwrap.js";
import { homeInSandbox } from "../sandbox/home.js";
import { secretRedactor } from "../secrets.js";
import type { ResponsesSwitch } from "../session/records.js";
import { Session } from "../session/session.js";
import { SessionStore, sessionsDir, stateHome } from "../session/store.js";
import { createWorkspaceTools } from "../tools/index.js";
import { planTool } from "../tools/plan.js";
import { SeenFiles } from "../tools/seen.js";
import { withSeenResults } from "../tools/seen-results.js";
import type { Message, ToolCall } from "../types.js";
import { visible } from "../visible.js";
import { RunCommands } from "./commands.js";
import { contextWindowFor } from "./compaction.js";
import { hookFileWhy, measuredHooks, readyHooks } from "./hooks.js";
import { mcpProgramWhy, type RunMcp } from "./mcp.js";
import { type ModeState, withModeLine } from "./modes.js";
import { imageNotKeptLine } from "./notices.js";
import { type Answer, approvedWrites, cliPolicy, type Question } from "./policy.js";
import { providerFor } from "./provider.js";
import { openToContinue } from "./resume.js";
import { ruleBook, rulesFile } from "./rules.js";
import type { SessionSettings } from "./settings.js";
import { RunSkills } from "./skills.js";
import { systemPrompts } from "./system-prompt.js";

/**
 * What only a front end can do for a session: the one place that grows when a session needs a
 * person for something new.
 */
export interface FrontEnd {
  /**
   * Asks the person about a call the rules cannot decide; absent when no one can be asked (such
   * calls are then denied, and bash without rules or `--allow-bash` cannot run).
   */
  ask?: (call: ToolCall, question: Question) => Promise<Answer>;
  /** A line for the person (a warning, what loading a session found), whole with its newline. */
  tell: (line: string) => void;
  /** A yes or no before the session starts (trust a project's MCP server); absent: no. */
  confirm?: (question: string) => Promise<boolean>;
  /** A notice of the provider's client (`mini-agent: ` is not part of it). */
  notice: (text: string) => void;
}

/** A session as a front end drives it, a turn at a time through its runner. */
export interface AgentSession {
  runner: SessionRunner;
  journal: Journal;
  /** The session mode; a front end changes it between calls. */
  mode: ModeState;
  /** Its skills: `--skill`, `/skill` and the catalog. */
  skills: RunSkills;
  /** The user's commands (`/NAME args`), the user's own and the project's. */
  commands: RunCommands;
  model: string;
  /** The sandbox bash runs in; none when bash cannot run and bwrap is not there. */
  sandbox: SandboxState | undefined;
  contextWindow: number | undefined;
  /** The line that names the project's instruction files, shown at start; empty without them. */
  startLine: string;
  /** The session gone on from, as it was loaded, and when it was last used. */
  resumed?: { id: string; updatedAt: Date; messages: Message[] };
  /** Ends it: the session file closed (its lock freed) and its MCP servers stopped. */
  close(): Promise<void>;
}

/**
 * The product's one assembly of a session, for every front end: the provider's client, the
 * sandbox, the rules, the tools (kept for a rewind) and the plan, the skills and the user's commands, the session file (new or gone on
 * from) and its journal, the MCP servers, then the policy, the system prompt (instructions,
 * skills, MCP instructions, mode) and the runner over them. What needs a person goes through
 * `frontEnd`. What it opened is closed again when a later step fails.
 */
export async function openAgentSession(
  settings: SessionSettings,
  frontEnd: FrontEnd,
): Promise<AgentSession> {
  const { env } = settings;
  // The session's id keys the provider's prompt cache, once the session exists.
  const session: { id?: () => string | undefined; journal?: Journal } = {};
  const parts = await workspaceParts(
    settings,
    frontEnd,
    () => session.id?.(),
    (change) =>
      session.journal === undefined
        ? Promise.resolve()
        : session.journal.record({ type: "responses_switch", change }),
  );
  const resumed = settings.resume ? await resumeSession(settings.resume, frontEnd.tell) : undefined;
  const create = () =>
    Session.create({
      dir: sessionsDir(env, settings.workspace),
      workspace: settings.workspace,
      model: parts.model,
      sandbox: sandboxName(parts.sandbox),
      onImageNotKept: (note) => frontEnd.tell(imageNotKeptLine(note)),
    });
  const file = resumed?.session ?? (settings.file === "now" ? await create() : undefined);
  // The tools have seen what the session's tool results saw: an unchanged file needs no new read.
  if (resumed) parts.seen.recall(resumed.messages, settings.workspace, resumed.cutBy);
  const journal = new Journal(new SessionStore(stateHome(env), create, file));
  session.id = () => journal.sessionId;
  session.journal = journal;
  let mcp: RunMcp | undefined;
  try {
    mcp = await mcpServers(settings, frontEnd, journal);
    const hooks = await readyHooks({
      hooks: settings.hooks ?? [],
      workspace: settings.workspace,
      state: stateHome(env),
      env,
      tell: frontEnd.tell,
      ...(frontEnd.confirm && { confirm: frontEnd.confirm }),
    });
    for (const file of hooks?.files ?? []) parts.sessionFiles.set(file, hookFileWhy);
    for (const file of mcp?.files ?? []) parts.sessionFiles.set(file, mcpProgramWhy);
    const { runner, mode, startLine } = await runnerOf(settings, frontEnd, {
      ...parts,
      journal,
      mcp,
      resumed,
      hooks,
    });
    const running = mcp;
    return {
      runner,
      journal,
      mode,
      skills: parts.skills,
      commands: parts.commands,
      model: parts.model,
      sandbox: parts.sandbox,
      contextWindow: parts.contextWindow,
      startLine,
      ...(resumed && {
        resumed: {
          id: resumed.session.id,
          updatedAt: resumed.updatedAt,
          messages: resumed.messages,
        },
      }),
      close: async () => {
        await journal.close();
        await running?.close();
      },
    };
  } catch (error) {
    await journal.close();
    await mcp?.close();
    throw error;
  }
}

/**
 * What a session works with before its file exists: the provider's client, the rules, the
 * sandbox's answer, the tools and the skills. Said on the way: each skill warning, a sandbox that
 * is not the one asked for.
 */
async function workspaceParts(
  settings: SessionSettings,
  frontEnd: FrontEnd,
  sessionId: () => string | undefined,
  record: (change: ResponsesSwitch) => Promise<void>,
) {
  const { workspace, env } = settings;
  const state = stateHome(env);
  const connect = providerFor(settings, env);
  const contextWindow = contextWindowFor(connect.model, settings.contextWindow);
  const skills = new RunSkills(
    { workspace, home: homedir(), state, folders: settings.skillFolders },
    contextWindow,
    (line) => frontEnd.tell(`mini-agent: ${line}\n`),
  );
  const commands = new RunCommands({ workspace, home: homedir(), state }, (line) =>
    frontEnd.tell(`mini-agent: ${line}\n`),
  );
  const sandboxOptions = {
    mode: settings.sandbox,
    readOnly: [state],
    hide: settings.sandboxHide,
    limits: settings.sandboxLimits,
    readable: skills.roots,
    probeCache: state,
  };
  // Probing bwrap runs a process: started first, it runs while the rest is set up and the SDK
  // loads. Its answer matters when bash can run, or for the read-only set, which needs bwrap.
  const probing = resolveSandbox(sandboxOptions);
  const rules = await ruleBook(rulesFile(env, workspace), settings.rules, (line) =>
    frontEnd.tell(`mini-agent: ${line}\n`),
  );
  const allowRules = rules.current().some((rule) => rule.effect === "allow");
  const bashCanRun = settings.allowBash || frontEnd.ask !== undefined || allowRules;
  const client = await connect.client(frontEnd.notice, sessionId, record);
  const seen = new SeenFiles();
  // The files the session's hooks and trusted MCP servers run, once they are known, and those the
  // repository's own configuration makes code, and those the home folder's start-up links lead
  // to (a dotfiles repository): in the one protected set.
  const realWorkspace = await realpath(workspace).catch(() => workspace);
  const sessionFiles = new Map([
    ...(await gitConfigFiles(realWorkspace)),
    ...homeLinksInto(realWorkspace),
  ]);
  const approvedWrite = { ...approvedWrites(state), more: sessionFiles };
  // write, edit and bash keep what they change, for a rewind; the plan is the model's checklist.
  const changes = new FileChanges({ root: workspace, stateDir: state });
  await skills.refresh();
  await commands.refresh();
  const probed = await probing;
  const sandbox = bashCanRun || probed.kind === "bwrap" ? probed : undefined;
  warnSandbox(sandbox, frontEnd.tell, workspace, env);
  const wayOut = offersWayOut(settings, probed, frontEnd, rules.current());
  // Each read, write and edit says what it saw, for a resumed session (`SeenFiles.recall`).
  const seeing = withSeenResults(
    createWorkspaceTools(workspace, {
      bash: {
        sandbox: sandboxOptions,
        ...(wayOut && { outsideSandbox: { hint: frontEnd.ask !== undefined } }),
      },
      stateDir: state,
      seen,
      protectedWrites: approvedWrite.allows,
      moreProtected: sessionFiles,
      readOnlyRoots: skills.roots,
    }),
    seen,
    workspace,
  );
  const tools = [...changes.wrap(seeing), planTool()];
  const { model, images } = connect;
  return {
    model,
    images,
    client,
    contextWindow,
    skills,
    commands,
    rules,
    sandbox,
    seen,
    approvedWrite,
    sessionFiles,
    sandboxOptions,
    changes,
    tools,
    wayOut,
  };
}

/**
 * Whether the bash tool offers the way out of the sandbox (`outside_sandbox`): only where the
 * sandbox works and is not `required`, and where such a call could be approved: someone can be
 * asked, or an `allow-unsandboxed` rule exists.
 */
function offersWayOut(
  settings: SessionSettings,
  sandbox: SandboxState,
  frontEnd: FrontEnd,
  rules: readonly Rule[],
): boolean {
  if (sandbox.kind !== "bwrap" || settings.sandbox === "required") return false;
  return frontEnd.ask !== undefined || rules.some((rule) => rule.effect === "allow-unsandboxed");
}

type Parts = Awaited<ReturnType<typeof workspaceParts>> & {
  journal: Journal;
  mcp: RunMcp | undefined;
  resumed: Awaited<ReturnType<typeof resumeSession>> | undefined;
  hooks: Awaited<ReturnType<typeof readyHooks>>;
};

/**
 * The policy, the system prompt and the runner. Each turn starts with the workspace's tools,
 * then those of the MCP servers up now (their changes of status recorded first), and the system
 * prompt built for it; the skills it lists are recorded when they changed. After a compaction in
 * a turn, only the prompt's text is built again.
 */
async function runnerOf(settings: SessionSettings, frontEnd: FrontEnd, parts: Parts) {
  const { workspace, env } = settings;
  const { journal, mcp, skills, resumed, sandbox, model, contextWindow } = parts;
  const mode: ModeState = { current: settings.mode };
  const sandboxed = sandbox?.kind === "bwrap";
  const hooks =
    parts.hooks &&
    new RunHooks(parts.hooks.hooks, {
      folders: parts.hooks.folders,
      session: () => ({ id: journal.sessionId, path: journal.sessionPath }),
      permissionMode: () => (mode.current === "plan" ? "plan" : "default"),
      tell: frontEnd.tell,
      redact: secretRedactor(env),
      sandbox: parts.sandboxOptions,
      moreProtected: parts.sessionFiles,
      measure: measuredHooks(parts.changes, parts.seen, workspace),
      record: (run) => journal.record({ type: "hook", run }),
    });
  const opinions = new HookOpinions();
  const policy = cliPolicy({
    bash: settings.allowBash ? "allow" : "ask",
    rules: parts.rules,
    workspace,
    sandboxed,
    // The sandbox is the boundary: bash in it runs without asking in code mode.
    boundary: true,
    tell: frontEnd.tell,
    ...(frontEnd.ask && { ask: frontEnd.ask }),
    protectedFiles: parts.approvedWrite,
    record: (decision) => journal.record({ type: "approval", decision }),
    mcpHints: (name) => mcp?.hints(name),
    mode: () => mode.current,
    ...(hooks && { hookOpinion: (call: ToolCall) => opinions.of(call) }),
  });
  // A hook before a call is a policy over the policy; after one, a decorator of the tools.
  const beforeToolCall = hooks
    ? hookedPolicy({
        hooks,
        policy,
        opinions,
        record: (decision) => journal.record({ type: "approval", decision }),
        signal: () => runner.signal,
      })
    : policy;
  const bash = settings.allowBash || sandboxed ? "allowed" : frontEnd.ask ? "ask" : "denied";
  const prompts = await systemPrompts(
    { workspace, bash, sandboxed, platform: process.platform },
    { home: homedir(), state: stateHome(env) },
    visible,
    () => skills.prompt(runner.compacting.current),
  );
  const system = async () =>
    withModeLine(`${await prompts.next()}${mcp?.instructions() ?? ""}`, mode.current);
  const runner: SessionRunner = new SessionRunner({
    client: parts.client,
    beforeToolCall,
    journal,
    turn: async () => {
      const all = [...parts.tools, ...((await mcp?.turnTools()) ?? [])];
      const tools = hooks ? hookedTools(all, hooks) : all;
      const text = await system();
      const notice = skills.notice();
      if (notice) await journal.record({ type: "skills", skills: notice });
      return { system: text, tools };
    },
    system,
    info: { model, workspace, sandbox: sandboxName(sandbox) },
    provider: settings.provider,
    images: parts.images,
    ...(resumed && { history: resumed.messages, imagesRefused: resumed.imagesRefused }),
    ...(resumed?.compaction && { resume: resumed.compaction }),
    maxTurns: settings.maxTurns,
    ...(settings.tokenBudget !== undefined && { tokenBudget: settings.tokenBudget }),
    ...(contextWindow !== undefined && { contextWindow }),
    seen: parts.seen,
    changes: parts.changes,
    retry: {
      env,
      ...(settings.baseURL !== undefined && { baseURL: settings.baseURL }),
      ...(settings.maxRetries !== undefined && {
        policy: { ...retryPolicy, attempts: settings.maxRetries + 1 },
      }),
    },
  });
  return { runner, mode, startLine: prompts.startLine };
}

/**
 * The session's MCP servers, unless `noMcp`: loaded by `import()`, and the SDK only when a server
 * is to start. A project server not yet trusted is asked about when someone can be asked, else
 * skipped (its status said at the first turn).
 */
async function mcpServers(
  settings: SessionSettings,
  frontEnd: FrontEnd,
  journal: Journal,
): Promise<RunMcp | undefined> {
  if (settings.noMcp) return undefined;
  const { startMcp } = await import("./mcp.js");
  return await startMcp({
    workspace: settings.workspace,
    state: stateHome(settings.env),
    flagFiles: settings.mcpConfig,
    ...(settings.mcpServers && { given: settings.mcpServers }),
    env: settings.env,
    journal,
    ...(frontEnd.confirm && { confirm: frontEnd.confirm }),
    tell: frontEnd.tell,
  });
}

/** A session gone on from, with when it was last used (read before opening it writes a repair). */
async function resumeSession(path: string, tell: (line: string) => void) {
  const updatedAt = (await stat(path)).mtime;
  return { updatedAt, ...(await openToContinue(path, tell)) };
}

/** Where bash runs, when that is not the sandbox it was asked for, or not the user's home. */
function warnSandbox(
  sandbox: SandboxState | undefined,
  tell: (line: string) => void,
  workspace: string,
  env: NodeJS.ProcessEnv,
): void {
  const home = sandbox?.kind === "bwrap" ? homeInSandbox(env, workspace) : undefined;
  if (home?.kind === "private") tell(`mini-agent: note: ${home.reason}\n`);
  if (sandbox?.kind !== "unavailable") return;
  tell(
    sandbox.mode === "required"
      ? `mini-agent: bash will be refused: --sandbox required, but ${sandbox.reason}\n`
      : `mini-agent: warning: bash runs without a sandbox: ${sandbox.reason}\n`,
  );
}
