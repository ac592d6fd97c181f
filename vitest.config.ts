import { defineConfig } from "vitest/config";

/**
 * The search tools' tests run twice: with ripgrep (which must then be on PATH, as CI installs it)
 * and with the JavaScript path forced. Both must give the same results.
 */
const searchTests = [
  "test/tools.test.ts",
  "test/search-tools.test.ts",
  "test/file-tools.test.ts",
  "test/path-escape.test.ts",
];

export default defineConfig({
  test: {
    globalSetup: ["test/support/build.ts"],
    testTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
          exclude: searchTests,
        },
      },
      {
        extends: true,
        test: { name: "search-rg", include: searchTests, env: { MINI_AGENT_SEARCH: "rg" } },
      },
      {
        extends: true,
        test: { name: "search-js", include: searchTests, env: { MINI_AGENT_SEARCH: "js" } },
      },
    ],
  },
});
