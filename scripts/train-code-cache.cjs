// Preloaded by scripts/bundle.mjs into one real run of the built CLI (a two-turn task against a
// local server): when the run exits, the code V8 compiled for each file of TRAIN_CACHES (a JSON
// object: file → where its cache goes), the functions the run called included, is written there;
// the build then writes each as that file's cache, after its checksum. The CLI itself never
// writes a cache.
const { writeFileSync } = require("node:fs");
const vm = require("node:vm");

const caches = JSON.parse(process.env.TRAIN_CACHES ?? "{}");
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(source, options) {
    super(source, options);
    const cache = caches[options?.filename];
    if (cache === undefined) return;
    process.on("exit", () => writeFileSync(cache, this.createCachedData()));
  }
};
