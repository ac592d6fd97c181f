import { defineConfig } from "vitest/config";
import { hasProgram } from "./test/support/programs.js";

/**
 * The search tools' tests run twice: with ripgrep and with the JavaScript path forced; both must
 * give the same results. Without ripgrep only the second runs, except in CI, which installs it.
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
          // test/conformance/ holds an installed package of its own (its node_modules has tests).
          exclude: [...searchTests, "**/node_modules/**"],
        },
      },
      ...(hasProgram("rg")
        ? [
            {
              extends: true as const,
              test: { name: "search-rg", include: searchTests, env: { MINI_AGENT_SEARCH: "rg" } },
            },
          ]
        : []),
      {
        extends: true,
        test: { name: "search-js", include: searchTests, env: { MINI_AGENT_SEARCH: "js" } },
      },
    ],
  },
});
