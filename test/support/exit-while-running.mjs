// Runs a bash command with --sandbox off through the built package, then calls process.exit
// while it still runs, once told to on stdin. argv: workspace, command.
import { createWorkspaceTools } from "../../dist/index.js";

const [workspace, command] = process.argv.slice(2);
const bash = createWorkspaceTools(workspace, { bash: { sandbox: { mode: "off" } } }).find(
  (tool) => tool.spec.name === "bash",
);
bash.execute({ command });
process.stdin.once("data", () => process.exit(0));
