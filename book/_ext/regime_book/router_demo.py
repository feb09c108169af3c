"""The book's "Route your own question" page: presets, their decisions, and the page's HTML.

The page runs ``regime_core/resources/router.js`` (the router ported to JavaScript) in the
reader's browser. This module says, at build time and with the Python router, what the page
shows: the presets, each with the sentence ``B_rel`` must be and why, so that a reader can check
the highlight (hand-written questions and a few of the toy world, never dataset text), the
decision ``regime route`` gives each (the page's table without JavaScript), and the five
features by name with a one-line meaning. The Sphinx directives ``regime-router-demo`` and
``regime-router-features`` (``regime_book.router_page``) render them.
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
        "subject (the router's stand-in for P1), else 0.",
    ),
    "b_rel_has_new_entity": (
        "B_rel brings a new name",
        "1 when B_rel holds a name that neither the question nor the bridge's subject is (the "
        "router's stand-in for P2), else 0.",
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
                "preset (book/_ext/regime_book/router_demo.py) or the rules"
            )
        presets.append(
            Preset(**dataclasses.asdict(spec), action=d.action, probability=d.probability)
        )
    return presets


# --------------------------------------------------------------------------------------------
# What the packaged router learned, and where it fails
# --------------------------------------------------------------------------------------------

#: The question-name counts the "what it learned" table spans (0 to this many).
MAX_NAMES_SHOWN = 6


@dataclass(frozen=True)
class FeaturePush:
    """One feature's learned coefficient and the way it pushes the decision."""

    name: str
    label: str
    coefficient: float

    @property
    def toward(self) -> str | None:
        """``"union"`` for a positive coefficient, ``"q"`` for a negative one, None for 0."""
        if self.coefficient > 0:
            return "union"
        return "q" if self.coefficient < 0 else None

    def sentence(self) -> str:
        """The push in words that match the coefficient's sign."""
        if self.toward is None:
            return f"coefficient {self.coefficient:.2f}: it moves no decision either way."
        return (
            f"coefficient {self.coefficient:+.2f}: the larger it is, the more the router leans "
            f"to `{self.toward}`."
        )


def feature_pushes(router: Any) -> list[FeaturePush]:
    """Each feature of a fitted router with its coefficient (on the standardised feature), in
    :data:`FEATURE_NAMES` order."""
    coef = [float(c) for c in router.coef_.ravel()]
    return [
        FeaturePush(name, FEATURE_GUIDE[name][0], c)
        for name, c in zip(FEATURE_NAMES, coef, strict=True)
    ]


@dataclass(frozen=True)
class NameLimit:
    """For one kind of question (comparison words, yes/no opener, whether the question names a
    name of ``B_rel``): the numbers of names in the question for which the router says union."""

    comparison_cues: int
    yes_no_opener: bool
    names_b_rel_entity: bool
    union_counts: tuple[int, ...]


def _profile(
    comparison_cues: int, yes_no: bool, names: int, names_b_rel: bool, new_entity: float
) -> list[float]:
    by_name = {
        "comparison_cues": float(comparison_cues),
        "yes_no_opener": float(yes_no),
        "question_entities": float(names),
        "question_names_b_rel_entity": float(names_b_rel),
        "b_rel_has_new_entity": new_entity,
    }
    return [by_name[n] for n in FEATURE_NAMES]


def held_new_entity(router: Any) -> float:
    """The value the table holds "B_rel brings a new name" at: its training average, rounded to
    0 or 1 (the feature is 0 or 1)."""
    mean = float(router.scaler_mean_[FEATURE_NAMES.index("b_rel_has_new_entity")])
    return float(round(mean))


def union_name_limits(router: Any, max_names: int = MAX_NAMES_SHOWN) -> list[NameLimit]:
    """The router's decision over a grid of feature values: 0, 1 or 2 comparison words, with or
    without a yes/no opener, the question naming a name of ``B_rel`` or not, and 0 to
    ``max_names`` names; "B_rel brings a new name" held at :func:`held_new_entity`. Computed
    with the router's own ``predict_action``."""
    import numpy as np

    new_entity = held_new_entity(router)
    out = []
    for cues in (0, 1, 2):
        for yes_no in (False, True):
            for names_b_rel in (False, True):
                X = np.array(
                    [
                        _profile(cues, yes_no, n, names_b_rel, new_entity)
                        for n in range(max_names + 1)
                    ]
                )
                actions = router.predict_action(X)
                union = tuple(n for n, a in enumerate(actions) if a == "union")
                out.append(NameLimit(cues, yes_no, names_b_rel, union))
    return out


def count_ranges(counts: Sequence[int], top: int = MAX_NAMES_SHOWN) -> str:
    """Counts as ranges in words: ``(0, 1, 2)`` -> ``"0 to 2"``, ``()`` -> ``"none"``.

    >>> count_ranges((0, 1, 2, 3)), count_ranges(()), count_ranges((2,)), count_ranges((0, 2))
    ('0 to 3', 'none', '2', '0, 2')
    >>> count_ranges((0, 1, 2), top=2)
    '0 to 2 (all shown)'
    """
    if not counts:
        return "none"
    ordered = sorted(counts)
    if ordered == list(range(ordered[0], ordered[-1] + 1)) and len(ordered) > 1:
        text = f"{ordered[0]} to {ordered[-1]}"
    else:
        text = ", ".join(str(c) for c in ordered)
    return f"{text} (all shown)" if ordered == list(range(top + 1)) else text


def learned_summary(router: Any) -> str:
    """What the router does in effect, in one paragraph: the decision it gives three typical
    questions (a comparison question that names the two things it compares, a yes/no question
    that names two people, and a question with neither that names one name), computed with
    the router's ``predict_action``; "B_rel brings a new name" is held at
    :func:`held_new_entity` and the question names no name of ``B_rel``."""
    import numpy as np

    new_entity = held_new_entity(router)
    probes = {
        "comparison": _profile(1, False, 2, False, new_entity),
        "yes/no": _profile(0, True, 2, False, new_entity),
        "other": _profile(0, False, 1, False, new_entity),
    }
    action = dict(zip(probes, router.predict_action(np.array(list(probes.values()))), strict=True))
    return (
        f"In effect, a comparison question that names the two things it compares goes to "
        f"`{action['comparison']}`, a yes/no question that names two people goes to "
        f"`{action['yes/no']}`, and a question with neither, naming one name, goes to "
        f"`{action['other']}`. The router counts cues of a comparison or a yes/no question, "
        "and names: it does not check whether the question names the hop-2 entity."
    )


@dataclass(frozen=True)
class RoutedCounts:
    """How a set of questions of one kind was routed."""

    kind: str
    n: int
    to_q: int
    to_union: int


def routed_by_kind(examples: Iterable[Example], router: Any) -> list[RoutedCounts]:
    """The router's decisions on the examples (their gold bridge, as ``regime route`` would
    get it), counted per native question type (``compositional``, ``comparison``, ...)."""
    counts: dict[str, list[int]] = {}
    for ex in examples:
        title, _, sentences = _bridge(ex)
        d = router.route(ex.question, sentences, title or None)
        tally = counts.setdefault(ex.native_type, [0, 0])
        tally[d.action == "union"] += 1
    return [RoutedCounts(kind, q + u, q, u) for kind, (q, u) in sorted(counts.items())]


@dataclass(frozen=True)
class FailureSpec:
    """A question the router gets wrong: what the right decision or ``B_rel`` is, and why."""

    key: str
    question: str
    title: str
    bridge: str
    #: the right action ("q" or "union"), or None when only ``B_rel`` is wrong
    right_action: str | None
    #: the right ``B_rel``, or None when only the action is wrong
    right_b_rel: str | None
    why: str


#: Hand-written questions (no dataset text) on which the packaged router fails.
FAILURE_CASES: tuple[FailureSpec, ...] = (
    FailureSpec(
        "names the hop-2 entity",
        "Where was Frank Herbert born?",
        "Dune",
        "Dune was written by Frank Herbert.",
        "q",
        None,
        "The question already names Frank Herbert, the hop-2 entity: it is Q-dominant and the "
        "question alone finds his page. It is neither a comparison nor a yes/no question and "
        "names one name, and the feature that sees the name shared with B_rel pushes toward "
        "union, so the router says union.",
    ),
    FailureSpec(
        "nationality as a name",
        "Who was the mother of the man who made the film Kestrel Bay?",
        "Kestrel Bay (film)",
        "Kestrel Bay is a 1931 film. It is a British drama. It was directed by Odile Marchetti.",
        None,
        "It was directed by Odile Marchetti.",
        "A capitalised nationality adjective (British) counts as a name the question does not "
        "hold, so the earlier sentence wins on position over the one that names the director.",
    ),
)


@dataclass(frozen=True)
class Failure(FailureSpec):
    """A failure case with what the packaged router does on it."""

    action: str
    probability: float
    b_rel: str


def route_failures(specs: Sequence[FailureSpec], router: Any) -> list[Failure]:
    """Each failure case with the router's decision. Raises ValueError naming the case when the
    router no longer fails on it (the page would state a failure that does not happen)."""
    from regime_core.router.sentences import route_bridge_text

    out = []
    for spec in specs:
        d = route_bridge_text(router, spec.question, spec.bridge, spec.title or None)
        wrong_action = spec.right_action is not None and d.action != spec.right_action
        wrong_b_rel = spec.right_b_rel is not None and d.b_rel != spec.right_b_rel
        if not (wrong_action or wrong_b_rel):
            raise ValueError(
                f"router failure case {spec.key!r}: the router now decides {d.action} with "
                f"B_rel {d.b_rel!r}, which the case calls right; remove or change the case "
                "(book/_ext/regime_book/router_demo.py FAILURE_CASES)"
            )
        out.append(
            Failure(
                **dataclasses.asdict(spec),
                action=d.action,
                probability=d.probability,
                b_rel=d.b_rel,
            )
        )
    return out


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
