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
own ``ours``) instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from regime_core.paper import Claim
from regime_core.runner.claim_record import claim_values, judge_values
from regime_core.runner.judge import COMPARISON_RULES, REPRODUCED, Judgement, power_text
from regime_core.runner.records import format_number, get_number

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
    values: Mapping[str, Any]
    judgement: Judgement


@dataclass(frozen=True)
class Diagnosis:
    """Every alternative of a claim and the sentence that says what they show."""

    claim_id: str
    alternatives: tuple[Alternative, ...]
    sentence: str
    #: the settings named but absent from their run's record (a profile that does not run
    #: them, such as the quick one without corpus pools): ``factor: label`` each
    not_run: tuple[str, ...] = ()

    def reproducing(self) -> list[Alternative]:
        return [a for a in self.alternatives if a.judgement.verdict == REPRODUCED]

    def to_dict(self) -> dict[str, Any]:
        """What ``regime verdicts --json`` prints as a claim's ``why``."""
        return {
            "sentence": self.sentence,
            "alternatives": [
                {
                    "factor": a.factor,
                    "value": a.label,
                    "verdict": a.judgement.verdict,
                    "estimate": a.values.get("estimate"),
                    "ci_lo": a.values.get("ci_lo"),
                    "ci_hi": a.values.get("ci_hi"),
                }
                for a in self.alternatives
            ],
            "not_run": list(self.not_run),
        }


def node_keys(record: Mapping[str, Any], node: str) -> dict[str, str]:
    """The claim fields a comparison node of ``record`` fills: field -> dotted record key (the
    first key of :data:`_NODE_FIELDS` the node has). ``KeyError`` names the node when it has no
    effect or interval."""
    keys: dict[str, str] = {}
    for field, names in _NODE_FIELDS.items():
        for name in names:
            try:
                get_number(record, f"{node}.{name}")
            except KeyError:
                continue
            keys[field] = f"{node}.{name}"
            break
    missing = [f for f in ("estimate", "ci_lo", "ci_hi") if f not in keys]
    if missing:
        raise KeyError(f"record {record.get('name', '?')!r}: node {node!r} lacks {missing}")
    return keys


def _specs(entry: Mapping[str, Any]) -> list[tuple[str, str | None, Mapping[str, str] | None]]:
    """``(label, node, ours)`` of every alternative one ``diagnosis`` entry names."""
    if "values" in entry:
        return [
            (str(label), str(entry["node"]).replace("{value}", str(value)), None)
            for label, value in entry["values"].items()
        ]
    return [(str(entry["label"]), entry.get("node"), entry.get("ours"))]


def diagnose(
    claim: Claim, judgement: Judgement, records: Mapping[str, Mapping[str, Any]]
) -> Diagnosis | None:
    """The claim judged under every alternative its ``diagnosis`` names (None when it names
    none). ``records`` maps run ids to records; a missing run is a ``KeyError`` naming it (a
    strict book build fails rather than print a partial diagnosis); a setting absent from its
    run's record (not run by this profile) is listed in ``not_run``, never judged."""
    if not claim.diagnosis:
        return None
    alternatives, not_run = [], []
    for entry in claim.diagnosis:
        run = str(entry["run"])
        if run not in records:
            raise KeyError(f"claim {claim.id!r}: its diagnosis needs the record of run {run!r}")
        record = records[run]
        for label, node, ours in _specs(entry):
            try:
                keys = dict(ours) if ours is not None else node_keys(record, str(node))
                values = claim_values(replace(claim, ours=keys, run=run), record)
            except KeyError:
                not_run.append(f"{entry['factor']}: {label}")
                continue
            alternatives.append(
                Alternative(str(entry["factor"]), label, values, judge_values(claim, values))
            )
    return Diagnosis(
        claim.id,
        tuple(alternatives),
        diagnosis_sentence(claim, judgement, alternatives),
        tuple(not_run),
    )


def _estimate_text(values: Mapping[str, Any]) -> str:
    return format_number(values["estimate"], "pp") if "estimate" in values else "?"


def _closest(claim: Claim, alternatives: Sequence[Alternative]) -> Alternative | None:
    """The alternative whose estimate lies nearest the paper's value (estimate and range
    claims), else None."""
    paper = claim.paper
    if claim.rule == "estimate":
        target = float(paper["value"])
    elif claim.rule == "range":
        target = (float(paper["low"]) + float(paper["high"])) / 2
    else:
        return None
    scored = [a for a in alternatives if "estimate" in a.values]
    if not scored:
        return None
    return min(scored, key=lambda a: abs(float(a.values["estimate"]) - target))


def _verb(claim: Claim) -> str:
    """What a claim does under a setting that passes: a statement of ours holds, the paper's
    reproduces."""
    return "holds" if claim.ours_only else "reproduces"


def diagnosis_sentence(
    claim: Claim, judgement: Judgement, alternatives: Sequence[Alternative]
) -> str:
    """What the alternatives show, in a sentence or two, from their verdicts; pure.

    A reproduced claim needs no diagnosis, unless a setting swept decides its verdict: then the
    settings under which it does not reproduce, with our estimates there (empty when every
    setting reproduces too). Otherwise: the settings under which the claim reproduces, by
    factor, with our estimates there; or that none of the factors swept does, with the closest
    setting; and, for a comparison, what our questions can detect.
    """
    comparison = claim.rule in COMPARISON_RULES
    if judgement.verdict == REPRODUCED:
        failing = [a for a in alternatives if a.judgement.verdict != REPRODUCED]
        if not failing:
            return ""
        labels = "; with ".join(
            f"{a.label} ({a.judgement.verdict}"
            + (f", ours {_estimate_text(a.values)})" if comparison else ")")
            for a in failing
        )
        return f"It does not reproduce with {labels}."
    factors = list(dict.fromkeys(a.factor for a in alternatives))
    good = [a for a in alternatives if a.judgement.verdict == REPRODUCED]
    if good:
        by_factor: dict[str, list[Alternative]] = {}
        for a in good:
            by_factor.setdefault(a.factor, []).append(a)
        parts = []
        for found in by_factor.values():
            labels = " or ".join(a.label for a in found)
            estimates = ", ".join(_estimate_text(a.values) for a in found) if comparison else ""
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
        if closest is not None:
            text += (
                f"; the closest to the paper is {closest.label} "
                f"(ours {_estimate_text(closest.values)})"
            )
        text += "."
    power = power_text(judgement.power)
    if power:
        text += f" Our questions: {power}."
    return text
