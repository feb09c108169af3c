// Edge cases of regime_core/resources/router.js under Node (`node --test tests/js`), run by
// tests/test_router_js.py in `make test`. Parity with the Python router is tested there.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const MODULE = path.join(__dirname, "..", "..", "regime_core", "resources", "router.js");
const R = require(MODULE);
const MODEL = R.loadModel(
  JSON.parse(fs.readFileSync(path.join(path.dirname(MODULE), "default_router.json"), "utf8"))
);
const Q = "Who is the mother of the director of the film Kestrel Bay?";
const B = "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti of the Lyon School.";

test("the sentence rule keeps abbreviations and initials inside a sentence", () => {
  assert.deepEqual(R.splitBridge("Made by J. R. R. Tolkien in the U.S. in 1937. Dr. Who? Yes!"), [
    "Made by J. R. R. Tolkien in the U.S. in 1937.",
    "Dr. Who?",
    "Yes!",
  ]);
  assert.deepEqual(R.splitBridge('He said "Go." Then (it ended.) Fine'), [
    'He said "Go."',
    "Then (it ended.)",
    "Fine",
  ]);
  assert.deepEqual(R.splitBridge(" \u3000\n "), []);
  assert.deepEqual(R.splitBridge("A.\u00a0\u00a0B."), ["A.\u00a0\u00a0B."]); // "A." is an initial
  assert.deepEqual(R.splitBridge("One.\n\nTwo."), ["One.", "Two."]);
});

test("the text view finds capitalised spans with connectors, folded", () => {
  const v = R.view("Did Beyoncé meet the University of Oxford's dean, Ana Lind?");
  assert.deepEqual(
    v.entities.map((e) => e.surface),
    ["Beyoncé", "University of Oxford's", "Ana Lind"]
  );
  assert.deepEqual(v.entities[0].words, ["beyonce"]);
  assert.equal(v.firstWord, "did");
  assert.equal(R.view("").firstWord, "");
  assert.equal(R.view("🎬 🚢").words.size, 0);
});

test("routing gives a decision, B_rel and five finite features", () => {
  const d = R.routeText(MODEL, Q, B, "Kestrel Bay (film)");
  assert.equal(d.b_rel_index, 1);
  assert.equal(d.b_rel, "It was directed by Odile Marchetti of the Lyon School.");
  assert.ok(["q", "union"].includes(d.action));
  assert.ok(d.probability > 0 && d.probability < 1);
  assert.deepEqual(Object.keys(d.features), R.FEATURE_NAMES);
  // The contributions and the intercept add up to the log-odds the probability comes from.
  const logit = d.contributions.reduce((a, b) => a + b, 0) + MODEL.intercept;
  assert.ok(Math.abs(1 / (1 + Math.exp(-logit)) - d.probability) < 1e-12);
  assert.equal(d.action === "union", d.probability > 0.5);
});

test("bad input raises RouteError with the Python messages", () => {
  assert.throws(() => R.routeText(MODEL, "  ", B), /route: the question is empty/);
  assert.throws(() => R.routeText(MODEL, Q, "\n\t"), /the bridge text is empty/);
  assert.throws(() => R.routeText(MODEL, Q, B, " "), /bridge_title must be None or a non-empty/);
  assert.throws(() => R.route(MODEL, Q, []), /the bridge has no sentences/);
  assert.throws(() => R.route(MODEL, Q, ["ok", 3]), /bridge sentence 1 is a number/);
  assert.throws(() => R.routeText(MODEL, null, B), R.RouteError);
});

test("a model with other feature definitions or broken numbers is refused", () => {
  const doc = JSON.parse(
    fs.readFileSync(path.join(path.dirname(MODULE), "default_router.json"), "utf8")
  );
  assert.throws(() => R.loadModel({ ...doc, feature_spec: "other+1" }), /feature_spec/);
  assert.throws(() => R.loadModel({ ...doc, coef: [1, 2] }), /coef/);
  assert.throws(
    () => R.loadModel({ ...doc, scaler: { mean: doc.scaler.mean, scale: [1, 1, 0, 1, 1] } }),
    /scaler.scale/
  );
  assert.throws(() => R.loadModel({ ...doc, threshold: 1 }), /threshold/);
});

test("the page's input checks: empty, too long, emoji, markup", () => {
  assert.match(R.inputProblems("", B, "").errors[0], /Type a question/);
  assert.match(R.inputProblems(Q, "   ", "").errors[0], /Paste the bridge/);
  const huge = "Kestrel Bay is a film. ".repeat(4500); // ~100 KB
  assert.match(R.inputProblems(Q, huge, "").errors[0], /routes passages of up to 20,000/);
  assert.match(R.inputProblems("🎬 Who directed it?", B, "").notes.join(" "), /Emoji/);
  assert.match(R.inputProblems(Q, "<p>" + B + "</p>", "").notes.join(" "), /HTML markup/);
  assert.match(R.inputProblems("🎬 🚢", B, "").notes.join(" "), /no words/);
  assert.deepEqual(R.inputProblems(Q, B, ""), { errors: [], notes: [] });
  // The router itself routes the 100 KB bridge (the page refuses it only to stay readable).
  const d = R.routeText(MODEL, Q, huge);
  assert.equal(d.sentences.length, 4500);
});

test("json output follows Python's json.dumps", () => {
  assert.equal(R.pyFloat(1), "1.0");
  assert.equal(R.pyFloat(0.1), "0.1");
  assert.equal(R.pyFloat(1e-5), "1e-05");
  assert.equal(R.pyFloat(1.5e16), "1.5e+16");
  assert.equal(R.pyFloat(123456.789), "123456.789");
  assert.equal(R.pyFloat(0.0001), "0.0001");
  assert.equal(R.pyString('é "x"\n\u{1F3AC}\u007f'), '"\\u00e9 \\"x\\"\\n\\ud83c\\udfac\\u007f"');
});

test("the command line: --json, errors, help", () => {
  const run = (...args) => spawnSync(process.execPath, [MODULE, ...args], { encoding: "utf8" });
  const ok = run("--question", Q, "--bridge", B, "--json");
  assert.equal(ok.status, 0);
  const out = JSON.parse(ok.stdout);
  assert.deepEqual(Object.keys(out), ["action", "probability", "b_rel", "b_rel_index", "features"]);
  assert.match(ok.stdout, /"comparison_cues": 0\.0/);
  const missing = run("--question", Q);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /needs --question TEXT and --bridge TEXT/);
  assert.equal(run("--nope").status, 2);
  assert.equal(run("--model", "/nonexistent.json", "--question", Q, "--bridge", B).status, 2);
  assert.match(run("--help").stdout, /usage: node router.js/);
});

test("routing a 2,000-character bridge is fast under Node (reported, not asserted)", () => {
  const sentence = "It was directed by Odile Marchetti of the Lyon School in 1931. ";
  const bridge = sentence.repeat(Math.ceil(2000 / sentence.length)).slice(0, 2000);
  for (let i = 0; i < 50; i++) R.routeText(MODEL, Q, bridge); // warm up the JIT
  const n = 500;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) R.routeText(MODEL, Q, bridge);
  const ms = (performance.now() - t0) / n;
  console.log(`# node: routing a 2,000-character bridge takes ${ms.toFixed(3)} ms`);
  assert.ok(Number.isFinite(ms));
});
