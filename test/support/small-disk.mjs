// Preloaded into the CLI with `node --import` (see `smallDisk` in cli.ts): `statfs` of a path
// under MINI_AGENT_TEST_SMALL_DISK reports MINI_AGENT_TEST_FREE_BYTES free, as a nearly full
// disk would. Every other path is real.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const under = process.env.MINI_AGENT_TEST_SMALL_DISK ?? "";
const free = Number(process.env.MINI_AGENT_TEST_FREE_BYTES ?? 0);
const statfsSync = fs.statfsSync;

fs.statfsSync = function smallStatfsSync(path, ...rest) {
  const real = statfsSync.call(this, path, ...rest);
  if (under === "" || !String(path).startsWith(under)) return real;
  return { ...real, bavail: Math.floor(free / real.bsize) };
};
syncBuiltinESMExports();
