// Preloaded by scripts/bundle.mjs into one real run of the built CLI (a two-turn task against a
// local server): when the run exits, the code V8 compiled for the turn file, the functions the
// run called included, is written to TRAIN_TURN_CACHE, which the build then writes as that
// file's cache, after its checksum. The CLI itself never writes a cache.
const { writeFileSync } = require("node:fs");
const vm = require("node:vm");

const { TRAIN_TURN_FILE: file, TRAIN_TURN_CACHE: cache } = process.env;
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(source, options) {
    super(source, options);
    if (options?.filename !== file) return;
    process.on("exit", () => writeFileSync(cache, this.createCachedData()));
  }
};
