"""Expected numbers and the paper's claims: verdict rules, the claims file, freezing and drift.

The realdata test reruns the quick profile once per session (the ``quick_run`` fixture of
conftest.py) and fails listing every number of expected_numbers.yml that drifted out of its
tolerance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from regime_core.runner import expected
from regime_core.runner.expected import (
    DIRECTION_ONLY,
    LARGER,
    NOT_REPRODUCED,
    REPRODUCED,
    SMALLER,
    VERDICTS,
    Claim,
    Expected,
    compare,
    dump_expected,
    freeze,
    judge_claim,
    judge_estimate,
    judge_holds,
    judge_positive,
    judge_range,
    judge_share,
    load_claims,
    load_expected,
    tolerance_for,
    within,
)
from regime_core.runner.records import write_record

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


# --- the claims file -----------------------------------------------------------------------------


def test_repository_claims_are_valid_and_point_at_declared_runs() -> None:
    from regime_core.runner.reproduce import load_declarations

    claims = load_claims()
    runs = set(load_declarations().runs)
    assert {c.run for c in claims} <= runs
    assert {c.rule for c in claims} <= set(expected.CLAIM_RULES)
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids))


def test_claims_agree_with_the_reference_constants_of_the_experiments() -> None:
    """The paper's numbers are typed in paper_claims.yml; the experiment modules print the same
    reference values next to theirs, so the two must not disagree."""
    from regime_core.experiments import t1_auc_margin as t1
    from regime_core.experiments import t3_brel_knockout as t3
    from regime_core.experiments import zero_shot_transfer as transfer

    by_id = {c.id: c for c in load_claims()}
    t1_claim = by_id["t1_r2"].paper
    assert (t1_claim["passing"], t1_claim["total"], t1_claim["threshold"]) == (
        t1.PAPER_CELLS_PASSING,
        t1.PAPER_CELLS_TOTAL,
        t1.PAPER_R2_THRESHOLD,
    )
    t3_claim = by_id["t3_knockout"].paper
    assert (t3_claim["low"], t3_claim["high"], t3_claim["p_below"]) == (
        t3.PAPER_DROP_LOW,
        t3.PAPER_DROP_HIGH,
        t3.PAPER_P_BELOW,
    )
    for claim_id, dataset in (
        ("router_2wiki", "2wikimultihopqa"),
        ("router_musique", "musique"),
        ("router_hotpotqa", "hotpotqa"),
    ):
        assert by_id[claim_id].paper["value"] == transfer.PAPER_REFERENCE[dataset]["delta"]
    assert by_id["oracle_gap"].paper["value"] == transfer.PAPER_ORACLE_GAP


def _claims_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "claims.yml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("claims: []\n", "non-empty 'claims'"),
        (
            "claims:\n  - {id: a, claim: x, source: s, rule: guess, paper: {}, ours: {run: r}}\n",
            "rule 'guess'",
        ),
        (
            "claims:\n  - {id: a, claim: x, source: s, rule: range, paper: {low: 1}, "
            "ours: {run: r}}\n",
            "lacks \\['high'\\]",
        ),
        (
            "claims:\n  - {id: a, claim: x, source: s, rule: holds, paper: {statement: y}, "
            "ours: {holds: k}}\n",
            "ours.run",
        ),
        (
            "claims:\n  - {id: a, claim: x, source: s, rule: holds, paper: {statement: y}, "
            "ours: {run: r}}\n",
            "lacks the record keys \\['holds'\\]",
        ),
        ("claims:\n  - {id: a}\n", "missing field 'claim'"),
    ],
)
def test_bad_claims_files_name_the_problem(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_claims(_claims_file(tmp_path, body))


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
        behind="{config.dataset}, sample {config.sample_size}",
    )
    record = _record(
        {"o": {"d": 0.05, "lo": 0.03, "hi": 0.07, "p": 0.0004, "n": 1234}},
        {"dataset": "2wiki", "sample_size": None},
    )
    row = judge_claim(claim, record)
    assert row.judgement.verdict == REPRODUCED
    assert row.paper_text == "+5.6 pp, p < 0.001"
    assert row.ours_text == "+5.0 pp (95% CI +3.0 pp to +7.0 pp), p < 0.001"
    assert row.behind_text == "2wiki, sample all; n = 1,234"
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


# --- expected numbers ----------------------------------------------------------------------------


def test_tolerances_and_within() -> None:
    assert tolerance_for("a.n", 40) == 1e-6
    assert tolerance_for("a.share", 0.35) == 0.005
    assert tolerance_for("a.flag", True) == 0.0
    assert tolerance_for("a.name", "dev") == 0.0
    assert within(40, 40, 1e-6) and not within(40, 41, 1e-6)
    assert within(0.35, 0.354, 0.005) and not within(0.35, 0.36, 0.005)
    assert within("dev", "dev", 0.0) and not within("dev", "test", 0.0)
    assert not within(True, 1, 0.0)  # a bool that became a number is drift
    assert not within(0.5, float("nan"), 0.005)


def test_compare_lists_every_drifted_key() -> None:
    frozen = [
        Expected("a", "x.n", 40, 1e-6),
        Expected("a", "x.rate", 0.5, 0.005),
        Expected("a", "x.gone", 1.0, 0.005),
        Expected("a", "x.flag", True, 0.0),
        Expected("b", "y", 1, 1e-6),
    ]
    records = {"a": _record({"x": {"n": 40, "rate": 0.52, "flag": False}})}
    drifts = compare(frozen, records)
    assert [d.expected.key for d in drifts] == ["x.rate", "x.gone", "x.flag", "y"]
    described = [d.describe() for d in drifts]
    assert "off by 0.02" in described[0]
    assert "missing from the record" in described[1]
    assert "no record" in described[3]
    assert compare(frozen[:2], {"a": _record({"x": {"n": 40, "rate": 0.503}})}) == []


def test_freeze_dump_and_load_round_trip(tmp_path: Path) -> None:
    records = {
        "data_regimes": _record({"split": "dev", "prepared": {"hotpotqa": {"two_hop": 685}}}),
        "t2": _record({"cells": {"P1-P2+": {"diff": 0.1282051282051282, "ok": False}}}),
    }
    frozen = freeze(records)
    assert [(e.run, e.key) for e in frozen] == [
        ("data_regimes", "split"),
        ("data_regimes", "prepared.hotpotqa.two_hop"),
        ("t2", "cells.P1-P2+.diff"),
        ("t2", "cells.P1-P2+.ok"),
    ]
    path = tmp_path / "expected.yml"
    path.write_text(dump_expected(frozen), encoding="utf-8")
    assert load_expected(path) == frozen  # floats survive the text exactly
    assert compare(load_expected(path), records) == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("schema: other\n", "schema"),
        ("schema: regime-expected/1\nruns: [1]\n", "'runs' must map"),
        ("schema: regime-expected/1\nruns: {a: {k: [1]}}\n", "expected \\[value, tolerance\\]"),
        ("schema: regime-expected/1\nruns: {a: {k: [1, -1]}}\n", "tolerance -1"),
        ("schema: regime-expected/1\nruns: {a: {k: [[1], 0]}}\n", "not a scalar"),
    ],
)
def test_bad_expected_files_name_the_problem(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "expected.yml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_expected(path)


def test_command_line_freezes_and_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declarations = tmp_path / "reproduce.yml"
    notebook = Path(__file__).parent / "fixtures" / "notebooks" / "demo_record.ipynb"
    declarations.write_text(f"runs:\n  demo:\n    notebook: {notebook}\n", encoding="utf-8")
    work = tmp_path / "work"
    out = tmp_path / "expected.yml"
    args = ["--work", str(work), "--file", str(out), "--declarations", str(declarations)]
    assert expected.main(["freeze", *args]) == 1  # no record yet
    write_record(work / "results" / "demo", name="demo", config={}, numbers={"fit": {"r2": 0.9}})
    assert expected.main(["freeze", *args]) == 0
    assert expected.main(["check", *args]) == 0
    write_record(work / "results" / "demo", name="demo", config={}, numbers={"fit": {"r2": 0.8}})
    capsys.readouterr()
    assert expected.main(["check", *args]) == 1
    assert "demo:fit.r2: expected 0.9" in capsys.readouterr().out


def test_repository_expected_numbers_are_for_declared_runs() -> None:
    from regime_core.runner.reproduce import load_declarations

    frozen = load_expected()
    assert frozen, "expected_numbers.yml holds no numbers"
    assert {e.run for e in frozen} == set(load_declarations().runs)
    assert expected.EXPECTED_NUMBERS_FILE.read_text(encoding="utf-8").count("profile: quick") == 1


# --- the quick profile against the frozen numbers -------------------------------------------------


@pytest.mark.realdata
@pytest.mark.slow
def test_quick_profile_reproduces_the_expected_numbers(quick_run: Any) -> None:
    frozen = load_expected()
    records = {run: quick_run.record(run) for run in {e.run for e in frozen}}
    drifts = compare(frozen, records)
    listing = "\n".join(d.describe() for d in drifts)
    assert not drifts, (
        f"{len(drifts)} of {len(frozen)} numbers drifted out of tolerance (if the change is "
        f"intended, refreeze: python -m regime_core.runner.expected freeze --work W):\n{listing}"
    )


@pytest.mark.realdata
@pytest.mark.slow
def test_every_claim_is_judged_on_the_quick_records(quick_run: Any) -> None:
    for claim in load_claims():
        row = judge_claim(claim, quick_run.record(claim.run))
        assert row.judgement.verdict in VERDICTS
        assert row.ours_text and row.paper_text
