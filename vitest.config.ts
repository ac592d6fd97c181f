import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    globalSetup: ["test/support/build.ts"],
    testTimeout: 30_000,
  },
});
