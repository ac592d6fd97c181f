// Preloaded into each measured process: writes its peak resident memory (KiB) when it exits.
import { writeFileSync } from "node:fs";

process.on("exit", () => {
  if (process.env.RSS_OUT)
    writeFileSync(process.env.RSS_OUT, String(process.resourceUsage().maxRSS));
});
