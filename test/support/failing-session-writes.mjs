// Preloaded into the CLI with `node --import` (see `failingSessionWrites` in cli.ts): the write
// numbered MINI_AGENT_TEST_FAIL_WRITE (1 = the header) to a session file fails with the error
// code MINI_AGENT_TEST_FAIL_CODE, as a full disk would make it fail. Every other write is real.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { constants } from "node:os";

const failAt = Number(process.env.MINI_AGENT_TEST_FAIL_WRITE);
const code = process.env.MINI_AGENT_TEST_FAIL_CODE ?? "ENOSPC";
const messages = {
  ENOSPC: "no space left on device",
  EIO: "i/o error",
  EDQUOT: "disk quota exceeded",
};
let sessionWrites = 0;
const writeSync = fs.writeSync;

fs.writeSync = function failingWriteSync(fd, ...rest) {
  let target = "";
  try {
    target = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {}
  if (target.includes("/sessions/") && target.endsWith(".jsonl") && ++sessionWrites === failAt) {
    const error = new Error(`${code}: ${messages[code] ?? "injected failure"}, write`);
    Object.assign(error, { code, errno: -constants.errno[code], syscall: "write" });
    throw error;
  }
  return writeSync.call(this, fd, ...rest);
};
syncBuiltinESMExports();
