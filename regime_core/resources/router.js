/*
 * The RegimeRouter in plain JavaScript: a faithful port of regime_core.router (sentence rule,
 * text view, B_rel selector, five features, logistic model) reading default_router.json.
 * No framework, no build step, no network. One file, three uses:
 *
 *   node regime_core/resources/router.js --question Q --bridge B [--bridge-title T] [--json]
 *       prints what `regime route` prints for the same arguments (--model FILE as well);
 *   node regime_core/resources/router.js --batch FILE.jsonl
 *       routes one JSON object per line (the parity tests in tests/test_router_js.py);
 *   <script src="router.js"> in the book's "Route your own question" page: mounts the demo
 *       on every element with class "regime-router-demo" (the model JSON is embedded in the page,
 *       so the page works from file:// without fetch).
 *
 * Python semantics are reproduced exactly where they differ from JavaScript's: \w is Unicode
 * letters, numbers and "_"; isspace() and isupper() are Python's; lengths and slices count code
 * points; folding drops the characters Python's unicodedata.combining() marks (table below).
 * Characters added to Unicode after Python's version (14.0) may be read differently.
 */
(function (root, factory) {
  "use strict";
  const api = factory();
  if (typeof module === "object" && module.exports) {
    module.exports = api;
    if (typeof require === "function" && require.main === module) {
      process.exitCode = api.main(process.argv.slice(2));
    }
  } else {
    root.RegimeRouterJS = api;
  }
  if (typeof document !== "undefined") {
    const mount = () => api.mountAll(document);
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
    else mount();
  }
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

  // --- constants mirrored from Python (tests/test_router_js.py checks each against it) ------

  const FEATURE_NAMES = [
    "comparison_cues",
    "yes_no_opener",
    "question_entities",
    "question_names_b_rel_entity",
    "b_rel_has_new_entity",
  ];
  // The feature definitions this port implements (regime_core.router.FEATURE_SPEC): a model
  // fitted on other definitions or rules is refused, as load_router refuses it.
  const FEATURE_SPEC = "regime-router-features/1+dd6c046511bf";
  const ACTIONS = ["q", "union"];

  // sklearn.feature_extraction.text.ENGLISH_STOP_WORDS
  const STOP_WORDS = new Set(
    (
      "a about above across after afterwards again against all almost alone along already also " +
      "although always am among amongst amoungst amount an and another any anyhow anyone " +
      "anything anyway anywhere are around as at back be became because become becomes " +
      "becoming been before beforehand behind being below beside besides between beyond bill " +
      "both bottom but by call can cannot cant co con could couldnt cry de describe detail do " +
      "done down due during each eg eight either eleven else elsewhere empty enough etc even " +
      "ever every everyone everything everywhere except few fifteen fifty fill find fire first " +
      "five for former formerly forty found four from front full further get give go had has " +
      "hasnt have he hence her here hereafter hereby herein hereupon hers herself him himself " +
      "his how however hundred i ie if in inc indeed interest into is it its itself keep last " +
      "latter latterly least less ltd made many may me meanwhile might mill mine more moreover " +
      "most mostly move much must my myself name namely neither never nevertheless next nine " +
      "no nobody none noone nor not nothing now nowhere of off often on once one only onto or " +
      "other others otherwise our ours ourselves out over own part per perhaps please put " +
      "rather re same see seem seemed seeming seems serious several she should show side since " +
      "sincere six sixty so some somehow someone something sometime sometimes somewhere still " +
      "such system take ten than that the their them themselves then thence there thereafter " +
      "thereby therefore therein thereupon these they thick thin third this those though three " +
      "through throughout thru thus to together too top toward towards twelve twenty two un " +
      "under until up upon us very via was we well were what whatever when whence whenever " +
      "where whereafter whereas whereby wherein whereupon wherever whether which while whither " +
      "who whoever whole whom whose why will with within without would yet you your yours " +
      "yourself yourselves"
    ).split(" ")
  );
  // regime_core.router._text.CONNECTORS and NON_NAME_OPENERS
  const CONNECTORS = new Set(
    "of the de del della der di du da la le les van von y upon am".split(" ")
  );
  const NON_NAME_OPENERS = new Set([
    ...STOP_WORDS,
    ..."do does did shall will would list tell give who whose".split(" "),
  ]);
  // regime_core.router.sentences
  const TERMINALS = ".!?";
  const CLOSERS = "\"'\u201d\u2019)]";
  const OPENERS = "\"'\u201c\u2018([";
  const ABBREVIATIONS = new Set(
    (
      "Mr Mrs Ms Dr Prof St Jr Sr Mt Ft Gen Col Lt Capt Sgt Gov Sen Rep Rev Hon Inc Ltd Co " +
      "Corp Bros vs Jan Feb Aug Sept Oct Nov Dec ca approx"
    ).split(" ")
  );
  // Python's str.isspace() characters.
  const PY_SPACE =
    "\t\n\u000b\u000c\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003" +
    "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000";
  // Code points whose canonical combining class is not 0 (Python's unicodedata.combining, 14.0).
  const COMBINING_RANGES =
    "300-34e,350-36f,483-487,591-5bd,5bf,5c1-5c2,5c4-5c5,5c7,610-61a,64b-65f,670,6d6-6dc," +
    "6df-6e4,6e7-6e8,6ea-6ed,711,730-74a,7eb-7f3,7fd,816-819,81b-823,825-827,829-82d,859-85b," +
    "898-89f,8ca-8e1,8e3-8ff,93c,94d,951-954,9bc,9cd,9fe,a3c,a4d,abc,acd,b3c,b4d,bcd,c3c,c4d," +
    "c55-c56,cbc,ccd,d3b-d3c,d4d,dca,e38-e3a,e48-e4b,eb8-eba,ec8-ecb,f18-f19,f35,f37,f39," +
    "f71-f72,f74,f7a-f7d,f80,f82-f84,f86-f87,fc6,1037,1039-103a,108d,135d-135f,1714-1715,1734," +
    "17d2,17dd,18a9,1939-193b,1a17-1a18,1a60,1a75-1a7c,1a7f,1ab0-1abd,1abf-1ace,1b34,1b44," +
    "1b6b-1b73,1baa-1bab,1be6,1bf2-1bf3,1c37,1cd0-1cd2,1cd4-1ce0,1ce2-1ce8,1ced,1cf4," +
    "1cf8-1cf9,1dc0-1dff,20d0-20dc,20e1,20e5-20f0,2cef-2cf1,2d7f,2de0-2dff,302a-302f," +
    "3099-309a,a66f,a674-a67d,a69e-a69f,a6f0-a6f1,a806,a82c,a8c4,a8e0-a8f1,a92b-a92d,a953," +
    "a9b3,a9c0,aab0,aab2-aab4,aab7-aab8,aabe-aabf,aac1,aaf6,abed,fb1e,fe20-fe2f,101fd,102e0," +
    "10376-1037a,10a0d,10a0f,10a38-10a3a,10a3f,10ae5-10ae6,10d24-10d27,10eab-10eac," +
    "10f46-10f50,10f82-10f85,11046,11070,1107f,110b9-110ba,11100-11102,11133-11134,11173," +
    "111c0,111ca,11235-11236,112e9-112ea,1133b-1133c,1134d,11366-1136c,11370-11374,11442," +
    "11446,1145e,114c2-114c3,115bf-115c0,1163f,116b6-116b7,1172b,11839-1183a,1193d-1193e," +
    "11943,119e0,11a34,11a47,11a99,11c3f,11d42,11d44-11d45,11d97,16af0-16af4,16b30-16b36," +
    "16ff0-16ff1,1bc9e,1d165-1d169,1d16d-1d172,1d17b-1d182,1d185-1d18b,1d1aa-1d1ad," +
    "1d242-1d244,1e000-1e006,1e008-1e018,1e01b-1e021,1e023-1e024,1e026-1e02a,1e130-1e136," +
    "1e2ae,1e2ec-1e2ef,1e8d0-1e8d6,1e944-1e94a";

  function charClass(chars) {
    return chars.replace(/[\\\]\-^]/g, "\\$&");
  }
  const WS = charClass(PY_SPACE);
  // Python's \w on str: Unicode letters and numbers, and "_" (marks are not word characters).
  const W = "\\p{L}\\p{N}_";
  const WORD_RE = new RegExp(`[${W}]+(?:['\u2019&.\\-][${W}]+)*`, "gu");
  const CHUNK_RE = new RegExp(`[^${WS}]+`, "gu");
  const ALL_SPACE_RE = new RegExp(`^[${WS}]+$`, "u");
  const UPPER_RE = /^\p{Uppercase}/u;
  const ASCII_RE = /^[\x00-\x7f]*$/;
  const INITIALS_RE = /^(?:[A-Za-z]\.)+$/;
  // regime_core.router._text.strip_disambiguator: Python's \s is str.isspace().
  const DISAMBIGUATOR_RE = new RegExp(`[${WS}]*\\([^)]*\\)[${WS}]*$`, "u");

  const COMBINING = (() => {
    const ranges = COMBINING_RANGES.split(",").map((r) => {
      const [a, b] = r.split("-");
      return [parseInt(a, 16), parseInt(b === undefined ? a : b, 16)];
    });
    return (cp) => {
      let lo = 0;
      let hi = ranges.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (cp < ranges[mid][0]) hi = mid - 1;
        else if (cp > ranges[mid][1]) lo = mid + 1;
        else return true;
      }
      return false;
    };
  })();

  // --- Python string primitives ---------------------------------------------------------------

  function isSpace(s) {
    return s.length > 0 && ALL_SPACE_RE.test(s);
  }
  function isAscii(s) {
    return ASCII_RE.test(s);
  }
  function codePoints(s) {
    return isAscii(s) ? s.length : Array.from(s).length;
  }
  function cpSlice(s, n) {
    return isAscii(s) ? s.slice(0, n) : Array.from(s).slice(0, n).join("");
  }
  function pyStrip(s, chars) {
    let a = 0;
    let b = s.length;
    while (a < b && chars.includes(s[a])) a++;
    while (b > a && chars.includes(s[b - 1])) b--;
    return s.slice(a, b);
  }
  function lstrip(s, chars) {
    let a = 0;
    while (a < s.length && chars.includes(s[a])) a++;
    return s.slice(a);
  }
  function rstrip(s, chars) {
    let b = s.length;
    while (b > 0 && chars.includes(s[b - 1])) b--;
    return s.slice(0, b);
  }
  function isBlank(s) {
    return pyStrip(s, PY_SPACE) === "";
  }

  // --- regime_core.router.sentences -----------------------------------------------------------

  function isAbbreviation(chunk) {
    const word = lstrip(chunk, OPENERS);
    if (!word.endsWith(".")) return false;
    return INITIALS_RE.test(word) || ABBREVIATIONS.has(word.slice(0, -1));
  }

  function endsSentence(chunk) {
    const core = rstrip(chunk, CLOSERS);
    if (!core || !TERMINALS.includes(core[core.length - 1])) return false;
    return core[core.length - 1] !== "." || !isAbbreviation(core);
  }

  function splitBridge(text) {
    if (typeof text !== "string") {
      throw new RouteError(`split_bridge expects a string, got ${typeof text}`);
    }
    const sentences = [];
    let start = -1;
    let end = -1;
    for (const m of text.matchAll(CHUNK_RE)) {
      if (start < 0) start = m.index;
      end = m.index + m[0].length;
      if (endsSentence(m[0])) {
        sentences.push(text.slice(start, end));
        start = -1;
      }
    }
    if (start >= 0) sentences.push(text.slice(start, end));
    return sentences;
  }

  // --- regime_core.router._text ---------------------------------------------------------------

  function fold(word) {
    const lower = word.toLowerCase();
    if (isAscii(lower)) return lower;
    let out = "";
    for (const ch of lower.normalize("NFKD")) {
      if (!COMBINING(ch.codePointAt(0))) out += ch;
    }
    return out;
  }

  function stripDisambiguator(title) {
    return title.replace(DISAMBIGUATOR_RE, "");
  }

  function view(text) {
    const raw = [];
    const separators = [];
    let last = 0;
    for (const m of text.matchAll(WORD_RE)) {
      separators.push(text.slice(last, m.index));
      raw.push(m[0]);
      last = m.index + m[0].length;
    }
    const folded = raw.map((w) => {
      const lw = w.toLowerCase();
      return isAscii(lw) ? lw : fold(lw);
    });
    const runs = [];
    let run = [];
    let pending = []; // connectors after the run, kept only if a capital follows
    for (let i = 0; i < raw.length; i++) {
      const separator = separators[i];
      if (UPPER_RE.test(raw[i])) {
        if (run.length && isSpace(separator)) {
          run.push(...pending, i);
        } else {
          if (run.length) runs.push(run);
          run = [i];
        }
        pending = [];
      } else if (run.length) {
        if (isSpace(separator) && CONNECTORS.has(folded[i])) {
          pending.push(i);
        } else {
          runs.push(run);
          run = [];
          pending = [];
        }
      }
    }
    if (run.length) runs.push(run);

    const entities = [];
    const inEntity = new Set();
    for (let indices of runs) {
      let k = 0;
      while (k < indices.length && NON_NAME_OPENERS.has(folded[indices[k]])) k++;
      indices = indices.slice(k);
      if (!indices.length) continue;
      for (const i of indices) inEntity.add(i);
      const words = indices.map((i) => folded[i]);
      let key = new Set(words.filter((w) => !STOP_WORDS.has(w)));
      if (key.size === 0) key = new Set(words);
      let surface = raw[indices[0]];
      for (const i of indices.slice(1)) surface += separators[i] + raw[i];
      entities.push({ surface, words, key });
    }
    return {
      words: new Set(folded),
      entities,
      freeWords: folded.filter((_, i) => !inEntity.has(i)),
      firstWord: folded.length ? folded[0] : "",
    };
  }

  function names(entity, words, threshold) {
    let n = 0;
    for (const w of entity.key) if (words.has(w)) n++;
    return n >= threshold * entity.key.size;
  }

  function relationStems(words, stemChars, minChars) {
    const out = new Set();
    for (const w of words) {
      if (codePoints(w) >= minChars && !STOP_WORDS.has(w)) out.add(cpSlice(w, stemChars));
    }
    return out;
  }

  // --- regime_core.router.selector and features ---------------------------------------------

  function subjectWords(sentenceViews, bridgeTitle) {
    if (bridgeTitle !== null) {
      const words = view(stripDisambiguator(bridgeTitle)).words;
      const content = new Set([...words].filter((w) => !STOP_WORDS.has(w)));
      return content.size ? content : words;
    }
    for (const v of sentenceViews) if (v.entities.length) return v.entities[0].key;
    return new Set();
  }

  function hasNewEntity(sentence, question, subject, threshold) {
    return sentence.entities.some(
      (e) =>
        !names(e, question.words, threshold) && !(subject.size && names(e, subject, threshold))
    );
  }

  function scoreViews(question, sentences, subject, rules) {
    const stems = relationStems(question.freeWords, rules.stem_chars, rules.min_word_chars);
    return sentences.map((s, i) => {
      const has = hasNewEntity(s, question, subject, rules.entity_match_threshold) ? 1 : 0;
      let overlap = 0;
      for (const t of relationStems(s.words, rules.stem_chars, rules.min_word_chars)) {
        if (stems.has(t)) overlap++;
      }
      return (
        rules.new_entity_weight * has +
        rules.overlap_weight * overlap +
        rules.position_weight / (1 + i)
      );
    });
  }

  function featureRow(question, bRel, subject, rules) {
    const cues = new Set(rules.comparison_cues);
    const threshold = rules.entity_match_threshold;
    const nonSubject = bRel.entities.filter(
      (e) => !(subject.size && names(e, subject, threshold))
    );
    const named = nonSubject.map((e) => names(e, question.words, threshold));
    return [
      question.freeWords.filter((w) => cues.has(w)).length,
      rules.yes_no_openers.includes(question.firstWord) ? 1 : 0,
      question.entities.length,
      named.some(Boolean) ? 1 : 0,
      named.every(Boolean) ? 0 : 1,
    ];
  }

  // --- model ----------------------------------------------------------------------------------

  class RouteError extends Error {}

  function loadModel(doc, where = "model") {
    const bad = (field, problem) => new RouteError(`${where}: field '${field}' ${problem}`);
    if (doc === null || typeof doc !== "object") throw new RouteError(`${where}: not an object`);
    if (doc.format !== "regime-router") throw bad("format", `is ${JSON.stringify(doc.format)}`);
    if (doc.format_version !== 1) throw bad("format_version", "is not 1");
    if (doc.feature_spec !== FEATURE_SPEC) {
      throw bad(
        "feature_spec",
        `is ${JSON.stringify(doc.feature_spec)}; this port implements ${FEATURE_SPEC} only`
      );
    }
    if (JSON.stringify(doc.feature_names) !== JSON.stringify(FEATURE_NAMES)) {
      throw bad("feature_names", "differs from the five router features");
    }
    const vector = (v, field) => {
      if (!Array.isArray(v) || v.length !== 5 || !v.every(Number.isFinite)) {
        throw bad(field, "must be a list of 5 finite numbers");
      }
      return v;
    };
    const scaler = doc.scaler || {};
    const scale = vector(scaler.scale, "scaler.scale");
    if (scale.some((s) => s <= 0)) throw bad("scaler.scale", "must be > 0 everywhere");
    if (!(doc.threshold > 0 && doc.threshold < 1)) throw bad("threshold", "must be in (0, 1)");
    if (!Number.isFinite(doc.intercept)) throw bad("intercept", "must be a finite number");
    return {
      rules: doc.rules,
      mean: vector(scaler.mean, "scaler.mean"),
      scale,
      coef: vector(doc.coef, "coef"),
      intercept: doc.intercept,
      threshold: doc.threshold,
    };
  }

  function checkQuestion(question, where) {
    if (typeof question !== "string") {
      throw new RouteError(`${where}: question must be a string, got ${typeof question}`);
    }
    if (isBlank(question)) throw new RouteError(`${where}: question is empty`);
    return question;
  }

  function checkTitle(title, where) {
    if (title === null || title === undefined) return null;
    if (typeof title !== "string" || isBlank(title)) {
      throw new RouteError(
        `${where}: bridge_title must be None or a non-empty string, got ${pyRepr(title)}`
      );
    }
    return title;
  }

  function checkSentences(sentences, where) {
    if (!Array.isArray(sentences)) {
      throw new RouteError(`${where}: bridge sentences must be a list of strings`);
    }
    if (!sentences.length) throw new RouteError(`${where}: the bridge has no sentences`);
    sentences.forEach((s, j) => {
      if (typeof s !== "string") {
        throw new RouteError(`${where}: bridge sentence ${j} is a ${typeof s}, not a string`);
      }
      if (isBlank(s)) throw new RouteError(`${where}: bridge sentence ${j} is empty`);
    });
    return sentences;
  }

  function pyRepr(s) {
    return typeof s === "string" ? `'${s}'` : String(s);
  }

  /** RegimeRouter.route: B_rel, the five features, the logit and the decision. */
  function route(model, question, bridgeSentences, bridgeTitle = null) {
    question = checkQuestion(question, "route");
    const sentences = checkSentences(bridgeSentences, "route");
    const title = checkTitle(bridgeTitle, "route");
    const rules = model.rules;
    const q = view(question);
    const views = sentences.map(view);
    const subject = subjectWords(views, title);
    const scores = scoreViews(q, views, subject, rules);
    let best = 0;
    for (let i = 1; i < scores.length; i++) if (scores[i] > scores[best]) best = i;
    const x = featureRow(q, views[best], subject, rules);
    const z = x.map((v, j) => (v - model.mean[j]) / model.scale[j]);
    const contributions = z.map((v, j) => v * model.coef[j]);
    let logit = 0;
    for (const c of contributions) logit += c;
    logit += model.intercept;
    const threshold = Math.log(model.threshold) - Math.log1p(-model.threshold);
    const features = {};
    FEATURE_NAMES.forEach((name, j) => (features[name] = x[j]));
    return {
      action: ACTIONS[logit - threshold > 0 ? 1 : 0],
      probability: 1 / (1 + Math.exp(-logit)),
      b_rel: sentences[best],
      b_rel_index: best,
      features,
      // for the page, not part of `regime route --json`
      sentences,
      scores,
      z,
      contributions,
      logit,
    };
  }

  /** What `regime route` does with running text: split it, then route. */
  function routeText(model, question, bridge, bridgeTitle = null) {
    if (typeof question !== "string") throw new RouteError("route: question must be a string");
    if (typeof bridge !== "string") throw new RouteError("route: bridge must be a string");
    if (isBlank(question)) throw new RouteError("route: the question is empty");
    const sentences = splitBridge(bridge);
    if (!sentences.length) {
      throw new RouteError("route: the bridge text is empty (no sentence found)");
    }
    return route(model, question, sentences, bridgeTitle);
  }

  function decisionDict(d) {
    return {
      action: d.action,
      probability: d.probability,
      b_rel: d.b_rel,
      b_rel_index: d.b_rel_index,
      features: d.features,
    };
  }

  // --- Python's json.dumps, so that the Node CLI prints byte for byte what `regime route` does -

  function pyFloat(x) {
    if (Number.isNaN(x)) return "NaN";
    if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
    if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
    const [mantissa, expText] = x.toExponential().split("e");
    const exp = Number(expText);
    const sign = x < 0 ? "-" : "";
    const digits = mantissa.replace("-", "").replace(".", "");
    if (exp < -4 || exp >= 16) {
      const frac = digits.length > 1 ? "." + digits.slice(1) : "";
      const e = String(Math.abs(exp)).padStart(2, "0");
      return `${sign}${digits[0]}${frac}e${exp < 0 ? "-" : "+"}${e}`;
    }
    if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
    const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    return `${sign}${whole}.${digits.slice(exp + 1) || "0"}`;
  }

  const ESCAPES = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
  ESCAPES["\b"] = "\\b";
  ESCAPES["\f"] = "\\f";

  function pyString(s) {
    let out = '"';
    for (let i = 0; i < s.length; i++) {
      const ch = s[i];
      const code = s.charCodeAt(i);
      if (ESCAPES[ch]) out += ESCAPES[ch];
      else if (code < 0x20 || code > 0x7e) out += "\\u" + code.toString(16).padStart(4, "0");
      else out += ch;
    }
    return out + '"';
  }

  /** json.dumps(value) for the decision dict: ints stay ints, features are floats. */
  function pyDumps(value, floatKeys = new Set(["probability"])) {
    if (typeof value === "string") return pyString(value);
    if (typeof value === "number") return Number.isInteger(value) ? String(value) : pyFloat(value);
    const parts = Object.entries(value).map(([k, v]) => {
      let text;
      if (typeof v === "number" && floatKeys.has(k)) text = pyFloat(v);
      else if (v !== null && typeof v === "object") text = pyDumps(v, new Set(Object.keys(v)));
      else text = pyDumps(v);
      return `${pyString(k)}: ${text}`;
    });
    return `{${parts.join(", ")}}`;
  }

  function formatDecision(d) {
    return pyDumps(decisionDict(d));
  }

  // --- Node command line ----------------------------------------------------------------------

  function parseArgs(argv) {
    const known = ["--question", "--bridge", "--bridge-title", "--model", "--batch"];
    const args = { json: false };
    for (let i = 0; i < argv.length; i++) {
      let flag = argv[i];
      let value;
      const eq = flag.indexOf("=");
      if (flag.startsWith("--") && eq > 0) {
        value = flag.slice(eq + 1);
        flag = flag.slice(0, eq);
      }
      if (flag === "--json") {
        args.json = true;
        continue;
      }
      if (flag === "-h" || flag === "--help") {
        args.help = true;
        continue;
      }
      if (!known.includes(flag)) throw new RouteError(`unrecognized argument: ${argv[i]}`);
      if (value === undefined) {
        if (i + 1 >= argv.length) throw new RouteError(`argument ${flag}: expected one argument`);
        value = argv[++i];
      }
      args[flag.slice(2).replace("-", "_")] = value;
    }
    return args;
  }

  const USAGE =
    "usage: node router.js --question Q --bridge B [--bridge-title T] [--model FILE] [--json]\n" +
    "       node router.js --batch FILE.jsonl [--model FILE]\n";

  function readModel(file) {
    const fs = require("fs");
    const path = require("path");
    const where = file || path.join(__dirname, "default_router.json");
    let doc;
    try {
      doc = JSON.parse(fs.readFileSync(where, "utf8"));
    } catch (err) {
      throw new RouteError(`${where}: cannot read a router JSON file (${err.message})`);
    }
    return loadModel(doc, where);
  }

  function batch(model, file) {
    const fs = require("fs");
    const lines = fs.readFileSync(file, "utf8").split("\n");
    const out = [];
    for (const line of lines) {
      if (!line.trim()) continue;
      const item = JSON.parse(line);
      let result;
      try {
        const title = item.title === undefined ? null : item.title;
        const d =
          item.sentences !== undefined
            ? route(model, item.question, item.sentences, title)
            : routeText(model, item.question, item.bridge, title);
        result = { id: item.id, ...decisionDict(d) };
        if (item.bridge !== undefined) result.sentences = d.sentences;
      } catch (err) {
        if (!(err instanceof RouteError)) throw err;
        result = { id: item.id, error: err.message };
      }
      out.push(JSON.stringify(result));
    }
    process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
  }

  function main(argv) {
    try {
      const args = parseArgs(argv);
      if (args.help) {
        process.stdout.write(USAGE);
        return 0;
      }
      const model = readModel(args.model);
      if (args.batch !== undefined) {
        batch(model, args.batch);
        return 0;
      }
      if (args.question === undefined || args.bridge === undefined) {
        throw new RouteError("router.js needs --question TEXT and --bridge TEXT (or --batch FILE)");
      }
      const title = args.bridge_title === undefined ? null : args.bridge_title;
      const d = routeText(model, args.question, args.bridge, title);
      if (args.json) {
        process.stdout.write(formatDecision(d) + "\n");
        return 0;
      }
      const lines = [
        `action       ${d.action}  (p(union) = ${d.probability.toFixed(3)})`,
        `B_rel [${d.b_rel_index}]    ${d.b_rel}`,
        ...FEATURE_NAMES.map((n) => `  ${n.padEnd(28)} ${d.features[n]}`),
      ];
      process.stdout.write(lines.join("\n") + "\n");
      return 0;
    } catch (err) {
      if (!(err instanceof RouteError)) throw err;
      process.stderr.write(`router.js: error: ${err.message}\n`);
      return 2;
    }
  }

  // --- the book page --------------------------------------------------------------------------

  // Inputs the page refuses to route (the router itself has no limit): a Wikipedia paragraph
  // is 300-3,000 characters, and routing stays far below a frame even at these sizes.
  const MAX_BRIDGE_CHARS = 20000;
  const MAX_QUESTION_CHARS = 1000;
  const MARKUP_RE = /<\/?[A-Za-z][^>]*>|&[a-zA-Z]+;|&#\d+;/;
  const PICTOGRAPH_RE = /\p{Extended_Pictographic}/u;

  /** What the page says about an input before (or instead of) routing it. */
  function inputProblems(question, bridge, title) {
    const errors = [];
    const notes = [];
    if (isBlank(question)) errors.push("Type a question: the router reads its words.");
    else if (question.length > MAX_QUESTION_CHARS) {
      errors.push(
        `The question has ${question.length} characters; this page routes questions of up ` +
          `to ${MAX_QUESTION_CHARS}. Shorten it.`
      );
    }
    if (isBlank(bridge)) errors.push("Paste the bridge passage (the hop-1 paragraph).");
    else if (bridge.length > MAX_BRIDGE_CHARS) {
      errors.push(
        `The bridge has ${bridge.length.toLocaleString("en")} characters; this page routes ` +
          `passages of up to ${MAX_BRIDGE_CHARS.toLocaleString("en")} (a Wikipedia paragraph ` +
          "has 300 to 3,000). Paste the one paragraph that introduces the hop-2 entity."
      );
    }
    const all = `${question}\n${bridge}\n${title}`;
    if (MARKUP_RE.test(all)) {
      notes.push(
        "This looks like HTML markup: tags and entities are read as plain text, and their " +
          "letters count as words. Paste plain text for a faithful decision."
      );
    }
    if (PICTOGRAPH_RE.test(all)) {
      notes.push("Emoji and pictographs are not words: the router ignores them.");
    }
    if (!isBlank(question) && !view(question).words.size) {
      notes.push("The question has no words (letters or digits): every feature is 0.");
    }
    return { errors, notes };
  }

  function el(doc, tag, attrs = {}, children = []) {
    const node = doc.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) node.appendChild(c);
    return node;
  }

  function mountDemo(doc, rootEl) {
    const model = loadModel(JSON.parse(doc.getElementById(rootEl.dataset.model).textContent));
    const presets = JSON.parse(doc.getElementById(rootEl.dataset.presets).textContent);
    const id = (s) => `${rootEl.id || "regime-router"}-${s}`;
    const select = el(doc, "select", { id: id("preset") }, [
      el(doc, "option", { value: "", text: "Choose a preset…" }),
      ...presets.map((p, i) =>
        el(doc, "option", { value: String(i), text: `${p.source}: ${p.question}` })
      ),
    ]);
    const question = el(doc, "textarea", { id: id("question"), rows: "2", spellcheck: "false" });
    const title = el(doc, "input", { id: id("title"), type: "text", spellcheck: "false" });
    const bridge = el(doc, "textarea", { id: id("bridge"), rows: "6", spellcheck: "false" });
    const field = (label, input, hint) =>
      el(doc, "div", { class: "rr-field" }, [
        el(doc, "label", { for: input.id, text: label }),
        input,
        ...(hint ? [el(doc, "small", { text: hint })] : []),
      ]);
    const messages = el(doc, "div", { class: "rr-messages", role: "status" });
    const verdict = el(doc, "div", { class: "rr-verdict", "aria-live": "polite" });
    const table = el(doc, "table", { class: "rr-features" });
    const sentencesBox = el(doc, "ol", { class: "rr-sentences", start: "0" });
    const timing = el(doc, "small", { class: "rr-timing" });
    const form = el(doc, "form", { class: "rr-form", autocomplete: "off" }, [
      field("Preset", select),
      field("Question", question),
      field("Bridge title (optional)", title, "e.g. Titanic (1997 film)"),
      field("Bridge passage (the hop-1 paragraph, running text)", bridge),
    ]);
    form.addEventListener("submit", (e) => e.preventDefault());
    rootEl.replaceChildren(
      form,
      messages,
      el(doc, "div", { class: "rr-output" }, [
        verdict,
        el(doc, "div", { class: "rr-table-wrap" }, [table]),
        el(doc, "small", {
          text: "z = (value − mean) / scale, with the training items' mean and scale; the " +
            "contributions and the intercept add up to the log-odds of union.",
        }),
        el(doc, "div", { class: "rr-bridge-label", text: "Bridge sentences (B_rel marked):" }),
        sentencesBox,
        timing,
      ])
    );

    const show = () => {
      const problems = inputProblems(question.value, bridge.value, title.value);
      messages.replaceChildren(
        ...problems.errors.map((t) => el(doc, "p", { class: "rr-error", text: t })),
        ...problems.notes.map((t) => el(doc, "p", { class: "rr-note", text: t }))
      );
      const output = rootEl.querySelector(".rr-output");
      if (problems.errors.length) {
        output.hidden = true;
        return;
      }
      let d;
      let ms;
      try {
        const t = isBlank(title.value) ? null : title.value;
        const started = performance.now();
        d = routeText(model, question.value, bridge.value, t);
        ms = performance.now() - started;
      } catch (err) {
        if (!(err instanceof RouteError)) throw err;
        messages.appendChild(el(doc, "p", { class: "rr-error", text: err.message }));
        output.hidden = true;
        return;
      }
      output.hidden = false;
      verdict.replaceChildren(
        el(doc, "span", { class: `rr-action rr-${d.action}`, text: d.action }),
        el(doc, "span", { text: ` p(union) = ${d.probability.toFixed(3)}` }),
        el(doc, "meter", {
          min: "0",
          max: "1",
          value: String(d.probability),
          title: "p(union)",
        }),
        el(doc, "span", {
          class: "rr-rule",
          text: ` → ${d.action === "union" ? "query = q + α·B_rel" : "query = q alone"}`,
        })
      );
      const head = el(doc, "tr", {}, [
        ...["feature", "value", "z", "coef", "coef × z"].map((h) =>
          el(doc, "th", { text: h })
        ),
      ]);
      const rows = FEATURE_NAMES.map((name, j) =>
        el(doc, "tr", {}, [
          el(doc, "td", {}, [el(doc, "code", { text: name })]),
          el(doc, "td", { text: String(d.features[name]) }),
          el(doc, "td", { text: d.z[j].toFixed(3) }),
          el(doc, "td", { text: model.coef[j].toFixed(3) }),
          el(doc, "td", {
            class: d.contributions[j] > 0 ? "rr-pos" : d.contributions[j] < 0 ? "rr-neg" : "",
            text: (d.contributions[j] >= 0 ? "+" : "") + d.contributions[j].toFixed(3),
          }),
        ])
      );
      const sum = el(doc, "tr", { class: "rr-sum" }, [
        el(doc, "td", { text: "intercept; log-odds of union" }),
        el(doc, "td", {}),
        el(doc, "td", {}),
        el(doc, "td", { text: model.intercept.toFixed(3) }),
        el(doc, "td", { text: (d.logit >= 0 ? "+" : "") + d.logit.toFixed(3) }),
      ]);
      table.replaceChildren(el(doc, "thead", {}, [head]), el(doc, "tbody", {}, [...rows, sum]));
      sentencesBox.replaceChildren(
        ...d.sentences.map((s, i) =>
          el(doc, "li", { class: i === d.b_rel_index ? "rr-brel" : "" }, [
            i === d.b_rel_index ? el(doc, "mark", { text: s }) : doc.createTextNode(s),
            el(doc, "small", { text: `  score ${d.scores[i].toFixed(3)}` }),
          ])
        )
      );
      timing.textContent = `Routing took ${ms.toFixed(2)} ms in this browser.`;
    };

    // Coalesce bursts of typing into one routing per animation frame: the page never queues work.
    let scheduled = false;
    const schedule = () => {
      if (scheduled) return;
      scheduled = true;
      const run = () => {
        scheduled = false;
        show();
      };
      if (typeof requestAnimationFrame === "function") requestAnimationFrame(run);
      else setTimeout(run, 0);
    };
    for (const input of [question, title, bridge]) input.addEventListener("input", schedule);
    select.addEventListener("change", () => {
      const p = presets[Number(select.value)];
      if (!p) return;
      question.value = p.question;
      title.value = p.title || "";
      bridge.value = p.bridge;
      schedule();
    });
    if (presets.length) {
      select.value = "0";
      select.dispatchEvent(new Event("change"));
    }
    rootEl.classList.add("rr-mounted");
  }

  function mountAll(doc) {
    for (const rootEl of doc.querySelectorAll(".regime-router-demo")) {
      try {
        mountDemo(doc, rootEl);
      } catch (err) {
        rootEl.textContent = `The live router could not start: ${err.message}`;
      }
    }
  }

  return {
    FEATURE_NAMES,
    FEATURE_SPEC,
    STOP_WORDS,
    CONNECTORS,
    NON_NAME_OPENERS,
    ABBREVIATIONS,
    PY_SPACE,
    COMBINING,
    RouteError,
    splitBridge,
    fold,
    view,
    stripDisambiguator,
    loadModel,
    route,
    routeText,
    decisionDict,
    formatDecision,
    pyFloat,
    pyString,
    inputProblems,
    main,
    mountAll,
    MAX_BRIDGE_CHARS,
  };
});
