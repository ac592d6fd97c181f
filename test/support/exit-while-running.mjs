// Runs a bash command with --sandbox off through the built package, then calls process.exit
// while it still runs. argv: workspace, command.
import { createWorkspaceTools } from "../../dist/index.js";

const [workspace, command] = process.argv.slice(2);
const bash = createWorkspaceTools(workspace, { bash: { sandbox: { mode: "off" } } }).find(
  (tool) => tool.spec.name === "bash",
);
bash.execute({ command });
setTimeout(() => process.exit(0), 500);
