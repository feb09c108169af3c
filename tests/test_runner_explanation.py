"""A claim's ``why``: sentence templates filled from records, and the rule that every claim that
fails says why."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import refused

from regime_core.inputs import Items, Nested, check_value
from regime_core.inputs.claims_file import WHY
from regime_core.paper import Claim, _check_diagnosis, load_claims, why_runs
from regime_core.runner.claim_record import claim_values, judge_values
from regime_core.runner.diagnosis import diagnose, diagnosis_sentence
from regime_core.runner.explanation import explain
from regime_core.runner.judge import NOT_TESTABLE, REPRODUCED
from regime_core.runner.records import Record
from regime_core.runner.verdicts import judge_claims


def _records() -> dict[str, Record]:
    """A router record with a selection node and an ablations record with an α rule node."""
    arm = {"hit@5_q": 0.60, "hit@5_union": 0.55, "hit@5_routed": 0.62, "share_union": 0.4}
    selection = {
        "wiki": {
            "rule": {**arm, "hit@5_union": 0.50, "hit@5_routed": 0.58},
            "gold": {**arm, "hit@5_union": 0.66, "hit@5_routed": 0.64},
        },
        "musique": {"rule": dict(arm), "gold": {**arm, "hit@5_union": 0.58}},
    }
    return {
        "router": Record(
            {
                "name": "router",
                "config": {
                    "encoder": "minilm",
                    "datasets": ["wiki", "musique"],
                    "sample_size": None,
                },
                "numbers": {"selection": selection, "n": 40},
            }
        ),
        "ablations": Record(
            {
                "name": "ablations",
                "config": {"alpha": 0.25},
                "numbers": {
                    "alpha_rule": {"minilm": {"best_alpha": 0.75}, "tfidf": {"best": 0.25}}
                },
            }
        ),
    }


def _why(entries: Any) -> tuple[dict[str, Any], ...]:
    """The entries as a claim keeps them (as written), once read by ``WHY``."""
    check_value(Items(Nested(WHY)), entries, where="claims.yml: claim 'c'", field="why")
    return tuple(dict(e) for e in entries)


def test_fields_are_read_from_records_and_formatted() -> None:
    entries = _why(
        [
            {
                "text": "{config.encoder} on {config.datasets} ({config.sample_size}), "
                "{numbers.n|int} questions; α "
                "{ablations:numbers.alpha_rule.minilm.best_alpha|frac:2} against "
                "{ablations:config.alpha}, the paper's {paper.levels.routed|frac}"
            }
        ]
    )
    found = explain(entries, _records(), "router", paper={"levels": {"routed": 0.898}})
    assert found.sentence == (
        "minilm on wiki, musique (all), 40 questions; α 0.75 against 0.25, the paper's 0.898."
    )
    assert found.not_run == ()
    assert why_runs(entries, "router") == ["router", "ablations"]


def test_each_when_lead_join_and_none() -> None:
    gold_not_above_q = {
        "each": {"2Wiki": "wiki", "MuSiQue": "musique"},
        "when": ["selection.{value}.gold.hit@5_union", "<=", "selection.{value}.gold.hit@5_q"],
        "lead": "Even the gold B_rel's union arm retrieves no more than q on ",
        "text": "{label} ({numbers.selection.{value}.gold.hit@5_union|frac})",
        "none": "The gold B_rel's union arm beats q everywhere.",
    }
    costs = {
        "each": {"2Wiki": "wiki", "MuSiQue": "musique"},
        "text": "{label}: union "
        "{numbers.selection.{value}.rule.hit@5_union|frac} against "
        "{numbers.selection.{value}.gold.hit@5_union|frac}",
        "join": ", ",
    }
    found = explain(_why([costs, gold_not_above_q]), _records(), "router")
    assert found.sentence == (
        "2Wiki: union 0.500 against 0.660, MuSiQue: union 0.550 against 0.580. Even the gold "
        "B_rel's union arm retrieves no more than q on MuSiQue (0.580)."
    )
    # no item holds: the entry's `none` is said instead; without one, nothing
    above = dict(gold_not_above_q, when=["selection.{value}.gold.hit@5_union", ">", "n"])
    assert explain(_why([above]), _records(), "router").sentence == (
        "The gold B_rel's union arm beats q everywhere."
    )
    del above["none"]
    assert explain(_why([above]), _records(), "router").sentence == ""


def test_absent_keys_are_named_and_absent_runs_fail() -> None:
    entry = {
        "run": "ablations",
        "each": {"MiniLM": "minilm", "TF-IDF": "tfidf"},
        "text": "{label} {numbers.alpha_rule.{value}.best_alpha|frac:2}",
    }
    found = explain(_why([entry]), _records(), "router")
    assert found.sentence == "MiniLM 0.75." and found.not_run == ("TF-IDF",)
    # a run absent from the records fails where the claims are judged, naming claim and run
    claim = _level_claim(why=_why([entry]))
    with refused(KeyError, names=("'levels'", "'ablations'")):
        judge_claims({"router": _records()["router"]}, [claim])


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"lead": "x"}, "'why[0].text'"),
        ({"text": "x", "extra": 1}, "'why[0].extra'"),
        ({"text": "x", "each": {}}, "'why[0].each'"),
        ({"text": "x", "when": ["a", "≈", "b"]}, "'why[0].when[1]'"),
        ({"text": "x", "when": ["a", "<"]}, "'why[0].when'"),
        ({"text": "{numbers.a|percent}"}, "'why[0].text'"),  # no number format 'percent'
        ({"text": "x", "join": 1}, "'why[0].join'"),
        ({"text": "{numbers.a b}"}, "'why[0].text'"),  # not a field: it would be printed as written
        ({"text": "{ratio}"}, "'why[0].text'"),
        ({"text": "x", "lead": "{ratio}"}, "'why[0].lead'"),
    ],
)
def test_bad_entries_are_named(entry: dict[str, Any], message: str) -> None:
    with refused(ValueError, names=(message,)):
        _why([entry])
    with refused(ValueError, names=("claim 'c'", "'why'")):
        _why({"text": "x"})


def _level_claim(**fields: Any) -> Claim:
    parts = {
        "always-q": {"estimate": "selection.wiki.gold.hit@5_q", "n": "n"},
        "routed": {"estimate": "selection.wiki.gold.hit@5_routed", "n": "n"},
    }
    return Claim(
        id="levels", claim="levels", source="abstract", rule="level", run="router",
        paper={"levels": {"always-q": 0.842, "routed": 0.898}}, ours={"parts": parts},
        **fields,
    )  # fmt: skip


def test_a_claim_without_alternatives_still_says_why_when_it_fails() -> None:
    why = _why([{"text": "ours {numbers.selection.wiki.gold.hit@5_q|frac}, "
                         "the paper's {paper.levels.always-q|frac}"}])  # fmt: skip
    claim = _level_claim(why=why)
    records = _records()
    judgement = judge_values(claim, claim_values(claim, records["router"]))
    assert judgement.verdict not in (REPRODUCED, NOT_TESTABLE)
    found = diagnose(claim, judgement, records)
    assert found is not None and found.alternatives == ()
    assert found.sentence == found.explanation == "ours 0.600, the paper's 0.842."
    assert found.to_dict()["explanation"] == found.sentence
    # a claim that reproduces says no why
    from regime_core.runner.judge import Judgement

    reproduced = diagnose(claim, Judgement(REPRODUCED, "holds"), records)
    assert reproduced is not None and reproduced.sentence == ""


def test_a_level_claim_is_diagnosed_under_settings_with_the_closest_named() -> None:
    """A level claim's alternatives name their parts' keys under ``ours`` (``{value}`` filled),
    and the closest to the paper's levels is the one of the smallest mean distance."""
    parts = {
        "always-q": {"estimate": "selection.{value}.rule.hit@5_q", "n": "n"},
        "routed": {"estimate": "selection.{value}.rule.hit@5_routed", "n": "n"},
    }
    entry = {"factor": "the dataset", "run": "router", "values": {"2Wiki": "wiki",
             "MuSiQue": "musique"}, "ours": {"parts": parts}}  # fmt: skip
    claim = _level_claim(diagnosis=_check_diagnosis("claims.yml: claim 'levels'", [entry]))
    records = _records()
    judgement = judge_values(claim, claim_values(claim, records["router"]))
    found = diagnose(claim, judgement, records)
    assert found is not None
    assert [a.label for a in found.alternatives] == ["2Wiki", "MuSiQue"]
    # ours (0.600, 0.640) lies nearer the paper's (0.842, 0.898) than either setting
    assert "none lies closer to the paper than ours (always-q 0.600, routed 0.640)" in (
        found.sentence
    )
    # without ours, the nearest setting is named: MuSiQue's mean distance 0.26 against 0.28
    text = diagnosis_sentence(claim, judgement, found.alternatives)
    assert "the closest to the paper is MuSiQue (ours always-q 0.600, routed 0.620)" in text


def test_every_claim_of_the_file_reads_its_whys_runs() -> None:
    """The claims' whys parse, and the runs they read are among each claim's runs."""
    for claim in load_claims():
        assert set(why_runs(claim.why, claim.run)) <= set(claim.runs()), claim.id


def claims_without_a_why(judged: Any) -> list[str]:
    """The claims of ``judged`` (:class:`~regime_core.runner.verdicts.ClaimVerdict` each) whose
    verdict is neither "reproduced" nor "not testable here" and that say no why (no diagnosis
    sentence, no filled ``why``)."""
    return [
        v.claim.id
        for v in judged
        if v.verdict not in (REPRODUCED, NOT_TESTABLE) and (v.why is None or not v.why.sentence)
    ]


def test_a_failing_claim_without_a_why_is_caught() -> None:
    """The check itself, on hand-made verdicts: a failing claim with no why is named, one with
    a why or a passing one is not."""
    from types import SimpleNamespace as S

    def verdict(claim_id: str, verdict: str, sentence: str | None) -> Any:
        why = None if sentence is None else S(sentence=sentence)
        return S(claim=S(id=claim_id), verdict=verdict, why=why)

    judged = [
        verdict("fails_silently", "not reproduced", None),
        verdict("fails_empty", "smaller than reported", ""),
        verdict("fails_with_why", "not reproduced", "Because."),
        verdict("passes", REPRODUCED, None),
        verdict("untestable", NOT_TESTABLE, None),
    ]
    assert claims_without_a_why(judged) == ["fails_silently", "fails_empty"]


@pytest.mark.realdata
@pytest.mark.slow
def test_every_claim_that_fails_on_the_quick_records_says_why(quick_run: Any) -> None:
    """Issue 31: every claim of the paper judged on the quick profile's records whose verdict is
    not "reproduced" (nor "not testable here") says why, from its diagnosis or its ``why``."""
    from regime_core.runner.verdicts import judge_claims

    claims = load_claims()
    records = {run: quick_run.record(run) for c in claims for run in c.runs()}
    judged = judge_claims(records, claims)
    assert claims_without_a_why(judged) == []
