// A fresh agent process that runs one bash command with --sandbox off through the built package
// and prints its result. argv: workspace, command.
import { createWorkspaceTools } from "../../dist/index.js";

const [workspace, command] = process.argv.slice(2);
const bash = createWorkspaceTools(workspace, { bash: { sandbox: { mode: "off" } } }).find(
  (tool) => tool.spec.name === "bash",
);
process.stdout.write(JSON.stringify(await bash.execute({ command })));
