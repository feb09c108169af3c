"""Expected numbers: freezing our quick-profile numbers, drift, ``regime expected``, and the
invariants that check what the golden file leaves out.

expected_numbers.yml freezes what a claim names and each run's first two levels
(:func:`regime_core.runner.expected.freeze`); the invariants below (an interval holds its
estimate, rates and shares lie in [0, 1] and the shares of a partition sum to one, oracle ≥
routed ≥ the worse of q and union, counts are whole, p-values lie in [0, 1], a Holm p is no
smaller than its raw p) check every other number. The realdata tests rerun the quick profile
once per session (the ``quick_run`` fixture of conftest.py) and fail listing every frozen number
that drifted out of its tolerance, and every number that breaks an invariant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from helpers import refused

from regime_core.paper import Claim, load_claims
from regime_core.runner import expected
from regime_core.runner.claim_record import claim_values, judge_values, paper_text
from regime_core.runner.expected import (
    Expected,
    compare,
    dump_expected,
    freeze,
    is_timing_key,
    load_expected,
    tolerance_for,
    within,
)
from regime_core.runner.judge import VERDICTS
from regime_core.runner.records import write_record


def _record(numbers: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": "fake", "numbers": numbers, "config": config or {}}


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
        "t2": _record({"cells": {"P1-P2+": {"diff": 0.1282051282051282, "ok": False}}, "k": 5}),
    }
    frozen = freeze(records, [_claim("t2", {"holds": "cells.P1-P2+.ok"})])
    assert [(e.run, e.key) for e in frozen] == [
        ("data_regimes", "split"),
        ("t2", "cells.P1-P2+.ok"),  # three levels deep: frozen because a claim names it
        ("t2", "k"),
    ]
    path = tmp_path / "expected.yml"
    path.write_text(dump_expected(frozen), encoding="utf-8")
    assert load_expected(path) == frozen  # floats survive the text exactly
    assert compare(load_expected(path), records) == []


def _claim(run: str, ours: dict[str, Any], **fields: Any) -> Claim:
    return Claim("c", "a claim", "abstract", "holds", {"statement": "s"}, run, ours, **fields)


def test_freeze_keeps_what_claims_name_and_each_runs_first_levels() -> None:
    comparison = {"diff": 0.1, "ci_lo": 0.0, "ci_hi": 0.2, "p_value": 0.04, "power": 0.3}
    cells = {d: {"hit_q": 0.5, "hit_union": 0.6, "n": 40} for d in ("hotpotqa", "musique")}
    records = {
        "t2": _record({"n": 80, "fit": {"c": 0.6, "deep": {"x": 1}}, "cells": cells}),
        "abl": _record({"sweep": {"0p50": {"vs_q": comparison}, "1p00": {"vs_q": comparison}}}),
    }
    claim = _claim(
        "t2",
        {"holds": "cells.hotpotqa.n"},
        computed_on="{config.k} on {numbers.fit.deep.x}",
        diagnosis=(
            {"factor": "α", "run": "abl", "node": "sweep.{value}.vs_q", "values": {"½": "0p50"}},
            {"factor": "pool", "run": "abl", "label": "corpus", "node": "pools.corpus.vs_q"},
        ),
        why=(
            {
                "each": {"MuSiQue": "musique"},
                "when": ["cells.{value}.hit_q", "<", "paper.value"],
                "text": "{numbers.cells.{value}.hit_union|frac} {abl:numbers.sweep.1p00.vs_q.n}",
            },
        ),
    )
    named = expected.claimed_keys([claim], records)
    assert named == {
        ("t2", "cells.hotpotqa.n"),
        ("t2", "fit.deep.x"),
        ("abl", "sweep.0p50.vs_q.diff"),
        ("abl", "sweep.0p50.vs_q.ci_lo"),
        ("abl", "sweep.0p50.vs_q.ci_hi"),
        ("abl", "sweep.0p50.vs_q.p_value"),
        ("t2", "cells.musique.hit_q"),
        ("t2", "cells.musique.hit_union"),
        ("abl", "sweep.1p00.vs_q.n"),  # absent from the record: named, never frozen
    }
    frozen = [(e.run, e.key) for e in freeze(records, [claim])]
    assert frozen == [
        ("t2", "n"),
        ("t2", "fit.c"),  # two levels deep: frozen without a claim
        ("t2", "fit.deep.x"),
        ("t2", "cells.hotpotqa.n"),
        ("t2", "cells.musique.hit_q"),
        ("t2", "cells.musique.hit_union"),
        *(("abl", f"sweep.0p50.vs_q.{k}") for k in ("diff", "ci_lo", "ci_hi", "p_value")),
    ]


def _latency_record() -> dict[str, Any]:
    """A constructed record shaped like the routing-latency run's."""
    warm = {"n": 120, "p50_seconds": 1.2e-4, "p99_seconds": 4.1e-4, "max_seconds": 8e-4}
    cold = {"n": 4, "p50_seconds": 3e-4, "p99_seconds": 9e-4, "max_seconds": 9e-4}
    return _record(
        {
            "split": "dev",
            "n_questions": {"hotpotqa": 40, "musique": 40, "2wikimultihopqa": 40},
            "n_total": 120,
            "timings": {"python": {"warm": warm, "cold": cold}},
            "worst_warm_p99_seconds": 4.1e-4,
            "javascript_measured": False,
            "machine": {"cpu": "AMD EPYC", "cores": 2, "load_average_1min": "3.10"},
            "warm_passes": 5,
            "samples": {"musique": {"n": 40, "ids_hash": "abc"}},
            "fit": {"seconds": 12.5, "bootstrap_seconds": 1.0, "n": 3},
        }
    )


def test_timings_are_never_frozen_by_a_stated_key_rule() -> None:
    frozen = freeze({"routing_latency": _latency_record()})
    assert [e.key for e in frozen] == [
        "split",
        "n_questions.hotpotqa",
        "n_questions.musique",
        "n_questions.2wikimultihopqa",
        "n_total",
        "javascript_measured",
        "warm_passes",
        "fit.n",
    ]
    # the rule: a level `timings` or `machine`, or a last level `seconds` / `*_seconds`
    for key in ("timings.python.warm.n", "machine.cores", "fit.seconds", "worst_warm_p99_seconds"):
        assert is_timing_key(key), key
    for key in ("n_total", "secondsx", "fit.seconds_per_item", "timing", "machines.n"):
        assert not is_timing_key(key), key
    assert sorted(expected.TIMING_LEVELS) == ["machine", "timings"]


def test_a_timing_is_never_compared_nor_read_from_the_file(tmp_path: Path) -> None:
    record = _latency_record()
    frozen = freeze({"routing_latency": record})
    slower = _latency_record()
    slower["numbers"]["timings"]["python"]["warm"]["p99_seconds"] = 0.5  # another machine
    slower["numbers"]["worst_warm_p99_seconds"] = 0.5
    slower["numbers"]["machine"]["cpu"] = "another"
    assert compare(frozen, {"routing_latency": slower}) == []
    fewer = _latency_record()
    fewer["numbers"]["n_total"] = 119  # a count is still compared
    assert [d.expected.key for d in compare(frozen, {"routing_latency": fewer})] == ["n_total"]
    text = dump_expected(frozen)
    assert (
        "Never frozen: timings and the machine" in text and "seconds" not in text.split("runs:")[1]
    )
    path = tmp_path / "expected.yml"
    path.write_text(
        'schema: regime-expected/1\nruns: {routing_latency: {"timings.python.warm.p99_seconds": '
        "[0.0004, 0.005]}}\n",
        encoding="utf-8",
    )
    with refused(ValueError, names=("machine",)) as info:
        load_expected(path)
    assert str(path) in str(info.value) and "timings.python.warm.p99_seconds" in str(info.value)


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ("schema: other\n", ("schema",)),
        ("schema: regime-expected/1\nruns: [1]\n", ("'runs'",)),
        ("schema: regime-expected/1\nruns: {a: {k: [1]}}\n", ("run 'a', key 'k'",)),
        ("schema: regime-expected/1\nruns: {a: {k: [1, -1]}}\n", ("key 'k'", "[1]", "-1")),
        ("schema: regime-expected/1\nruns: {a: {k: [[1], 0]}}\n", ("key 'k'",)),
        # issue 22: an infinite tolerance would switch the check off; NaN is no number
        ("schema: regime-expected/1\nruns: {a: {k: [1, .inf]}}\n", ("key 'k'", "[1]", "inf")),
        ("schema: regime-expected/1\nruns: {a: {k: [.nan, 0.1]}}\n", ("key 'k'", "[0]", "nan")),
        ("schema: regime-expected/1\nruns: {a: {k: [-.inf, 0.1]}}\n", ("key 'k'", "[0]", "-inf")),
        ("schema: regime-expected/1\nruns: {a: {1: [1, 0]}}\n", ("run 'a'",)),
        ("schema: regime-expected/1\nruns: {7: {k: [1, 0]}}\n", ("'runs.7'",)),
        ("schema: regime-expected/1\nruns: {a: {k: [1, 0], k: [2, 0]}}\n", ("'k'",)),
        ("schema: regime-expected/1\nruns: " + "[" * 100_000, ("100 levels",)),
    ],
)
def test_bad_expected_files_name_the_problem(tmp_path: Path, body: str, names: tuple[str]) -> None:
    path = tmp_path / "expected.yml"
    path.write_text(body, encoding="utf-8")
    with refused(ValueError, names=(str(path), *names)):
        load_expected(path)


def test_command_line_freezes_and_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from regime_core import cli

    declarations = tmp_path / "reproduce.yml"
    notebook = Path(__file__).parent / "fixtures" / "notebooks" / "demo_record.ipynb"
    declarations.write_text(f"runs:\n  demo:\n    notebook: {notebook}\n", encoding="utf-8")
    work = tmp_path / "work"
    out = tmp_path / "expected.yml"
    args = ["--work", str(work), "--file", str(out), "--declarations", str(declarations)]
    assert cli.main(["expected", "freeze", *args]) == 2  # no record yet
    assert "no record for runs ['demo']" in capsys.readouterr().err
    write_record(work / "results" / "demo", name="demo", config={}, numbers={"fit": {"r2": 0.9}})
    assert cli.main(["expected", "freeze", *args]) == 0
    assert "froze 1 numbers of 1 runs" in capsys.readouterr().out
    assert cli.main(["expected", "check", *args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"file": str(out), "ok": True, "drifts": []}
    write_record(work / "results" / "demo", name="demo", config={}, numbers={"fit": {"r2": 0.8}})
    assert cli.main(["expected", "check", *args]) == 1
    assert "demo:fit.r2: expected 0.9" in capsys.readouterr().out
    assert cli.main(["expected", "check", *args, "--json"]) == 1
    drift = json.loads(capsys.readouterr().out)["drifts"][0]
    assert (drift["key"], drift["expected"], drift["found"]) == ("fit.r2", 0.9, 0.8)


def test_repository_expected_numbers_are_for_declared_runs() -> None:
    from regime_core.runner.declarations import load_declarations

    frozen = load_expected()
    assert frozen, "expected_numbers.yml holds no numbers"
    # issue 47: few enough that a refreeze is a diff a reviewer reads; invariants check the rest
    assert len(frozen) <= 1_500, f"{len(frozen)} frozen numbers; freeze selects at most 1,500"
    assert {e.run for e in frozen} == set(load_declarations().runs)
    assert expected.EXPECTED_NUMBERS_FILE.read_text(encoding="utf-8").count("profile: quick") == 1


# --- invariants: what the golden file leaves out ------------------------------------------------
# Each checker reads a record's numbers and yields (where, holds) for every number it applies to:
# pure, so the default tier feeds each one a record that breaks it.

Facts = Iterator[tuple[str, bool]]
_SLACK = 1e-12  # float noise only: every invariant is exact arithmetic on the record's numbers


def _nodes(numbers: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every group of ``numbers`` (itself first) with its dotted path and a trailing dot."""
    yield path, numbers
    for key, value in numbers.items():
        if isinstance(value, Mapping):
            yield from _nodes(value, f"{path}{key}.")


def _leaves(numbers: Mapping[str, Any], name: re.Pattern[str]) -> Iterator[tuple[str, Any]]:
    """Every number whose last level matches ``name``: (dotted key, value)."""
    for path, node in _nodes(numbers):
        for key, value in node.items():
            if not isinstance(value, Mapping) and name.fullmatch(key):
                yield f"{path}{key}", value


def _real(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_CI_LO = re.compile(r"(?P<pre>.*?)ci_lo(?P<post>.*)")


def interval_facts(numbers: Mapping[str, Any]) -> Facts:
    """lo ≤ estimate ≤ hi: ``[P]ci_lo[S]``, ``[P]ci_hi[S]`` with the estimate ``[P]diff``,
    ``[P]drop`` or ``[P]delta`` beside them; ``X_lo``, ``X_hi`` with ``X`` beside them."""
    for path, node in _nodes(numbers):
        for key, lo in node.items():
            found = _CI_LO.fullmatch(key)
            if found:
                pre = found["pre"]
                hi = node.get(f"{pre}ci_hi{found['post']}")
                estimate = next(
                    (node[pre + e] for e in ("diff", "drop", "delta") if pre + e in node), lo
                )
            elif key.endswith("_lo") and key[:-3] in node:
                hi, estimate = node.get(key[:-3] + "_hi"), node[key[:-3]]
            else:
                continue
            holds = (
                all(_real(v) for v in (lo, estimate, hi)) and lo - _SLACK <= estimate <= hi + _SLACK
            )
            yield f"{path}{key}", holds


_RATE = re.compile(r"hit(@\d+)?(_.+)?|share(_.+)?|.+_share|chance|auc.*")


def rate_facts(numbers: Mapping[str, Any]) -> Facts:
    """A rate or share (``hit*``, ``share*``, ``*_share``, ``chance``, ``auc*``) lies in [0, 1],
    except under a difference of two (a node ``X_minus_Y``)."""
    for key, value in _leaves(numbers, _RATE):
        if "_minus_" not in key:
            yield key, _real(value) and 0 <= value <= 1


def partition_facts(numbers: Mapping[str, Any]) -> Facts:
    """The parts of a partition (two or more groups beside each other, each with its ``count``
    and ``share``) have shares summing to one, and counts summing to the ``n`` beside them."""
    for path, node in _nodes(numbers):
        parts = [
            v for v in node.values() if isinstance(v, Mapping) and {"count", "share"} <= set(v)
        ]
        if len(parts) >= 2:
            total = sum(part["share"] for part in parts)
            counted = "n" not in node or sum(part["count"] for part in parts) == node["n"]
            yield path or "(top)", abs(total - 1) <= 1e-9 and counted


_ORACLE = re.compile(r"(?P<rate>hit(@\d+)?_)oracle")


def arm_facts(numbers: Mapping[str, Any]) -> Facts:
    """Beside an oracle's rate (``hit_oracle``, ``hit@5_oracle``), the routed, q and union
    rates: oracle ≥ routed ≥ the worse of q and union, and oracle ≥ the better of them (the
    oracle takes each question's better arm, the router one of the two)."""
    for path, node in _nodes(numbers):
        for key in node:
            found = _ORACLE.fullmatch(key)
            if found:
                arms = [node.get(found["rate"] + arm) for arm in ("oracle", "routed", "q", "union")]
                if not all(_real(v) for v in arms):
                    yield f"{path}{key}", False
                    continue
                oracle, routed, q, union = arms
                yield (
                    f"{path}{key}",
                    oracle + _SLACK >= max(routed, q, union) and routed + _SLACK >= min(q, union),
                )


_COUNT = re.compile(r"n|n_.+|count")


def count_facts(numbers: Mapping[str, Any]) -> Facts:
    """A count (``n``, ``n_*``, ``count``) is a whole number ≥ 0, and the questions either arm
    won (``n_a_better`` + ``n_b_better``) are no more than the ``n`` beside them."""
    for key, value in _leaves(numbers, _COUNT):
        yield key, isinstance(value, int) and not isinstance(value, bool) and value >= 0
    for path, node in _nodes(numbers):
        if all(_real(node.get(k)) for k in ("n", "n_a_better", "n_b_better")):
            yield f"{path}n_a_better", node["n_a_better"] + node["n_b_better"] <= node["n"]


_P_VALUE = re.compile(r"(.+_)?(p|p_value|p_holm|p_exact|p_mid)")


def p_value_facts(numbers: Mapping[str, Any]) -> Facts:
    """A p-value (``p``, ``p_value``, ``p_holm``, ``p_exact``, ``p_mid``, ``*_p``...) lies in
    [0, 1]; only the paper's side a record copies (under ``paper``) may state it as text."""
    for key, value in _leaves(numbers, _P_VALUE):
        yield (
            key,
            (_real(value) and 0 <= value <= 1)
            or (isinstance(value, str) and key.startswith("paper.")),
        )


def holm_facts(numbers: Mapping[str, Any]) -> Facts:
    """A Holm-adjusted p is no smaller than the raw p beside it (``p`` or ``p_value``)."""
    for path, node in _nodes(numbers):
        raw = node.get("p", node.get("p_value"))
        if "p_holm" in node and raw is not None:
            yield (
                f"{path}p_holm",
                _real(raw) and _real(node["p_holm"]) and node["p_holm"] + _SLACK >= raw,
            )


INVARIANTS: dict[str, Callable[[Mapping[str, Any]], Facts]] = {
    "an interval holds its estimate": interval_facts,
    "a rate or share lies in [0, 1]": rate_facts,
    "the shares of a partition sum to one": partition_facts,
    "oracle >= routed >= the worse of q and union": arm_facts,
    "a count is a whole number >= 0": count_facts,
    "a p-value lies in [0, 1]": p_value_facts,
    "a Holm p is no smaller than its raw p": holm_facts,
}


def invariant_report(records: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, int], list[str]]:
    """Per invariant, how many numbers of ``records`` (run id -> record) it checked, and every
    number that breaks one (``run:key: invariant``)."""
    checked = dict.fromkeys(INVARIANTS, 0)
    broken = []
    for run, record in records.items():
        for name, facts in INVARIANTS.items():
            for where, holds in facts(record["numbers"]):
                checked[name] += 1
                if not holds:
                    broken.append(f"{run}:{where}: {name}")
    return checked, broken


_BREAKING: list[tuple[str, dict[str, Any]]] = [
    ("an interval holds its estimate", {"c": {"diff": 0.3, "ci_lo": 0.0, "ci_hi": 0.2}}),
    ("an interval holds its estimate", {"c": {"drop": 0.1, "ci_lo": 0.2, "ci_hi": 0.0}}),
    (
        "an interval holds its estimate",
        {"soft_vs_q_diff": -0.1, "soft_vs_q_ci_lo": 0.0, "soft_vs_q_ci_hi": 0.1},
    ),
    (
        "an interval holds its estimate",
        {
            "c": {
                "diff": 0.1,
                "ci_lo": 0.0,
                "ci_lo_unadjusted": 0.12,
                "ci_hi_unadjusted": 0.3,
                "ci_hi": 0.2,
            }
        },
    ),
    ("an interval holds its estimate", {"r2": 0.95, "r2_lo": 0.96, "r2_hi": 0.99}),
    ("an interval holds its estimate", {"c": {"diff": 0.1, "ci_lo": 0.0}}),
    ("a rate or share lies in [0, 1]", {"a": {"hit@5_q": 1.2}}),
    ("a rate or share lies in [0, 1]", {"a": {"share_union": -0.1}}),
    ("a rate or share lies in [0, 1]", {"mention_is_title_share": "high"}),
    (
        "the shares of a partition sum to one",
        {"r": {"n": 4, "A": {"count": 1, "share": 0.25}, "B": {"count": 3, "share": 0.7}}},
    ),
    (
        "the shares of a partition sum to one",
        {"r": {"n": 5, "A": {"count": 1, "share": 0.25}, "B": {"count": 3, "share": 0.75}}},
    ),
    (
        "oracle >= routed >= the worse of q and union",
        {"hit_q": 0.4, "hit_union": 0.5, "hit_routed": 0.6, "hit_oracle": 0.55},
    ),
    (
        "oracle >= routed >= the worse of q and union",
        {"hit@5_q": 0.4, "hit@5_union": 0.5, "hit@5_routed": 0.3, "hit@5_oracle": 0.6},
    ),
    (
        "oracle >= routed >= the worse of q and union",
        {"hit_q": 0.7, "hit_union": 0.5, "hit_routed": 0.6, "hit_oracle": 0.65},
    ),
    ("oracle >= routed >= the worse of q and union", {"hit_q": 0.4, "hit_oracle": 0.6}),
    ("a count is a whole number >= 0", {"c": {"n": 3.5}}),
    ("a count is a whole number >= 0", {"c": {"n_tiny_pool": -1}}),
    ("a count is a whole number >= 0", {"c": {"n": 5, "n_a_better": 3, "n_b_better": 3}}),
    ("a p-value lies in [0, 1]", {"c": {"p_value": 1.2}}),
    ("a p-value lies in [0, 1]", {"c": {"spearman_p": -0.01}}),
    ("a p-value lies in [0, 1]", {"c": {"p": "p < 0.05"}}),
    ("a Holm p is no smaller than its raw p", {"c": {"p": 0.04, "p_holm": 0.02}}),
]
_HOLDING: dict[str, dict[str, Any]] = {
    "an interval holds its estimate": {
        "c": {
            "diff": 0.1,
            "ci_lo": 0.0,
            "ci_hi": 0.2,
            "ci_lo_unadjusted": 0.05,
            "ci_hi_unadjusted": 0.15,
        },
        "r2": 0.95,
        "r2_lo": 0.9,
        "r2_hi": 0.99,
    },
    "a rate or share lies in [0, 1]": {
        "a": {"hit@5_q": 0.4, "share": 1.0},
        "u_minus_q": {"hit@1": -0.1},
    },
    "the shares of a partition sum to one": {
        "r": {"n": 4, "A": {"count": 1, "share": 0.25}, "B": {"count": 3, "share": 0.75}}
    },
    "oracle >= routed >= the worse of q and union": {
        "hit_q": 0.4,
        "hit_union": 0.5,
        "hit_routed": 0.45,
        "hit_oracle": 0.55,
    },
    "a count is a whole number >= 0": {"c": {"n": 5, "n_a_better": 2, "n_b_better": 3, "count": 0}},
    "a p-value lies in [0, 1]": {
        "c": {"p_value": 1.0, "p_exact": 0.0},
        "paper": {"p": "p < 0.001"},
    },
    "a Holm p is no smaller than its raw p": {"c": {"p": 0.02, "p_holm": 0.04}},
}


@pytest.mark.parametrize(("invariant", "numbers"), _BREAKING)
def test_each_invariant_flags_a_record_that_breaks_it(
    invariant: str, numbers: dict[str, Any]
) -> None:
    facts = list(INVARIANTS[invariant](numbers))
    assert facts and not all(holds for _, holds in facts), facts
    assert invariant_report({"r": {"numbers": numbers}})[1]


@pytest.mark.parametrize("invariant", list(INVARIANTS))
def test_each_invariant_passes_a_record_that_keeps_it(invariant: str) -> None:
    facts = list(INVARIANTS[invariant](_HOLDING[invariant]))
    assert facts and all(holds for _, holds in facts), facts
    assert {name for name, _ in _BREAKING} == set(INVARIANTS) == set(_HOLDING)


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
        f"intended, refreeze: regime expected freeze --work W):\n{listing}"
    )


@pytest.mark.realdata
@pytest.mark.slow
def test_the_frozen_numbers_are_the_rules_selection(quick_run: Any) -> None:
    """The file holds what :func:`freeze` selects (what a claim names, each run's first two
    levels), no more and no less: a claim naming a new number means refreezing."""
    frozen = [(e.run, e.key) for e in load_expected()]
    records = {run: quick_run.record(run) for run in dict.fromkeys(run for run, _ in frozen)}
    selected = [(e.run, e.key) for e in freeze(records, load_claims())]
    assert sorted(frozen) == sorted(selected), (
        f"{sorted(set(selected) - set(frozen))[:20]} are selected but not frozen, "
        f"{sorted(set(frozen) - set(selected))[:20]} frozen but not selected; refreeze: "
        "regime expected freeze --work W"
    )


@pytest.mark.realdata
@pytest.mark.slow
def test_quick_records_hold_the_invariants(quick_run: Any) -> None:
    """Every number the golden file leaves out is still checked: each invariant applies to some
    number of the quick records, and none is broken."""
    runs = {e.run for e in load_expected()}
    checked, broken = invariant_report({run: quick_run.record(run) for run in sorted(runs)})
    assert all(checked.values()), f"an invariant checked no number: {checked}"
    assert not broken, f"{len(broken)} numbers break an invariant:\n" + "\n".join(broken)


@pytest.mark.realdata
@pytest.mark.slow
def test_every_claim_is_judged_on_the_quick_records(quick_run: Any) -> None:
    for claim in load_claims():
        values = claim_values(claim, quick_run.record(claim.run))
        assert judge_values(claim, values).verdict in VERDICTS
        assert values.text() and paper_text(claim)


def test_doctests_pass() -> None:
    import doctest

    assert doctest.testmod(expected).failed == 0
