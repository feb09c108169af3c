"""A claim on a record: our side read from the record, both sides in words, the verdict."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import refused

from regime_core.paper import Claim
from regime_core.runner.claim_record import claim_values, fill_fields, judge_values, paper_text
from regime_core.runner.judge import (
    DIRECTION_ONLY,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    SMALLER,
    Judgement,
)
from regime_core.runner.ours import (
    NO_NUMBER_OF_OURS,
    Comparison,
    Level,
    Levels,
    Parts,
    Share,
    Untestable,
)
from regime_core.runner.records import Record


def _judged(claim: Claim, record: Record) -> tuple[Judgement, str, str]:
    """The verdict, the paper's side and ours in words, as the book's table shows them."""
    values = claim_values(claim, record)
    return judge_values(claim, values), paper_text(claim), values.text()


def _claim(rule: str, paper: dict[str, Any], ours: dict[str, Any]) -> Claim:
    return Claim(id="c", claim="c", source="abstract", rule=rule, paper=paper, run="r", ours=ours)


def test_a_claim_judged_part_by_part_takes_its_worst_part() -> None:
    claim = _claim(
        "level",
        {"levels": {"always-q": 0.842, "routed": 0.898}},
        {"parts": {k: {"estimate": k, "ci_lo": k, "ci_hi": k} for k in ("always-q", "routed")}},
    )

    def values(q: tuple[float, float], r: tuple[float, float]) -> Levels:
        return Levels(
            {
                "always-q": Level(sum(q) / 2, q[0], q[1], n=400),
                "routed": Level(sum(r) / 2, r[0], r[1], n=400),
            }
        )

    assert judge_values(claim, values((0.8, 0.9), (0.85, 0.95))).verdict == REPRODUCED
    got = judge_values(claim, values((0.8, 0.9), (0.7, 0.8)))
    assert got.verdict == SMALLER and got.reason.startswith("routed:")
    assert got.parts["always-q"].verdict == REPRODUCED
    # one part below, one above: no single side
    assert judge_values(claim, values((0.9, 0.95), (0.7, 0.8))).verdict == NOT_REPRODUCED
    no_loss = _claim("no_loss", {"statement": "no regret"}, {"parts": {}})
    parts = {
        "a": Comparison(0.0, -0.005, 0.01, n=300, n_discordant=30),
        "b": Comparison(-0.01, -0.03, 0.01, n=300, n_discordant=30),
    }
    got = judge_values(no_loss, Parts(parts))
    assert got.verdict == INCONCLUSIVE and got.power is not None
    # our side of another kind is refused, naming the claim
    with refused(ValueError, names=("claim 'c'", "'no_loss'", "Share")):
        judge_values(no_loss, Share(1, 2))


def test_a_comparison_claim_carries_its_power_and_a_level_claim_none() -> None:
    claim = _claim("estimate", {"value": 0.056, "p_below": 0.001}, {})
    values = Comparison(0.066, 0.04, 0.09, p=1e-6, n=657, n_discordant=80)
    got = judge_values(claim, values)
    assert got.verdict == REPRODUCED and got.power.reference_effect == 0.056
    untestable = _claim("untestable", {"statement": "κ = 1.00", "why": "needs {n} annotators"}, {})
    got = judge_values(untestable, Untestable({"n": 2}))
    assert (got.verdict, got.reason) == (NOT_TESTABLE, "needs 2 annotators")


def test_an_untestable_claim_says_why_with_our_numbers() -> None:
    why = "setup, not a result: ours is {n} of {m}"
    paper = {"statement": "881 examples", "why": why}
    ours = {"n": "train.labels.labelled", "m": "train.n"}
    claim = Claim("size", "trained on 881", "abstract", "untestable", paper, "router_train", ours)
    record = _record({"train": {"labels": {"labelled": 212}, "n": 1657}})
    judgement, paper, ours = _judged(claim, record)
    assert judgement == Judgement(NOT_TESTABLE, "setup, not a result: ours is 212 of 1,657")
    assert (paper, ours) == ("881 examples", "n 212, m 1,657")
    without = Claim(**{**claim.__dict__, "ours": {}, "paper": {**claim.paper, "why": "setup"}})
    assert _judged(without, record)[0].reason == "setup"  # context is optional


def _record(numbers: dict[str, Any], config: dict[str, Any] | None = None) -> Record:
    return Record({"name": "fake", "numbers": numbers, "config": config or {}})


def test_our_side_is_read_from_the_record() -> None:
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
    judgement, paper, ours = _judged(claim, record)
    assert judgement.verdict == REPRODUCED
    assert judgement.power.discordance == pytest.approx(118 / 1234)
    assert paper == "+5.6 pp, p < 0.001"
    assert ours == "+5.0 pp (95% CI +3.0 pp to +7.0 pp), p < 0.001"
    assert fill_fields(claim.computed_on, record) == "2wiki, sample all"
    with refused(KeyError, names=("'fake'", "'o.d'")):
        claim_values(claim, _record({"o": {"x": 1.0}}))


def test_share_and_holds_claims_on_a_record() -> None:
    share = Claim("s", "t1", "abstract", "share", {"passing": 6, "total": 8, "threshold": 0.9},
                  "t1", {"passing": "a", "total": "b", "direction": "c"})  # fmt: skip
    judgement, paper, ours = _judged(share, _record({"a": 3, "b": 10, "c": 9}))
    assert judgement.verdict == DIRECTION_ONLY
    assert paper == "6 of 8 cells with R² ≥ 0.90"
    assert ours == "3 of 10 cells (direction: 9 of 10)"
    holds = Claim("h", "t2", "abstract", "holds", {"statement": "always"}, "t2",
                  {"holds": "all", "parts": {"m": "m", "t": "t"}})  # fmt: skip
    judgement, _, ours = _judged(holds, _record({"all": False, "m": True, "t": False}))
    assert (judgement.verdict, ours) == (DIRECTION_ONLY, "no (m: yes, t: no)")


def test_the_routing_latency_claim_is_judged_on_the_slower_warm_p99() -> None:
    from regime_core.paper import claim_where

    claim = claim_where(run="routing_latency")
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
    record = _record(numbers, {"split": "dev", "datasets": ["hotpotqa", "musique"]})
    judgement, paper, ours = _judged(claim, record)
    assert judgement.verdict == REPRODUCED
    assert (paper, ours) == ("under 1.00 ms", "430 µs")
    assert fill_fields(claim.computed_on, record) == (
        "the larger warm 99th percentile of Python and JavaScript over 1,362 dev questions of "
        "hotpotqa, musique, each the median of 5 passes; 2 cores of AMD EPYC, load 2.59"
    )
    numbers["worst_warm_p99_seconds"] = 0.001  # at the bound: not under it
    assert _judged(claim, record)[0].verdict == NOT_REPRODUCED
    numbers["worst_warm_p99_seconds"] = 0.0042
    judgement = _judged(claim, record)[0]
    assert judgement.verdict == NOT_REPRODUCED and "4.20 ms" in judgement.reason


def test_a_no_loss_claim_shows_its_number_or_else_its_statement() -> None:
    with_value = Claim("h", "c", "abstract", "no_loss",
                       {"statement": "no regret", "value": 0.011, "significant": False}, "r",
                       {"estimate": "e", "ci_lo": "l", "ci_hi": "h"})  # fmt: skip
    assert paper_text(with_value) == "+1.1 pp, n.s."
    statement_only = Claim("a", "c", "abstract", "no_loss", {"statement": "α = 0.25 everywhere"},
                           "r", {"estimate": "e", "ci_lo": "l", "ci_hi": "h"})  # fmt: skip
    assert paper_text(statement_only) == "α = 0.25 everywhere"


def test_an_untestable_claim_without_numbers_of_ours_says_so() -> None:
    kappa = Claim("k", "c", "abstract", "untestable", {"statement": "κ", "why": "two people"},
                  "r", {})  # fmt: skip
    ours = claim_values(kappa, _record({}))
    assert ours == Untestable({}) and ours.text() == NO_NUMBER_OF_OURS == "no number of ours"
    size = Claim("s", "c", "abstract", "untestable", {"statement": "881", "why": "w"}, "r",
                 {"labelled": "a"})  # fmt: skip
    assert claim_values(size, _record({"a": 173})).text() == "labelled 173"


def test_doctests_pass() -> None:
    import doctest

    from regime_core.runner import claim_record, ours

    assert doctest.testmod(claim_record).failed == 0
    assert doctest.testmod(ours).failed == 0
