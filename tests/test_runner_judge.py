"""The verdict rules and their kernels, each at its boundaries, and the power of a comparison."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import refused

from regime_core.inputs.claims_file import RULES
from regime_core.power import power, smallest_margin
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
    judge_bound,
    judge_equivalence,
    judge_estimate,
    judge_holds,
    judge_level,
    judge_no_loss,
    judge_positive,
    judge_range,
    judge_share,
    judge_untestable,
    power_of,
    power_text,
)
from regime_core.runner.ours import Comparison

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


# --- power -----------------------------------------------------------------------------------


def test_power_of_a_comparison_reaches_its_targets() -> None:
    p = power_of("estimate", 0.056, Comparison(0.05, 0.0, 0.1, n=657, n_discordant=62))
    assert p is not None and p.discordance == pytest.approx(62 / 657)
    assert (p.null, p.side) == (0.0, "greater")
    assert power(657, 62 / 657, p.detectable_effect) >= 0.8
    assert power(p.questions_needed, 62 / 657, 0.056) >= 0.8
    assert power_of("estimate", 0.05, Comparison(0.05, 0.0, 0.1, n_discordant=3)) is None
    no_null = Comparison(0.05, 0.0, 0.1, n=100, n_discordant=3)
    assert power_of("level", 0.05, no_null) is None  # no null to test
    # no discordant question observed: an effect brings its own, so power is still defined
    nothing = power_of("estimate", 0.05, Comparison(0.0, 0.0, 0.0, n=100, n_discordant=0))
    assert nothing is not None and nothing.detectable_effect is not None
    assert "+5.6 pp needs 214 questions" in power_text(p)  # not decided: how many it needs
    decided = power_of("estimate", 0.056, Comparison(0.06, 0.03, 0.09, n=657, n_discordant=62))
    assert decided is not None and decided.decided
    assert "needs" not in power_text(decided)  # a significant effect: no questions-needed figure


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"n": 10, "n_discordant": 11}, "n_discordant 11 of n 10 questions is not a share"),
        ({"n": 0, "n_discordant": 0}, "not a share"),
        ({"ci_lo": 0.2}, "ci_lo 0.2 > ci_hi 0.1"),
    ],
)
def test_a_comparison_is_checked_when_made(fields: dict[str, Any], message: str) -> None:
    """What the power and the kernels trust (moved here from power_of's own check)."""
    with refused(ValueError, names=(message,)):
        Comparison(**{"estimate": 0.05, "ci_lo": 0.0, "ci_hi": 0.1, **fields})


def test_power_of_a_no_loss_claim_tests_against_the_margin() -> None:
    counts = Comparison(0.0, -0.01, 0.01, n=485, n_discordant=48)
    p = power_of("no_loss", 0.0, counts)
    assert p is not None and (p.null, p.side) == (-SMALLEST_EFFECT, "greater")
    assert p.detectable_effect == smallest_margin(485, 48 / 485)
    assert "rules out a loss" in power_text(p)
    q = power_of("equivalence", 0.0, counts)
    assert q is not None and q.side == "within" and "within ±" in power_text(q)


def test_where_the_interval_excludes_the_paper_the_power_says_so() -> None:
    # the oracle gap: a tiny discordance, and the interval already far below the paper's 4.6 pp
    p = power_of("estimate", 0.046, Comparison(0.005, -0.002, 0.012, n=485, n_discordant=3))
    assert p is not None and p.excludes_reference is True
    text = power_text(p)
    assert "already excludes the paper's +4.6 pp" in text and "detects no effect" not in text


def test_judge_share_and_holds() -> None:
    assert judge_share(6, 8, passing=6, total=8).verdict == REPRODUCED
    assert judge_share(6, 8, passing=7, total=10).verdict == NOT_REPRODUCED  # 0.70 < 0.75
    assert judge_share(6, 8, passing=7, total=10, direction_passing=9).verdict == DIRECTION_ONLY
    assert judge_share(6, 8, passing=0, total=0).verdict == NOT_REPRODUCED
    assert judge_holds(True).verdict == REPRODUCED
    assert judge_holds(False, {"a": False, "b": True}).verdict == DIRECTION_ONLY
    assert judge_holds(False, {"a": False}).verdict == NOT_REPRODUCED
    assert "not for a" in judge_holds(False, {"a": False}).reason
    assert NOT_TESTABLE in VERDICTS and judge_untestable("why", {}).verdict == NOT_TESTABLE


def test_an_untestable_claim_must_say_why(tmp_path) -> None:
    from regime_core.paper import load_claims

    entry = (
        "claims:\n  - id: size\n    label: trained on 881\n    claim: trained on 881\n"
        "    source: abstract\n"
        "    rule: untestable\n    ours: {{run: router_train}}\n    paper: {paper}\n"
    )
    file = tmp_path / "claims.yml"
    file.write_text(entry.format(paper="{statement: '881'}"), encoding="utf-8")
    with refused(ValueError, names=("claim 'size'", "'paper.why'")):
        load_claims(file)
    file.write_text(entry.format(paper="{statement: '881', why: setup}"), encoding="utf-8")
    assert load_claims(file)[0].rule == "untestable"


def test_every_kind_of_claim_has_a_verdict_rule() -> None:
    assert tuple(VERDICT_RULES) == RULES


def test_doctests_pass() -> None:
    import doctest

    from regime_core.runner import judge

    assert doctest.testmod(judge).failed == 0


def test_a_statement_of_ours_reads_holds_not_reproduced() -> None:
    from regime_core.runner.judge import OURS_WORDS, Judgement

    judged = Judgement(REPRODUCED, "r", parts={"x": Judgement(NOT_REPRODUCED, "n")}).as_ours()
    assert judged.words == "holds" and judged.parts["x"].words == "does not hold"
    assert judged.verdict == REPRODUCED  # the rule's verdict is unchanged, only its words
    assert Judgement(INCONCLUSIVE, "i", ours=True).label == "inconclusive"
    assert "reproduced" not in " ".join(OURS_WORDS.values())
    assert Judgement(REPRODUCED, "r").label == "reproduced"
