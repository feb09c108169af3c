/*
 * The RegimeRouter in plain JavaScript: a faithful port of regime_core.router (sentence rule,
 * text view, B_rel selector, five features, logistic model) reading default_router.json.
 * No framework, no build step, no network. One file, three uses:
 *
 *   node regime_core/resources/router.js --question Q --bridge B [--bridge-title T] [--json]
 *       prints what `regime route` prints for the same arguments (--model FILE as well, checked
 *       as regime_core.router.io.load_router checks it: every field, the feature spec recomputed
 *       from the rules, the sha256 seal, the optional alpha_rule: fixed, or calibrated with
 *       alpha = scale × training_ratio); the decision reports the α of the union query and its
 *       rule (a single question gets the α deployed on the training questions); a failure is
 *       one line on stderr and exit status 2 (with --json also {"error", "kind", "command"}
 *       on stdout, as `regime route --json`);
 *   node regime_core/resources/router.js --batch FILE.jsonl
 *       routes one JSON object per line (the parity tests in tests/test_router_js.py); a line
 *       that is not a JSON object is an error naming the file and the line;
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
      // A closed stdout (`node router.js ... | head -0`) ends the command quietly.
      process.stdout.on("error", (err) => {
        if (err.code === "EPIPE") process.exit(process.exitCode || 0);
        throw err;
      });
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

  // The caps `regime route` applies, generated from regime_core/limits.py's ROUTER_LIMITS
  // (`python -m regime_core.limits` prints this line; tests/test_limits.py compares them).
  const LIMITS = {"max_question_chars": 10000, "max_title_chars": 10000, "max_bridge_chars": 1000000, "max_nesting": 100, "max_int_digits": 4300, "max_alpha": 1e+18};

  const FEATURE_NAMES = [
    "comparison_cues",
    "yes_no_opener",
    "question_entities",
    "question_names_b_rel_entity",
    "b_rel_has_new_entity",
  ];
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
  const SENTENCE_MARKS =
    "\u3002\uff61\uff01\uff1f\u0964\u0965\u061f\u06d4\u0589\u1362\u1367\u104b\u17d4";
  const CLOSERS = "\"'\u201d\u2019)]\u00bb\u300d\u300f\uff09\uff3d\u3011\u3009\u300b";
  const OPENERS = "\"'\u201c\u2018([\u00ab\u300c\u300e\uff08\uff3b\u3010\u3008\u300a";
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
  // A sentence mark with the marks, terminals and closers that follow it (rule 3).
  const MARK_RUN_RE = new RegExp(
    `[${charClass(SENTENCE_MARKS)}][${charClass(SENTENCE_MARKS + TERMINALS + CLOSERS)}]*`,
    "gu"
  );
  const LONE_SURROGATE_RE =
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
  // What undecodable bytes become: U+FFFD or a lone surrogate (sentences.check_text).
  const NOT_TEXT_RE = new RegExp(`\ufffd|${LONE_SURROGATE_RE.source}`);
  // Python's \w on str: Unicode letters and numbers, and "_" (marks are not word characters).
  const W = "\\p{L}\\p{N}_";
  const WORD_RE = new RegExp(`[${W}]+(?:['\u2019&.\\-][${W}]+)*`, "gu");
  const CHUNK_RE = new RegExp(`[^${WS}]+`, "gu");
  const ALL_SPACE_RE = new RegExp(`^[${WS}]+$`, "u");
  const UPPER_RE = /^\p{Uppercase}/u;
  const ASCII_RE = /^[\x00-\x7f]*$/;
  const INITIALS_RE = /^(?:[A-Za-z]\.)+$/;

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
    if (!core || !(TERMINALS + SENTENCE_MARKS).includes(core[core.length - 1])) return false;
    return core[core.length - 1] !== "." || !isAbbreviation(core);
  }

  function splitBridge(text) {
    if (typeof text !== "string") {
      throw new RouteError(`split_bridge expects a string, got ${pyTypeName(text)}`);
    }
    const sentences = [];
    let start = -1;
    let end = -1;
    for (const m of text.matchAll(CHUNK_RE)) {
      if (start < 0) start = m.index;
      end = m.index + m[0].length;
      let piece = m.index; // where the rest of the chunk starts, after any sentence mark
      for (const mark of m[0].matchAll(MARK_RUN_RE)) {
        const cut = m.index + mark.index + mark[0].length;
        sentences.push(text.slice(start, cut));
        start = piece = cut;
      }
      if (piece === end) start = -1;
      else if (endsSentence(text.slice(piece, end))) {
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

  /** regime_core.text.trailing_parenthetical: drop one trailing "(...)" and the whitespace
   * around it, in linear time (the regular expression it replaces backtracked quadratically on
   * a title of many "(" and no ")"). */
  function stripDisambiguator(title) {
    const body = rstrip(title, PY_SPACE);
    if (!body.endsWith(")")) return title;
    const inner = body.slice(0, -1);
    const open = inner.indexOf("(", inner.lastIndexOf(")") + 1);
    return open < 0 ? title : rstrip(inner.slice(0, open), PY_SPACE);
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

  /** featurize for one question: the rule's scores, the selected B_rel and the five features. */
  function featurizeOne(question, sentences, title, rules) {
    const q = view(question);
    const views = sentences.map(view);
    const subject = subjectWords(views, title);
    const scores = scoreViews(q, views, subject, rules);
    let best = 0;
    for (let i = 1; i < scores.length; i++) if (scores[i] > scores[best]) best = i;
    return { scores, best, x: featureRow(q, views[best], subject, rules) };
  }

  // --- model ----------------------------------------------------------------------------------

  class RouteError extends Error {}
  /** regime_core.inputs.InputError: a value a declaration refuses (`regime route --json` names
   * its kind). */
  class InputError extends RouteError {}
  /** A value the strict parser refuses, with the keys and indices leading to it
   * (regime_core.strict_json.JSONProblem's path). */
  class JsonValueError extends RouteError {
    constructor(problem, path) {
      super(problem);
      this.path = path;
    }
  }

  /** A JSON syntax error where Python's decoder reports it (its msg, line, column, char). */
  class JsonSyntaxError extends RouteError {
    constructor(msg, line, column, char) {
      super(`${msg}: line ${line} column ${column} (char ${char})`);
      this.msg = msg;
      this.line = line;
      this.column = column;
    }
  }

  /** inputs.json_path: ["context", 3, 1] -> "context[3][1]"; [3, "id"] -> "[3].id". */
  function jsonPath(path) {
    let out = "";
    for (const part of path) {
      if (typeof part === "number") out += `[${part}]`;
      else out += out ? `.${part}` : String(part);
    }
    return out;
  }

  // --- JSON as Python's json module reads and writes it ---------------------------------------
  // A model is checked as regime_core.router.io.load_router checks it, seal included, so the
  // parser keeps what JSON.parse loses: an integer (a BigInt here) is not a float (a Number),
  // as 1 is not 1.0 for Python's json.dumps, which the seal and the feature spec hash.

  // Python refuses nesting deeper than LIMITS.max_nesting after parsing, naming the path to
  // the first container too deep; past its parser's recursion limit (about 1,000 levels) it
  // stops parsing and names no path. This parser does the same, and never recurses deeper.
  const MAX_JSON_DEPTH = 1000;
  const MAX_INT_DIGITS = LIMITS.max_int_digits; // Python's int() refuses longer decimal strings

  /** Strict JSON as strict_json.parse_json reads it: duplicate keys, NaN/Infinity, numbers beyond
   * a float, lone surrogates (unless `keepLoneSurrogates`) and nesting deeper than
   * LIMITS.max_nesting refused, each naming where. */
  function parsePyJson(text, { keepLoneSurrogates = false } = {}) {
    let i = 0;
    const n = text.length;
    const fail = (what, at = i) => {
      // positions in code points, as Python counts them
      const head = text.slice(0, at);
      const line = head.split("\n").length;
      const column = codePoints(head.slice(head.lastIndexOf("\n") + 1)) + 1;
      throw new JsonSyntaxError(what, line, column, codePoints(head));
    };
    const skip = () => {
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c === 32 || c === 9 || c === 10 || c === 13) i++;
        else break;
      }
    };
    const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
    const SIMPLE = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
    const string = () => {
      const from = i++;
      let out = "";
      for (;;) {
        let j = i;
        while (j < n) {
          const c = text.charCodeAt(j);
          if (c === 34 || c === 92 || c < 32) break;
          j++;
        }
        out += text.slice(i, j);
        i = j;
        if (i >= n) fail("Unterminated string starting at", from);
        const c = text.charCodeAt(i);
        if (c === 34) {
          i++;
          return out;
        }
        if (c < 32) fail("Invalid control character at");
        const e = text[i + 1];
        if (Object.prototype.hasOwnProperty.call(SIMPLE, e)) {
          out += SIMPLE[e];
          i += 2;
        } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else fail(e === "u" ? "Invalid \\uXXXX escape" : "Invalid \\escape");
      }
    };
    // strict_json parses first, then walks the value depth first (check_value): a syntax error
    // anywhere wins, else the first refused value in that walk's order. Each value is numbered
    // in document order (a container before what it holds); in one object, nesting too deep
    // comes before a repeated key, which comes before a key that is not text (the last such
    // key first: the walk goes over the keys backwards).
    let order = 0;
    let first = null;
    const before = (a, b) => {
      for (let k = 0; k < Math.max(a.length, b.length); k++) {
        const x = a[k] ?? -Infinity;
        const y = b[k] ?? -Infinity;
        if (x !== y) return x < y;
      }
      return false;
    };
    const refuse = (rank, problem, path) => {
      if (first === null || before(rank, first.rank)) first = { rank, problem, path };
    };
    const loneSurrogate = (s) => {
      if (keepLoneSurrogates) return null;
      const bad = LONE_SURROGATE_RE.exec(s);
      if (bad === null) return null;
      const code = s.charCodeAt(bad.index).toString(16).padStart(4, "0");
      return `a lone surrogate \\u${code} (half of a UTF-16 pair, not a character)`;
    };
    const value = (depth, path) => {
      if (depth > MAX_JSON_DEPTH) {
        // Python's parser stops at its recursion limit and names no path
        throw new JsonValueError(`values nest more than ${LIMITS.max_nesting} levels deep`, []);
      }
      skip();
      const index = order++;
      const c = text[i];
      if (c === "{" || c === "[") {
        // the first container too deep, its path cut to six parts
        if (path.length >= LIMITS.max_nesting) {
          refuse([index, 0], `values nest more than ${LIMITS.max_nesting} levels deep`, path.slice(0, 6));
        }
        const isObject = c === "{";
        const out = isObject ? Object.create(null) : [];
        const close = isObject ? "}" : "]";
        let keys = 0;
        i++;
        skip();
        if (text[i] === close) {
          i++;
          return out;
        }
        for (;;) {
          skip();
          if (isObject) {
            if (text[i] !== '"') fail("Expecting property name enclosed in double quotes");
            const key = string();
            skip();
            if (text[i] !== ":") fail("Expecting ':' delimiter");
            i++;
            if (Object.prototype.hasOwnProperty.call(out, key)) {
              refuse([index, 1], `the key ${pyRepr(key)} appears twice in one object`, [
                ...path,
                key,
              ]);
            }
            const bad = loneSurrogate(key);
            if (bad !== null) refuse([index, 2, -keys], bad, [...path, key]);
            keys++;
            out[key] = value(depth + 1, [...path, key]);
          } else out.push(value(depth + 1, [...path, out.length]));
          skip();
          if (text[i] === ",") i++;
          else if (text[i] === close) {
            i++;
            return out;
          } else fail("Expecting ',' delimiter");
        }
      }
      if (c === '"') {
        const s = string();
        const bad = loneSurrogate(s);
        if (bad !== null) refuse([index], bad, path);
        return s;
      }
      for (const [word, v] of [["true", true], ["false", false], ["null", null]]) {
        if (text.startsWith(word, i)) {
          i += word.length;
          return v;
        }
      }
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (m) {
        i = NUMBER.lastIndex;
        if (m[1] !== undefined || m[2] !== undefined) {
          const x = Number(m[0]);
          if (!Number.isFinite(x)) {
            refuse([index], `the number ${m[0].slice(0, 40)} is beyond a float's range`, path);
          }
          return x;
        }
        if (m[0].replace("-", "").length > MAX_INT_DIGITS) {
          // Python's int() refuses it while parsing: no later syntax error is reached
          throw new JsonValueError("a number has too many digits to be read", []);
        }
        return BigInt(m[0]);
      }
      const constant = /^(?:NaN|-?Infinity)/.exec(text.slice(i, i + 9));
      if (constant) {
        i += constant[0].length;
        refuse([index], `${constant[0]} is not a JSON number (JSON has no NaN or Infinity)`, path);
        return null;
      }
      fail("Expecting value");
    };
    // json.loads refuses a byte order mark before anything else
    if (text.startsWith("\ufeff")) fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
    const out = value(1, []);
    skip();
    if (i < n) fail("Extra data");
    if (first !== null) throw new JsonValueError(first.problem, first.path);
    return out;
  }

  /** Python's comparison of two strings: by code point (JavaScript's < compares UTF-16 units). */
  function cpCompare(a, b) {
    const x = Array.from(a);
    const y = Array.from(b);
    for (let k = 0; k < Math.min(x.length, y.length); k++) {
      const d = x[k].codePointAt(0) - y[k].codePointAt(0);
      if (d) return d;
    }
    return x.length - y.length;
  }

  /** json.dumps(value, sort_keys=True, ...) of a parsePyJson value; `ascii`: ensure_ascii. */
  function pyJson(value, { item = ", ", key = ": ", ascii = true } = {}) {
    const str = (s) => pyString(s, ascii);
    const dump = (v) => {
      if (v === null) return "null";
      if (v === true) return "true";
      if (v === false) return "false";
      if (typeof v === "bigint") return v.toString();
      if (typeof v === "number") return pyFloat(v);
      if (typeof v === "string") return str(v);
      if (Array.isArray(v)) return `[${v.map(dump).join(item)}]`;
      const keys = Object.keys(v).sort(cpCompare);
      return `{${keys.map((k) => str(k) + key + dump(v[k])).join(item)}}`;
    };
    return dump(value);
  }

  function utf8(text, where) {
    const lone = LONE_SURROGATE_RE.exec(text);
    if (lone) {
      throw new RouteError(
        `${where}: holds a lone surrogate (a \\u${text.charCodeAt(lone.index).toString(16)} ` +
          "escape), which UTF-8 cannot encode"
      );
    }
    return new TextEncoder().encode(text);
  }

  // SHA-256 (FIPS 180-4), synchronous, for Node and the page alike.
  const SHA_K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
  ]);

  function sha256Hex(bytes) {
    const length = bytes.length;
    const padded = (((length + 8) >> 6) + 1) << 6;
    const buf = new Uint8Array(padded);
    buf.set(bytes);
    buf[length] = 0x80;
    const view = new DataView(buf.buffer);
    view.setUint32(padded - 8, Math.floor(length / 0x20000000));
    view.setUint32(padded - 4, (length * 8) >>> 0);
    const h = new Uint32Array([
      0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
      0x5be0cd19,
    ]);
    const w = new Uint32Array(64);
    const rotr = (x, r) => (x >>> r) | (x << (32 - r));
    for (let off = 0; off < padded; off += 64) {
      for (let t = 0; t < 16; t++) w[t] = view.getUint32(off + 4 * t);
      for (let t = 16; t < 64; t++) {
        const a = w[t - 15];
        const b = w[t - 2];
        const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
        const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
      }
      let [a, b, c, d, e, f, g, k] = h;
      for (let t = 0; t < 64; t++) {
        const t1 =
          (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA_K[t] + w[t]) |
          0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        k = g;
        g = f;
        f = e;
        e = (d + t1) | 0;
        d = c;
        c = b;
        b = a;
        a = (t1 + t2) | 0;
      }
      const next = [a, b, c, d, e, f, g, k];
      for (let t = 0; t < 8; t++) h[t] = h[t] + next[t];
    }
    return Array.from(h, (x) => x.toString(16).padStart(8, "0")).join("");
  }

  // --- the router file: its declaration and the one reader (regime_core.inputs) -------------

  const HASH_KEY = "sha256";
  const REBUILD = "retrain it with `regime route train --out FILE` (or save_router)";
  // Generated from regime_core/inputs/router_file.py's ROUTER_FILE (`python -m
  // regime_core.inputs.router_file` prints this line; tests/test_inputs_router_file.py compares).
  const ROUTER_FILE = {"name":"regime-router file","closed":true,"fields":[{"name":"format","required":true,"kind":{"kind":"Choice","reprs":["'regime-router'"],"listed":"['regime-router']"}},{"name":"format_version","required":true,"kind":{"kind":"Choice","reprs":["1"],"listed":"[1]"}},{"name":"feature_spec","required":true,"kind":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null}},{"name":"feature_names","required":true,"kind":{"kind":"Tuple","wanted":"a list [one of ['comparison_cues'], one of ['yes_no_opener'], one of ['question_entities'], one of ['question_names_b_rel_entity'], one of ['b_rel_has_new_entity']]","kinds":[{"kind":"Choice","reprs":["'comparison_cues'"],"listed":"['comparison_cues']"},{"kind":"Choice","reprs":["'yes_no_opener'"],"listed":"['yes_no_opener']"},{"kind":"Choice","reprs":["'question_entities'"],"listed":"['question_entities']"},{"kind":"Choice","reprs":["'question_names_b_rel_entity'"],"listed":"['question_names_b_rel_entity']"},{"kind":"Choice","reprs":["'b_rel_has_new_entity'"],"listed":"['b_rel_has_new_entity']"}]}},{"name":"rules","required":true,"kind":{"kind":"Object","wanted":"an object","values":null}},{"name":"classes","required":true,"kind":{"kind":"Items","wanted":"a list of 2 items, each an integer or a string","of":{"kind":"Either","wanted":"an integer or a string","kinds":[{"kind":"Number","wanted":"an integer","low":null,"high":null,"low_open":false,"high_open":false,"integer":true},{"kind":"Text","wanted":"a string","blank":true,"max_chars":null}]},"length":2,"min_items":0}},{"name":"threshold","required":true,"kind":{"kind":"Number","wanted":"a number in (0, 1)","low":0,"high":1,"low_open":true,"high_open":true,"integer":false}},{"name":"alpha","required":true,"kind":{"kind":"Number","wanted":"a number in [0, 1e+18]","low":0.0,"high":1e+18,"low_open":false,"high_open":false,"integer":false}},{"name":"params","required":true,"kind":{"kind":"Nested","wanted":"an object (router params)","format":{"name":"router params","closed":true,"fields":[{"name":"C","required":true,"kind":{"kind":"Number","wanted":"a number in (0, inf]","low":0,"high":null,"low_open":true,"high_open":false,"integer":false}},{"name":"class_weight","required":true,"kind":{"kind":"Nullable","wanted":"null or one of ['balanced'] or a list of items, each a list of 2 items, each an integer or a string or a finite number","of":{"kind":"Either","wanted":"one of ['balanced'] or a list of items, each a list of 2 items, each an integer or a string or a finite number","kinds":[{"kind":"Choice","reprs":["'balanced'"],"listed":"['balanced']"},{"kind":"Items","wanted":"a list of items, each a list of 2 items, each an integer or a string or a finite number","of":{"kind":"Items","wanted":"a list of 2 items, each an integer or a string or a finite number","of":{"kind":"Either","wanted":"an integer or a string or a finite number","kinds":[{"kind":"Either","wanted":"an integer or a string","kinds":[{"kind":"Number","wanted":"an integer","low":null,"high":null,"low_open":false,"high_open":false,"integer":true},{"kind":"Text","wanted":"a string","blank":true,"max_chars":null}]},{"kind":"Number","wanted":"a finite number","low":null,"high":null,"low_open":false,"high_open":false,"integer":false}]},"length":2,"min_items":0},"length":null,"min_items":0}]}}},{"name":"random_state","required":true,"kind":{"kind":"Nullable","wanted":"null or an integer in [0, inf]","of":{"kind":"Number","wanted":"an integer in [0, inf]","low":0,"high":null,"low_open":false,"high_open":false,"integer":true}}},{"name":"max_iter","required":true,"kind":{"kind":"Number","wanted":"an integer in [1, inf]","low":1,"high":null,"low_open":false,"high_open":false,"integer":true}}]}}},{"name":"scaler","required":true,"kind":{"kind":"Nested","wanted":"an object (router scaler)","format":{"name":"router scaler","closed":true,"fields":[{"name":"mean","required":true,"kind":{"kind":"Items","wanted":"a list of 5 items, each a finite number","of":{"kind":"Number","wanted":"a finite number","low":null,"high":null,"low_open":false,"high_open":false,"integer":false},"length":5,"min_items":0}},{"name":"scale","required":true,"kind":{"kind":"Items","wanted":"a list of 5 items, each a number in (0, inf]","of":{"kind":"Number","wanted":"a number in (0, inf]","low":0,"high":null,"low_open":true,"high_open":false,"integer":false},"length":5,"min_items":0}}]}}},{"name":"coef","required":true,"kind":{"kind":"Items","wanted":"a list of 5 items, each a finite number","of":{"kind":"Number","wanted":"a finite number","low":null,"high":null,"low_open":false,"high_open":false,"integer":false},"length":5,"min_items":0}},{"name":"intercept","required":true,"kind":{"kind":"Number","wanted":"a finite number","low":null,"high":null,"low_open":false,"high_open":false,"integer":false}},{"name":"n_iter","required":true,"kind":{"kind":"Number","wanted":"an integer in [0, inf]","low":0,"high":null,"low_open":false,"high_open":false,"integer":true}},{"name":"fitted_with_feature_names","required":true,"kind":{"kind":"Flag","wanted":"true or false"}},{"name":"alpha_rule","required":false,"kind":{"kind":"Nested","wanted":"an object (router alpha rule)","format":{"name":"router alpha rule","closed":true,"fields":[{"name":"rule","required":true,"kind":{"kind":"Choice","reprs":["'fixed'","'calibrated'"],"listed":"['fixed', 'calibrated']"}},{"name":"scale","required":false,"kind":{"kind":"Number","wanted":"a number in (0, inf]","low":0,"high":null,"low_open":true,"high_open":false,"integer":false}},{"name":"training_ratio","required":false,"kind":{"kind":"Number","wanted":"a number in (0, inf]","low":0,"high":null,"low_open":true,"high_open":false,"integer":false}}]}}},{"name":"training","required":true,"kind":{"kind":"Nested","wanted":"an object (router training)","format":{"name":"router training","closed":true,"fields":[{"name":"dataset","required":true,"kind":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null}},{"name":"n","required":true,"kind":{"kind":"Number","wanted":"an integer in [2, inf]","low":2,"high":null,"low_open":false,"high_open":false,"integer":true}},{"name":"label_rule","required":true,"kind":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null}},{"name":"package_versions","required":true,"kind":{"kind":"Object","wanted":"an object of a string","values":{"kind":"Text","wanted":"a string","blank":true,"max_chars":null}}},{"name":"extra","required":true,"kind":{"kind":"Object","wanted":"an object","values":null}}]}}},{"name":"sha256","required":false,"kind":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null}}]};
  // Generated from regime_core/inputs/route_input.py's ROUTE_INPUT and ROUTE_TEXT (`python -m
  // regime_core.inputs.route_input` prints this line; tests/test_inputs_router_file.py compares).
  const ROUTE_INPUTS = {"input":{"name":"route input","closed":true,"fields":[{"name":"question","required":true,"kind":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null}},{"name":"bridge_sentences","required":true,"kind":{"kind":"Items","wanted":"a list of items, each a non-blank string","of":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null},"length":null,"min_items":1}},{"name":"bridge_title","required":true,"kind":{"kind":"Nullable","wanted":"null or a non-blank string","of":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null}}}]},"text":{"name":"route text","closed":true,"fields":[{"name":"question","required":true,"kind":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null}},{"name":"bridge","required":true,"kind":{"kind":"Text","wanted":"a non-blank string","blank":false,"max_chars":null}}]}};

  /** A value a kind refuses: the path to it in the file and the problem (inputs._Refused). */
  class Refused extends Error {
    constructor(path, problem) {
      super(problem);
      this.path = path;
    }
  }
  /** inputs._shown: an object, an array or null by its JSON kind, any other value its repr. */
  function shown(v) {
    if (v === null) return "null";
    if (Array.isArray(v)) return "an array";
    return typeof v === "object" ? "an object" : shortRepr(v);
  }
  /** Kind.check of regime_core.inputs for the kinds of the generated table (integers stay
   * BigInts, as Python's stay ints). */
  function checkKind(kind, v, path) {
    const refuse = () => new Refused(path, `must be ${kind.wanted}, got ${shown(v)}`);
    switch (kind.kind) {
      case "Number": {
        if (kind.integer ? typeof v !== "bigint" : !isNumber(v)) throw refuse();
        if (typeof v === "number" && !Number.isFinite(v)) throw refuse();
        const above = kind.low === null || (kind.low_open ? v > kind.low : v >= kind.low);
        const below = kind.high === null || (kind.high_open ? v < kind.high : v <= kind.high);
        if (!(above && below)) throw refuse();
        if (kind.integer) return v;
        if (v > Number.MAX_VALUE || v < -Number.MAX_VALUE) throw refuse(); // a huge integer
        return Number(v);
      }
      case "Text":
        if (typeof v !== "string" || (!kind.blank && isBlank(v))) throw refuse();
        if (kind.max_chars !== null && codePoints(v) > kind.max_chars) {
          throw new Refused(path, `must be ${kind.wanted}, got ${codePoints(v)} characters`);
        }
        return v;
      case "Flag":
        if (typeof v !== "boolean") throw refuse();
        return v;
      case "Choice": // Python's repr tells 1 from 1.0 and True, as its type check does
        if (!kind.reprs.includes(pyRepr(v))) {
          throw new Refused(path, `is ${shown(v)}, not one of ${kind.listed}`);
        }
        return v;
      case "Items":
        if (!Array.isArray(v)) throw refuse();
        if (kind.length !== null && v.length !== kind.length) {
          throw new Refused(path, `has ${v.length} items, expected ${kind.length}`);
        }
        if (v.length < kind.min_items) {
          throw new Refused(path, `has ${v.length} items, expected at least ${kind.min_items}`);
        }
        return v.map((item, k) => checkKind(kind.of, item, [...path, k]));
      case "Tuple":
        if (!Array.isArray(v) || v.length !== kind.kinds.length) throw refuse();
        return v.map((item, k) => checkKind(kind.kinds[k], item, [...path, k]));
      case "Nullable":
        if (v === null) return null;
        try {
          return checkKind(kind.of, v, path);
        } catch (err) {
          if (!(err instanceof Refused) || err.path.length !== path.length) throw err;
          throw refuse(); // a problem inside a list or record names its own place
        }
      case "Either":
        for (const option of kind.kinds) {
          try {
            return checkKind(option, v, path);
          } catch (err) {
            if (!(err instanceof Refused)) throw err;
          }
        }
        throw refuse();
      case "Nested":
        return checkFormat(kind.format, v, path);
      case "Object": {
        if (!isObject(v)) throw refuse();
        if (kind.values === null) return v;
        const out = {};
        for (const [key, item] of Object.entries(v)) {
          out[key] = checkKind(kind.values, item, [...path, key]);
        }
        return out;
      }
    }
    throw new Error(`router.js reads no kind ${kind.kind}`);
  }
  /** Format.check: an object whose keys are the fields, absent optional ones null. */
  function checkFormat(format, v, path) {
    if (!isObject(v)) {
      throw new Refused(path, `must be an object (${format.name}), got ${shown(v)}`);
    }
    const names = format.fields.map((field) => field.name);
    const unknown = Object.keys(v).filter((key) => !names.includes(key));
    if (format.closed && unknown.length) {
      const problem = `is not a field of ${format.name} (fields: ${pyRepr(names)})`;
      throw new Refused([...path, unknown[0]], problem);
    }
    const out = {};
    for (const field of format.fields) {
      if (Object.prototype.hasOwnProperty.call(v, field.name)) {
        out[field.name] = checkKind(field.kind, v[field.name], [...path, field.name]);
      } else if (field.required) {
        throw new Refused([...path, field.name], "is missing (required)");
      } else {
        out[field.name] = null;
      }
    }
    return out;
  }
  /** Format.read: the checked values, or a RouteError naming `where` and the field (InputError). */
  function readFormat(format, v, where) {
    try {
      return checkFormat(format, v, []);
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      const at = err.path.length ? `field ${pyRepr(jsonPath(err.path))} ` : "";
      throw new InputError(`${where}: ${at}${err.message}`);
    }
  }

  // RouterRules' fields and defaults (regime_core.router.rules): ints are BigInts, as in JSON.
  const DEFAULT_RULES = {
    new_entity_weight: 1.0,
    overlap_weight: 0.5,
    position_weight: 0.25,
    stem_chars: 5n,
    min_word_chars: 3n,
    entity_match_threshold: 0.5,
    comparison_cues: (
      "both same either neither or than compared comparison versus vs more less fewer first " +
      "last earlier later older younger oldest youngest longer shorter taller larger bigger " +
      "smaller higher lower"
    ).split(" "),
    yes_no_openers: (
      "is are was were am do does did has have had can could will would should shall may " +
      "might must"
    ).split(" "),
  };

  function isObject(v) {
    return v !== null && typeof v === "object" && !Array.isArray(v);
  }
  function isNumber(v) {
    return typeof v === "number" || typeof v === "bigint";
  }
  function pyTypeName(v) {
    if (v === null) return "NoneType";
    if (Array.isArray(v)) return "list";
    return (
      { boolean: "bool", bigint: "int", number: "float", string: "str", object: "dict" }[
        typeof v
      ] || typeof v
    );
  }
  // What Python's str.isprintable() refuses (repr escapes it): other and separator characters.
  const NOT_PRINTABLE_RE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
  /** Python's repr() of a JSON value (what load_router's messages quote). */
  /** regime_core.inputs.short_repr: an integer of 100 digits or more by its digit count, any
   * other repr cut to 80 characters. */
  function shortRepr(v) {
    if (typeof v === "bigint") {
      const digits = String(v < 0n ? -v : v).length;
      if (digits >= 100) return `an integer of ${digits} digits`;
    }
    const text = pyRepr(v);
    return codePoints(text) <= 80 ? text : cpSlice(text, 77) + "...";
  }

  function pyRepr(v) {
    if (v === null || v === undefined) return "None";
    if (v === true) return "True";
    if (v === false) return "False";
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number") {
      if (Number.isNaN(v)) return "nan";
      if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
      return pyFloat(v);
    }
    if (typeof v === "string") {
      const quote = v.includes("'") && !v.includes('"') ? '"' : "'";
      let out = quote;
      for (const ch of v) {
        const cp = ch.codePointAt(0);
        if (ch === "\\" || ch === quote) out += "\\" + ch;
        else if (ch === "\n") out += "\\n";
        else if (ch === "\r") out += "\\r";
        else if (ch === "\t") out += "\\t";
        else if (ch === " " || !NOT_PRINTABLE_RE.test(ch)) out += ch;
        else if (cp < 0x100) out += "\\x" + cp.toString(16).padStart(2, "0");
        else if (cp < 0x10000) out += "\\u" + cp.toString(16).padStart(4, "0");
        else out += "\\U" + cp.toString(16).padStart(8, "0");
      }
      return out + quote;
    }
    if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
    return `{${Object.keys(v)
      .map((k) => `${pyRepr(k)}: ${pyRepr(v[k])}`)
      .join(", ")}}`;
  }
  /** Python's == between a JSON value and an int (True == 1 == 1.0 in Python). */
  function pyEqualsInt(v, k) {
    if (v === true) return k === 1;
    return isNumber(v) && Number(v) === k && (typeof v !== "bigint" || v === BigInt(k));
  }

  /** RouterRules(**raw), each field read as its declared kind: the typed rules (defaults filled
   * in). */
  function checkRules(raw) {
    // the refusals of the one reader (regime_core.inputs) for RouterRules' declared kinds
    const fail = (name, problem) => {
      throw new RouteError(`RouterRules: field '${name}' ${problem}`);
    };
    const shown = (v) => {
      if (v === null) return "null";
      if (Array.isArray(v)) return "an array";
      return typeof v === "object" ? "an object" : shortRepr(v);
    };
    const rules = { ...DEFAULT_RULES };
    for (const [k, v] of Object.entries(raw)) {
      if (!Object.prototype.hasOwnProperty.call(DEFAULT_RULES, k)) {
        throw new RouteError(
          `RouterRules.__init__() got an unexpected keyword argument ${pyRepr(k)}`
        );
      }
      rules[k] = v;
    }
    for (const name of ["new_entity_weight", "overlap_weight", "position_weight"]) {
      const v = rules[name];
      if (!isNumber(v) || !Number.isFinite(Number(v)) || v < 0) {
        fail(name, `must be a number in [0, inf], got ${shown(v)}`);
      }
    }
    for (const name of ["stem_chars", "min_word_chars"]) {
      const v = rules[name];
      if (typeof v !== "bigint" || v < 1n) {
        fail(name, `must be an integer in [1, inf], got ${shown(v)}`);
      }
    }
    const t = rules.entity_match_threshold;
    if (!isNumber(t) || !Number.isFinite(Number(t)) || !(t > 0 && t <= 1)) {
      fail("entity_match_threshold", `must be a number in (0, 1], got ${shown(t)}`);
    }
    const word = new RegExp(`^[^${WS}]+$`, "u");
    for (const name of ["comparison_cues", "yes_no_openers"]) {
      const words = rules[name];
      if (!Array.isArray(words)) {
        fail(name, `must be a list of items, each a lowercase single word, got ${shown(words)}`);
      }
      words.forEach((w, i) => {
        if (typeof w !== "string" || !word.test(w) || w !== w.toLowerCase()) {
          fail(`${name}[${i}]`, `must be a lowercase single word, got ${shown(w)}`);
        }
      });
    }
    return rules;
  }

  /** The rules as the routing code reads them (Numbers, not BigInts). */
  function plainRules(rules) {
    const out = {};
    for (const [k, v] of Object.entries(rules)) out[k] = typeof v === "bigint" ? Number(v) : v;
    return out;
  }

  // regime_core.router.features._PROBES: their features are hashed into the feature spec.
  const PROBES = [
    [
      "Who is the mother of the director of the film Kestrel Bay?",
      ["Kestrel Bay is a 1931 film.", "It was directed by Odile Marchetti of the Lyon School."],
      "Kestrel Bay (film)",
    ],
    [
      "Which film came out first, Kestrel Bay or The Amber Gate?",
      ["The Amber Gate is a silent film.", "It premiered in Oslo before Kestrel Bay."],
      null,
    ],
    [
      "Are both Tomas Ruiz and Ana Beyonc\u00e9 Lind from the same country?",
      ["Tomas Ruiz is a poet."],
      null,
    ],
    [
      "Did the founder of Quillmark study in Z\u00fcrich?",
      ["Quillmark was founded by Ida Brenn."],
      null,
    ],
  ];
  const FEATURE_SPEC_VERSION = "regime-router-features/1";

  /** regime_core.router.features.feature_spec: version + hash of rules, lexicons and probes. */
  function featureSpec(rules) {
    const plain = plainRules(rules);
    const features = [];
    const selection = [];
    for (const [question, sentences, title] of PROBES) {
      const { best, x } = featurizeOne(question, sentences, title, plain);
      features.push(x);
      selection.push(BigInt(best));
    }
    const payload = {
      names: FEATURE_NAMES,
      rules,
      connectors: [...CONNECTORS].sort(cpCompare),
      non_name_openers: [...NON_NAME_OPENERS].sort(cpCompare),
      stop_words: [...STOP_WORDS].sort(cpCompare),
      probe_features: features,
      probe_selection: selection,
    };
    const digest = sha256Hex(new TextEncoder().encode(pyJson(payload)));
    return `${FEATURE_SPEC_VERSION}+${digest.slice(0, 12)}`;
  }

  /**
   * A router JSON document checked as load_router checks it, in the same order and with the
   * same messages: every field, the feature spec recomputed from the stored rules, and last the
   * sha256 seal over the canonical JSON of the other keys. `text` is the file's text.
   */
  function loadModel(text, where = "model") {
    if (typeof text !== "string") {
      throw new RouteError(`${where}: loadModel expects the JSON text of a router file`);
    }
    let doc;
    try {
      doc = parsePyJson(text);
    } catch (err) {
      if (err instanceof JsonValueError) {
        const at = err.path.length ? `, at ${jsonPath(err.path)}` : "";
        throw new RouteError(`${where}${at}: ${err.message}`);
      }
      if (err instanceof JsonSyntaxError) {
        // strict_json.JSONProblem of a syntax error
        throw new RouteError(
          `${where}, line ${err.line}, column ${err.column}: malformed JSON (${err.msg})`
        );
      }
      if (!(err instanceof RouteError)) throw err;
      throw new RouteError(`${where}: not valid JSON (${err.message})`);
    }
    const file = readFormat(ROUTER_FILE, doc, where);
    const error = (field, problem) => new RouteError(`${where}: field '${field}' ${problem}`);

    // What no field says alone, in load_router's order.
    let rules;
    try {
      rules = checkRules(file.rules);
    } catch (err) {
      if (!(err instanceof RouteError)) throw err;
      throw error("rules", `is not a valid RouterRules: ${err.message}`);
    }
    const spec = file.feature_spec; // another version's spec differs from the current one too
    const current = featureSpec(rules);
    if (spec !== current) {
      throw error(
        "feature_spec",
        `is ${pyRepr(spec)} but the current code computes ${pyRepr(current)} for these rules: ` +
          "the features changed since this router was fitted; refit it"
      );
    }
    const [first, second] = file.classes;
    const sorted =
      typeof first === typeof second &&
      (typeof first === "string" ? cpCompare(first, second) < 0 : first < second);
    if (!sorted) {
      const shownClasses = pyRepr(file.classes);
      throw error("classes", `must be two sorted distinct integers or strings: ${shownClasses}`);
    }
    const weights = file.params.class_weight;
    if (Array.isArray(weights)) {
      const isClass = (x) => file.classes.some((c) => typeof c === typeof x && c === x);
      if (!weights.every(([label, w]) => isClass(label) && typeof w !== "string")) {
        throw error("params.class_weight", "must hold [label, weight] pairs of the classes");
      }
    }
    // io._alpha_rule: absent, the fixed rule; calibrated: alpha = scale × training_ratio exactly
    const alpha = file.alpha;
    const alphaRule = { rule: "fixed" };
    const raw = file.alpha_rule;
    if (raw !== null) {
      for (const key of ["scale", "training_ratio"]) {
        if ((raw[key] === null) === (raw.rule === "calibrated")) {
          const state = raw[key] === null ? "missing (required)" : "not a field";
          throw error(`alpha_rule.${key}`, `is ${state} under the ${raw.rule} rule`);
        }
      }
      if (raw.rule === "calibrated") {
        const product = raw.scale * raw.training_ratio;
        if (product !== alpha) {
          throw error(
            "alpha",
            `is ${pyFloat(alpha)}, but the calibrated rule deploys scale × training_ratio = ` +
              `${pyFloat(product)} on the training questions`
          );
        }
        alphaRule.rule = "calibrated";
        alphaRule.scale = raw.scale;
        alphaRule.training_ratio = raw.training_ratio;
      }
    }

    // Last, as in Python: a change no field check sees (a flipped digit) is caught here.
    const recorded = file[HASH_KEY];
    if (recorded === null) {
      throw new RouteError(`${where}: no '${HASH_KEY}' recorded by save_router; ${REBUILD}`);
    }
    const body = Object.create(null);
    for (const k of Object.keys(doc)) if (k !== HASH_KEY) body[k] = doc[k];
    const canonical = utf8(pyJson(body, { item: ",", key: ":", ascii: false }), where);
    if (recorded !== sha256Hex(canonical)) {
      throw new RouteError(
        `${where} is damaged or edited: its content does not match the ${HASH_KEY} ` +
          `save_router recorded; ${REBUILD}`
      );
    }
    const { coef, intercept, threshold } = file;
    const { mean, scale } = file.scaler;
    return { rules: plainRules(rules), mean, scale, coef, intercept, threshold, alpha, alphaRule };
  }

  /** estimator._check_size: `n` characters (code points) of `what` over `limit` refused. */
  function checkSize(what, n, limit) {
    if (n > limit) {
      throw new RouteError(
        `route: the ${what} is ${thousands(n)} characters long, over the limit of ` +
          `${thousands(limit)}`
      );
    }
  }
  /** Python's f"{n:,}" for a non-negative integer. */
  function thousands(n) {
    const digits = String(n);
    let out = "";
    for (let k = 0; k < digits.length; k++) {
      if (k && (digits.length - k) % 3 === 0) out += ",";
      out += digits[k];
    }
    return out;
  }

  /** RegimeRouter.route: B_rel, the five features, the logit and the decision. */
  function route(model, question, bridgeSentences, bridgeTitle = null) {
    const given = { question, bridge_sentences: bridgeSentences, bridge_title: bridgeTitle };
    const read = readFormat(ROUTE_INPUTS.input, given, "route"); // RegimeRouter.route's reading
    question = read.question;
    const sentences = read.bridge_sentences;
    const title = read.bridge_title;
    checkSize("question", codePoints(question), LIMITS.max_question_chars);
    let bridgeChars = 0;
    for (const s of sentences) bridgeChars += codePoints(s);
    checkSize("bridge", bridgeChars, LIMITS.max_bridge_chars);
    checkSize("bridge title", title === null ? 0 : codePoints(title), LIMITS.max_title_chars);
    const { scores, best, x } = featurizeOne(question, sentences, title, model.rules);
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
      alpha: model.alpha,
      alpha_rule: model.alphaRule ? model.alphaRule.rule : "fixed",
      // for the page, not part of `regime route --json`
      sentences,
      scores,
      z,
      contributions,
      logit,
    };
  }

  /** regime_core.router.sentences.check_text: refuse U+FFFD and lone surrogates, which is
   * what bytes that were not UTF-8 become (Node's argv replaces them, Python's escapes them). */
  function checkText(value, name) {
    const bad = NOT_TEXT_RE.exec(value);
    if (bad) {
      throw new RouteError(
        `route: the ${name} is not valid UTF-8 text (character ` +
          `${codePoints(value.slice(0, bad.index))} is U+FFFD or a lone surrogate, what ` +
          "undecodable bytes turn into); pass UTF-8 text"
      );
    }
    return value;
  }

  /** What `regime route` does with running text: split it, then route. */
  function routeText(model, question, bridge, bridgeTitle = null) {
    readFormat(ROUTE_INPUTS.text, { question, bridge }, "route");
    checkText(question, "question");
    checkText(bridge, "bridge");
    if (typeof bridgeTitle === "string") checkText(bridgeTitle, "bridge title");
    // a non-blank bridge (ROUTE_INPUTS.text) holds a non-space chunk, so at least one sentence
    return route(model, question, splitBridge(bridge), bridgeTitle);
  }

  function decisionDict(d) {
    return {
      action: d.action,
      probability: d.probability,
      b_rel: d.b_rel,
      b_rel_index: d.b_rel_index,
      features: d.features,
      alpha: d.alpha,
      alpha_rule: d.alpha_rule,
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

  /** json.dumps of a string; `ascii`: ensure_ascii (every code unit above 0x7e escaped). */
  function pyString(s, ascii = true) {
    let out = '"';
    for (let i = 0; i < s.length; i++) {
      const ch = s[i];
      const code = s.charCodeAt(i);
      const escape = code < 0x20 || (ascii && code > 0x7e);
      if (ESCAPES[ch]) out += ESCAPES[ch];
      else if (escape) out += "\\u" + code.toString(16).padStart(4, "0");
      else out += ch;
    }
    return out + '"';
  }

  /** json.dumps(value) for the decision dict: ints stay ints, features are floats. */
  function pyDumps(value, floatKeys = new Set(["probability", "alpha"])) {
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

  const OPTIONS = [
    "--question", "--bridge", "--bridge-title", "--model", "--batch", "--json", "--help",
  ]; // prettier-ignore

  /** argparse's reading of one argument: the option it names (unique prefixes included), or
   * null for a value; an unknown option-like argument is an error, as for argparse. */
  function optionOf(arg) {
    if (!arg.startsWith("-") || arg.length === 1) return null;
    if (arg === "-h") return { flag: "--help" };
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const value = name === arg ? undefined : arg.slice(eq + 1);
    if (OPTIONS.includes(name)) return { flag: name, value };
    const matches = arg.startsWith("--") ? OPTIONS.filter((o) => o.startsWith(name)) : [];
    if (matches.length > 1) {
      throw new RouteError(`ambiguous option: ${name} could match ${matches.join(", ")}`);
    }
    if (matches.length === 1) return { flag: matches[0], value };
    if (/^-\d+$|^-\d*\.\d+$/.test(arg) || arg.includes(" ")) return null;
    return { flag: null, value: arg };
  }

  function parseArgs(argv) {
    const args = { json: false };
    for (let i = 0; i < argv.length; i++) {
      const option = optionOf(argv[i]);
      if (option === null || option.flag === null) {
        throw new RouteError(`unrecognized arguments: ${argv[i]}`);
      }
      const { flag } = option;
      let { value } = option;
      if (flag === "--json" || flag === "--help") {
        if (value !== undefined) {
          throw new RouteError(`argument ${flag}: ignored explicit argument ${pyRepr(value)}`);
        }
        args[flag.slice(2)] = true;
        continue;
      }
      if (value === undefined) {
        if (i + 1 >= argv.length || optionOf(argv[i + 1]) !== null) {
          throw new RouteError(`argument ${flag}: expected one argument`);
        }
        value = argv[++i];
      }
      args[flag.slice(2).replace("-", "_")] = value;
    }
    return args;
  }

  const USAGE =
    "usage: node router.js --question Q --bridge B [--bridge-title T] [--model FILE] [--json]\n" +
    "       node router.js --batch FILE.jsonl [--model FILE]\n";

  /** The index of the first byte that is not part of well-formed UTF-8, or -1. */
  function firstInvalidUtf8(bytes) {
    let i = 0;
    while (i < bytes.length) {
      const b = bytes[i];
      let need = 0;
      let lo = 0x80;
      let hi = 0xbf;
      if (b < 0x80) need = 0;
      else if (b >= 0xc2 && b <= 0xdf) need = 1;
      else if (b >= 0xe0 && b <= 0xef) {
        need = 2;
        if (b === 0xe0) lo = 0xa0;
        if (b === 0xed) hi = 0x9f;
      } else if (b >= 0xf0 && b <= 0xf4) {
        need = 3;
        if (b === 0xf0) lo = 0x90;
        if (b === 0xf4) hi = 0x8f;
      } else return i;
      for (let k = 1; k <= need; k++) {
        const c = bytes[i + k];
        if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
      }
      i += need + 1;
    }
    return -1;
  }

  const OS_REASONS = {
    ENOENT: "no such file or directory",
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    EISDIR: "it is a directory",
    ENOTDIR: "a parent of it is not a directory",
    ELOOP: "too many levels of symbolic links",
  };

  /** A regular file's text, strictly UTF-8; one-line RouteErrors naming the file otherwise
   * (a FIFO or a device is refused before it is opened, so nothing blocks). */
  function readText(file, option) {
    const fs = require("fs");
    if (file === "") throw new RouteError(`argument ${option}: the path is empty`);
    const reason = (err) => OS_REASONS[err.code] || err.message;
    let stat;
    try {
      stat = fs.statSync(file);
    } catch (err) {
      throw new RouteError(`cannot read ${file}: ${reason(err)}`);
    }
    if (!stat.isFile()) {
      let kind = "not a regular file";
      if (stat.isDirectory()) kind = "a directory";
      else if (stat.isFIFO()) kind = "a FIFO";
      throw new RouteError(`cannot read ${file}: it is ${kind}`);
    }
    let bytes;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      throw new RouteError(`cannot read ${file}: ${reason(err)}`);
    }
    const bad = firstInvalidUtf8(bytes);
    if (bad >= 0) {
      let line = 1;
      for (let k = 0; k < bad; k++) if (bytes[k] === 0x0a) line++;
      throw new RouteError(
        `${file}: not UTF-8 text (byte 0x${bytes[bad].toString(16).padStart(2, "0")} at ` +
          `offset ${bad}, line ${line})`
      );
    }
    return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  }

  /** How Python's pathlib prints a path: no "." parts, no repeated or trailing "/". */
  function pyPath(p) {
    const lead = p.startsWith("//") && !p.startsWith("///") ? "//" : p.startsWith("/") ? "/" : "";
    return lead + p.split("/").filter((s) => s !== "" && s !== ".").join("/") || ".";
  }

  /** regime_core.router.model.resolve_router, then load_router's checks. */
  function readModel(file) {
    const fs = require("fs");
    const where = pyPath(
      file === undefined ? require("path").join(__dirname, "default_router.json") : file
    );
    let regular = false;
    try {
      regular = fs.statSync(where).isFile();
    } catch (err) {
      regular = false;
    }
    if (!regular) {
      throw new RouteError(`router model file ${where} does not exist or is not a file`);
    }
    return loadModel(readText(where, "--model"), where);
  }

  function batch(model, file) {
    const lines = readText(file, "--batch").split("\n");
    const out = [];
    lines.forEach((line, k) => {
      if (isBlank(line)) return;
      let item;
      try {
        // the texts' own check (checkText) names a lone surrogate as `regime route` does
        item = parsePyJson(line, { keepLoneSurrogates: true });
      } catch (err) {
        if (!(err instanceof RouteError)) throw err;
        throw new RouteError(`${file}, line ${k + 1}: not valid JSON (${err.message})`);
      }
      if (!isObject(item)) {
        throw new RouteError(
          `${file}, line ${k + 1}: expected a JSON object, got ${pyTypeName(item)}`
        );
      }
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
      out.push(JSON.stringify(result, (_, v) => (typeof v === "bigint" ? Number(v) : v)));
    });
    process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
  }

  // A message on one line: each line break, with the blanks around it, is one space (split
  // rather than a regular expression of blanks around a line break, which backtracks
  // quadratically on a long run of blanks).
  function oneLine(message) {
    const pieces = message.split("\n");
    let out = pieces[0];
    for (const piece of pieces.slice(1)) out = out.trimEnd() + " " + piece.trimStart();
    return out;
  }

  /** The command line; every failure is one line on stderr and exit status 2, as `regime`;
   * with --json also one JSON object on stdout, as `regime route --json` prints it. */
  function main(argv) {
    let asJson = argv.includes("--json"); // before parsing, so that a usage error is JSON too
    try {
      const args = parseArgs(argv);
      asJson = Boolean(args.json);
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
      const known = err instanceof RouteError;
      const message = known ? err.message : `internal error: ${err && err.message}`;
      process.stderr.write(`router.js: error: ${oneLine(message)}\n`);
      if (asJson) {
        const declared = err instanceof InputError; // Python prints the refusal's class
        const kind = !known ? "InternalError" : declared ? "InputError" : "ValueError";
        process.stdout.write(pyDumps({ error: message, kind, command: "route" }) + "\n");
      }
      return known ? 2 : 1;
    }
  }

  // --- the book page --------------------------------------------------------------------------

  // Inputs the page refuses to route (the router itself has no limit): a Wikipedia paragraph
  // is 300-3,000 characters, and routing stays far below a frame even at these sizes.
  const MAX_BRIDGE_CHARS = 20000;
  const MAX_QUESTION_CHARS = 1000;
  // A tag holds no "<": with [^<>]* the search is linear (with [^>]* it was quadratic on
  // "<a<a<a..." without a ">").
  const MARKUP_RE = /<\/?[A-Za-z][^<>]*>|&[a-zA-Z]+;|&#\d+;/;
  const PICTOGRAPH_RE = /\p{Extended_Pictographic}/u;
  const OTHER_SCRIPT_RE = /(?!\p{Script=Latin})\p{L}/u;
  const DIGITS_RE = /^[0-9]+$/;
  // English text is rich in stop words (about every second word); a passage with fewer than
  // this share of them, or a question of four words or more with none, does not read as English.
  const MIN_ENGLISH_SHARE = 0.15;

  /** The share of English stop words among a text's words (digits left out), and how many. */
  function englishShare(text) {
    const words = [...text.matchAll(WORD_RE)]
      .map((m) => m[0].toLowerCase())
      .filter((w) => !DIGITS_RE.test(w));
    if (!words.length) return { n: 0, share: 1 };
    return { n: words.length, share: words.filter((w) => STOP_WORDS.has(w)).length / words.length };
  }

  /** Why a text may not be English, or null (a note, never a refusal). */
  function languageNote(question, bridge, title) {
    const all = `${question}\n${bridge}\n${title}`;
    const why = "The router is built for English questions and bridges: it finds names by their " +
      "capital letters and reads English cue words (both, first, did …), so here its B_rel and " +
      "its decision mean little.";
    const script = OTHER_SCRIPT_RE.exec(all);
    if (script) {
      return `The text has letters of another script than English (“${script[0]}”). ${why}`;
    }
    const q = englishShare(question);
    const b = englishShare(bridge);
    if ((q.n >= 4 && q.share < MIN_ENGLISH_SHARE) || (b.n >= 8 && b.share < MIN_ENGLISH_SHARE)) {
      return `This does not read as English: few of its words are common English words. ${why}`;
    }
    return null;
  }

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
    const language = languageNote(question, bridge, title);
    if (language) notes.push(language);
    if (MARKUP_RE.test(all)) {
      notes.push(
        "This looks like HTML markup: tags and entities are read as plain text, and their " +
          "letters count as words. Paste plain text for a faithful decision."
      );
    }
    if (PICTOGRAPH_RE.test(all)) {
      notes.push("Emoji and pictographs are not words: the router ignores them.");
    }
    return { errors, notes };
  }

  /** When a decision rests on no feature, the sentence that says so plainly, else null. */
  function noFeatureNote(question, d) {
    const p = `p(union) = ${d.probability.toFixed(3)}`;
    const tail =
      "0 lies far from the training questions' averages (the z column), and that distance, " +
      "not anything in your text, moves the log-odds.";
    if (!view(question).words.size) {
      return (
        "This decision rests on nothing in your question: it has no words (letters or digits), " +
        `so the router reads nothing in it, and ${p} is what the model answers for any such ` +
        `question: ${tail}`
      );
    }
    if (FEATURE_NAMES.every((n) => d.features[n] === 0)) {
      return (
        "This decision rests on no feature: all five are 0 (no comparison word, no yes/no " +
        `opener, no name), and ${p} is what the model answers for any such question: ${tail}`
      );
    }
    return null;
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

  const OWN = "own";

  function mountDemo(doc, rootEl) {
    const json = (key) => doc.getElementById(rootEl.dataset[key]).textContent;
    const model = loadModel(json("model"), "the page's router model");
    const presets = JSON.parse(json("presets"));
    const guide = new Map(
      (rootEl.dataset.features ? JSON.parse(json("features")) : []).map((f) => [f.name, f])
    );
    const id = (s) => `${rootEl.id || "regime-router"}-${s}`;
    const select = el(doc, "select", { id: id("preset") }, [
      el(doc, "option", { value: OWN, text: "Your own question (type or paste below)" }),
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
    const basis = el(doc, "p", { class: "rr-note rr-basis" });
    const check = el(doc, "p", { class: "rr-check" });
    const table = el(doc, "table", { class: "rr-features" });
    const sentencesBox = el(doc, "ol", { class: "rr-sentences", start: "0" });
    const timing = el(doc, "small", { class: "rr-timing" });
    const form = el(doc, "form", { class: "rr-form", autocomplete: "off" }, [
      field("Start from a preset, or write your own", select),
      field("Question (in English)", question),
      field("Bridge title (optional)", title, "e.g. Titanic (1997 film)"),
      field("Bridge passage (the hop-1 paragraph, running text, in English)", bridge),
    ]);
    form.addEventListener("submit", (e) => e.preventDefault());
    rootEl.replaceChildren(
      form,
      messages,
      el(doc, "div", { class: "rr-output" }, [
        verdict,
        basis,
        check,
        el(doc, "div", { class: "rr-bridge-label", text: "Bridge sentences (B_rel marked):" }),
        sentencesBox,
        el(doc, "div", { class: "rr-table-wrap" }, [table]),
        el(doc, "small", {
          text: "z = (value − training average) / training spread; each row adds coef × z " +
            "to the intercept, and the sum is the log-odds of union.",
        }),
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
      const note = noFeatureNote(question.value, d);
      basis.textContent = note || "";
      basis.hidden = !note;
      const preset = presets[Number(select.value)];
      check.hidden = select.value === OWN || !preset;
      if (!check.hidden) {
        const found = d.b_rel === preset.b_rel;
        check.replaceChildren(
          el(doc, "strong", { text: "Check B_rel: " }),
          doc.createTextNode(`it should be “${preset.b_rel}” ${preset.why} `),
          el(doc, "span", {
            class: found ? "rr-pos" : "rr-error",
            text: found ? "✓ The router chose it." : "✗ The router chose another sentence.",
          })
        );
      }
      const head = el(doc, "tr", {}, [
        ...["feature", "value", "z", "coef", "coef × z"].map((h) => el(doc, "th", { text: h })),
      ]);
      const signed = (x) => (x >= 0 ? "+" : "") + x.toFixed(3);
      const rows = FEATURE_NAMES.map((name, j) => {
        const g = guide.get(name);
        return el(doc, "tr", { "data-feature": name }, [
          el(doc, "td", {}, [
            el(doc, "span", { class: "rr-label", text: g ? g.label : name }),
            ...(g ? [el(doc, "small", { class: "rr-meaning", text: g.meaning })] : []),
          ]),
          el(doc, "td", { text: String(d.features[name]) }),
          el(doc, "td", { text: d.z[j].toFixed(3) }),
          el(doc, "td", { text: model.coef[j].toFixed(3) }),
          el(doc, "td", {
            class: d.contributions[j] > 0 ? "rr-pos" : d.contributions[j] < 0 ? "rr-neg" : "",
            text: signed(d.contributions[j]),
          }),
        ]);
      });
      const total = (label, value, cls) =>
        el(doc, "tr", { class: cls }, [
          el(doc, "td", { colspan: "4", text: label }),
          el(doc, "td", { text: signed(value) }),
        ]);
      table.replaceChildren(
        el(doc, "thead", {}, [head]),
        el(doc, "tbody", {}, [
          ...rows,
          total(
            "Intercept: the log-odds with every feature at its training average",
            model.intercept,
            "rr-intercept"
          ),
          total("Sum: the log-odds of union", d.logit, "rr-sum"),
        ])
      );
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
    // Typing makes it the reader's own question: the menu says so at once.
    for (const input of [question, title, bridge]) {
      input.addEventListener("input", () => {
        select.value = OWN;
        schedule();
      });
    }
    select.addEventListener("change", () => {
      const p = presets[Number(select.value)];
      if (select.value !== OWN && p) {
        question.value = p.question;
        title.value = p.title || "";
        bridge.value = p.bridge;
      }
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

  // The feature spec of the default rules (the packaged model's, unless it was fitted on others).
  const FEATURE_SPEC = featureSpec(DEFAULT_RULES);

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
    TERMINALS,
    SENTENCE_MARKS,
    CLOSERS,
    OPENERS,
    splitBridge,
    parsePyJson,
    pyJson,
    pyRepr,
    sha256Hex,
    featureSpec,
    DEFAULT_RULES,
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
    languageNote,
    noFeatureNote,
    main,
    mountAll,
    MAX_BRIDGE_CHARS,
  };
});
