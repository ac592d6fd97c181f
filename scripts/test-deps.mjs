// Before `npm test`: the MCP conformance suite and the Node 22 it runs on live apart from the
// project (test/conformance/, so that node binary never shadows the one running the tests).
// Installed from their own lock file when missing or when that lock file changed; else nothing.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

const folder = "test/conformance";
const packages = (file) => JSON.parse(readFileSync(file, "utf8")).packages;
const wanted = Object.entries(packages(`${folder}/package-lock.json`)).filter(([name]) => name);
const installed = `${folder}/node_modules/.package-lock.json`;
const current =
  existsSync(installed) &&
  JSON.stringify(Object.fromEntries(wanted)) === JSON.stringify(packages(installed));
if (!current) {
  execFileSync("npm", ["ci", "--prefix", folder, "--no-audit", "--no-fund"], { stdio: "inherit" });
}
