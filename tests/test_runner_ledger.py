"""The ledger as a whole (regime_core.runner.ledger): claims re-judged from their counts under each
interval method, and the ledger-wide Holm correction, on constructed records."""

from __future__ import annotations

from typing import Any

import pytest

from regime_core.multiplicity import holm
from regime_core.paper import Claim
from regime_core.runner import ledger
from regime_core.runner.records import Record
from regime_core.stats import score_interval, score_test


def _node(b: int, c: int, n: int, **extra: Any) -> dict[str, Any]:
    lo, hi = score_interval(b, c, n)
    p = score_test(b, c, n).p_value
    return {"diff": (b - c) / n, "ci_lo": float(lo), "ci_hi": float(hi), "p_value": p,
            "n": n, "n_a_better": b, "n_b_better": c, **extra}  # fmt: skip


def _keys(node: str) -> dict[str, str]:
    return {k: f"{node}.{v}" for k, v in
            (("estimate", "diff"), ("ci_lo", "ci_lo"), ("ci_hi", "ci_hi"), ("p", "p_value"),
             ("n", "n"))}  # fmt: skip


def _claim(claim_id: str, rule: str, paper: dict[str, Any], node: str) -> Claim:
    return Claim(id=claim_id, claim=claim_id, source="abstract", rule=rule, paper=paper, run="r",
                 ours=_keys(node))  # fmt: skip


def test_router_vs_union_2wiki_turns_on_the_continuity_correction() -> None:
    # 5 wins, 0 losses of 485: the corrected interval holds zero, the uncorrected one does not
    record = Record({"name": "r", "numbers": {"cmp": _node(5, 0, 485)}})
    claim = _claim("router_vs_union", "positive", {"statement": "> 0"}, "cmp")
    (found,) = ledger.verdicts_by_method([claim], {"r": record})
    assert found.verdicts["score"] == "reproduced"
    assert found.verdicts["score_cc"] == "inconclusive (too few questions)"
    # the first interval, -0.04 to +1.03 pp, held zero and (just) a gain of one point
    assert found.verdicts["conditional_exact"] == "inconclusive (too few questions)"
    assert found.differs


def test_a_claim_without_counts_is_left_out() -> None:
    node = {"diff": 0.1, "ci_lo": 0.05, "ci_hi": 0.15, "p_value": 0.001, "n": 300}  # a bootstrap
    record = Record({"name": "r", "numbers": {"cmp": node}})
    claim = _claim("boot", "positive", {"statement": "> 0"}, "cmp")
    assert ledger.claim_counts(claim, record) is None
    assert ledger.verdicts_by_method([claim], {"r": record}) == []
    assert ledger.ledger_holm([claim], {"r": record}, {"boot": "reproduced"}) == []


def test_rejudging_with_the_books_method_gives_the_records_verdict() -> None:
    from regime_core.runner.claim_record import claim_values, judge_values

    record = Record({"name": "r", "numbers": {"a": _node(40, 12, 400), "b": _node(9, 8, 300)}})
    claims = [_claim("a", "estimate", {"value": 0.05}, "a"),
              _claim("b", "no_loss", {"statement": "no regret"}, "b")]  # fmt: skip
    for claim in claims:
        own = judge_values(claim, claim_values(claim, record)).plain_words
        counts = ledger.claim_counts(claim, record)
        assert counts is not None
        assert ledger.rejudge(claim, counts, ledger.CURRENT_METHOD) == own


def test_ledger_holm_keeps_strong_verdicts_and_drops_a_knife_edge() -> None:
    nodes = {"strong": _node(60, 10, 500), "edge": _node(13, 4, 500), "null": _node(6, 5, 500)}
    record = Record({"name": "r", "numbers": nodes})
    claims = [_claim(name, "positive", {"statement": "> 0"}, name) for name in nodes]
    own = {"strong": "reproduced", "edge": "reproduced", "null": "inconclusive (too few questions)"}
    entries = {e.claim_id: e for e in ledger.ledger_holm(claims, {"r": record}, own)}
    assert entries["strong"].survives == ledger.SURVIVES
    assert entries["edge"].p < 0.05 < entries["edge"].p_holm
    assert entries["edge"].survives == ledger.DOES_NOT_SURVIVE
    assert entries["edge"].verdict_at_holm_level == "inconclusive (too few questions)"
    assert entries["null"].survives == ledger.SURVIVES  # an inconclusive verdict stays one
    p = [entries[k].p for k in nodes]
    assert [entries[k].p_holm for k in nodes] == pytest.approx(holm(p).tolist())
    sentence = ledger.ledger_sentence(list(entries.values()), {"edge": "The edge claim"})
    assert "3 comparison claims" in sentence and "2 verdicts stand" in sentence
    assert "The edge claim becomes inconclusive (too few questions)" in sentence


def test_the_p_of_a_no_loss_claim_is_against_minus_the_margin() -> None:
    record = Record({"name": "r", "numbers": {"cmp": _node(10, 10, 400)}})
    claim = _claim("nl", "no_loss", {"statement": "no regret"}, "cmp")
    counts = ledger.claim_counts(claim, record)
    assert counts is not None
    p = ledger.null_p(claim, counts[""])
    lo, _ = score_interval(10, 10, 400, confidence=1 - p)
    assert float(lo) == pytest.approx(-0.01, abs=1e-6)  # the interval at 1 - p ends at the margin


def test_a_knife_edge_verdict_says_one_more_win_would_change_it() -> None:
    from regime_core.runner.claim_record import claim_values, judge_values
    from regime_core.runner.judge import power_text

    # 5 wins, 0 losses of 485 lies just above zero; 60 to 10 of 500 does not move with one win
    record = Record({"name": "r", "numbers": {"edge": _node(5, 0, 485), "far": _node(60, 10, 500)}})
    edge = _claim("edge", "positive", {"statement": "> 0"}, "edge")
    far = _claim("far", "positive", {"statement": "> 0"}, "far")
    judged = judge_values(edge, claim_values(edge, record))
    assert judged.verdict == "reproduced" and judged.power is not None
    assert judged.power.knife_edge.startswith("a knife edge: one more win for the second-named arm")
    assert "a knife edge" in power_text(judged.power)
    strong = judge_values(far, claim_values(far, record))
    assert strong.power is not None and strong.power.knife_edge == ""


def test_a_claim_on_a_holm_adjusted_comparison_is_labelled_at_its_level() -> None:
    from regime_core.runner.claim_record import claim_values

    def member(b: int, c: int, n: int, p: float, p_holm: float) -> dict[str, Any]:
        node = _node(b, c, n)
        return {"drop": node["diff"], "ci_lo": node["ci_lo"] - 0.01, "ci_hi": node["ci_hi"] + 0.01,
                "ci_lo_unadjusted": node["ci_lo"], "ci_hi_unadjusted": node["ci_hi"], "p": p,
                "p_holm": p_holm, "n": n, "n_a_better": b, "n_b_better": c}  # fmt: skip

    family = {
        "x": {"all": member(40, 5, 200, 1e-6, 2e-6)},
        "y": {"all": member(9, 6, 200, 0.4, 0.4)},
    }
    record = Record({"name": "r", "numbers": {"comparisons": family}})
    keys = {"estimate": "comparisons.x.all.drop", "ci_lo": "comparisons.x.all.ci_lo",
            "ci_hi": "comparisons.x.all.ci_hi", "p": "comparisons.x.all.p_holm",
            "n": "comparisons.x.all.n"}  # fmt: skip
    claim = Claim(id="t3", claim="t3", source="abstract", rule="range",
                  paper={"low": 0.086, "high": 0.141}, run="r", ours=keys)  # fmt: skip
    values = claim_values(claim, record)
    assert values.holm and values.confidence == pytest.approx(1 - 0.05 / 2)
    text = values.text()
    assert "97.50% Holm-level interval" in text and "; 95% CI" in text and "Holm p" in text


def test_counts_named_by_the_claim_are_read_where_it_names_them() -> None:
    # the router's claims name n beside the comparison, not inside it
    node = _node(30, 10, 400)
    del node["n"]
    record = Record({"name": "r", "numbers": {"outcome": {"n": 400, "routed_vs_q": node}}})
    keys = {**_keys("outcome.routed_vs_q"), "n": "outcome.n",
            "n_a_better": "outcome.routed_vs_q.n_a_better",
            "n_b_better": "outcome.routed_vs_q.n_b_better"}  # fmt: skip
    claim = Claim(id="g", claim="g", source="abstract", rule="estimate", paper={"value": 0.05},
                  run="r", ours=keys)  # fmt: skip
    counts = ledger.claim_counts(claim, record)
    assert counts is not None and (counts[""].n_a_better, counts[""].n) == (30, 400)


def test_a_bootstrap_comparison_with_counts_is_not_rejudged_as_hit_rates() -> None:
    # pool_invariance: differences of gains (-2..2) with counts beside a bootstrap interval
    row = {"test": "permutation_exact", "ci_method": "bootstrap_percentile",
           "corpus_vs_question": _node(12, 4, 300)}  # fmt: skip
    record = Record({"name": "r", "numbers": {"pool": {"musique": row}}})
    claim = _claim(
        "pool", "equivalence", {"statement": "invariant"}, "pool.musique.corpus_vs_question"
    )
    assert ledger.claim_counts(claim, record) is None
