import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Node, Parser } from "web-tree-sitter";

/**
 * The shell grammar: tree-sitter's bash grammar, run by `web-tree-sitter` (both WebAssembly, no
 * native code). Loaded on the first bash decision only, so a run without bash never pays for it.
 */
let loading: Promise<Parser> | undefined;

/** A `.wasm` file: beside this module when it is bundled (the bundle copies them), else its package's. */
function wasmFile(name: string, specifier: string): string {
  const beside = fileURLToPath(new URL(name, import.meta.url));
  return existsSync(beside) ? beside : createRequire(import.meta.url).resolve(specifier);
}

async function load(): Promise<Parser> {
  const { Language, Parser } = await import("web-tree-sitter");
  const runtime = wasmFile("web-tree-sitter.wasm", "web-tree-sitter/web-tree-sitter.wasm");
  await Parser.init({ locateFile: () => runtime });
  const bash = await Language.load(
    wasmFile("tree-sitter-bash.wasm", "tree-sitter-bash/tree-sitter-bash.wasm"),
  );
  return new Parser().setLanguage(bash);
}

/**
 * Parses `source` and hands its syntax tree to `read`, freeing the tree afterwards. A tree with
 * a syntax error or a missing token is `undefined`: the grammar recovers from errors, and a
 * recovered tree says nothing reliable about what bash would run.
 */
export async function withSyntaxTree<T>(
  source: string,
  read: (root: Node | undefined) => T,
): Promise<T> {
  loading ??= load();
  loading.catch(() => {
    loading = undefined;
  });
  const parser = await loading;
  const tree = parser.parse(source);
  try {
    return read(tree && !tree.rootNode.hasError ? tree.rootNode : undefined);
  } finally {
    tree?.delete();
  }
}
