import { homedir } from "node:os";
import { join } from "node:path";

/** `$MINI_AGENT_HOME` (default `~/.mini-agent`): the user's state, never inside the workspace. */
export function stateHome(env: NodeJS.ProcessEnv): string {
  return env.MINI_AGENT_HOME || join(homedir(), ".mini-agent");
}
