// Preloaded into each measured process: when it exits, writes its peak resident memory (KiB) and
// the environment variables that change how Node starts, as this process saw them.
import { writeFileSync } from "node:fs";

/** Read by Node (or OpenSSL, libuv) while starting; any of them moves a start-up figure. */
const startup = /^(NODE_|UV_|OPENSSL_|SSL_CERT_)/;

process.on("exit", () => {
  if (!process.env.RSS_OUT) return;
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => startup.test(name) && name !== "RSS_OUT"),
  );
  writeFileSync(process.env.RSS_OUT, JSON.stringify({ rss: process.resourceUsage().maxRSS, env }));
});
