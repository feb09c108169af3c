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
const MODEL_FILE = path.join(path.dirname(MODULE), "default_router.json");
const MODEL_TEXT = fs.readFileSync(MODEL_FILE, "utf8");
const MODEL = R.loadModel(MODEL_TEXT, MODEL_FILE);
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
  assert.throws(() => R.routeText(MODEL, "  ", B), /route: field 'question' must be a non-blank/);
  assert.throws(() => R.routeText(MODEL, Q, "\n\t"), /route: field 'bridge' must be a non-blank/);
  assert.throws(() => R.routeText(MODEL, Q, B, " "), /field 'bridge_title' must be null or a/);
  assert.throws(() => R.route(MODEL, Q, []), /field 'bridge_sentences' has 0 items/);
  assert.throws(() => R.route(MODEL, Q, ["ok", 3n]), /field 'bridge_sentences\[1\]' must be a/);
  assert.throws(() => R.routeText(MODEL, null, B), R.RouteError);
});

test("a model with other feature definitions or broken numbers is refused", () => {
  // Edits of the file's text, as a hand edit would make them (JSON.stringify would also turn
  // every 1.0 into 1, an integer for Python, and so change the rules' feature spec).
  const edited = (pattern, replacement) => {
    const text = MODEL_TEXT.replace(pattern, replacement);
    assert.notEqual(text, MODEL_TEXT, `${pattern} not found in the model`);
    return () => R.loadModel(text, "m.json");
  };
  assert.throws(edited(/"feature_spec": "[^"]*"/, '"feature_spec": "other+1"'), /feature_spec/);
  assert.throws(
    edited(/"coef": \[[^\]]*\]/, '"coef": [1, 2]'),
    /^Error: m\.json: field 'coef' /
  );
  assert.throws(edited(/"threshold": [0-9.]+/, '"threshold": 1'), /m\.json: field 'threshold' /);
  assert.throws(edited(/"stem_chars": 5/, '"stem_chars": 5.0'), /'stem_chars' must be an integer/);
  assert.throws(
    edited(/"intercept": /, '"intercept": 1e-300, "x": '),
    /m\.json: field 'x' /
  );
  assert.throws(edited(/^\{/, '{"format": 1, '), /at format: the key 'format' appears twice in one object/);
  assert.throws(edited(/"alpha": [0-9.]+/, '"alpha": NaN'), /at alpha: NaN is not a JSON number/);
  assert.throws(() => R.loadModel("[".repeat(5000), "m.json"), /values nest more than 100 levels deep/);
  assert.throws(
    () => R.loadModel("\ufeff" + MODEL_TEXT, "m.json"),
    /m\.json, line 1, column 1: malformed JSON \(Unexpected UTF-8 BOM/
  );
  assert.throws(() => R.loadModel(JSON.parse(MODEL_TEXT)), /expects the JSON text/);
  // JSON.stringify writes 1.0 as 1: the seal, over Python's canonical JSON, no longer matches.
  assert.throws(
    () => R.loadModel(JSON.stringify({ ...JSON.parse(MODEL_TEXT), rules: undefined })),
    /field 'rules' /
  );
});

test("sha256 is FIPS 180-4's, on every padding boundary", () => {
  const crypto = require("node:crypto");
  for (const n of [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 1000, 100003]) {
    const bytes = new Uint8Array(n).map((_, k) => (k * 131 + n) & 0xff);
    assert.equal(R.sha256Hex(bytes), crypto.createHash("sha256").update(bytes).digest("hex"), n);
  }
});

test("the strict JSON reader keeps Python's integers and floats apart", () => {
  const v = R.parsePyJson('{"a": 1, "b": 1.0, "c": -0, "d": 1e300, "e": "\\ud83c\\udfac\\u00e9",' +
    ' "f": [true, null], "g": 123456789012345678901234567890}');
  assert.equal(v.a, 1n);
  assert.equal(v.b, 1);
  assert.equal(R.pyJson(v, { item: ",", key: ":", ascii: false }),
    '{"a":1,"b":1.0,"c":0,"d":1e+300,"e":"\u{1F3AC}\u00e9","f":[true,null],' +
    '"g":123456789012345678901234567890}');
  for (const bad of ["", "{", '{"a" 1}', "[1,]", "01", '"\t"', '"\\x"', "1 2", "-", "nul"]) {
    assert.throws(() => R.parsePyJson(bad), R.RouteError, bad);
  }
  assert.throws(() => R.parsePyJson("1".repeat(4301)), /a number has too many digits to be read/);
  // as regime_core.strict_json.parse_json: a float beyond a double's range, NaN, a repeated key
  assert.throws(() => R.parsePyJson('{"a": [1e400]}'), /the number 1e400 is beyond a float's range/);
  assert.throws(() => R.parsePyJson('{"a": NaN}'), /NaN is not a JSON number/);
  assert.throws(() => R.parsePyJson('{"a": 1, "a": 2}'), /the key 'a' appears twice/);
  assert.deepEqual(R.parsePyJson('{"__proto__": 1}')["__proto__"], 1n);
});

test("the page's input checks: empty, too long, emoji, markup", () => {
  assert.match(R.inputProblems("", B, "").errors[0], /Type a question/);
  assert.match(R.inputProblems(Q, "   ", "").errors[0], /Paste the bridge/);
  const huge = "Kestrel Bay is a film. ".repeat(4500); // ~100 KB
  assert.match(R.inputProblems(Q, huge, "").errors[0], /routes passages of up to 20,000/);
  assert.match(R.inputProblems("🎬 Who directed it?", B, "").notes.join(" "), /Emoji/);
  assert.match(R.inputProblems(Q, "<p>" + B + "</p>", "").notes.join(" "), /HTML markup/);
  assert.deepEqual(R.inputProblems(Q, B, ""), { errors: [], notes: [] });
  // The router itself routes the 100 KB bridge (the page refuses it only to stay readable).
  const d = R.routeText(MODEL, Q, huge);
  assert.equal(d.sentences.length, 4500);
});

test("the page says when the text is not English", () => {
  const english = [
    [Q, B],
    [
      "Were Tomas Ruiz and Ana Lind both born in Chile?",
      "Tomas Ruiz is a poet. He was born in 1948.",
    ],
    ["Kestrel Bay director?", "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti."],
  ];
  for (const [q, b] of english) assert.equal(R.languageNote(q, b, ""), null, q);
  const other = [
    ["谁执导了《鹰湾》？", B, /another script than English \(“谁”\)/],
    [Q, "Кестрел Бэй — фильм 1931 года.", /another script/],
    ["Wer ist die Mutter des Regisseurs von Kestrel Bay?", B, /does not read as English/],
    [Q, "Kestrel Bay es una película de 1931 dirigida por Odile Marchetti y rodada en Bretaña.",
      /does not read as English/],
  ];
  for (const [q, b, message] of other) {
    assert.match(R.languageNote(q, b, ""), message);
    assert.match(R.inputProblems(q, b, "").notes.join(" "), /built for English questions/);
  }
});

test("a decision that rests on no feature says so", () => {
  const none = R.routeText(MODEL, "???", B);
  assert.match(R.noFeatureNote("???", none), /rests on nothing in your question: it has no words/);
  const p = none.probability.toFixed(3);
  assert.match(R.noFeatureNote("???", none), new RegExp(`p\\(union\\) = ${p}`));
  const zeros = R.routeText(MODEL, "what is it?", "it is a film. it is old.");
  assert.ok(Object.values(zeros.features).every((v) => v === 0));
  assert.match(R.noFeatureNote("what is it?", zeros), /rests on no feature: all five are 0/);
  assert.equal(R.noFeatureNote(Q, R.routeText(MODEL, Q, B)), null);
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
  assert.deepEqual(Object.keys(out), [
    "action", "probability", "b_rel", "b_rel_index", "features", "alpha", "alpha_rule",
  ]);
  assert.match(ok.stdout, /"comparison_cues": 0\.0/);
  const missing = run("--question", Q);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /needs --question TEXT and --bridge TEXT/);
  assert.equal(run("--nope").status, 2);
  assert.equal(run("--model", "/nonexistent.json", "--question", Q, "--bridge", B).status, 2);
  assert.match(run("--help").stdout, /usage: node router.js/);
});

test("bad --batch input: one line naming the file and line, status 2, nothing on stdout", () => {
  const dir = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "router-batch-"));
  const write = (name, content) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content);
    return file;
  };
  const good = JSON.stringify({ id: "a", question: Q, bridge: B });
  const notUtf8 = Buffer.concat([
    Buffer.from(`${good}\n{"id": "`),
    Buffer.from([0xc3, 0x28]),
    Buffer.from('"}\n'),
  ]);
  const cases = [
    [
      write("malformed.jsonl", `${good}\n\n{"id": "b", "question": }\n`),
      /malformed.jsonl, line 3: not valid JSON \(Expecting value/,
    ],
    [write("list.jsonl", `${good}\n[1, 2]\n`), /list.jsonl, line 2: expected a JSON object/],
    [write("dup.jsonl", '{"id": 1, "id": 2}\n'), /dup.jsonl, line 1: not valid JSON \(the key 'id' appears twice/],
    [write("bytes.jsonl", notUtf8), /bytes.jsonl: not UTF-8 text \(byte 0xc3 at \w+ \d+, line 2\)/],
    [path.join(dir, "absent.jsonl"), /cannot read .*absent.jsonl: no such file or directory/],
    [dir, /cannot read .*: it is a directory/],
    ["", /argument --batch: the path is empty/],
  ];
  for (const [file, message] of cases) {
    const done = spawnSync(process.execPath, [MODULE, "--batch", file], { encoding: "utf8" });
    assert.equal(done.status, 2, done.stderr);
    assert.equal(done.stdout, "");
    assert.match(done.stderr, /^router.js: error: [^\n]*\n$/);
    assert.match(done.stderr, message);
  }
  const fine = spawnSync(process.execPath, [MODULE, "--batch", write("ok.jsonl", `${good}\n\n`)], {
    encoding: "utf8",
  });
  assert.equal(fine.status, 0, fine.stderr);
  assert.equal(JSON.parse(fine.stdout).b_rel_index, 1);
});

test("text that was not UTF-8 is refused, valid text of every script is routed", () => {
  assert.throws(() => R.routeText(MODEL, "Who\ufffd?", B), /question is not valid UTF-8 text \(ch/);
  assert.throws(() => R.routeText(MODEL, Q, "A. \udc80"), /bridge is not valid UTF-8 text \(char\w+ 3/);
  assert.throws(() => R.routeText(MODEL, Q, B, "\ud800"), /bridge title is not valid UTF-8/);
  // the position counts code points, as Python does: the emoji is one character
  assert.throws(() => R.routeText(MODEL, "🎬\ufffd", B), /character 1 is/);
  const mixed = R.routeText(MODEL, "Who 🎬 directed 東京?", "東京は都市です。 🎬 It is.");
  assert.deepEqual(mixed.sentences, ["東京は都市です。", "🎬 It is."]);
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
