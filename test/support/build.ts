import { execFileSync } from "node:child_process";

/** The CLI tests spawn the real bin, so `dist/` is rebuilt from the sources first. */
export default function setup(): void {
  execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
}
