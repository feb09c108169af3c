"""Judging a claim of the paper: the verdict rules, and our side read from a record."""

from __future__ import annotations

from typing import Any

import pytest

from regime_core.paper import CLAIM_RULES, Claim
from regime_core.runner.judge import (
    DIRECTION_ONLY,
    LARGER,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SMALLER,
    VERDICT_RULES,
    VERDICTS,
    Judgement,
    judge_claim,
    judge_estimate,
    judge_holds,
    judge_positive,
    judge_range,
    judge_share,
    judge_untestable,
)

# --- verdict rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("paper_significant", "estimate", "lo", "hi", "p", "verdict"),
    [
        (True, 0.05, 0.02, 0.08, 0.001, REPRODUCED),  # value inside, both significant
        (True, 0.05, 0.03, 0.055, 0.2, DIRECTION_ONLY),  # inside, but ours n.s.
        (True, 0.02, 0.01, 0.03, 0.01, DIRECTION_ONLY),  # outside, same sign
        (True, -0.02, -0.04, 0.0, 0.01, NOT_REPRODUCED),  # opposite sign
        (True, 0.0, -0.01, 0.01, 1.0, NOT_REPRODUCED),  # zero has no sign
        (None, 0.03, 0.01, 0.06, None, REPRODUCED),  # no test stated: the interval decides
        (False, 0.004, -0.01, 0.02, 0.5, REPRODUCED),  # paper n.s., ours n.s., value inside
        (False, 0.03, 0.02, 0.05, 0.001, DIRECTION_ONLY),  # paper n.s., ours significant
        (True, 0.05, 0.02, 0.08, None, DIRECTION_ONLY),  # a significance claim needs our test
        # the harder rules, at their boundaries
        (True, 0.02, 0.0, 0.04, 0.06, NOT_REPRODUCED),  # a CI touching zero covers it
        (True, 0.02, 0.001, 0.04, 0.04, DIRECTION_ONLY),  # just excludes zero
        (True, 0.03, -0.01, 0.07, 0.3, NOT_REPRODUCED),  # covers zero, paper significant
        (None, 0.002, 0.0, 0.006, None, NOT_REPRODUCED),  # the oracle gap: far off, covers 0
        (False, 0.002, -0.005, 0.012, 0.3, REPRODUCED),  # paper n.s. and inside: covering 0 is fine
        (False, 0.02, 0.015, 0.05, 0.01, DIRECTION_ONLY),  # paper n.s., outside, ours positive
    ],
)
def test_judge_estimate(
    paper_significant: bool | None, estimate: float, lo: float, hi: float, p: float | None,
    verdict: str,
) -> None:  # fmt: skip
    paper = 0.011 if paper_significant is False else 0.046 if paper_significant is None else 0.056
    got = judge_estimate(paper, paper_significant, estimate=estimate, ci_lo=lo, ci_hi=hi, p=p)
    assert got.verdict == verdict, got.reason


def test_judge_estimate_rejects_a_reversed_interval() -> None:
    with pytest.raises(ValueError, match="ci_lo"):
        judge_estimate(0.05, True, estimate=0.05, ci_lo=0.1, ci_hi=0.0, p=0.01)


@pytest.mark.parametrize(
    ("estimate", "lo", "hi", "p", "verdict"),
    [
        (0.10, 0.05, 0.15, 0.0001, REPRODUCED),
        (0.20, 0.13, 0.25, 0.0001, REPRODUCED),  # CI overlaps the range, the point is above it
        (0.20, 0.16, 0.25, 0.0001, LARGER),  # CI wholly above the range
        (0.05, 0.03, 0.08, 0.0001, SMALLER),  # CI wholly below the range, above zero
        (0.05, 0.03, 0.086, 0.0001, REPRODUCED),  # CI just reaching the range
        (0.05, 0.0, 0.08, 0.04, NOT_REPRODUCED),  # CI touching zero: not even the direction
        (0.10, 0.05, 0.15, 0.2, DIRECTION_ONLY),  # overlaps but n.s.
        (-0.01, -0.05, 0.03, 0.5, NOT_REPRODUCED),
    ],
)
def test_judge_range(estimate: float, lo: float, hi: float, p: float, verdict: str) -> None:
    got = judge_range(0.086, 0.141, estimate=estimate, ci_lo=lo, ci_hi=hi, p=p)
    assert got.verdict == verdict, got.reason


@pytest.mark.parametrize(
    ("estimate", "lo", "hi", "p", "verdict"),
    [
        (0.01, 0.002, 0.02, 0.01, REPRODUCED),
        (0.01, 0.0, 0.02, 0.01, NOT_REPRODUCED),  # CI touching zero
        (0.01, 0.002, 0.02, 0.06, NOT_REPRODUCED),  # n.s.
        (0.0, 0.0, 0.0, 1.0, NOT_REPRODUCED),  # router and always-union identical
        (-0.01, -0.02, -0.001, 0.01, NOT_REPRODUCED),
    ],
)
def test_judge_positive(estimate: float, lo: float, hi: float, p: float, verdict: str) -> None:
    assert judge_positive(estimate=estimate, ci_lo=lo, ci_hi=hi, p=p).verdict == verdict


def test_judge_range_needs_a_range_of_one_sign() -> None:
    with pytest.raises(ValueError, match="single sign"):
        judge_range(-0.1, 0.1, estimate=0.0, ci_lo=0.0, ci_hi=0.0, p=1.0)
    with pytest.raises(ValueError, match="low"):
        judge_range(0.2, 0.1, estimate=0.0, ci_lo=0.0, ci_hi=0.0, p=1.0)


def test_judge_share_and_holds() -> None:
    assert judge_share(6, 8, passing=6, total=8).verdict == REPRODUCED
    assert judge_share(6, 8, passing=7, total=10).verdict == NOT_REPRODUCED  # 0.70 < 0.75
    assert judge_share(6, 8, passing=7, total=10, direction_passing=9).verdict == DIRECTION_ONLY
    assert judge_share(6, 8, passing=0, total=0).verdict == NOT_REPRODUCED
    with pytest.raises(ValueError, match="share"):
        judge_share(9, 8, passing=1, total=1)
    assert judge_holds(True).verdict == REPRODUCED
    assert judge_holds(False, {"a": False, "b": True}).verdict == DIRECTION_ONLY
    assert judge_holds(False, {"a": False}).verdict == NOT_REPRODUCED
    assert "a: no" in judge_holds(False, {"a": False}).reason


def test_an_untestable_claim_says_why_with_our_numbers() -> None:
    why = "setup, not a result: ours is {n} of {m}"
    paper = {"statement": "881 examples", "why": why}
    ours = {"n": "train.labels.labelled", "m": "train.n"}
    claim = Claim("size", "trained on 881", "abstract", "untestable", paper, "router_train", ours)
    record = _record({"train": {"labels": {"labelled": 212}, "n": 1657}})
    row = judge_claim(claim, record)
    assert row.judgement == Judgement(NOT_TESTABLE, "setup, not a result: ours is 212 of 1,657")
    assert (row.paper_text, row.ours_text) == ("881 examples", "n 212, m 1,657")
    assert NOT_TESTABLE in VERDICTS and judge_untestable("why", {}).verdict == NOT_TESTABLE
    without = Claim(**{**claim.__dict__, "ours": {}, "paper": {**claim.paper, "why": "setup"}})
    assert judge_claim(without, record).judgement.reason == "setup"  # context is optional


def test_an_untestable_claim_must_say_why(tmp_path) -> None:
    from regime_core.paper import load_claims

    entry = (
        "claims:\n  - id: size\n    claim: trained on 881\n    source: abstract\n"
        "    rule: untestable\n    ours: {{run: router_train}}\n    paper: {paper}\n"
    )
    file = tmp_path / "claims.yml"
    file.write_text(entry.format(paper="{statement: '881'}"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"claim 'size': 'paper' lacks \['why'\]"):
        load_claims(file)
    file.write_text(entry.format(paper="{statement: '881', why: setup}"), encoding="utf-8")
    assert load_claims(file)[0].rule == "untestable"


def test_every_kind_of_claim_has_a_verdict_rule() -> None:
    assert tuple(VERDICT_RULES) == CLAIM_RULES


def _record(numbers: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": "fake", "numbers": numbers, "config": config or {}}


def test_judge_claim_reads_our_side_from_the_record() -> None:
    claim = Claim(
        id="r",
        claim="router",
        source="abstract",
        rule="estimate",
        paper={"value": 0.056, "p_below": 0.001},
        run="router_train",
        ours={"estimate": "o.d", "ci_lo": "o.lo", "ci_hi": "o.hi", "p": "o.p", "n": "o.n"},
        computed_on="{config.dataset}, sample {config.sample_size}",
    )
    record = _record(
        {"o": {"d": 0.05, "lo": 0.03, "hi": 0.07, "p": 0.0004, "n": 1234}},
        {"dataset": "2wiki", "sample_size": None},
    )
    row = judge_claim(claim, record)
    assert row.judgement.verdict == REPRODUCED
    assert row.paper_text == "+5.6 pp, p < 0.001"
    assert row.ours_text == "+5.0 pp (95% CI +3.0 pp to +7.0 pp), p < 0.001"
    assert row.computed_on_text == "2wiki, sample all; n = 1,234"
    with pytest.raises(KeyError, match="has no number"):
        judge_claim(claim, _record({"o": {"x": 1.0}}))


def test_judge_claim_share_and_holds_rules() -> None:
    share = Claim("s", "t1", "abstract", "share", {"passing": 6, "total": 8, "threshold": 0.9},
                  "t1", {"passing": "a", "total": "b", "direction": "c"})  # fmt: skip
    row = judge_claim(share, _record({"a": 3, "b": 10, "c": 9}))
    assert row.judgement.verdict == DIRECTION_ONLY
    assert row.paper_text == "6 of 8 cells with R² ≥ 0.90"
    assert row.ours_text == "3 of 10 cells (direction: 9 of 10)"
    holds = Claim("h", "t2", "abstract", "holds", {"statement": "always"}, "t2",
                  {"holds": "all", "parts": {"m": "m", "t": "t"}})  # fmt: skip
    row = judge_claim(holds, _record({"all": False, "m": True, "t": False}))
    assert (row.judgement.verdict, row.ours_text) == (DIRECTION_ONLY, "no (m: yes, t: no)")


def test_doctests_pass() -> None:
    import doctest

    from regime_core.runner import judge

    assert doctest.testmod(judge).failed == 0
