import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { fileLines, NotRegularFileError, UnreadableSessionError } from "../session/lines.js";

/**
 * A line of a task file (`mini-agent batch TASKS.jsonl`): one task, checked whole before anything
 * starts. The build writes this schema out as `mini-agent/batch-task.schema.json`. A task file
 * is code: `setup` and `check` run as the user, `setup` outside any sandbox.
 */
export const TaskLineSchema = Type.Object(
  {
    id: Type.String({
      pattern: "^[A-Za-z0-9._-]{1,128}$",
      not: { enum: [".", ".."] },
      description: "The task's name: unique without regard to case; its folders are named by it.",
    }),
    prompt: Type.Optional(
      Type.String({ minLength: 1, description: "The task given to the agent." }),
    ),
    promptFile: Type.Optional(
      Type.String({
        minLength: 1,
        description: "A file holding the prompt (relative: to the task file's folder).",
      }),
    ),
    workspace: Type.Optional(
      Type.String({ minLength: 1, description: "A folder copied afresh for each attempt." }),
    ),
    repo: Type.Optional(
      Type.String({
        minLength: 1,
        description: "A git URL or a repository's path, cloned for each attempt.",
      }),
    ),
    ref: Type.Optional(
      Type.String({
        minLength: 1,
        description: "The commit, tag or branch of `repo` (default: its HEAD).",
      }),
    ),
    setup: Type.Optional(
      Type.String({
        description: "Run by `sh -c` in the workspace before the agent, outside the sandbox.",
      }),
    ),
    check: Type.Optional(
      Type.String({
        description:
          "Run by `sh -c` in the workspace after the agent, in the sandbox: exit 0 passes.",
      }),
    ),
    checkFiles: Type.Optional(
      Type.String({
        minLength: 1,
        description: "A folder copied over the workspace after the agent stops, before `check`.",
      }),
    ),
    env: Type.Optional(
      Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }), Type.String(), {
        description:
          "Variables for setup, the agent and check; their values are never written out.",
      }),
    ),
    model: Type.Optional(Type.String({ minLength: 1 })),
    maxTurns: Type.Optional(Type.Integer({ minimum: 1 })),
    tokenBudget: Type.Optional(Type.Integer({ minimum: 1 })),
    timeoutS: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: "The agent's wall clock (default 1800)." }),
    ),
  },
  {
    additionalProperties: false,
    allOf: [
      { oneOf: [{ required: ["prompt"] }, { required: ["promptFile"] }] },
      { oneOf: [{ required: ["workspace"] }, { required: ["repo"] }] },
    ],
    dependentRequired: { ref: ["repo"] },
    description: "One task of `mini-agent batch`.",
  },
);
export type TaskLine = Static<typeof TaskLineSchema>;

/** A task as a batch runs it: its line, with paths made absolute, and the line's hash. */
export interface Task {
  line: TaskLine;
  /** SHA-256 of the normalised line (its fields sorted), recorded with each attempt. */
  hash: string;
  /** Absolute: the prompt file, the folder to copy, the files restored before the check. */
  promptFile?: string;
  workspace?: string;
  /** A URL as given, or an absolute path. */
  repo?: string;
  checkFiles?: string;
}

/** The task file holds mistakes: every one of them, one per line of this message. */
export class TaskFileError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
    this.name = "TaskFileError";
  }
}

const isUrl = (repo: string) =>
  /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(repo) || /^[^/]+@[^:/]+:/.test(repo);

/**
 * A task as the batch keeps it between reading its file and running it: its id, the hash of its
 * line and the line as written, parsed again (`taskOf`) when an attempt of it starts. A task
 * file of 10,000 lines is kept as its text, not as 10,000 parsed objects.
 */
export interface TaskEntry {
  id: string;
  hash: string;
  text: string;
}

/** A task file checked whole: its tasks in order, and the folder its relative paths start from. */
export interface TaskFile {
  folder: string;
  tasks: TaskEntry[];
}

/**
 * Reads and checks a whole task file, a line at a time; throws a `TaskFileError` naming every bad
 * line.
 */
export async function readTasks(file: string): Promise<TaskFile> {
  const folder = dirname(resolve(file));
  const problems: string[] = [];
  const tasks: TaskEntry[] = [];
  const seen = new Map<string, number>();
  let number = 0;
  const check = (text: string) => {
    const at = `${file}:${number}`;
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      problems.push(`${at}: not JSON (${(error as Error).message})`);
      return;
    }
    const wrong = lineProblems(value, folder);
    if (wrong.length > 0) {
      problems.push(...wrong.map((why) => `${at}: ${why}`));
      return;
    }
    const line = value as TaskLine;
    const key = line.id.toLowerCase();
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      problems.push(
        `${at}: id ${JSON.stringify(line.id)} is already the id of line ${earlier} (ids are compared without regard to case)`,
      );
      return;
    }
    seen.set(key, number);
    tasks.push({ id: line.id, hash: taskHash(line), text });
  };
  try {
    for await (const { bytes } of fileLines(file)) {
      number++;
      if (bytes === undefined) problems.push(`${file}:${number}: too long to be a task line`);
      else check(bytes.toString("utf8"));
    }
  } catch (error) {
    const why =
      error instanceof NotRegularFileError
        ? "it is not a regular file"
        : error instanceof UnreadableSessionError
          ? error.reason
          : (error as Error).message;
    throw new TaskFileError([`cannot read ${file}: ${why}`]);
  }
  if (problems.length === 0 && tasks.length === 0) problems.push(`${file} holds no task`);
  if (problems.length > 0) throw new TaskFileError(problems);
  return { folder, tasks };
}

/** What is wrong with one parsed line: its shape, then the files it names. */
function lineProblems(value: unknown, folder: string): string[] {
  if (!Value.Check(TaskLineSchema, value)) {
    return [...Value.Errors(TaskLineSchema, value)].map((error) =>
      error.path === "" ? error.message : `${error.path.slice(1)}: ${error.message}`,
    );
  }
  const line = value as TaskLine;
  const problems: string[] = [];
  if (line.id === "." || line.id === "..")
    problems.push(`id: ${JSON.stringify(line.id)} names no folder`);
  const one = (a: keyof TaskLine, b: keyof TaskLine) => {
    if ((line[a] === undefined) === (line[b] === undefined))
      problems.push(`give exactly one of ${a} and ${b}`);
  };
  one("prompt", "promptFile");
  one("workspace", "repo");
  if (line.ref !== undefined && line.repo === undefined) problems.push("ref goes with repo");
  const needs = (field: "promptFile" | "workspace" | "checkFiles", folderWanted: boolean) => {
    const given = line[field];
    if (given === undefined) return;
    const path = resolve(folder, given);
    try {
      if (statSync(path).isDirectory() !== folderWanted) {
        problems.push(`${field}: ${given} is not a ${folderWanted ? "folder" : "file"}`);
      }
    } catch {
      problems.push(`${field}: ${given} does not exist (${path})`);
    }
  };
  needs("promptFile", false);
  needs("workspace", true);
  needs("checkFiles", true);
  if (line.repo !== undefined && !isUrl(line.repo)) {
    const path = resolve(folder, line.repo);
    try {
      if (!statSync(path).isDirectory()) problems.push(`repo: ${line.repo} is not a folder`);
    } catch {
      problems.push(`repo: ${line.repo} does not exist (${path})`);
    }
  }
  return problems;
}

/** The task of an entry, to run an attempt of it: its line parsed, its paths made absolute. */
export function taskOf(entry: TaskEntry, folder: string): Task {
  const line = JSON.parse(entry.text) as TaskLine;
  const at = (path: string | undefined) => (path === undefined ? undefined : resolve(folder, path));
  const repo =
    line.repo === undefined || isUrl(line.repo) || isAbsolute(line.repo)
      ? line.repo
      : at(line.repo);
  const task: Task = { line, hash: entry.hash };
  const promptFile = at(line.promptFile);
  const workspace = at(line.workspace);
  const checkFiles = at(line.checkFiles);
  if (promptFile) task.promptFile = promptFile;
  if (workspace) task.workspace = workspace;
  if (repo) task.repo = repo;
  if (checkFiles) task.checkFiles = checkFiles;
  return task;
}

/** The hash of a line with its fields (and those of `env`) in sorted order. */
export function taskHash(line: TaskLine): string {
  const sorted = (value: unknown): unknown =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
        )
      : value;
  return createHash("sha256")
    .update(JSON.stringify(sorted(line)))
    .digest("hex");
}
