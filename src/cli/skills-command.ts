import { homedir } from "node:os";
import { contextWindowFor } from "../app/compaction.js";
import { defaultModel } from "../app/provider.js";
import { cutNotice, warningLine } from "../app/skills.js";
import { stateHome } from "../session/store.js";
import { catalogBudget, skillCatalog } from "../skills/catalog.js";
import { discoverSkills } from "../skills/discover.js";
import { visible } from "../visible.js";
import { type CliArgs, exitCodes } from "./args.js";

/**
 * `mini-agent skills`: every skill found for this folder (scope, name, location, description,
 * allowed-tools as the skill asks, never an approval), then one line per warning and what the
 * catalog's budget would cut.
 */
export async function skillsCommand(args: CliArgs, workspace: string): Promise<number> {
  const set = await discoverSkills({
    workspace,
    home: homedir(),
    state: stateHome(process.env),
    folders: args.skillFolders,
  });
  const lines: string[] = [];
  if (set.skills.length === 0) lines.push("no skills found (see docs/skills.md for where they go)");
  for (const skill of set.skills) {
    lines.push(`${skill.scope.padEnd(8)}${skill.name}  ${skill.location}`);
    lines.push(`        ${skill.description.replace(/\s+/g, " ")}`);
    if (skill.allowedTools)
      lines.push(
        `        allowed-tools (shown, never an approval): ${skill.allowedTools.join(" ")}`,
      );
  }
  const window = contextWindowFor(args.model ?? defaultModel, args.contextWindow);
  const notice = cutNotice(skillCatalog(set.skills, catalogBudget(window)).cut);
  const notes = [...set.warnings.map(warningLine), ...(notice === "" ? [] : [notice])];
  if (notes.length > 0) lines.push("warnings:", ...notes.map((note) => `  ${note}`));
  process.stdout.write(`${lines.map((line) => visible(line)).join("\n")}\n`);
  return exitCodes.done;
}
