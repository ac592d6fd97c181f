import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Makes `folder` the work tree of a minimal git repository, as git itself accepts one: a `.git`
 * folder with `HEAD`, `objects/` and `refs/`. Returns the `.git` folder.
 */
export async function gitRepository(folder: string): Promise<string> {
  const git = join(folder, ".git");
  await mkdir(join(git, "objects"), { recursive: true });
  await mkdir(join(git, "refs", "heads"), { recursive: true });
  await writeFile(join(git, "HEAD"), "ref: refs/heads/main\n");
  return git;
}

/** git run by a test: no system or user configuration, a fixed author and committer. */
export const gitEnv = {
  PATH: process.env.PATH,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "u",
  GIT_AUTHOR_EMAIL: "u@example.com",
  GIT_COMMITTER_NAME: "u",
  GIT_COMMITTER_EMAIL: "u@example.com",
};
