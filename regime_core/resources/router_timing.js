/*
 * Times router.js's route() for regime_core.router.latency (node only, never in the browser).
 *
 *   node router_timing.js MODEL.json ITEMS.jsonl warm WARMUP PASSES
 *       -> JSON list of PASSES lists: ns of every item, after WARMUP untimed calls
 *   node router_timing.js MODEL.json ITEMS.jsonl cold INDEX
 *       -> JSON list: ns of item INDEX, the first call of this process
 *
 * ITEMS.jsonl holds one {"question", "sentences", "title"} object per line. The model is loaded
 * and the items read before any clock starts; each call is timed with process.hrtime.bigint().
 */
"use strict";
const fs = require("fs");
const path = require("path");
const router = require(path.join(__dirname, "router.js"));

function main(argv) {
  const [modelFile, itemsFile, mode, count, passesArg] = argv;
  const model = router.loadModel(fs.readFileSync(modelFile, "utf8"), modelFile);
  const items = fs
    .readFileSync(itemsFile, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
  const n = Number(count);
  if (!Number.isInteger(n) || n < 0) throw new Error(`bad count ${count}`);
  const once = (item) => router.route(model, item.question, item.sentences, item.title);
  const out = [];
  if (mode === "cold") {
    const start = process.hrtime.bigint();
    once(items[n % items.length]);
    out.push(Number(process.hrtime.bigint() - start));
  } else if (mode === "warm") {
    const passes = Number(passesArg === undefined ? 1 : passesArg);
    if (!Number.isInteger(passes) || passes < 1) throw new Error(`bad passes ${passesArg}`);
    for (let i = 0; i < n; i++) once(items[i % items.length]);
    for (let p = 0; p < passes; p++) {
      const pass = [];
      for (const item of items) {
        const start = process.hrtime.bigint();
        once(item);
        pass.push(Number(process.hrtime.bigint() - start));
      }
      out.push(pass);
    }
  } else {
    throw new Error(`mode must be warm or cold, got ${mode}`);
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

try {
  main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`router_timing.js: ${err.message}\n`);
  process.exitCode = 1;
}
