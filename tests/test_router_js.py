"""``regime_core/resources/router.js`` against the Python router: same constants, same Unicode
primitives, same decisions on hand-written edge cases and on every two-hop question of the three
datasets and the toy world (bridge as the data gives it, and as running text to be split), the
same bytes from ``node router.js --json`` as from ``regime route --json``; and the module's own
Node tests (``tests/js``, ``node --test``)."""

from __future__ import annotations

import json
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
from regime_core.router import FEATURE_NAMES, FEATURE_SPEC, _text
from regime_core.router.model import decision_dict, default_router
from regime_core.router.sentences import ABBREVIATIONS, route_bridge_text, split_bridge
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
        " names: R.FEATURE_NAMES, space: R.PY_SPACE}))"
    )
    assert sorted(js["stop"]) == sorted(_text.STOP_WORDS)
    assert sorted(js["conn"]) == sorted(_text.CONNECTORS)
    assert sorted(js["open"]) == sorted(_text.NON_NAME_OPENERS)
    assert sorted(js["abbr"]) == sorted(ABBREVIATIONS)
    assert js["spec"] == FEATURE_SPEC
    assert js["names"] == list(FEATURE_NAMES)
    assert js["space"] == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
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
]


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
    ]
    js_out = js_batch(items, tmp_path)
    for item, js in zip(items, js_out, strict=True):
        py = py_decide(item)
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
    assert py.stdout == js.stdout == ""
    assert js.stderr.removeprefix("router.js: error: ") == py.stderr.removeprefix("regime: error: ")


# --- every two-hop question of the data -------------------------------------------------------


@pytest.fixture(scope="module")
def prepared_work(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from regime_core.data import prepare

    work = tmp_path_factory.mktemp("router_js_work")
    prepare(real_data_dir, paths.prepared_dir(work))
    return work


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
    "same", "older", "director", "mother", "born", "founded", "film", "Kestrel", "Bay",
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
