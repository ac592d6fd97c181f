import { describe, expect, it } from "vitest";
import { hasChromium, openPage } from "./support/chromium.js";
import { gif, jpeg, png, webp } from "./support/images.js";

describe.skipIf(!hasChromium())("the test images", () => {
  it("each decode in Chromium to the size they declare", async () => {
    const images = [
      ["image/png", png(2, 2)],
      ["image/jpeg", jpeg(2, 2)],
      ["image/gif", gif()],
      ["image/webp", webp()],
    ] as const;
    const page = await openPage("about:blank");
    try {
      const sizes = [];
      for (const [type, bytes] of images) {
        const url = `data:${type};base64,${bytes.toString("base64")}`;
        sizes.push(
          await page.evaluate<string>(
            `fetch(${JSON.stringify(url)}).then((r) => r.blob()).then(createImageBitmap).then((b) => b.width + "x" + b.height)`,
          ),
        );
      }
      expect(sizes).toEqual(["2x2", "2x2", "1x1", "1x1"]);
    } finally {
      await page.close();
    }
  });
});
