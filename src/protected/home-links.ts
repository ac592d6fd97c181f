import { type Dirent, readdirSync, realpathSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { strictlyWithin } from "../paths.js";

const why =
  "a link in your home folder leads to it: shells, git and other programs read it as your own start-up or configuration file";

/**
 * The workspace files and folders that the user's own start-up and configuration files are links
 * to (a dotfiles repository in GNU stow's layout: `~/.bashrc` → `dotfiles/bash/.bashrc`): the home
 * folder's dot entries and `bin/`, and those of `~/.config` and `~/.local/bin`, by real path,
 * for the session's protected set. Only links are followed (one `realpath` each).
 */
export function homeLinksInto(realRoot: string): Map<string, string> {
  const found = new Map<string, string>();
  const homes = new Set<string>();
  for (const home of [() => homedir(), () => userInfo().homedir])
    try {
      homes.add(realpathSync(home()));
    } catch {
      // No such folder: no links in it.
    }
  for (const home of homes)
    for (const [folder, all] of [
      [home, false],
      [join(home, ".config"), true],
      [join(home, ".local", "bin"), true],
    ] as const) {
      let entries: Dirent[];
      try {
        entries = readdirSync(folder, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        if (!entry.isSymbolicLink()) continue;
        if (!all && !entry.name.startsWith(".") && entry.name !== "bin") continue;
        try {
          const real = realpathSync(join(folder, entry.name));
          if (real === realRoot || strictlyWithin(realRoot, real)) found.set(real, why);
        } catch {
          // A link to nothing: nothing of the workspace.
        }
      }
    }
  return found;
}
