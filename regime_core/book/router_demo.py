"""The book's "Route your own question" page: presets, their decisions, and the page's HTML.

The page runs ``regime_core/resources/router.js`` (the router ported to JavaScript) in the
reader's browser. This module says, at build time and with the Python router, what the page
shows: the presets, each with the sentence ``B_rel`` must be and why, so that a reader can check
the highlight (hand-written questions and a few of the toy world, never dataset text), the
decision ``regime route`` gives each (the page's table without JavaScript), and the five
features by name with a one-line meaning. The Sphinx directives ``regime-router-demo`` and
``regime-router-features`` (``regime_core.book.sphinx.router_page``) render them.
"""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core.router.features import FEATURE_NAMES
from regime_core.schema import Example
from regime_core.strict_json import read_json_file

ROUTER_JS = "router.js"
# Readable presets: toy-world bridges longer than this are skipped when choosing.
MAX_PRESET_BRIDGE_CHARS = 900
HAND_WRITTEN = "Hand-written"
TOY_WORLD = "Toy world"

#: Each feature as the page names it, and its meaning in one line (the full definitions are
#: the features module's ``FEATURE_DOCS``; the words quoted are those of the default rules).
FEATURE_GUIDE: dict[str, tuple[str, str]] = {
    "comparison_cues": (
        "Comparison words",
        "How many comparison words (both, or, first, older, …) the question uses outside its "
        "names.",
    ),
    "yes_no_opener": (
        "Yes/no opener",
        "1 when the question opens with a verb such as is, was or did (a yes/no question), else 0.",
    ),
    "question_entities": (
        "Names in the question",
        "How many names (runs of capitalised words) the question holds; an opening Who or Is "
        "is not one.",
    ),
    "question_names_b_rel_entity": (
        "Question names a name in B_rel",
        "1 when the question already names a name in B_rel other than the bridge's own "
        "subject (a sign of Q-dominant), else 0.",
    ),
    "b_rel_has_new_entity": (
        "B_rel brings a new name",
        "1 when B_rel holds a name that neither the question nor the bridge's subject is (a "
        "sign of B-dominant), else 0.",
    ),
}


@dataclass(frozen=True)
class PresetSpec:
    """A preset before routing: its text, the sentence ``B_rel`` must be, and why."""

    source: str
    key: str
    question: str
    title: str
    bridge: str
    b_rel: str
    why: str


#: Invented questions and bridges (no dataset text) whose ``B_rel`` a reader can check.
HAND_WRITTEN_PRESETS: tuple[PresetSpec, ...] = (
    PresetSpec(
        HAND_WRITTEN,
        "director",
        "Who is the mother of the director of the film Kestrel Bay?",
        "Kestrel Bay (film)",
        "Kestrel Bay is a 1931 drama set on the coast of Brittany. It was directed by Odile "
        "Marchetti. It won a prize at the Venice festival in 1932.",
        "It was directed by Odile Marchetti.",
        "It names the director, Odile Marchetti, whom the question asks about without naming "
        "her: hop 2 is about her.",
    ),
    PresetSpec(
        HAND_WRITTEN,
        "founder",
        "Where was the founder of Quillmark born?",
        "Quillmark",
        "Quillmark is a paper company. Its mills stand on the river Tay. Quillmark was founded "
        "in 1902 by Ida Brenn.",
        "Quillmark was founded in 1902 by Ida Brenn.",
        "It names the founder, Ida Brenn, and shares the word 'found' with the question; it "
        "wins although it comes last.",
    ),
    PresetSpec(
        HAND_WRITTEN,
        "comparison",
        "Which film came out first, Kestrel Bay or The Amber Gate?",
        "The Amber Gate",
        "The Amber Gate is a silent drama. It came out in 1926 in Oslo.",
        "It came out in 1926 in Oslo.",
        "It gives the date the question compares; the question names both films, so the "
        "question alone can find hop 2.",
    ),
    PresetSpec(
        HAND_WRITTEN,
        "yes-no",
        "Were Tomas Ruiz and Ana Lind both born in Chile?",
        "Tomas Ruiz",
        "Tomas Ruiz is a poet and translator. He was born in Valparaíso, Chile, in 1948. He "
        "later taught in Madrid.",
        "He was born in Valparaíso, Chile, in 1948.",
        "It says where Tomas Ruiz was born, the fact the question checks; the question names "
        "both people.",
    ),
)


@dataclass(frozen=True)
class Preset(PresetSpec):
    """One preset with the decision the Python router gives it (``regime route``); its
    ``b_rel`` is both the router's choice and the sentence the preset says it must be."""

    action: str
    probability: float

    def to_dict(self) -> dict[str, Any]:
        """The preset as the page's JSON holds it (its ``key`` as ``id``)."""
        return {("id" if k == "key" else k): v for k, v in dataclasses.asdict(self).items()}


def _bridge(example: Example) -> tuple[str, str, tuple[str, ...]]:
    passage = next(p for p in example.pool if p.pid == example.bridge_pid)
    return passage.title, " ".join(passage.sentences), passage.sentences


def _toy_why(example: Example, title: str) -> str:
    if example.native_type == "compositional":
        return (
            f"The toy world marks it as the relation sentence: it names {example.hop2_entity}, "
            "the hop-2 entity, whom the question does not name."
        )
    return (
        f"The toy world marks it as the relation sentence: it states the fact about {title} "
        "that the question compares; the question names both."
    )


def toy_presets(examples: Iterable[Example], router: Any) -> list[PresetSpec]:
    """One preset per kind of toy-world question (compositional, then comparison): the first,
    in id order, with a bridge of at most :data:`MAX_PRESET_BRIDGE_CHARS` characters whose
    ``B_rel`` (routed as running text, as the page does) is the toy world's own relation
    sentence. Deterministic."""
    from regime_core.router.sentences import route_bridge_text

    chosen: dict[str, PresetSpec] = {}
    for ex in sorted(examples, key=lambda e: e.id):
        if ex.native_type in chosen or ex.relation_sentence is None:
            continue
        title, bridge, sentences = _bridge(ex)
        if len(bridge) > MAX_PRESET_BRIDGE_CHARS:
            continue
        gold = sentences[ex.relation_sentence]
        if route_bridge_text(router, ex.question, bridge, title).b_rel == gold:
            chosen[ex.native_type] = PresetSpec(
                TOY_WORLD, ex.id, ex.question, title, bridge, gold, _toy_why(ex, title)
            )
    return [chosen[kind] for kind in ("compositional", "comparison") if kind in chosen]


def route_presets(specs: Sequence[PresetSpec], router: Any) -> list[Preset]:
    """Each preset with the Python router's decision. Raises ValueError naming the preset when
    the router selects another ``B_rel`` than the one the preset promises the reader."""
    from regime_core.router.sentences import route_bridge_text

    presets = []
    for spec in specs:
        d = route_bridge_text(router, spec.question, spec.bridge, spec.title or None)
        if d.b_rel != spec.b_rel:
            raise ValueError(
                f"router preset {spec.source} {spec.key!r}: the router selects B_rel "
                f"{d.b_rel!r}, but the preset tells the reader it is {spec.b_rel!r}; change the "
                "preset (regime_core/book/router_demo.py) or the rules"
            )
        presets.append(
            Preset(**dataclasses.asdict(spec), action=d.action, probability=d.probability)
        )
    return presets


def _json_script(element_id: str, value: Any) -> str:
    # "</" would close the script element early; JSON allows "<\/".
    text = json.dumps(value, ensure_ascii=True).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def demo_html(model: Mapping[str, Any], presets: Sequence[Preset], element_id: str) -> str:
    """The page's live part: the model, the presets and the feature guide as JSON (no fetch:
    the page works from ``file://``), and the element ``router.js`` mounts the form on."""
    ids = {k: f"{element_id}-{k}" for k in ("model", "presets", "features")}
    guide = [
        {"name": n, "label": FEATURE_GUIDE[n][0], "meaning": FEATURE_GUIDE[n][1]}
        for n in FEATURE_NAMES
    ]
    return "\n".join(
        (
            _json_script(ids["model"], model),
            _json_script(ids["presets"], [p.to_dict() for p in presets]),
            _json_script(ids["features"], guide),
            f'<div class="regime-router-demo" id="{html.escape(element_id)}" '
            f'data-model="{ids["model"]}" data-presets="{ids["presets"]}" '
            f'data-features="{ids["features"]}">'
            '<p class="rr-nojs"><em>The live router needs JavaScript. The table below shows the '
            "presets and the decision the Python router gives each.</em></p></div>",
        )
    )


def load_model_json(path: Path) -> dict[str, Any]:
    """The router JSON file as a dict (validated by :func:`~regime_core.router.load_router`
    first, so the page never embeds a model the Python side would refuse)."""
    from regime_core.router import load_router

    load_router(path)
    return read_json_file(path)
