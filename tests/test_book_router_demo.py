"""The "Route your own question" page: presets (hand-written and toy-world, never dataset text)
whose B_rel the router selects as each promises, with the Python router's decisions (the
no-JavaScript table), the same decisions from router.js, the features by name with a meaning
that holds for the rules, and page HTML that keeps the embedded JSON intact."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from helpers import refused

from regime_book.router_demo import (
    FAILURE_CASES,
    FEATURE_GUIDE,
    HAND_WRITTEN_PRESETS,
    MAX_PRESET_BRIDGE_CHARS,
    TOY_WORLD,
    FailureSpec,
    Preset,
    PresetSpec,
    count_ranges,
    demo_html,
    feature_pushes,
    held_new_entity,
    learned_summary,
    load_model_json,
    route_failures,
    route_presets,
    routed_by_kind,
    toy_presets,
    union_name_limits,
)
from regime_core import paths
from regime_core.data import load_examples
from regime_core.router import FEATURE_NAMES
from regime_core.router.model import default_router, default_router_path
from regime_core.router.rules import DEFAULT_ROUTER_RULES
from regime_core.router.sentences import route_bridge_text, split_bridge

ROUTER_JS = paths.REPO_ROOT / "regime_core" / "resources" / "router.js"
PAGE = paths.REPO_ROOT / "book" / "router" / "try_the_router.md"


def js_batch(items: list[dict[str, str]], tmp_path: Path) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: `apt-get install -y nodejs` (.ci/run does it)")
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    done = subprocess.run(
        [node, str(ROUTER_JS), "--batch", str(source)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def presets() -> list[Preset]:
    router = default_router()
    specs = [*HAND_WRITTEN_PRESETS, *toy_presets(load_examples("toyworld"), router)]
    return route_presets(specs, router)


def test_presets_hold_both_decisions_and_the_python_routers_numbers(
    presets: list[Preset],
) -> None:
    assert {p.action for p in presets} == {"q", "union"}
    assert {p.source for p in presets} == {"Hand-written", TOY_WORLD}
    assert len({p.key for p in presets}) == len(presets)
    router = default_router()
    for p in presets:
        d = route_bridge_text(router, p.question, p.bridge, p.title or None)
        assert (p.action, p.probability, p.b_rel) == (d.action, d.probability, d.b_rel)
        assert p.b_rel in split_bridge(p.bridge)
        assert p.why.endswith(".") and "\n" not in p.why


def test_toy_presets_are_the_toy_worlds_relation_sentences() -> None:
    examples = {e.id: e for e in load_examples("toyworld")}
    chosen = toy_presets(examples.values(), default_router())
    assert [examples[s.key].native_type for s in chosen] == ["compositional", "comparison"]
    for spec in chosen:
        ex = examples[spec.key]
        bridge = next(p for p in ex.pool if p.pid == ex.bridge_pid)
        assert ex.relation_sentence is not None
        assert spec.b_rel == bridge.sentences[ex.relation_sentence]
        assert len(spec.bridge) <= MAX_PRESET_BRIDGE_CHARS
        assert (spec.question, spec.title) == (ex.question, bridge.title)
    hop2 = examples[chosen[0].key].hop2_entity
    assert hop2 in chosen[0].b_rel and hop2 in chosen[0].why
    assert hop2 not in examples[chosen[0].key].question
    assert chosen == toy_presets(reversed(list(examples.values())), default_router())


def test_a_preset_whose_b_rel_the_router_does_not_select_is_an_error() -> None:
    spec = HAND_WRITTEN_PRESETS[0]
    wrong = PresetSpec(spec.source, "wrong", spec.question, spec.title, spec.bridge,
                       split_bridge(spec.bridge)[0], "Because.")  # fmt: skip
    with refused(ValueError, names=("'wrong'",)):
        route_presets([wrong], default_router())


def test_router_js_decides_the_presets_as_the_static_table_says(
    presets: list[Preset], tmp_path: Path
) -> None:
    items = [
        {"id": p.key, "question": p.question, "bridge": p.bridge, "title": p.title or None}
        for p in presets
    ]
    for p, js in zip(presets, js_batch(items, tmp_path), strict=True):
        assert (js["action"], js["b_rel"]) == (p.action, p.b_rel)
        assert abs(js["probability"] - p.probability) <= 1e-9


@pytest.mark.realdata
def test_hand_written_presets_are_not_dataset_text(real_data_dir: Path) -> None:
    """No sentence of a hand-written preset occurs in any raw dataset file (the toy world's are
    synthetic): the page shows no dataset text."""
    specs = [*HAND_WRITTEN_PRESETS, *FAILURE_CASES]
    sentences = {s for spec in specs for s in (spec.question, *split_bridge(spec.bridge))}
    files = [f for f in sorted(real_data_dir.rglob("*")) if f.is_file()]
    assert files
    for file in files:
        text = file.read_bytes().decode("utf-8", errors="replace")
        found = [s for s in sentences if s in text]
        assert not found, f"{file}: {found}"


def test_feature_guide_names_every_feature_with_a_true_one_line_meaning() -> None:
    assert list(FEATURE_GUIDE) == list(FEATURE_NAMES)
    labels = [label for label, _ in FEATURE_GUIDE.values()]
    assert len(set(labels)) == len(labels) and all("_" not in label for label in labels[:3])
    for label, meaning in FEATURE_GUIDE.values():
        assert "\n" not in meaning and len(meaning) <= 140 and meaning.endswith("."), label
    # the words each meaning quotes as examples are the rules' words
    cues = re.findall(r"\b[a-z]+\b", FEATURE_GUIDE["comparison_cues"][1].split("(")[1])
    assert set(cues[: cues.index("the")]) <= set(DEFAULT_ROUTER_RULES.comparison_cues)
    openers = FEATURE_GUIDE["yes_no_opener"][1].split("such as ")[1].split(" (")[0]
    assert set(openers.replace(" or", ",").split(", ")) <= set(DEFAULT_ROUTER_RULES.yes_no_openers)


def test_demo_html_embeds_model_presets_and_guide_safely() -> None:
    model = load_model_json(default_router_path())
    nasty = Preset("Toy", "x", "Who wrote </script><b>?", "", "A. B.", "A.", "Why.", "q", 0.25)
    page = demo_html(model, [nasty], "rr")
    scripts = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S)
    assert [s[0] for s in scripts] == ["rr-model", "rr-presets", "rr-features"]
    assert json.loads(scripts[0][1]) == model
    assert json.loads(scripts[1][1])[0]["question"] == nasty.question
    assert [f["name"] for f in json.loads(scripts[2][1])] == list(FEATURE_NAMES)
    assert 'class="regime-router-demo" id="rr" data-model="rr-model"' in page


def test_the_embedded_model_passes_router_js_checks(tmp_path: Path) -> None:
    """The page re-serialises the model (json.dumps of json.loads): its seal and feature spec
    still hold for router.js's loader, as the page checks them when it mounts."""
    node = shutil.which("node")
    assert node is not None
    model = load_model_json(default_router_path())
    page = demo_html(model, [], "rr")
    embedded = re.search(r'id="rr-model">(.*?)</script>', page, re.S)
    assert embedded is not None
    (tmp_path / "m.json").write_text(embedded[1], encoding="utf-8")
    script = (f"const R = require({json.dumps(str(ROUTER_JS))});"
              f"R.loadModel(require('fs').readFileSync({json.dumps(str(tmp_path / 'm.json'))}, "
              "'utf8'), 'page'); console.log('ok')")  # fmt: skip
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


def test_the_page_reads_how_to_read_it_before_the_router() -> None:
    toc = yaml.safe_load((paths.REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    router_part = next(p for p in toc["parts"] if p["caption"] == "The router")
    files = [s["file"] for c in router_part["chapters"] for s in c.get("sections", [])]
    assert "book/router/try_the_router" in files
    page = PAGE.read_text(encoding="utf-8")
    assert page.index("## How to read it") < page.index("```{regime-router-demo}")
    assert page.index("{regime-router-features}") < page.index("```{regime-router-demo}")
    assert "built for English" in page
    # what it learned, then the widget, then where it fails: beside the widget
    learned = page.index("```{regime-router-learned}")
    assert learned < page.index("```{regime-router-demo}") < page.index("{regime-router-failures}")
    assert not re.search(r"\b(comparison_cues|question_entities|b_rel_has_new_entity)\b", page)


# --- what the packaged router learned, and where it fails -------------------------------------


def test_each_features_push_matches_the_sign_of_its_coefficient() -> None:
    router = default_router()
    model = load_model_json(default_router_path())
    pushes = feature_pushes(router)
    assert [p.name for p in pushes] == list(FEATURE_NAMES)
    for push, coef in zip(pushes, model["coef"], strict=True):
        assert push.coefficient == pytest.approx(coef, abs=1e-12)
        expected = "union" if coef > 0 else "q" if coef < 0 else None
        assert push.toward == expected
        words = push.sentence()
        if expected is None:
            assert "no decision" in words
        else:
            assert f"leans to `{expected}`" in words
            assert f"`{'q' if expected == 'union' else 'union'}`" not in words
    # no meaning on the page claims a direction: the push is read from the model
    for _, meaning in FEATURE_GUIDE.values():
        assert "sign of" not in meaning and "Q-dominant" not in meaning


def test_the_packaged_router_pushes_the_named_feature_toward_union() -> None:
    """The page's fix: "Question names a name in B_rel" is not a sign of q in this model."""
    pushes = {p.name: p for p in feature_pushes(default_router())}
    assert pushes["question_names_b_rel_entity"].toward == "union"
    assert pushes["comparison_cues"].toward == "q"


def test_the_learned_grid_is_the_routers_own_decision() -> None:
    router = default_router()
    limits = union_name_limits(router, max_names=5)
    assert len(limits) == 12
    new = held_new_entity(router)
    for lim in limits:
        for n in range(6):
            row = [
                lim.comparison_cues,
                float(lim.yes_no_opener),
                n,
                float(lim.names_b_rel_entity),
                new,
            ]
            action = router.predict_action(np.array([row], dtype=float))[0]
            assert (action == "union") == (n in lim.union_counts)


def test_more_comparison_words_never_widen_the_union_range() -> None:
    router = default_router()
    by_kind = {
        (lim.comparison_cues, lim.yes_no_opener, lim.names_b_rel_entity): set(lim.union_counts)
        for lim in union_name_limits(router)
    }
    for (cues, yes_no, named), counts in by_kind.items():
        if cues < 2:
            assert by_kind[(cues + 1, yes_no, named)] <= counts


def test_the_summary_agrees_with_routing_real_sentences() -> None:
    router = default_router()
    summary = learned_summary(router)
    comparison = next(p for p in HAND_WRITTEN_PRESETS if p.key == "comparison")
    yes_no = next(p for p in HAND_WRITTEN_PRESETS if p.key == "yes-no")
    founder = next(p for p in HAND_WRITTEN_PRESETS if p.key == "founder")
    decided = {
        p.key: route_bridge_text(router, p.question, p.bridge, p.title).action
        for p in (comparison, yes_no, founder)
    }
    assert f"compares goes to `{decided['comparison']}`" in summary
    assert f"two people goes to `{decided['yes-no']}`" in summary
    assert f"naming one name, goes to `{decided['founder']}`" in summary


def test_the_toy_world_routed_by_kind_counts_every_question() -> None:
    examples = list(load_examples("toyworld"))
    counts = routed_by_kind(examples, default_router())
    assert sum(c.n for c in counts) == len(examples)
    for c in counts:
        assert c.to_q + c.to_union == c.n
        assert c.n == sum(ex.native_type == c.kind for ex in examples)


def test_count_ranges_reads_as_words() -> None:
    assert count_ranges((3, 1, 2)) == "1 to 3"
    assert count_ranges((0, 1, 2, 3, 4, 5, 6)) == "0 to 6 (all shown)"
    assert count_ranges(()) == "none"


def test_the_failure_cases_fail_as_the_page_says() -> None:
    router = default_router()
    failures = {f.key: f for f in route_failures(FAILURE_CASES, router)}
    herbert = failures["names the hop-2 entity"]
    assert (herbert.action, herbert.right_action) == ("union", "q")
    assert herbert.probability > 0.5
    british = failures["nationality as a name"]
    assert british.b_rel != british.right_b_rel and "British" in british.b_rel


@pytest.mark.parametrize(
    ("sentence", "wins"),
    [
        ("It is a British drama.", True),
        ("It is in French.", True),
        ("It premiered in March.", True),
        ("It is a silent drama.", False),
    ],
)
def test_capitalised_words_that_are_not_names_win_b_rel_as_the_page_says(
    sentence: str, wins: bool
) -> None:
    """The page: a nationality, a language or a month makes a sentence look as if it brings a
    new name, and an early such sentence wins B_rel; the same sentence in lower case does not."""
    right = "It was directed by Odile Marchetti."
    d = route_bridge_text(
        default_router(),
        "Who was the mother of the man who made the film Kestrel Bay?",
        f"Kestrel Bay is a 1931 film. {sentence} {right}",
        "Kestrel Bay (film)",
    )
    assert d.b_rel == (sentence if wins else right)


def test_a_nationality_in_the_question_counts_as_a_name() -> None:
    bridge = "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti."
    plain, british = (
        route_bridge_text(default_router(), q, bridge, "Kestrel Bay (film)")
        for q in (
            "Where was the director of Kestrel Bay born?",
            "Where was the British director of Kestrel Bay born?",
        )
    )
    assert british.features["question_entities"] == plain.features["question_entities"] + 1


def test_a_failure_case_the_router_gets_right_fails_the_build() -> None:
    fixed = FailureSpec(
        "not a failure",
        "Which film came out first, Kestrel Bay or The Amber Gate?",
        "The Amber Gate",
        "The Amber Gate is a silent drama. It came out in 1926 in Oslo.",
        "q",
        None,
        "invented",
    )
    with refused(ValueError, names=("'not a failure'", "FAILURE_CASES")):
        route_failures([fixed], default_router())


# --- the page in headless Chromium, driven with key presses -----------------------------------


class Page:
    """One page in a headless Chromium tab (Playwright's): evaluate, press keys, type, wait for a
    frame."""

    def __init__(self, tab: Any) -> None:
        self.tab = tab

    def js(self, expression: str) -> Any:
        return self.tab.evaluate(expression)

    def key(self, key: str) -> None:
        self.tab.keyboard.press(key)

    def clear_and_type(self, element_id: str, text: str) -> None:
        self.js(f"document.getElementById('{element_id}').focus(); "
                f"document.getElementById('{element_id}').select()")  # fmt: skip
        self.key("Backspace")
        self.tab.keyboard.type(text)
        self.frame()

    def frame(self) -> None:
        self.js("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")

    def state(self) -> dict[str, Any]:
        return self.js(
            """(() => {
              const $ = (s) => document.querySelector(s);
              const shown = (e) => e && !e.hidden && !e.closest("[hidden]");
              return {
                preset: $("#regime-router-preset").value,
                question: $("#regime-router-question").value,
                action: shown($(".rr-action")) ? $(".rr-action").textContent : null,
                basis: shown($(".rr-basis")) ? $(".rr-basis").textContent : null,
                check: shown($(".rr-check")) ? $(".rr-check").textContent : null,
                notes: [...document.querySelectorAll(".rr-messages p")].map((p) => p.textContent),
                sentences: [...document.querySelectorAll(".rr-sentences li")].map(
                  (li) => li.firstChild.textContent),
                marked: $(".rr-sentences mark") ? $(".rr-sentences mark").textContent : null,
                labels: [...document.querySelectorAll(".rr-features .rr-label")].map(
                  (e) => e.textContent),
                errors: window.__errors,
              };
            })()"""
        )


@pytest.fixture(scope="module")
def page(chromium: str, presets: list[Preset], tmp_path_factory: pytest.TempPathFactory) -> Any:
    from regime_book.site import STATIC_DIR
    from tools.bookcheck.browser import launch, open_tab, serve

    site = tmp_path_factory.mktemp("router_page")
    shutil.copy(ROUTER_JS, site / "router.js")
    shutil.copy(STATIC_DIR / "regime-router.css", site / "regime-router.css")
    body = demo_html(load_model_json(default_router_path()), presets, "regime-router")
    (site / "index.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="regime-router.css">'
        "<script>window.__errors = []; addEventListener('error', (e) => "
        "window.__errors.push(String(e.message)));</script></head>"
        f'<body>{body}<script src="router.js"></script></body></html>',
        encoding="utf-8",
    )
    with serve(site) as base, launch(chromium) as browser:
        tab = open_tab(browser, 390, 844)
        tab.goto(base + "index.html", wait_until="load")
        page = Page(tab)
        page.frame()
        yield page


def test_the_page_in_a_browser_follows_the_reader(page: Page, presets: list[Preset]) -> None:
    first = page.state()
    assert first["errors"] == []
    assert (first["preset"], first["question"]) == ("0", presets[0].question)
    assert first["marked"] == presets[0].b_rel and "✓ The router chose it." in first["check"]
    assert first["labels"] == [FEATURE_GUIDE[n][0] for n in FEATURE_NAMES]
    assert first["basis"] is None

    # typing makes it the reader's own question: the menu says so, the preset's check goes
    page.clear_and_type("regime-router-question", "???")
    typed = page.state()
    assert (typed["preset"], typed["question"], typed["check"]) == ("own", "???", None)
    assert typed["basis"] is not None and "rests on nothing in your question" in typed["basis"]

    # a Chinese bridge splits at its marks, and the page says the router is built for English
    page.clear_and_type("regime-router-question", "谁执导了《鹰湾》？")
    page.clear_and_type("regime-router-bridge", "《鹰湾》是1931年的电影。导演是多伊！")
    chinese = page.state()
    assert chinese["sentences"] == ["《鹰湾》是1931年的电影。", "导演是多伊！"]
    assert any("built for English" in n for n in chinese["notes"])

    # choosing a preset with the keyboard fills the form and brings its check back
    page.js("document.getElementById('regime-router-preset').focus()")
    page.key("ArrowDown")
    page.frame()
    chosen = page.state()
    assert chosen["preset"] == "0" and chosen["question"] == presets[0].question
    assert "✓" in chosen["check"] and chosen["notes"] == []
    page.key("ArrowDown")
    page.frame()
    assert page.state()["question"] == presets[1].question
    assert page.state()["errors"] == []
