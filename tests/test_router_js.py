"""``regime_core/resources/router.js`` against the Python router: same constants, same Unicode
primitives, same decisions on hand-written edge cases and on every two-hop question of the three
datasets and the toy world (bridge as the data gives it, and as running text to be split), the
same bytes from ``node router.js --json`` as from ``regime route --json``; the same verdict on
every model file (accepted and routed alike, or refused with the same line and exit status),
the same refusal of text that was not UTF-8; and the module's own Node tests (``tests/js``,
``node --test``)."""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from regime_core import paths
from regime_core.cli import main as regime_main
from regime_core.router import FEATURE_NAMES, FEATURE_SPEC, _text
from regime_core.router.features import feature_spec
from regime_core.router.io import document_hash
from regime_core.router.model import decision_dict, default_router, default_router_path
from regime_core.router.rules import DEFAULT_ROUTER_RULES, RouterRules
from regime_core.router.sentences import (
    ABBREVIATIONS,
    CLOSERS,
    OPENERS,
    SENTENCE_MARKS,
    TERMINALS,
    route_bridge_text,
    split_bridge,
)
from regime_core.schema import Example

ROUTER_JS = paths.REPO_ROOT / "regime_core" / "resources" / "router.js"
JS_TESTS = paths.REPO_ROOT / "tests" / "js"
TOLERANCE = 1e-9


def node() -> str:
    exe = shutil.which("node")
    if exe is None:
        pytest.fail("node is not installed: `apt-get install -y nodejs` (.ci/run does it)")
    return exe


def run_node(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node(), *args], capture_output=True, text=True, encoding="utf-8", input=stdin, timeout=300
    )


def node_eval(script: str) -> Any:
    """Run ``script`` with ``R`` bound to router.js; it must print one JSON value."""
    prelude = f"const R = require({json.dumps(str(ROUTER_JS))});\n"
    done = run_node("-e", prelude + script)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- both implementations over a list of items ----------------------------------------------


def js_batch(items: Sequence[dict[str, Any]], tmp_path: Path) -> list[dict[str, Any]]:
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    done = run_node(str(ROUTER_JS), "--batch", str(source))
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def py_decide(item: dict[str, Any]) -> dict[str, Any]:
    router = default_router()
    try:
        if "sentences" in item:
            decision = router.route(item["question"], item["sentences"], item.get("title"))
            return {"id": item["id"], **decision_dict(decision)}
        decision = route_bridge_text(router, item["question"], item["bridge"], item.get("title"))
        out = {"id": item["id"], **decision_dict(decision)}
        out["sentences"] = split_bridge(item["bridge"])
        return out
    except ValueError as err:
        return {"id": item["id"], "error": str(err)}


def first_difference(py: dict[str, Any], js: dict[str, Any]) -> str | None:
    """The first field that differs, in the order the router computes them, or None."""
    if "error" in py or "error" in js:
        return None if py.get("error") == js.get("error") else "error"
    if py.get("sentences") != js.get("sentences"):
        return "sentences (the split)"
    for field in ("b_rel_index", "b_rel"):
        if py[field] != js[field]:
            return field
    for name in FEATURE_NAMES:
        if py["features"][name] != js["features"][name]:
            return f"feature {name}"
    if abs(py["probability"] - js["probability"]) > TOLERANCE:
        return "probability"
    if py["action"] != js["action"]:
        return "action"
    return None


def _values(field: str, out: dict[str, Any]) -> Any:
    if field.startswith("feature "):
        return out.get("features", {}).get(field.removeprefix("feature "))
    return out.get(field.split(" ")[0])


def assert_parity(items: Sequence[dict[str, Any]], tmp_path: Path) -> int:
    js_out = js_batch(items, tmp_path)
    assert [o["id"] for o in js_out] == [i["id"] for i in items]
    problems = []
    for item, js in zip(items, js_out, strict=True):
        py = py_decide(item)
        field = first_difference(py, js)
        if field is not None:
            a, b = _values(field, py), _values(field, js)
            problems.append(f"{item['id']}: {field} differs: python {a!r}, js {b!r}")
    assert not problems, f"{len(problems)} of {len(items)} differ:\n" + "\n".join(problems[:20])
    return len(items)


def example_items(examples: Sequence[Example], *, raw: bool) -> list[dict[str, Any]]:
    items = []
    for ex in examples:
        bridge = next(p for p in ex.pool if p.pid == ex.bridge_pid)
        item: dict[str, Any] = {"id": ex.id, "question": ex.question, "title": bridge.title}
        if raw:
            item["bridge"] = " ".join(bridge.sentences)
        else:
            item["sentences"] = list(bridge.sentences)
        items.append(item)
    return items


# --- constants and primitives -----------------------------------------------------------------


def test_constants_match_python() -> None:
    js = node_eval(
        "console.log(JSON.stringify({stop: [...R.STOP_WORDS], conn: [...R.CONNECTORS],"
        " open: [...R.NON_NAME_OPENERS], abbr: [...R.ABBREVIATIONS], spec: R.FEATURE_SPEC,"
        " names: R.FEATURE_NAMES, space: R.PY_SPACE, marks: R.SENTENCE_MARKS,"
        " terminals: R.TERMINALS, closers: R.CLOSERS, openers: R.OPENERS,"
        " rules: R.pyJson(R.DEFAULT_RULES)}))"
    )
    assert sorted(js["stop"]) == sorted(_text.STOP_WORDS)
    assert sorted(js["conn"]) == sorted(_text.CONNECTORS)
    assert sorted(js["open"]) == sorted(_text.NON_NAME_OPENERS)
    assert sorted(js["abbr"]) == sorted(ABBREVIATIONS)
    assert js["spec"] == FEATURE_SPEC
    assert js["names"] == list(FEATURE_NAMES)
    assert js["space"] == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    assert (js["marks"], js["terminals"]) == (SENTENCE_MARKS, TERMINALS)
    assert (js["closers"], js["openers"]) == (CLOSERS, OPENERS)
    assert js["rules"] == json.dumps(DEFAULT_ROUTER_RULES.to_dict(), sort_keys=True)
    model = json.loads((ROUTER_JS.parent / "default_router.json").read_text(encoding="utf-8"))
    assert model["feature_spec"] == FEATURE_SPEC


def _assigned(cp: int) -> bool:
    # Compared only where Python's Unicode version (unicodedata) knows the character: Node's
    # ICU is newer, and characters added since are read as Python cannot.
    return unicodedata.category(chr(cp)) not in ("Cn", "Cs")


def test_unicode_primitives_match_python() -> None:
    """Python's \\w, isupper, lower, the fold and combining() against router.js, for every
    code point Python's unicodedata assigns."""
    js = node_eval(
        r"""
const word = /^[\p{L}\p{N}_]$/u, upper = /^\p{Uppercase}/u;
const out = {word: [], upper: [], combining: [], lower: {}, fold: {}};
for (let cp = 0; cp < 0x110000; cp++) {
  if (cp >= 0xd800 && cp < 0xe000) continue;
  const ch = String.fromCodePoint(cp);
  if (word.test(ch)) out.word.push(cp);
  if (upper.test(ch)) out.upper.push(cp);
  if (R.COMBINING(cp)) out.combining.push(cp);
  if (ch.toLowerCase() !== ch) out.lower[cp] = ch.toLowerCase();
  const f = R.fold(ch);
  if (f !== ch.toLowerCase()) out.fold[cp] = f;
}
console.log(JSON.stringify(out));
"""
    )

    cps = [cp for cp in range(0x110000) if _assigned(cp)]
    js_word, js_upper, js_comb = set(js["word"]), set(js["upper"]), set(js["combining"])
    differences: dict[str, list[str]] = {}

    def check(what: str, cp: int, ok: bool) -> None:
        if not ok:
            differences.setdefault(what, []).append(f"U+{cp:04X}")

    for cp in cps:
        ch = chr(cp)
        check("\\w", cp, (re.fullmatch(r"\w", ch) is not None) == (cp in js_word))
        check("isupper", cp, ch.isupper() == (cp in js_upper))
        check("combining", cp, bool(unicodedata.combining(ch)) == (cp in js_comb))
        check("lower", cp, ch.lower() == js["lower"].get(str(cp), ch))
        folded = ch.lower() if ch.lower().isascii() else _text.fold(ch.lower())
        check("fold", cp, folded == js["fold"].get(str(cp), ch.lower()))
    assert not differences, {k: (len(v), v[:10]) for k, v in differences.items()}


def test_python_repr_of_every_character() -> None:
    """router.js quotes values in its refusals as Python's repr() does (load_router's words)."""
    js = node_eval(
        "const out = [];\n"
        "for (let cp = 0; cp < 0x110000; cp++) {\n"
        "  if (cp >= 0xd800 && cp < 0xe000) continue;\n"
        "  const ch = String.fromCodePoint(cp);\n"
        "  if (R.pyRepr(ch) !== `'${ch}'`) out.push([cp, R.pyRepr(ch)]);\n"
        "}\n"
        "console.log(JSON.stringify(out));"
    )
    escaped = {cp: text for cp, text in js}
    differences = [
        f"U+{cp:04X}"
        for cp in range(0x110000)
        if _assigned(cp) and repr(chr(cp)) != escaped.get(cp, f"'{chr(cp)}'")
    ]
    assert not differences, (len(differences), differences[:10])
    values = ["it's", 'say "x"', "both ' and \"", -0.0, 1e-07, 10**20, None, True, [1, "a"]]
    script = "console.log(JSON.stringify(R.parsePyJson(%s).map(R.pyRepr)))"
    assert node_eval(script % json.dumps(json.dumps(values))) == [repr(v) for v in values]


# --- hand-written edge cases ------------------------------------------------------------------

EDGE_CASES: list[dict[str, Any]] = [
    {
        "question": "Who is the mother of the director of the film Kestrel Bay?",
        "bridge": "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti of the Lyon "
        "School.",
        "title": "Kestrel Bay (film)",
    },
    {
        "question": "Which film came out first, Kestrel Bay or The Amber Gate?",
        "bridge": "The Amber Gate is a silent film. It premiered in Oslo before Kestrel Bay.",
    },
    {
        "question": "Are both Tomas Ruiz and Ana Beyoncé Lind from the same country?",
        "bridge": "Tomás Ruíz is a poet from Zürich!  He met Ana Beyonce Lind in São Paulo.",
    },
    {
        "question": "Did the founder of Quillmark study in Zürich?",
        "bridge": "Quillmark was founded by Ida Brenn.\nShe studied at the ETH (in Zürich).",
        "title": "Quillmark",
    },
    {  # abbreviations and initials must not end a sentence; "?" and "!" do
        "question": "Where was the author of The Hobbit born?",
        "bridge": "The Hobbit is a novel by J. R. R. Tolkien. Tolkien was born in the U.S.? No! "
        'He was born in Bloemfontein, "Orange Free State." Dr. Smith disagreed (e.g. in 1990).',
        "title": "The Hobbit (novel)",
    },
    {  # apostrophes, hyphens, ampersands, dots inside words
        "question": "What label released O'Brien's Jean-Paul & Co. album in the U.K.?",
        "bridge": "Jean-Paul & Co. is an album by Conor O’Brien. It was released by Rough "
        "Trade Records in 2001.",
    },
    {  # Greek final sigma, Turkish dotted I, ligatures, full-width and mathematical letters
        "question": "Who founded ΟΔΟΣ and İstanbul's ﬁrst ＡＢＣ 𝐁𝐚𝐧𝐤?",
        "bridge": "ΟΔΟΣ was founded by Σίσυφος Παπάς. İstanbul ＡＢＣ 𝐁𝐚𝐧𝐤 was created by "
        "Ayşe Öztürk.",
    },
    {  # emoji, markup, entities
        "question": "🎬 Who directed <b>Titanic</b> &amp; who wrote it? 🚢",
        "bridge": "<p>Titanic is a film. 🎥 It was directed by James Cameron.</p>",
        "title": "Titanic (1997 film)",
    },
    {  # CJK, Devanagari with spacing marks, Arabic
        "question": "Who is the father of the founder of 東京 Records and नमस्ते Films?",
        "bridge": "東京 Records was founded by Kenji Sato. नमस्ते Films was started by Ravi "
        "Kapoor in مصر.",
    },
    {"question": "Is it?", "bridge": "no capitals here. none at all"},
    {"question": "…", "bridge": "!!! ??? ..."},
    {"question": "Who?", "bridge": "   \u3000 "},
    {"question": "   ", "bridge": "A sentence."},
    {"question": "Who?", "bridge": "A sentence.", "title": "  "},
    {"question": "Who?", "bridge": "Title only (film)", "title": "(film)"},
    {"question": "Q", "bridge": "X. " * 3000},
    # sentence marks of other scripts, with and without spaces, runs of marks and closers
    {"question": "谁执导了电影《鹰湾》？",
     "bridge": "《鹰湾》是1931年的电影。导演是Odile Marchetti！是吗？"},
    {"question": "Who directed Kestrel Bay?",
     "bridge": "他说：「你好。」然后走了。真的吗？！是的 Kestrel Bay is a film｡It was directed "
     "by Ana Lind."},
    {"question": "Who?",
     "bridge": "यह एक फ़िल्म है। इसे Ana Lind ने बनाया॥ هل؟ نعم۔ Ա։ ፊልም። ነው፧ ပါ။ ជា។"},
    {"question": "Who?", "bridge": "Il a dit «Non.» Puis Ana Lind partit. 。 。。x 版本３．１４"},
]  # fmt: skip


def test_edge_cases_agree(tmp_path: Path) -> None:
    items = [{"id": f"edge-{i}", **case} for i, case in enumerate(EDGE_CASES)]
    # Each case twice: as running text and as the sentences split_bridge makes of it.
    items += [
        {"id": f"edge-{i}-sentences", "question": c["question"], "title": c.get("title"),
         "sentences": split_bridge(c["bridge"])}
        for i, c in enumerate(EDGE_CASES)
    ]  # fmt: skip
    assert_parity(items, tmp_path)


def test_error_cases_fail_with_the_same_messages(tmp_path: Path) -> None:
    items = [
        {"id": "blank-question", "question": " \n", "bridge": "A. B."},
        {"id": "blank-bridge", "question": "Who?", "bridge": "\t "},
        {"id": "blank-title", "question": "Who?", "bridge": "A.", "title": " "},
        {"id": "empty-sentence", "question": "Who?", "sentences": ["A.", " "]},
        {"id": "no-sentences", "question": "Who?", "sentences": []},
        {"id": "not-a-string", "question": 3, "bridge": "A."},
        {"id": "bridge-not-a-string", "question": "Who?", "bridge": ["A."]},
        {"id": "sentence-not-a-string", "question": "Who?", "sentences": ["A.", 2]},
        # What bytes that were not UTF-8 become: U+FFFD (Node) or a lone surrogate (Python).
        {"id": "fffd-question", "question": "Who di\ufffd it?", "bridge": "A."},
        {"id": "lone-bridge", "question": "Who?", "bridge": "A. B\udcff."},
        {"id": "lone-high-title", "question": "Who?", "bridge": "A.", "title": "T\ud800"},
        {"id": "astral-is-fine", "question": "Who 🎬?", "bridge": "A 🎬.", "expect": "ok"},
    ]
    js_out = js_batch(items, tmp_path)
    for item, js in zip(items, js_out, strict=True):
        py = py_decide(item)
        if item.get("expect") == "ok":
            assert "error" not in py and first_difference(py, js) is None, item["id"]
            continue
        assert "error" in py, item["id"]
        assert js.get("error") == py["error"], item["id"]


# --- the command lines, byte for byte -----------------------------------------------------------

CLI_CASES = [
    ["--question", EDGE_CASES[0]["question"], "--bridge", EDGE_CASES[0]["bridge"],
     "--bridge-title", EDGE_CASES[0]["title"], "--json"],
    ["--question", EDGE_CASES[6]["question"], "--bridge", EDGE_CASES[6]["bridge"], "--json"],
    ["--question", EDGE_CASES[7]["question"], "--bridge", EDGE_CASES[7]["bridge"]],
    ["--question=Did Ana Lind meet Tomas Ruiz in Oslo?", "--bridge=Ana Lind is a poet.", "--json"],
]  # fmt: skip


@pytest.mark.parametrize("argv", CLI_CASES)
def test_node_cli_prints_what_regime_route_prints(argv: list[str]) -> None:
    py = subprocess.run(
        [sys.executable, "-m", "regime_core", "route", *argv],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    js = run_node(str(ROUTER_JS), *argv)
    assert py.returncode == js.returncode == 0, (py.stderr, js.stderr)
    if "--json" not in argv:
        assert js.stdout == py.stdout
        return
    # p(union) may differ in the last bits (numpy's dot sums in its own order): within the
    # tolerance; every other byte is the same.
    p_py, p_js = json.loads(py.stdout)["probability"], json.loads(js.stdout)["probability"]
    assert abs(p_py - p_js) <= TOLERANCE
    assert js.stdout.replace(repr(p_js), repr(p_py), 1) == py.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["--question", "", "--bridge", "A."],
        ["--question", "Who?", "--bridge", "  "],
        ["--question", "Who?", "--bridge", "A.", "--bridge-title", ""],
    ],
)
def test_node_cli_errors_like_regime_route(argv: list[str]) -> None:
    py = subprocess.run(
        [sys.executable, "-m", "regime_core", "route", *argv, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    js = run_node(str(ROUTER_JS), *argv, "--json")
    assert py.returncode == js.returncode == 2
    # with --json both print the same error object on stdout
    assert py.stdout == js.stdout and json.loads(py.stdout)["kind"] in ("ValueError", "InputError")
    assert js.stderr.removeprefix("router.js: error: ") == py.stderr.removeprefix("regime: error: ")


@pytest.mark.parametrize(
    ("flag", "raw"),
    [
        ("--bridge", b"Kestrel Bay is a film. It was directed by Ana\xff Lind."),
        ("--bridge", b"Truncated \xe2\x82 and overlong \xc0\xaf bytes."),
        ("--question", b"Who directed \xed\xa0\x80 Kestrel Bay?"),
        ("--bridge-title", b"Kestrel Bay \xf4\x90\x80\x80"),
        ("--question", "Who typed \ufffd here?".encode()),
    ],
)
def test_text_that_is_not_utf8_is_refused_alike(flag: str, raw: bytes) -> None:
    """Bytes that are not UTF-8 in an argument: Python sees lone surrogates, Node U+FFFD; both
    refuse with the same line (the first bad character's position is the same) and status 2."""
    argv: dict[str, bytes] = {
        "--question": b"Who directed Kestrel Bay?",
        "--bridge": b"Kestrel Bay is a film. It was directed by Ana Lind.",
        "--bridge-title": b"Kestrel Bay",
    }
    argv[flag] = raw
    args = [x for pair in argv.items() for x in (pair[0].encode(), pair[1])] + [b"--json"]
    py = subprocess.run(
        [sys.executable, "-m", "regime_core", "route", *args], capture_output=True, timeout=300
    )
    js = subprocess.run([node(), str(ROUTER_JS), *args], capture_output=True, timeout=300)
    assert py.returncode == js.returncode == 2, (py.stderr, js.stderr)
    assert py.stdout == js.stdout and json.loads(py.stdout)["command"] == "route"
    message = py.stderr.decode().removeprefix("regime: error: ")
    assert "is not valid UTF-8 text" in message and message.count("\n") == 1
    assert js.stderr.decode().removeprefix("router.js: error: ") == message


# --- model files: accepted and routed alike, or refused alike -----------------------------------

ROUTE_ARGS = ["--question", EDGE_CASES[0]["question"], "--bridge", EDGE_CASES[0]["bridge"],
              "--bridge-title", EDGE_CASES[0]["title"], "--json"]  # fmt: skip


def _packaged() -> dict[str, Any]:
    return json.loads(default_router_path().read_text(encoding="utf-8"))


def _sealed(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "sha256": document_hash(doc)}


def _respecced(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its feature spec recomputed from its rules, as save_router would write it."""
    raw = doc["rules"]
    rules = RouterRules(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    return {**doc, "feature_spec": feature_spec(rules)}


def _edit(path: str, value: Any, *, seal: bool = True, respec: bool = False) -> str:
    """The packaged model with the field at ``path`` (dots) set to ``value`` (``DELETE``:
    removed), sealed anew, or with the packaged seal (``seal=False``)."""
    doc = _packaged()
    *parents, last = path.split(".")
    target = doc
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    if respec:
        doc = _respecced(doc)
    doc.pop("sha256", None)
    return json.dumps(_sealed(doc) if seal else {**doc, "sha256": _packaged()["sha256"]})


DELETE = object()


def _flipped_intercept() -> str:
    """The packaged file's text with its intercept one float step up: valid, and unsealed."""
    text = default_router_path().read_text(encoding="utf-8")
    value = _packaged()["intercept"]
    old, new = (
        f'"intercept": {json.dumps(value)}',
        f'"intercept": {json.dumps(math.nextafter(value, math.inf))}',
    )
    assert text.count(old) == 1
    return text.replace(old, new)


EXTRA = {"note": "Zürich \u2028 🎬 \x7f é", "\uffff": 1, "\U0001f3ac": 2, "big": 2**70,
         "floats": [1e-07, 1e22, 123456789.123, -0.0, 5e-324, 0.1, 1.5e16, 1e16]}  # fmt: skip

# name -> model text. Each is read by `regime route --model` and `node router.js --model`.
MODEL_CASES: dict[str, str | bytes] = {
    # the named cases of the hostile round: refused
    "edited coefficient, old seal": _edit("coef.0", 2.0, seal=False),
    "extra key, old seal": _edit("extra_key", 1, seal=False),
    "rules missing": _edit("rules", DELETE),
    "rules null": _edit("rules", None),
    "new_entity_weight -100": _edit("rules.new_entity_weight", -100),
    "new_entity_weight -100, old seal": _edit("rules.new_entity_weight", -100, seal=False),
    # what Python accepts, router.js accepts and routes alike
    "edited coefficient, resealed": _edit("coef.0", 2.0),
    "extra key, resealed": _edit("extra_key", 1),
    "rules without stem_chars (the default)": _edit("rules.stem_chars", DELETE),
    "other rules, their spec": _edit("rules.overlap_weight", 0.75, respec=True),
    "other cue words, their spec": _edit("rules.comparison_cues", ["both", "or"], respec=True),
    "integer weight, its spec": _edit("rules.position_weight", 1, respec=True),
    "format_version 1.0": _edit("format_version", 1.0),
    "string classes": _edit("classes", ["a", "b"]),
    "class_weight pairs": _edit("params.class_weight", [[0, 1.0], [1, 2.5]]),
    "random_state null": _edit("params.random_state", None),
    "unicode and odd floats in training.extra": _edit("training.extra", EXTRA),
    "threshold 0.99": _edit("threshold", 0.99),
    # the α rule (regime_core.router.io): accepted and reported alike
    "alpha_rule fixed": _edit("alpha_rule", {"rule": "fixed"}),
    "alpha_rule calibrated, alpha = scale × ratio": _edit(
        "alpha_rule", {"rule": "calibrated", "scale": 0.5, "training_ratio": 0.5}
    ),
    "alpha_rule calibrated, integer scale": _edit(
        "alpha_rule", {"rule": "calibrated", "scale": 1, "training_ratio": 0.25}
    ),
    # ... and refused alike
    "alpha_rule calibrated, alpha not scale × ratio": _edit(
        "alpha_rule", {"rule": "calibrated", "scale": 1.1837, "training_ratio": 0.8}
    ),
    "alpha_rule unknown rule": _edit("alpha_rule", {"rule": "tuned"}),
    "alpha_rule rule blank": _edit("alpha_rule", {"rule": " "}),
    "alpha_rule without rule": _edit("alpha_rule", {"scale": 1.0}),
    "alpha_rule a string": _edit("alpha_rule", "fixed"),
    "alpha_rule fixed with a scale": _edit("alpha_rule", {"rule": "fixed", "scale": 1.0}),
    "alpha_rule calibrated without ratio": _edit(
        "alpha_rule", {"rule": "calibrated", "scale": 1.0}
    ),
    "alpha_rule scale 0": _edit(
        "alpha_rule", {"rule": "calibrated", "scale": 0, "training_ratio": 0.5}
    ),
    "alpha_rule ratio negative": _edit(
        "alpha_rule", {"rule": "calibrated", "scale": 0.5, "training_ratio": -0.5}
    ),
    "alpha_rule scale a string": _edit(
        "alpha_rule", {"rule": "calibrated", "scale": "1", "training_ratio": 0.5}
    ),
    "alpha_rule calibrated, edited, old seal": _edit(
        "alpha_rule", {"rule": "calibrated", "scale": 0.5, "training_ratio": 0.5}, seal=False
    ),
    # refused, field by field
    "other rules, old spec": _edit("rules.overlap_weight", 0.75),
    "rules not an object": _edit("rules", []),
    "rules extra key": _edit("rules.bogus", 1),
    "stem_chars 5.0": _edit("rules.stem_chars", 5.0),
    "stem_chars true": _edit("rules.stem_chars", True),
    "threshold 2 in the rules": _edit("rules.entity_match_threshold", 2),
    "a capitalised cue word": _edit("rules.comparison_cues", ["Both"]),
    "a two-word cue": _edit("rules.yes_no_openers", ["is it"]),
    "cue words a string": _edit("rules.comparison_cues", "both"),
    "format": _edit("format", "other"),
    "format_version 2": _edit("format_version", 2),
    "feature names reordered": _edit("feature_names", list(reversed(FEATURE_NAMES))),
    "feature_spec blank": _edit("feature_spec", " "),
    "feature_spec unknown": _edit("feature_spec", "regime-router-features/0+abc"),
    "classes unsorted": _edit("classes", [1, 0]),
    "classes mixed": _edit("classes", [0, "1"]),
    "classes bool": _edit("classes", [False, True]),
    "threshold 0": _edit("threshold", 0),
    "threshold a string": _edit("threshold", "0.5"),
    "alpha negative": _edit("alpha", -1),
    "C zero": _edit("params.C", 0),
    "class_weight bad pair": _edit("params.class_weight", [[0]]),
    "class_weight other": _edit("params.class_weight", "equal"),
    "random_state negative": _edit("params.random_state", -1),
    "max_iter zero": _edit("params.max_iter", 0),
    "max_iter float": _edit("params.max_iter", 10.0),
    "params missing a key": _edit("params.C", DELETE),
    "scale zero": _edit("scaler.scale.2", 0),
    "mean short": _edit("scaler.mean", [0, 0, 0, 0]),
    "coef a string": _edit("coef.1", "x"),
    "coef not a list": _edit("coef", {"0": 1}),
    "intercept null": _edit("intercept", None),
    "intercept 1e400": re.sub(r'"intercept": [^,]+', '"intercept": 1e400', _edit("threshold", 0.5)),
    "intercept Infinity": _edit("intercept", float("inf")),
    "n_iter negative": _edit("n_iter", -1),
    "fitted_with_feature_names 1": _edit("fitted_with_feature_names", 1),
    "training n 1": _edit("training.n", 1),
    "training without n": _edit("training.n", DELETE),
    "training dataset blank": _edit("training.dataset", "\u3000"),
    "package_versions numbers": _edit("training.package_versions", {"python": 3}),
    "no seal": json.dumps({k: v for k, v in _packaged().items() if k != "sha256"}),
    "seal null": json.dumps({**_packaged(), "sha256": None}),
    "seal a number": json.dumps({**_packaged(), "sha256": 7}),
    "intercept one ulp up, old seal": _flipped_intercept(),
    "top level a list": "[1, 2]",
    "not JSON": "{format: 1}",
    "empty file": "",
    "lone surrogate in training.extra": _edit("training.extra", {"x": "\ud800"}, seal=False),
    "not UTF-8": b'{"format": "\xff"}',
}  # fmt: skip
# Whose Python-side message names what it refused in other words (router.js's own decoder):
# the status and the file are compared, not the text. Malformed JSON, an empty file and a lone
# surrogate are worded alike since issue 45.
OWN_WORDS = {"not UTF-8"}


def _route_python(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    code = regime_main(["route", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", list(MODEL_CASES))
def test_a_model_file_is_judged_alike(name: str, tmp_path: Path, capsys: Any) -> None:
    content = MODEL_CASES[name]
    model = tmp_path / "model.json"
    model.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    argv = [*ROUTE_ARGS, "--model", str(model)]
    py_code, py_out, py_err = _route_python(argv, capsys)
    js = run_node(str(ROUTER_JS), *argv)
    assert (py_code, js.returncode) in ((0, 0), (2, 2)), (py_err, js.stderr)
    if py_code == 0:
        assert js.stderr == ""
        p_py, p_js = json.loads(py_out)["probability"], json.loads(js.stdout)["probability"]
        assert abs(p_py - p_js) <= TOLERANCE
        assert js.stdout.replace(repr(p_js), repr(p_py), 1) == py_out
        return
    assert js.stderr.count("\n") == 1 and "Traceback" not in js.stderr
    js_message = js.stderr.removeprefix("router.js: error: ")
    # --json: the one error object on stdout, with the message of the stderr line
    assert json.loads(js.stdout)["error"].replace("\n", " ") == js_message.rstrip("\n")
    if name in OWN_WORDS:
        assert js_message.startswith(f"{model}: "), js_message
    else:
        assert js_message == py_err.removeprefix("regime: error: ")


def test_a_resealed_edit_changes_the_decision_in_both(tmp_path: Path, capsys: Any) -> None:
    """A threshold on the other side of the packaged model's p(union), resealed: both routers
    accept it and flip the decision alike (so the table above is not refusals only)."""
    packaged = json.loads(_route_python(ROUTE_ARGS, capsys)[1])
    p = packaged["probability"]
    model = tmp_path / "model.json"
    model.write_text(_edit("threshold", (1 + p) / 2 if p > 0.5 else p / 2), encoding="utf-8")
    argv = [*ROUTE_ARGS, "--model", str(model)]
    edited = json.loads(_route_python(argv, capsys)[1])
    js = json.loads(run_node(str(ROUTER_JS), *argv).stdout)
    assert edited["probability"] == p and abs(js["probability"] - p) <= TOLERANCE
    assert edited["action"] == js["action"] == {"q": "union", "union": "q"}[packaged["action"]]


def test_model_files_that_python_cannot_read_either(tmp_path: Path) -> None:
    """A missing file, a directory, a FIFO (never opened, so nothing blocks) and nesting
    deeper than Python's parser can follow: one line and status 2 from router.js."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    duplicate = tmp_path / "duplicate.json"
    duplicate.write_text(MODEL_CASES["threshold 0.99"].replace("{", '{"format": 1, ', 1))
    for path, words in [
        (tmp_path / "absent.json", "does not exist or is not a file"),
        (tmp_path, "does not exist or is not a file"),
        (fifo, "does not exist or is not a file"),
        (nested, "values nest more than 100 levels deep"),
        (duplicate, "at format: the key 'format' appears twice in one object"),
    ]:
        js = run_node(str(ROUTER_JS), *ROUTE_ARGS, "--model", str(path))
        assert js.returncode == 2 and json.loads(js.stdout)["kind"] == "ValueError", js.stderr
        assert js.stderr.count("\n") == 1 and words in js.stderr, js.stderr


def test_feature_spec_is_computed_as_python_computes_it() -> None:
    rule_sets = [
        DEFAULT_ROUTER_RULES,
        RouterRules(overlap_weight=0.75),
        RouterRules(position_weight=1),
        RouterRules(stem_chars=3, min_word_chars=1, entity_match_threshold=1),
        RouterRules(comparison_cues=("both", "or", "zürich", "ǆ"), yes_no_openers=()),
        RouterRules(new_entity_weight=0.0, overlap_weight=10**30),
    ]
    payload = json.dumps([r.to_dict() for r in rule_sets])
    js = node_eval(
        f"const sets = R.parsePyJson({json.dumps(payload)});\n"
        "console.log(JSON.stringify(sets.map((s) => R.featureSpec({...R.DEFAULT_RULES, ...s}))))"
    )
    assert js == [feature_spec(r) for r in rule_sets]


# --- every two-hop question of the data -------------------------------------------------------


@pytest.fixture(scope="module")
def prepared_work(prepared_real_work: Path) -> Path:
    return prepared_real_work


@pytest.mark.realdata
@pytest.mark.parametrize("dataset", ["2wikimultihopqa", "hotpotqa", "musique"])
@pytest.mark.parametrize("raw", [False, True], ids=["sentences", "running_text"])
def test_parity_on_every_two_hop_question(
    dataset: str, raw: bool, prepared_work: Path, tmp_path: Path
) -> None:
    from regime_core.data import load_examples

    examples = load_examples(dataset, work=prepared_work)
    assert examples, dataset
    n = assert_parity(example_items(examples, raw=raw), tmp_path)
    print(f"{dataset} ({'running text' if raw else 'sentences'}): {n} questions agree")


@pytest.mark.parametrize("raw", [False, True], ids=["sentences", "running_text"])
def test_parity_on_the_toy_world(raw: bool, tmp_path: Path) -> None:
    from regime_core.data import load_examples

    examples = load_examples("toyworld")
    n = assert_parity(example_items(examples, raw=raw), tmp_path)
    print(f"toyworld ({'running text' if raw else 'sentences'}): {n} questions agree")


# --- the module's own tests, under Node --------------------------------------------------------


def test_node_edge_case_suite() -> None:
    done = run_node("--test", *sorted(str(p) for p in JS_TESTS.glob("*.test.js")))
    assert done.returncode == 0, done.stdout + done.stderr


# --- text views and generated questions ------------------------------------------------------

VIEW_TEXTS = (
    [c["question"] for c in EDGE_CASES]
    + [c["bridge"] for c in EDGE_CASES[:10]]
    + [
        "ΟΔΟΣ ΣΟΦΟΣ Σ ς ΑΣ. İIıi ǅǈǋ ẞß ﬁﬂ Ⅻ ⓐⒶ 𝔄𝔟 Œuvre",
        "Who is the wife of the President of the United States of America and the King of Spain?",
        "O'Brien’s co-author & the U.S.A-based St.-Louis_team met l'Oréal von Trapp y Vega.",
    ]
)


def test_text_views_match_python() -> None:
    js = node_eval(
        f"const texts = {json.dumps(VIEW_TEXTS)};\n"
        "console.log(JSON.stringify(texts.map((t) => { const v = R.view(t); return {"
        " words: [...v.words].sort(), entities: v.entities.map((e) => [e.surface, e.words,"
        " [...e.key].sort()]), free: v.freeWords, first: v.firstWord}; })))"
    )
    for text, got in zip(VIEW_TEXTS, js, strict=True):
        v = _text.view(text)
        assert got["words"] == sorted(v.words), text
        assert got["entities"] == [[e.surface, list(e.words), sorted(e.key)] for e in v.entities]
        assert got["free"] == list(v.free_words), text
        assert got["first"] == v.first_word, text


_PIECES = (
    "Who", "What", "Is", "Did", "Are", "Which", "the", "of", "and", "or", "both", "first",
    "same", "older", "director", "mother", "born", "founded", "film", "Kestrel", "Bay", "。",
    "！", "？", "।", "؟", "」", "「", "«", "»", "电影。导演", "是吗？！",
    "University", "Oxford", "de", "la", "Van", "Helsing", "Beyoncé", "Zürich", "São", "Paulo",
    "O'Brien", "Jean-Paul", "U.S.", "Dr.", "J.", "St.", "Inc.", "1931", "(film)", '"Amber',
    'Gate"', "—", ",", ".", "?", "!", ";", ":", "🎬", "<b>", "ΟΔΟΣ", "İstanbul", "東京", "ﬁrst",
)  # fmt: skip
_SPACES = (" ", " ", " ", "  ", "\n", "\u00a0", "\t", "")


def _generated(rng: random.Random, words: int) -> str:
    return "".join(rng.choice(_PIECES) + rng.choice(_SPACES) for _ in range(words)).strip()


def test_generated_questions_agree(tmp_path: Path) -> None:
    """Random texts over a vocabulary of the router's hard cases (names, connectors, cue words,
    abbreviations, accents, odd whitespace), seeded: both implementations agree on each."""
    rng = random.Random(15)
    items = []
    for i in range(600):
        question = _generated(rng, rng.randint(1, 14)) or "Who?"
        bridge = _generated(rng, rng.randint(1, 60)) or "A."
        title = rng.choice([None, _generated(rng, 3) or None, "Kestrel Bay (film)"])
        items.append({"id": f"gen-{i}", "question": question, "bridge": bridge, "title": title})
    assert assert_parity(items, tmp_path) == 600
