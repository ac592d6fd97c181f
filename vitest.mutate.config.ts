import { defineConfig } from "vitest/config";

/** The tests that need no built CLI, for mutation testing (`npm run mutate`). */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [
      "test/cli.test.ts",
      "test/crash-matrix.test.ts",
      "test/canaries.test.ts",
      "test/exports.test.ts",
    ],
    testTimeout: 30_000,
  },
});
