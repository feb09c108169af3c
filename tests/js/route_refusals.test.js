// The shared table tests/route_refusals.json through `node router.js` (tests/route_refusals.py
// describes it; tests/test_route_refusals.py runs the same table through `regime route`): the
// same exit status, and for a refusal the same one line on stderr and one JSON object on stdout.
// Each case runs the command's main in this process (router.test.js spawns the command line).
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const MODULE = path.join(__dirname, "..", "..", "regime_core", "resources", "router.js");
const R = require(MODULE);
const PACKAGED = fs.readFileSync(path.join(path.dirname(MODULE), "default_router.json"), "utf8");
const TABLE = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "route_refusals.json"), "utf8"));
const QUESTION = "Who is the mother of the director of Kestrel Bay?";
const BRIDGE = "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti.";
const TITLE = "Kestrel Bay (film)";

function expand(text) {
  if (typeof text === "string") return text;
  return (text.first || "") + text.repeat.repeat(text.times) + (text.then || "");
}

/** `node router.js ...argv`, in this process: its exit status and what it wrote to each stream. */
function runMain(argv) {
  const written = { stdout: "", stderr: "" };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  for (const stream of ["stdout", "stderr"]) {
    process[stream].write = (chunk) => {
      written[stream] += chunk;
      return true;
    };
  }
  try {
    return { status: R.main(argv), ...written };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
  }
}

function modelText(spec) {
  if (spec.text !== undefined) return spec.text;
  if (spec.nest !== undefined) {
    return spec.open.repeat(spec.nest) + (spec.inner || "") + (spec.close || "").repeat(spec.nest);
  }
  let out = PACKAGED;
  for (const [old, replacement] of spec.replace) {
    assert.ok(out.includes(old), `replacement ${old} is not in the packaged model`);
    const at = out.indexOf(old);
    out = out.slice(0, at) + expand(replacement) + out.slice(at + old.length);
  }
  return out;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "route-refusals-"));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const classes = [...new Set(TABLE.cases.map((c) => c.class))];
for (const name of classes) {
  const cases = TABLE.cases.filter((c) => c.class === name);
  test(`router.js judges the ${cases.length} "${name}" cases as regime route does`, () => {
    const wrong = [];
    cases.forEach((c, k) => {
      const argv = [
        "--question", expand(c.question ?? QUESTION),
        "--bridge", expand(c.bridge ?? BRIDGE),
        "--bridge-title", expand(c.title ?? TITLE),
      ]; // prettier-ignore
      let model = null;
      if (c.model) {
        model = path.join(dir, `${name}-${k}.json`);
        fs.writeFileSync(model, modelText(c.model), "utf8");
        argv.push("--model", model);
      }
      const done = runMain([...argv, "--json"]);
      const line = model === null ? c.line : c.line.split("{model}").join(model);
      const stderr = c.status === 0 ? "" : `router.js: error: ${line}\n`;
      const out = done.stdout.trim().split("\n");
      const oneObject = c.status === 0 || (out.length === 1 && JSON.parse(out[0]).command === "route");
      if (done.status !== c.status || done.stderr !== stderr || !oneObject) {
        wrong.push(`${c.name}: status ${done.status}, ${done.stderr.slice(0, 300)}`);
      }
    });
    assert.deepEqual(wrong, []);
  });
}
