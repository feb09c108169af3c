"""Why a claim does not reproduce: the same claim judged under the settings that bear on it.

A claim of ``paper_claims.yml`` may list, under ``diagnosis``, the settings that could explain a
verdict other than "reproduced": the bridge weight α, the encoder, the source of ``B_rel``, the
pool, the dataset a number describes. Each names a run and, per value, the record node of that
setting's comparison (an ablation's or a multiverse reading's); :func:`diagnose` judges the claim
on each with the claim's own rule (:func:`regime_core.runner.claim_record.judge_values`) and
:func:`diagnosis_sentence` says, from those verdicts, under which setting the paper's number
appears, or that none does, and what our number of questions can detect. Pure: records in,
a :class:`Diagnosis` out; nothing is typed.

A ``diagnosis`` entry::

    - factor: "the weight α"              # what is varied, in words
      run: ablations                      # the run whose record holds the alternatives
      node: "alpha_sweep.minilm.musique.{value}.comparisons.routed_vs_q"
      values: {"α = 0.50": "0p50", "α = 1.00": "1p00"}   # label -> what fills {value}

or, for a single alternative, ``label`` and a ``node`` without ``{value}``. A node is a paired
comparison (``diff``, T3's ``drop`` or an ablation row's ``delta``; ``ci_lo``, ``ci_hi``; optional
``p_value``/``p_holm``, ``n``, ``n_a_better``, ``n_b_better``), read as the claim's comparison
fields; a claim of another kind names its fields under ``ours`` (the same keys as the claim's
own ``ours``, a level claim's under ``parts``; with ``values``, ``{value}`` is filled in them)
instead.

:func:`diagnose` appends the claim's ``why`` (:mod:`regime_core.runner.explanation`) to the
sentence of any verdict other than "reproduced" and "not testable here".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from regime_core.paper import Claim
from regime_core.runner.claim_record import claim_values, judge_values
from regime_core.runner.explanation import Display, explain
from regime_core.runner.judge import (
    COMPARISON_RULES,
    NOT_TESTABLE,
    REPRODUCED,
    Judgement,
    power_text,
)
from regime_core.runner.ours import Comparison, Levels, Ours, Share
from regime_core.runner.records import Record
from regime_core.runner.wording import format_number

#: The comparison fields a node's keys fill, and the record keys that may hold each.
_NODE_FIELDS: dict[str, tuple[str, ...]] = {
    "estimate": ("diff", "drop", "delta"),
    "ci_lo": ("ci_lo",),
    "ci_hi": ("ci_hi",),
    "p": ("p_holm", "p_value", "p"),
    "n": ("n",),
    "n_a_better": ("n_a_better",),
    "n_b_better": ("n_b_better",),
}


@dataclass(frozen=True)
class Alternative:
    """One setting a claim was judged under: the factor varied, its value in words, our values
    there and the verdict the claim's rule gives them."""

    factor: str
    label: str
    values: Ours
    judgement: Judgement


@dataclass(frozen=True)
class Diagnosis:
    """Every alternative of a claim and the sentence that says what they show, with the
    claim's ``why`` filled from the records (``explanation``, also the end of
    ``sentence``)."""

    claim_id: str
    alternatives: tuple[Alternative, ...]
    sentence: str
    #: the settings named but absent from their run's record (a profile that does not run
    #: them, such as the quick one without corpus pools): ``factor: label`` each, then the
    #: items of the ``why`` absent from theirs (``why: label``)
    not_run: tuple[str, ...] = ()
    #: the claim's ``why`` filled from the records (:func:`regime_core.runner.explanation.explain`)
    explanation: str = ""

    def reproducing(self) -> list[Alternative]:
        return [a for a in self.alternatives if a.judgement.verdict == REPRODUCED]

    def to_dict(self) -> dict[str, Any]:
        """What ``regime verdicts --json`` prints as a claim's ``why``: each alternative's
        verdict, estimate and interval (a share's cells are no estimate: null there)."""
        alternatives = []
        for a in self.alternatives:
            ours = {} if isinstance(a.values, Share) else a.values.summary()
            shown = {k: ours.get(k) for k in ("estimate", "ci_lo", "ci_hi")}
            alternatives.append(
                {"factor": a.factor, "value": a.label, "verdict": a.judgement.verdict, **shown}
            )
        return {
            "sentence": self.sentence,
            "alternatives": alternatives,
            "explanation": self.explanation,
            "not_run": list(self.not_run),
        }


def node_keys(record: Record, node: str) -> dict[str, str]:
    """The claim fields a comparison node of ``record`` fills: field -> dotted record key (the
    first key of :data:`_NODE_FIELDS` the node has). ``KeyError`` names the node when it is
    absent or has no effect or interval."""
    found = record.node(node)
    keys: dict[str, str] = {}
    for field, names in _NODE_FIELDS.items():
        name = next((n for n in names if n in found and not isinstance(found[n], Mapping)), None)
        if name is not None:
            keys[field] = f"{node}.{name}"
    missing = [f for f in ("estimate", "ci_lo", "ci_hi") if f not in keys]
    if missing:
        raise KeyError(f"record {record.name!r}: node {node!r} lacks {missing}")
    return keys


def _filled(keys: Any, value: str) -> Any:
    """``keys`` (record keys, nested under ``parts`` for a level) with ``{value}`` filled."""
    if isinstance(keys, Mapping):
        return {k: _filled(v, value) for k, v in keys.items()}
    return str(keys).replace("{value}", value)


def alternative_specs(
    entry: Mapping[str, Any],
) -> list[tuple[str, str | None, Mapping[str, Any] | None]]:
    """``(label, node, ours)`` of every alternative one ``diagnosis`` entry names."""
    if "values" in entry:
        return [
            (
                str(label),
                str(entry["node"]).replace("{value}", str(value)) if "node" in entry else None,
                _filled(entry["ours"], str(value)) if "ours" in entry else None,
            )
            for label, value in entry["values"].items()
        ]
    return [(str(entry["label"]), entry.get("node"), entry.get("ours"))]


def diagnose(
    claim: Claim,
    judgement: Judgement,
    records: Mapping[str, Record],
    display: Display | None = None,
) -> Diagnosis | None:
    """The claim judged under every alternative its ``diagnosis`` names, and its ``why``
    filled from ``records`` when its verdict is neither "reproduced" nor "not testable here"
    (None when it names neither). A setting absent from its run's record (not run by this
    profile) is listed in ``not_run``, never judged. ``display`` names config values in the
    why (by default as written)."""
    if not claim.diagnosis and not claim.why:
        return None
    alternatives, not_run = [], []
    for entry in claim.diagnosis:
        run = str(entry["run"])
        record = records[run]
        for label, node, ours in alternative_specs(entry):
            try:
                keys = dict(ours) if ours is not None else node_keys(record, str(node))
                values = claim_values(replace(claim, ours=keys, run=run), record)
            except KeyError:
                not_run.append(f"{entry['factor']}: {label}")
                continue
            alternatives.append(
                Alternative(str(entry["factor"]), label, values, judge_values(claim, values))
            )
    sentence = ""
    if claim.diagnosis:
        own = claim_values(claim, records[claim.run])
        sentence = diagnosis_sentence(claim, judgement, alternatives, own)
    explanation = ""
    if claim.why and judgement.verdict not in (REPRODUCED, NOT_TESTABLE):
        where = f"claim {claim.id!r}"
        explained = explain(
            claim.why, records, claim.run, paper=claim.paper, display=display, where=where
        )
        explanation = explained.sentence
        not_run.extend(f"why: {item}" for item in explained.not_run)
    return Diagnosis(
        claim.id,
        tuple(alternatives),
        " ".join(t for t in (sentence, explanation) if t),
        tuple(not_run),
        explanation,
    )


def _estimate_text(values: Ours) -> str:
    """Our number under an alternative: a comparison's estimate, a level claim's levels (a
    claim judged part by part has no one number: ``?``)."""
    match values:
        case Levels():
            return values.text()
        case Comparison():
            return format_number(values.estimate, "pp")
    return "?"


def _distance(claim: Claim, values: Ours) -> float | None:
    """How far our number under an alternative lies from the paper's: the estimate from the
    paper's value (estimate) or its range's middle (range), a level claim's mean absolute
    distance over its levels; None for the other kinds."""
    paper = claim.paper
    match values:
        case Levels():
            levels = paper["levels"]
            gaps = [abs(v.estimate - float(levels[k])) for k, v in values.parts.items()]
            return sum(gaps) / len(gaps) if gaps and set(values.parts) == set(levels) else None
        case Comparison() if claim.rule == "estimate":
            return abs(values.estimate - float(paper["value"]))
        case Comparison() if claim.rule == "range":
            return abs(values.estimate - (float(paper["low"]) + float(paper["high"])) / 2)
    return None


def _closest(claim: Claim, alternatives: Sequence[Alternative]) -> Alternative | None:
    """The alternative whose number lies nearest the paper's (:func:`_distance`), if any."""
    scored = [(d, a) for a in alternatives if (d := _distance(claim, a.values)) is not None]
    if not scored:
        return None
    return min(scored, key=lambda pair: pair[0])[1]


def _verb(claim: Claim) -> str:
    """What a claim does under a setting that passes (a statement of ours holds)."""
    return "holds" if claim.ours_only else "reproduces"


def diagnosis_sentence(
    claim: Claim,
    judgement: Judgement,
    alternatives: Sequence[Alternative],
    ours: Ours | None = None,
) -> str:
    """What the alternatives show, in a sentence or two, from their verdicts; pure.

    A reproduced claim needs no diagnosis, unless a setting swept decides its verdict: then the
    settings under which it does not reproduce, with our estimates there (empty when every
    setting reproduces too). Otherwise: the settings under which the claim reproduces, by
    factor, with our estimates there; or that none of the factors swept does, with the closest
    setting (unless ``ours``, the claim's own values, lies closer to the paper); and, for a
    comparison, what our questions can detect.
    """
    comparison = claim.rule in COMPARISON_RULES
    if judgement.verdict == REPRODUCED:
        failing = [a for a in alternatives if a.judgement.verdict != REPRODUCED]
        if not failing:
            return ""
        labels = "; with ".join(
            f"{a.label} ({a.judgement.words}"
            + (f", ours {_estimate_text(a.values)})" if comparison else ")")
            for a in failing
        )
        negation = "does not hold" if claim.ours_only else "does not reproduce"
        return f"It {negation} with {labels}."
    factors = list(dict.fromkeys(a.factor for a in alternatives))
    good = [a for a in alternatives if a.judgement.verdict == REPRODUCED]
    shown = claim.rule in (*COMPARISON_RULES, "level")  # our number beside each setting
    if good:
        by_factor: dict[str, list[Alternative]] = {}
        for a in good:
            by_factor.setdefault(a.factor, []).append(a)
        parts = []
        for found in by_factor.values():
            labels = " or ".join(a.label for a in found)
            estimates = ", ".join(_estimate_text(a.values) for a in found) if shown else ""
            parts.append(f"{labels}" + (f" (ours {estimates})" if estimates else ""))
        others = [f for f in factors if f not in by_factor]
        text = f"It {_verb(claim)} with " + "; with ".join(parts)
        if others:
            text += f", and under none of the other settings swept ({', '.join(others)})"
        text += "."
    else:
        swept = ", ".join(factors) if factors else "none"
        text = f"It {_verb(claim)} under none of the settings swept ({swept})"
        closest = _closest(claim, alternatives)
        own = None if ours is None else _distance(claim, ours)
        nearest = None if closest is None else _distance(claim, closest.values)
        if ours is not None and own is not None and nearest is not None and own <= nearest:
            text += f"; none lies closer to the paper than ours ({_estimate_text(ours)})"
        elif closest is not None:
            text += (
                f"; the closest to the paper is {closest.label} "
                f"(ours {_estimate_text(closest.values)})"
            )
        text += "."
    power = power_text(judgement.power)
    if power:
        text += f" Our questions: {power}."
    return text
