import { type MoreProtected, protectedWhy } from "../protected/files.js";
import { ToolError } from "./define.js";
import { displayPath, type Resolved } from "./path.js";

/**
 * Whether the call now running may change a protected file, by its real path: the CLI answers
 * yes only for the one file its policy asked the user about and the user approved.
 */
export type ProtectedWrites = (realPath: string) => boolean;

/**
 * Throws unless `target` (resolved to the real path the tool writes) is no protected file, or
 * `approved` says this call may change it. Called on the path that is then opened and verified,
 * so a link or a swapped folder leading to a protected file is that file.
 */
export async function refuseProtected(
  target: Resolved,
  verb: "edit" | "write",
  approved: ProtectedWrites = () => false,
  more?: MoreProtected,
): Promise<void> {
  const why = await protectedWhy(target.realRoot, target.path, more);
  if (why === undefined || approved(target.path)) return;
  const shown = displayPath(target.realRoot, target.path);
  throw new ToolError(
    `${shown} is protected (${why}): ${verb} changes it only in a call the user approved for it`,
  );
}
