// Bundles the CLI into dist/bundle/: one small entry (so --version and --help load almost
// nothing), and the part a turn needs as one CommonJS file loaded with V8's code cache made here
// (see src/cli/code-cache.ts). Loading one bundled, already compiled file instead of hundreds of
// modules is most of the start-up cost saved.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { startMockServer } from "../bench/mock-server.mjs";

const { wrapCommonJs } = await import("../dist/cli/code-cache.js");

/**
 * web-tree-sitter loads `module` with `await import("module")` inside a function that declares
 * its own `require`; made into `require("module")`, that call would find the local one, not yet
 * set. The bundle's own `require` is taken instead.
 */
const treeSitterInCommonJS = {
  name: "tree-sitter-in-commonjs",
  setup(bundler) {
    bundler.onLoad({ filter: /web-tree-sitter[\\/]web-tree-sitter\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const from = 'const { createRequire } = await import("module");';
      if (!source.includes(from)) throw new Error(`web-tree-sitter changed: ${from} not found`);
      return {
        contents: source.replace(from, 'const { createRequire } = __cjsRequire("node:module");'),
        loader: "js",
      };
    });
  },
};

/**
 * The sandbox's module, one file both the entry and the turn require (`sandbox.cjs`): one
 * instance, so the bwrap probe the entry starts before the turn loads is the one the turn awaits.
 */
const sharedSandbox = {
  name: "shared-sandbox",
  setup(bundler) {
    const file = resolve("src/sandbox/bwrap.ts");
    bundler.onResolve({ filter: /bwrap\.js$/ }, (args) =>
      resolve(args.resolveDir, args.path.replace(/\.js$/, ".ts")) === file
        ? { path: "./sandbox.cjs", external: true }
        : undefined,
    );
  },
};

/**
 * `node:crypto` loaded at its first use (see `src/node-crypto.ts`): its fifteen modules are about
 * 2.5 ms of a short run, which may need none of them (`src/crypto.ts`).
 */
const lazyNodeCrypto = {
  name: "lazy-node-crypto",
  setup(bundler) {
    bundler.onLoad({ filter: /[\\/]src[\\/]node-crypto\.ts$/ }, () => ({
      contents:
        'let loaded; export function nodeCrypto() { return (loaded ??= require("node:crypto")); }',
      loader: "js",
    }));
  },
};

/**
 * The MCP SDK, its own file (`mcp-sdk.cjs`) the turn requires only when a server is to start:
 * a run without MCP configuration never reads it.
 */
const mcpSdkApart = {
  name: "mcp-sdk-apart",
  setup(bundler) {
    bundler.onResolve({ filter: /^@modelcontextprotocol\/client$/ }, () => ({
      path: "./mcp-sdk.cjs",
      external: true,
    }));
  },
};

const out = "dist/bundle";
rmSync(out, { recursive: true, force: true });
const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
};

/**
 * The commands besides a turn, each a function that loads its module when called: in the bundle
 * a module's top level runs only when something imports it, so a turn never runs theirs (the
 * export page's hashes, their schemas), and the code cache, made by a turn, holds none of it.
 */
const commands = {
  rulesCommand: "rules-command",
  exportCommand: "export-command",
  rewindCommand: "rewind-command",
  skillsCommand: "skills-command",
  mcpCommand: "mcp-command",
  configCommand: "config-command",
  trustCommand: "config-command",
};

// The turn: the agent, its tools, the CLI around them and both providers' SDKs. The SDKs'
// `new Headers()` gets a small class instead of the global, whose first use loads Node's fetch
// stack; the CLI gives the SDKs `httpFetch` over node:http. `import()` becomes `require`, which
// a script run by node:vm has; `import.meta.url` becomes this file's URL.
await build({
  ...common,
  stdin: {
    contents: [
      'export { runCli } from "./src/cli/run.ts";',
      'export { configuredArgs } from "./src/cli/configured.ts";',
      ...Object.entries(commands).map(
        ([name, file]) =>
          `export const ${name} = async (...args) => (await import("./src/cli/${file}.ts")).${name}(...args);`,
      ),
    ].join("\n"),
    resolveDir: ".",
    loader: "ts",
  },
  outfile: `${out}/turn.cjs`,
  format: "cjs",
  supported: { "dynamic-import": false },
  inject: ["src/providers/sdk-globals.ts"],
  define: { "import.meta.url": "__bundleURL", "globalThis.ReadableStream": "NoReadableStream" },
  banner: {
    js: 'var __cjsRequire=require,__bundleURL=require("node:url").pathToFileURL(__filename).href;',
  },
  plugins: [treeSitterInCommonJS, sharedSandbox, mcpSdkApart, lazyNodeCrypto],
});
await build({
  ...common,
  stdin: { contents: 'module.exports = require("@modelcontextprotocol/client");', resolveDir: "." },
  outfile: `${out}/mcp-sdk.cjs`,
  format: "cjs",
});
// `mini-agent acp`: the editor protocol's front end, its own file with the protocol's SDK, so a
// terminal turn never loads it. The same settings as the turn's but web streams.
await build({
  ...common,
  entryPoints: ["src/acp/agent.ts"],
  outfile: `${out}/acp.cjs`,
  format: "cjs",
  supported: { "dynamic-import": false },
  // The protocol's stream is a web stream: the real `ReadableStream` stays.
  inject: ["src/providers/sdk-globals.ts"],
  define: { "import.meta.url": "__bundleURL" },
  banner: {
    js: 'var __cjsRequire=require,__bundleURL=require("node:url").pathToFileURL(__filename).href;',
  },
  plugins: [treeSitterInCommonJS, sharedSandbox, lazyNodeCrypto],
});
// `mini-agent batch`: a front end of its own, its own file; a turn never loads it.
await build({
  ...common,
  entryPoints: ["src/batch/command.ts"],
  outfile: `${out}/batch.cjs`,
  format: "cjs",
  supported: { "dynamic-import": false },
  define: { "import.meta.url": "__bundleURL" },
  banner: { js: 'var __bundleURL=require("node:url").pathToFileURL(__filename).href;' },
  plugins: [sharedSandbox, lazyNodeCrypto],
});
await build({
  ...common,
  entryPoints: ["src/sandbox/bwrap.ts"],
  outfile: `${out}/sandbox.cjs`,
  format: "cjs",
  supported: { "dynamic-import": false },
});
const turn = hashedName("turn");
// The loader of the cached files (src/cli/code-cache.ts), one file the bin and the entry require.
await build({
  ...common,
  entryPoints: ["src/cli/code-cache.ts"],
  outfile: `${out}/load.cjs`,
  format: "cjs",
});

/** Writes a file loaded by `requireWithCodeCache` as the function it compiles (see `wrapCommonJs`). */
function wrapped(file) {
  writeFileSync(file, wrapCommonJs(readFileSync(file, "latin1")), "latin1");
}

/**
 * Renames `<name>.cjs` to `<name>-<hash of its content>.cjs`: V8 checks a cache's source by its
 * length only, so a cache is named after the one content it was made for.
 */
function hashedName(name) {
  wrapped(`${out}/${name}.cjs`);
  const hash = createHash("sha256")
    .update(readFileSync(`${out}/${name}.cjs`))
    .digest("hex")
    .slice(0, 16);
  renameSync(`${out}/${name}.cjs`, `${out}/${name}-${hash}.cjs`);
  return `${name}-${hash}.cjs`;
}

// The entry's code, `cli-<hash>.cjs`, CommonJS too (Node starts a CommonJS entry without setting
// up its ES module loader; the folder's package.json says which), loaded by the bin with its own
// code cache. Its `import("./run.js")`, `import("./rules-command.js")` and the rest load the turn
// above; `--version` and `--help` never do.
const loader = `
import { join } from "node:path";
import { requireWithCodeCache } from "./load.cjs";
const turn = requireWithCodeCache(join(__dirname, ${JSON.stringify(turn)}), join(__dirname, ${JSON.stringify(`${turn}.cache`)}), require);
export const runCli = turn.runCli;
export const rulesCommand = turn.rulesCommand;
export const exportCommand = turn.exportCommand;
export const rewindCommand = turn.rewindCommand;
export const skillsCommand = turn.skillsCommand;
export const mcpCommand = turn.mcpCommand;
export const configuredArgs = turn.configuredArgs;
export const configCommand = turn.configCommand;
export const trustCommand = turn.trustCommand;
`;
await build({
  ...common,
  entryPoints: ["src/cli/main.ts"],
  outfile: `${out}/cli.cjs`,
  format: "cjs",
  supported: { "dynamic-import": false },
  define: { "import.meta.url": "__bundleURL" },
  banner: { js: 'var __bundleURL=require("node:url").pathToFileURL(__filename).href;' },
  plugins: [
    sharedSandbox,
    {
      name: "load",
      setup(bundler) {
        bundler.onResolve({ filter: /^\.\/load\.cjs$/ }, () => ({
          path: "./load.cjs",
          external: true,
        }));
      },
    },
    {
      name: "batch",
      setup(bundler) {
        bundler.onResolve({ filter: /^\.\.\/batch\/command\.js$/ }, () => ({
          path: "./batch.cjs",
          external: true,
        }));
      },
    },
    {
      name: "acp",
      setup(bundler) {
        bundler.onResolve({ filter: /^\.\.\/acp\/agent\.js$/ }, () => ({
          path: "./acp.cjs",
          external: true,
        }));
      },
    },
    {
      name: "turn",
      setup(bundler) {
        bundler.onResolve(
          {
            filter:
              /^\.\/(run|rules-command|export-command|rewind-command|skills-command|mcp-command|configured|config-command)\.js$/,
          },
          (args) =>
            args.importer.endsWith("main.ts") ? { path: "turn", namespace: "turn" } : undefined,
        );
        bundler.onLoad({ filter: /.*/, namespace: "turn" }, () => ({
          contents: loader,
          resolveDir: ".",
          loader: "js",
        }));
      },
    },
  ],
});
const entry = hashedName("cli");
writeFileSync(`${out}/package.json`, `${JSON.stringify({ type: "commonjs" })}\n`);
// The bin: a few lines that answer `--version` and otherwise load the entry with its code cache.
// Node run with `--import` or `--require` (NODE_OPTIONS, a preload) starts even a CommonJS entry
// through its ES module loader, which scans the whole entry's source for its exports first (about
// 10% of a bare `node`'s start-up for the 22 KB entry); a file it requires is not scanned. The
// version comes from package.json, as the entry's own answer does; when it cannot be written at
// once (a closed or full stdout), the entry runs and answers as it always does, with its exit
// codes and words.
const { version } = JSON.parse(readFileSync("package.json", "utf8"));
writeFileSync(
  `${out}/main.js`,
  `#!/usr/bin/env node
"use strict";
const argv = process.argv;
const entry = () =>
  require("./load.cjs").requireWithCodeCache(
    \`\${__dirname}/${entry}\`,
    \`\${__dirname}/${entry}.cache\`,
    require,
  );
if (argv.length === 3 && (argv[2] === "--version" || argv[2] === "-v")) {
  try {
    require("node:fs").writeSync(1, ${JSON.stringify(`${version}
`)});
  } catch {
    entry();
  }
} else entry();
`,
);
chmodSync(`${out}/main.js`, 0o755);
chmodSync("dist/testing/cli.js", 0o755); // the mini-agent-testing bin

// The shell parser's WebAssembly (runtime and bash grammar), loaded from beside the turn.
const require = createRequire(import.meta.url);
for (const wasm of [
  "web-tree-sitter/web-tree-sitter.wasm",
  "tree-sitter-bash/tree-sitter-bash.wasm",
])
  copyFileSync(require.resolve(wasm), `${out}/${wasm.slice(wasm.indexOf("/") + 1)}`);
// The stream-json protocol's JSON Schema, written from the TypeBox definitions the CLI itself
// checks input lines with: one definition, shipped as `mini-agent/stream-json.schema.json`.
const { streamJsonSchema } = await import("../dist/cli/stream-json-protocol.js");
writeFileSync("dist/stream-json.schema.json", `${JSON.stringify(streamJsonSchema(), null, 2)}\n`);
// The batch's task lines and result lines, from the TypeBox definitions it checks them with.
const { TaskLineSchema } = await import("../dist/batch/tasks.js");
const { ResultLineSchema } = await import("../dist/batch/results.js");
for (const [name, schema] of [
  ["batch-task", TaskLineSchema],
  ["batch-result", ResultLineSchema],
])
  writeFileSync(
    `dist/${name}.schema.json`,
    `${JSON.stringify({ $schema: "https://json-schema.org/draft/2020-12/schema", ...schema }, null, 2)}\n`,
  );
// The configuration file's JSON Schema, from the TypeBox definition both files are checked with.
const { configJsonSchema } = await import("../dist/config/schema.js");
writeFileSync("dist/config.schema.json", `${JSON.stringify(configJsonSchema(), null, 2)}\n`);

// V8's code for the turn and the entry, made by the Node that builds (children, so their flags are
// the default): first, for the turn, what compiling and loading it makes, then, replacing it, what
// one real two-turn run against a local server compiled for each (so the functions a turn calls
// are cached too). Each is written after its CRC-32 (`writeCodeCache`), which the CLI checks
// before handing the cache to V8.
const turnFile = resolve(out, turn);
const cacheFile = `${turnFile}.cache`;
const made = spawnSync(
  process.execPath,
  [
    "--input-type=module",
    "-e",
    `import { createRequire } from "node:module";
     import { makeCodeCache } from ${JSON.stringify(resolve("dist/cli/code-cache.js"))};
     makeCodeCache(${JSON.stringify(turnFile)}, ${JSON.stringify(cacheFile)}, createRequire(${JSON.stringify(turnFile)}));`,
  ],
  { stdio: "inherit", env: { PATH: process.env.PATH, HOME: process.env.HOME } },
);
if (made.status !== 0) throw new Error("making the turn's code cache failed");
await trainedCache();

async function trainedCache() {
  const server = await startMockServer();
  const scratch = mkdtempSync(join(tmpdir(), "mini-agent-build-"));
  const files = [resolve(out, turn), resolve(out, entry)];
  const trained = Object.fromEntries(files.map((file, n) => [file, join(scratch, `${n}.cache`)]));
  try {
    writeFileSync(join(scratch, "notes.txt"), "hello\n");
    // One user skill, so the code that finds, reads, caches and lists skills is compiled too.
    const skill = join(scratch, "state", "skills", "example");
    mkdirSync(skill, { recursive: true });
    writeFileSync(
      join(skill, "SKILL.md"),
      "---\nname: example\ndescription: What the example skill is for.\n---\nSteps.\n",
    );
    // Not spawnSync: the local server answers from this process's event loop.
    const child = spawn(
      process.execPath,
      [
        "--require",
        resolve("scripts/train-code-cache.cjs"),
        resolve(out, "main.js"),
        "read notes.txt",
      ],
      {
        cwd: scratch,
        stdio: ["ignore", "ignore", "pipe"],
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: "build-key",
          MINI_AGENT_HOME: join(scratch, "state"),
          TRAIN_CACHES: JSON.stringify(trained),
        },
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const [status] = await once(child, "close");
    const run = { status, stderr };
    if (run.status !== 0 || server.requests.length !== 2)
      throw new Error(`the code cache's training run failed: ${run.stderr}`);
    const { writeCodeCache } = await import("../dist/cli/code-cache.js");
    for (const file of files) writeCodeCache(`${file}.cache`, readFileSync(trained[file]));
  } finally {
    server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
