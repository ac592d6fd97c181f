// Bundles the CLI into dist/bundle/: one small entry (so --version and --help load almost
// nothing) and chunks loaded on demand for a turn and for each provider SDK. Loading one
// bundled module instead of hundreds of files is most of the start-up cost saved.
import { chmodSync, copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { build } from "esbuild";

rmSync("dist/bundle", { recursive: true, force: true });
await build({
  entryPoints: ["src/cli/main.ts"],
  outdir: "dist/bundle",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  legalComments: "none",
  // The SDKs' \`new Headers()\` gets a small class instead of the global, whose first use loads
  // Node's fetch stack; the CLI gives the SDKs \`httpFetch\` over node:http.
  inject: ["src/providers/sdk-globals.ts"],
  logLevel: "warning",
});
chmodSync("dist/bundle/main.js", 0o755);
// The shell parser's WebAssembly (runtime and bash grammar), loaded from beside the chunk.
const require = createRequire(import.meta.url);
for (const wasm of [
  "web-tree-sitter/web-tree-sitter.wasm",
  "tree-sitter-bash/tree-sitter-bash.wasm",
])
  copyFileSync(require.resolve(wasm), `dist/bundle/${wasm.slice(wasm.indexOf("/") + 1)}`);
