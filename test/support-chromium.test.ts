import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { hasChromium, openPage } from "./support/chromium.js";
import { useTempDirs } from "./support/temp.js";

/** The browser helper sees what a page's script did, and what the page refused. */

const tempDir = useTempDirs();

describe.skipIf(!hasChromium())("the headless Chromium helper", () => {
  it("sees a script that ran, a page read with JavaScript off, and a content security policy that blocked a script", {
    timeout: 60_000,
  }, async () => {
    const dir = await tempDir();
    const open = join(dir, "open.html");
    await writeFile(
      open,
      "<title>before</title><p>text</p><script>document.title = 'ran'</script>",
    );
    const blocked = join(dir, "blocked.html");
    await writeFile(
      blocked,
      `<meta http-equiv="Content-Security-Policy" content="script-src 'none'"><title>before</title><script>document.title = 'ran'</script>`,
    );
    const page = await openPage(pathToFileURL(open).href);
    try {
      expect(await page.evaluate("document.title")).toBe("ran");
      expect(await page.evaluate("document.body.innerText")).toBe("text");
    } finally {
      await page.close();
    }
    const withoutScripts = await openPage(pathToFileURL(open).href, { javascript: false });
    try {
      expect(await withoutScripts.evaluate("document.title")).toBe("before");
    } finally {
      await withoutScripts.close();
    }
    const refused = await openPage(pathToFileURL(blocked).href);
    try {
      expect(await refused.evaluate("document.title")).toBe("before");
      expect(refused.messages.join("\n")).toContain("Content Security Policy");
    } finally {
      await refused.close();
    }
  });
});
