// Preloaded into each measured process: when it exits, writes its peak resident memory (KiB), the
// CPU time it used (user and system, all its threads, ms) and the environment variables that
// change how Node starts, as this process saw them.
import { readFileSync, writeFileSync } from "node:fs";

/** Read by Node (or OpenSSL, libuv) while starting; any of them moves a start-up figure. */
const startup = /^(NODE_|UV_|OPENSSL_|SSL_CERT_)/;

/**
 * The peak resident memory of this process's own image (KiB): `VmHWM`. Not `maxRSS` alone: on
 * Linux a spawned process is forked from the runner, and at exec the fork's resident memory, the
 * runner's, is folded into `maxRSS`, so a small process measured by a big runner reported the
 * runner's size. `maxRSS` where there is no `/proc`.
 */
function peakRss() {
  try {
    const found = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (found) return Number(found[1]);
  } catch {}
  return process.resourceUsage().maxRSS;
}

process.on("exit", () => {
  if (!process.env.RSS_OUT) return;
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => startup.test(name) && name !== "RSS_OUT"),
  );
  const { user, system } = process.cpuUsage();
  writeFileSync(
    process.env.RSS_OUT,
    JSON.stringify({ rss: peakRss(), cpu: (user + system) / 1000, env }),
  );
});
