"""Judging a claim of the paper: the verdict rules, and our side read from a record."""

from __future__ import annotations

from typing import Any

import pytest

from regime_core.paper import CLAIM_RULES, Claim
from regime_core.power import mcnemar_power
from regime_core.runner.judge import (
    CONSISTENT_WITH,
    DIRECTION_ONLY,
    INCONCLUSIVE,
    LARGER,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SMALLER,
    SMALLEST_EFFECT,
    VERDICT_RULES,
    VERDICTS,
    Judgement,
    judge_bound,
    judge_claim,
    judge_equivalence,
    judge_estimate,
    judge_holds,
    judge_level,
    judge_no_loss,
    judge_positive,
    judge_range,
    judge_share,
    judge_untestable,
    judge_values,
    paper_text,
    power_of,
    power_text,
)

# --- verdict rules, each at its boundaries -------------------------------------------------------

M = SMALLEST_EFFECT


@pytest.mark.parametrize(
    ("paper", "lo", "hi", "verdict"),
    [
        (0.056, 0.02, 0.08, REPRODUCED),  # holds the paper's value, excludes zero
        (0.056, 0.056, 0.08, REPRODUCED),  # the value on the lower end still counts as inside
        (0.056, -0.01, 0.08, INCONCLUSIVE),  # holds both the value and zero
        (0.056, 0.0, 0.08, INCONCLUSIVE),  # touching zero holds it
        (0.056, 0.005, 0.04, SMALLER),  # between zero and the value
        (0.056, 0.001, 0.0559, SMALLER),
        (0.056, 0.0561, 0.09, LARGER),  # wholly beyond the value
        (0.056, -0.01, 0.04, NOT_REPRODUCED),  # holds zero, not the value
        (0.056, -0.05, -0.01, NOT_REPRODUCED),  # the other side of zero
        (-0.03, -0.05, -0.01, REPRODUCED),  # a negative paper value, mirrored
        (-0.03, -0.02, -0.01, SMALLER),
        (-0.03, -0.09, -0.04, LARGER),
        (0.046, -0.006, 0.011, NOT_REPRODUCED),  # the oracle gap: far off, covers zero
    ],
)
def test_judge_estimate(paper: float, lo: float, hi: float, verdict: str) -> None:
    got = judge_estimate(paper, estimate=(lo + hi) / 2, ci_lo=lo, ci_hi=hi)
    assert got.verdict == verdict, got.reason


def test_judge_estimate_rejects_a_reversed_interval_and_a_zero_value() -> None:
    with pytest.raises(ValueError, match="ci_lo"):
        judge_estimate(0.05, estimate=0.05, ci_lo=0.1, ci_hi=0.0)
    with pytest.raises(ValueError, match="no_loss"):
        judge_estimate(0.0, estimate=0.0, ci_lo=-0.1, ci_hi=0.1)


@pytest.mark.parametrize(
    ("estimate", "lo", "hi", "verdict", "flags"),
    [
        (0.10, 0.05, 0.15, REPRODUCED, ()),
        (0.086, 0.05, 0.15, REPRODUCED, ()),  # the range's end is inside it
        (0.141, 0.12, 0.16, REPRODUCED, ()),
        (0.078, 0.05, 0.11, SMALLER, (CONSISTENT_WITH,)),  # T3: below, the CI overlaps
        (0.05, 0.03, 0.08, SMALLER, ()),  # wholly below, above zero
        (0.05, 0.03, 0.086, SMALLER, (CONSISTENT_WITH,)),  # just reaching the range
        (0.20, 0.13, 0.25, LARGER, (CONSISTENT_WITH,)),  # above, the CI overlaps
        (0.20, 0.16, 0.25, LARGER, ()),
        (0.10, -0.01, 0.2, INCONCLUSIVE, ()),  # inside, but the interval holds zero
        (0.05, 0.0, 0.09, INCONCLUSIVE, ()),  # below, touching zero, overlapping the range
        (0.03, -0.01, 0.07, NOT_REPRODUCED, ()),  # holds zero, misses the range
        (-0.01, -0.05, -0.02, NOT_REPRODUCED, ()),  # the other side of zero
    ],
)
def test_judge_range(estimate, lo, hi, verdict, flags) -> None:
    got = judge_range(0.086, 0.141, estimate=estimate, ci_lo=lo, ci_hi=hi)
    assert (got.verdict, got.flags) == (verdict, flags), got.reason


def test_judge_range_needs_a_range_of_one_sign() -> None:
    with pytest.raises(ValueError, match="single sign"):
        judge_range(-0.1, 0.1, estimate=0.0, ci_lo=0.0, ci_hi=0.0)
    with pytest.raises(ValueError, match="low"):
        judge_range(0.2, 0.1, estimate=0.0, ci_lo=0.0, ci_hi=0.0)


@pytest.mark.parametrize(
    ("lo", "hi", "verdict"),
    [
        (0.002, 0.02, REPRODUCED),
        (1e-9, 0.02, REPRODUCED),
        (0.0, 0.02, INCONCLUSIVE),  # touching zero, reaching real gains
        (-0.002, 0.021, INCONCLUSIVE),  # 2Wiki routed − always-union at α = 0.25
        (-0.005, M, INCONCLUSIVE),  # reaching exactly the smallest effect
        (-0.005, M - 1e-9, NOT_REPRODUCED),  # wholly below it: a negligible gain at most
        (0.0, 0.0, NOT_REPRODUCED),  # router and always-union identical
        (-0.02, -0.001, NOT_REPRODUCED),
    ],
)
def test_judge_positive(lo: float, hi: float, verdict: str) -> None:
    assert judge_positive(estimate=(lo + hi) / 2, ci_lo=lo, ci_hi=hi).verdict == verdict


@pytest.mark.parametrize(
    ("lo", "hi", "verdict"),
    [
        (0.008, 0.047, REPRODUCED),  # HotpotQA: routed − q well above −1 pp
        (-M + 1e-9, 0.02, REPRODUCED),
        (-M, 0.02, INCONCLUSIVE),  # the lower end on the margin is not above it
        (-0.03, 0.0, INCONCLUSIVE),
        (-0.05, -M - 1e-9, NOT_REPRODUCED),  # wholly below −1 pp: a real loss
    ],
)
def test_judge_no_loss(lo: float, hi: float, verdict: str) -> None:
    assert judge_no_loss(estimate=(lo + hi) / 2, ci_lo=lo, ci_hi=hi).verdict == verdict


@pytest.mark.parametrize(
    ("lo", "hi", "verdict"),
    [
        (-0.005, 0.005, REPRODUCED),
        (-M + 1e-9, M - 1e-9, REPRODUCED),
        (-M, 0.005, INCONCLUSIVE),  # touching the band's edge
        (-0.02, 0.005, INCONCLUSIVE),
        (M, 0.03, NOT_REPRODUCED),  # wholly outside
        (-0.04, -M, NOT_REPRODUCED),
    ],
)
def test_judge_equivalence(lo: float, hi: float, verdict: str) -> None:
    assert judge_equivalence(estimate=(lo + hi) / 2, ci_lo=lo, ci_hi=hi).verdict == verdict


def test_judge_level_and_bound() -> None:
    assert judge_level(0.842, estimate=0.85, ci_lo=0.82, ci_hi=0.87).verdict == REPRODUCED
    assert judge_level(0.842, estimate=0.85, ci_lo=0.842, ci_hi=0.87).verdict == REPRODUCED
    assert judge_level(0.842, estimate=0.70, ci_lo=0.66, ci_hi=0.74).verdict == SMALLER
    assert judge_level(0.644, estimate=0.70, ci_lo=0.66, ci_hi=0.74).verdict == LARGER
    assert judge_bound(0.001, estimate=0.0009999).verdict == REPRODUCED
    assert judge_bound(0.001, estimate=0.001).verdict == NOT_REPRODUCED
    assert "µs" in judge_bound(0.001, estimate=0.00012).reason


def _claim(rule: str, paper: dict[str, Any], ours: dict[str, Any]) -> Claim:
    return Claim(id="c", claim="c", source="abstract", rule=rule, paper=paper, run="r", ours=ours)


def test_a_claim_judged_part_by_part_takes_its_worst_part() -> None:
    claim = _claim(
        "level",
        {"levels": {"always-q": 0.842, "routed": 0.898}},
        {"parts": {k: {"estimate": k, "ci_lo": k, "ci_hi": k} for k in ("always-q", "routed")}},
    )

    def values(q: tuple[float, float], r: tuple[float, float]) -> dict[str, Any]:
        return {
            "parts": {
                "always-q": {"estimate": sum(q) / 2, "ci_lo": q[0], "ci_hi": q[1]},
                "routed": {"estimate": sum(r) / 2, "ci_lo": r[0], "ci_hi": r[1]},
            }
        }

    assert judge_values(claim, values((0.8, 0.9), (0.85, 0.95))).verdict == REPRODUCED
    got = judge_values(claim, values((0.8, 0.9), (0.7, 0.8)))
    assert got.verdict == SMALLER and got.reason.startswith("routed:")
    assert got.parts["always-q"].verdict == REPRODUCED
    # one part below, one above: no single side
    assert judge_values(claim, values((0.9, 0.95), (0.7, 0.8))).verdict == NOT_REPRODUCED
    no_loss = _claim("no_loss", {"statement": "no regret"}, {"parts": {}})
    parts = {
        "a": {"estimate": 0.0, "ci_lo": -0.005, "ci_hi": 0.01, "n": 300, "n_discordant": 30},
        "b": {"estimate": -0.01, "ci_lo": -0.03, "ci_hi": 0.01, "n": 300, "n_discordant": 30},
    }
    got = judge_values(no_loss, {"parts": parts})
    assert got.verdict == INCONCLUSIVE and got.power is not None


# --- power -----------------------------------------------------------------------------------


def test_power_of_a_comparison_reaches_its_targets() -> None:
    p = power_of(0.056, n=657, n_discordant=62)
    assert p is not None and p["discordance"] == pytest.approx(62 / 657)
    assert mcnemar_power(657, 62 / 657, p["detectable_effect"]) >= 0.8
    assert mcnemar_power(p["questions_needed"], 62 / 657, 0.056) >= 0.8
    assert power_of(0.05, n=None, n_discordant=3) is None
    nothing = power_of(0.05, n=100, n_discordant=0)
    assert nothing["detectable_effect"] is None and "no question differs" in power_text(nothing)
    assert "would need" in power_text(p)
    with pytest.raises(ValueError, match="share"):
        power_of(0.05, n=10, n_discordant=11)


def test_a_comparison_claim_carries_its_power_and_a_level_claim_none() -> None:
    claim = _claim("estimate", {"value": 0.056, "p_below": 0.001}, {})
    values = {"estimate": 0.066, "ci_lo": 0.04, "ci_hi": 0.09, "p": 1e-6, "n": 657,
              "n_discordant": 80}  # fmt: skip
    got = judge_values(claim, values)
    assert got.verdict == REPRODUCED and got.power["reference_effect"] == 0.056
    untestable = _claim("untestable", {"statement": "κ = 1.00", "why": "needs {n} annotators"}, {})
    got = judge_values(untestable, {"n": 2})
    assert (got.verdict, got.reason) == (NOT_TESTABLE, "needs 2 annotators")


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
    assert "not for a" in judge_holds(False, {"a": False}).reason


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
        "claims:\n  - id: size\n    label: trained on 881\n    claim: trained on 881\n"
        "    source: abstract\n"
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
        ours={
            "estimate": "o.d",
            "ci_lo": "o.lo",
            "ci_hi": "o.hi",
            "p": "o.p",
            "n": "o.n",
            "n_a_better": "o.a",
            "n_b_better": "o.b",
        },
        computed_on="{config.dataset}, sample {config.sample_size}",
    )
    record = _record(
        {"o": {"d": 0.05, "lo": 0.03, "hi": 0.07, "p": 0.0004, "n": 1234, "a": 90, "b": 28}},
        {"dataset": "2wiki", "sample_size": None},
    )
    row = judge_claim(claim, record)
    assert row.judgement.verdict == REPRODUCED
    assert row.judgement.power["discordance"] == pytest.approx(118 / 1234)
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


def test_the_routing_latency_claim_is_judged_on_the_slower_warm_p99() -> None:
    from regime_core.paper import paper_claim

    claim = paper_claim("routing_latency")
    assert (claim.rule, claim.number("bound"), claim.ours["estimate"]) == (
        "bound",
        0.001,
        "worst_warm_p99_seconds",
    )
    numbers = {
        "n_total": 1362,
        "worst_warm_p99_seconds": 4.3e-4,
        "warm_passes": 5,
        "machine": {"cores": 2, "cpu": "AMD EPYC", "load_average_1min": "2.59"},
    }
    row = judge_claim(
        claim, _record(numbers, {"split": "dev", "datasets": ["hotpotqa", "musique"]})
    )
    assert row.judgement.verdict == REPRODUCED
    assert (row.paper_text, row.ours_text) == ("under 1.00 ms", "430 µs")
    assert row.computed_on_text == (
        "the larger warm 99th percentile of Python and JavaScript over 1,362 dev questions of "
        "hotpotqa, musique, each the median of 5 passes; 2 cores of AMD EPYC, load 2.59"
    )
    numbers["worst_warm_p99_seconds"] = 0.001  # at the bound: not under it
    assert judge_claim(
        claim, _record(numbers, {"split": "dev", "datasets": []})
    ).judgement.verdict == (NOT_REPRODUCED)
    numbers["worst_warm_p99_seconds"] = 0.0042
    row = judge_claim(claim, _record(numbers, {"split": "dev", "datasets": ["musique"]}))
    assert row.judgement.verdict == NOT_REPRODUCED and "4.20 ms" in row.judgement.reason


def test_doctests_pass() -> None:
    import doctest

    from regime_core.runner import judge

    assert doctest.testmod(judge).failed == 0


def test_a_no_loss_claim_shows_its_number_or_else_its_statement() -> None:
    with_value = Claim("h", "c", "abstract", "no_loss",
                       {"statement": "no regret", "value": 0.011, "significant": False}, "r",
                       {"estimate": "e", "ci_lo": "l", "ci_hi": "h"})  # fmt: skip
    assert paper_text(with_value) == "+1.1 pp, n.s."
    statement_only = Claim("a", "c", "abstract", "no_loss", {"statement": "α = 0.25 everywhere"},
                           "r", {"estimate": "e", "ci_lo": "l", "ci_hi": "h"})  # fmt: skip
    assert paper_text(statement_only) == "α = 0.25 everywhere"


def test_an_untestable_claim_without_numbers_of_ours_says_so() -> None:
    from regime_core.runner.judge import NO_NUMBER_OF_OURS, values_text

    kappa = Claim("k", "c", "abstract", "untestable", {"statement": "κ", "why": "two people"},
                  "r", {})  # fmt: skip
    assert values_text(kappa, {}) == NO_NUMBER_OF_OURS == "no number of ours"
    size = Claim("s", "c", "abstract", "untestable", {"statement": "881", "why": "w"}, "r",
                 {"labelled": "a"})  # fmt: skip
    assert values_text(size, {"labelled": 173}) == "labelled 173"
