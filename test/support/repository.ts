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
