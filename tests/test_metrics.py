"""Metrics against independent implementations: a naive reference, ir-measures, sklearn."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import refused
from sklearn.metrics import roc_auc_score

from regime_core import metrics
from regime_core.metrics import (
    METRICS,
    Metric,
    RankedQueries,
    default_metrics,
    evaluate,
    evaluate_per_query,
    glossary,
    parse_metric,
    rank_of,
    ranking,
    ranks,
    run_scores,
)

METRIC_MODULES = ("ranked", "kernels", "registry", "evaluation", "summaries")

# --- synthetic rankings with many ties ----------------------------------------------------------


def synthetic_queries(seed: int, n_queries: int = 60, max_candidates: int = 12):
    """Ragged queries whose scores sit on a coarse grid, so ties are frequent."""
    rng = np.random.default_rng(seed)
    scores, targets, gold = [], [], []
    for _ in range(n_queries):
        n = int(rng.integers(3, max_candidates + 1))
        scores.append(rng.integers(0, 5, size=n) / 4.0)
        n_gold = int(rng.integers(1, min(3, n - 1) + 1))
        members = rng.choice(n, size=n_gold, replace=False)
        targets.append(int(members[0]))
        gold.append(sorted(int(g) for g in members))
    return scores, targets, gold


def reference_order(scores) -> list[int]:
    """Score descending, then candidate index ascending: written with plain Python sorting."""
    return sorted(range(len(scores)), key=lambda j: (-float(scores[j]), j))


def reference_metrics(scores, target: int, gold: list[int], k: int) -> dict[str, float]:
    order = reference_order(scores)
    rank = {cand: position + 1 for position, cand in enumerate(order)}
    negatives = [float(scores[j]) for j in range(len(scores)) if j not in gold]
    s_t = float(scores[target])
    spread = float(np.std(negatives))
    return {
        f"hit@{k}": float(rank[target] <= k),
        f"recall@{k}": sum(rank[g] <= k for g in gold) / len(gold),
        f"all_gold@{k}": float(all(rank[g] <= k for g in gold)),
        "mrr": 1.0 / rank[target],
        f"mrr@{k}": 1.0 / rank[target] if rank[target] <= k else 0.0,
        "rank": float(rank[target]),
        "auc": (sum(n < s_t for n in negatives) + 0.5 * sum(n == s_t for n in negatives))
        / len(negatives),
        "margin": s_t - float(np.mean(negatives)),
        "margin_max": s_t - max(negatives),
        "std_margin": (s_t - float(np.mean(negatives))) / spread if spread > 0 else np.nan,
    }


# --- ranks and the tie rule --------------------------------------------------------------------


def test_doctests_pass() -> None:
    modules = [
        metrics,
        *(importlib.import_module(f"{metrics.__name__}.{n}") for n in METRIC_MODULES),
    ]
    results = [doctest.testmod(module) for module in modules]
    assert sum(r.attempted for r in results) > 5
    assert sum(r.failed for r in results) == 0


def test_ties_are_broken_by_candidate_order() -> None:
    scores = [0.5, 0.9, 0.5, 0.5]
    assert [rank_of(scores, t) for t in range(4)] == [2, 1, 3, 4]
    assert ranks(scores).tolist() == [2, 1, 3, 4]
    assert ranking(scores).tolist() == [1, 0, 2, 3]


@pytest.mark.parametrize("seed", range(5))
def test_rank_functions_agree_with_reference_sort(seed: int) -> None:
    scores, _, _ = synthetic_queries(seed, n_queries=20)
    for row in scores:
        order = reference_order(row)
        assert ranking(row).tolist() == order
        rank = ranks(row)
        for t in range(row.size):
            assert rank_of(row, t) == rank[t] == order.index(t) + 1
        # run_scores is strictly decreasing along the ranking: tie-free for any evaluator
        assert np.all(np.diff(run_scores(row)[order]) < 0)


def test_packed_ranks_match_single_query_ranks_with_ragged_rows() -> None:
    scores, targets, gold = synthetic_queries(3)
    rq = RankedQueries.build(scores, targets, gold)
    for i, row in enumerate(scores):
        assert rq.ranks[i, : row.size].tolist() == ranks(row).tolist()
        assert rq.target_rank[i] == rank_of(row, targets[i])
    assert not rq.valid[rq.scores == -np.inf].any()


# --- every metric against the reference, randomised with ties ---------------------------------


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [1, 2, 5])
def test_metrics_match_reference_implementation(seed: int, k: int) -> None:
    scores, targets, gold = synthetic_queries(seed)
    names = [
        f"hit@{k}",
        f"recall@{k}",
        f"all_gold@{k}",
        "mrr",
        f"mrr@{k}",
        "rank",
        "auc",
        "margin",
        "margin_max",
        "std_margin",
    ]
    table = evaluate_per_query(scores, targets, names, gold=gold)
    expected = pd.DataFrame(
        [reference_metrics(s, t, g, k) for s, t, g in zip(scores, targets, gold, strict=True)]
    )
    assert list(table.columns) == names
    np.testing.assert_allclose(table.to_numpy(), expected[names].to_numpy(), atol=1e-12)


def test_evaluate_is_mean_of_per_query_and_skips_undefined_std_margin() -> None:
    scores = [[0.9, 0.1, 0.3], [0.2, 0.8, 0.8], [0.5, 0.4]]  # last: one negative, std 0
    per_query = evaluate_per_query(scores, [0, 1, 0], ["hit@1", "auc", "std_margin"])
    assert np.isnan(per_query["std_margin"].iloc[2])
    summary = evaluate(scores, [0, 1, 0], ["hit@1", "auc", "std_margin"])
    assert summary["hit@1"] == pytest.approx(1.0)
    assert summary["auc"] == pytest.approx((1.0 + 0.75 + 1.0) / 3)
    assert summary["std_margin"] == pytest.approx(per_query["std_margin"].iloc[:2].mean())


def test_auc_matches_sklearn_per_query_with_ties() -> None:
    scores, targets, gold = synthetic_queries(11, n_queries=80)
    ours = evaluate_per_query(scores, targets, ["auc"], gold=gold)["auc"].to_numpy()
    for i, (row, target, members) in enumerate(zip(scores, targets, gold, strict=True)):
        keep = [j for j in range(row.size) if j == target or j not in members]
        labels = [int(j == target) for j in keep]
        assert ours[i] == pytest.approx(roc_auc_score(labels, row[keep]))


def test_auc_is_monotone_in_mean_margin_under_gaussian_negatives() -> None:
    # The T1 reading: with N(0, 1) negatives, AUC ≈ Φ(margin); so rank order must agree.
    from scipy.stats import norm

    rng = np.random.default_rng(0)
    negatives = rng.normal(size=4000)
    targets_scores = np.linspace(-2, 2, 9)
    scores = [np.concatenate([[t], negatives]) for t in targets_scores]
    table = evaluate_per_query(scores, [0] * 9, ["auc", "margin"])
    assert np.all(np.diff(table["auc"]) > 0)
    np.testing.assert_allclose(table["auc"], norm.cdf(table["margin"]), atol=0.03)


def test_two_dimensional_input_equals_list_input() -> None:
    matrix = np.random.default_rng(1).normal(size=(7, 5))
    targets = [0, 1, 2, 3, 4, 0, 1]
    a = evaluate(matrix, targets, default_metrics())
    b = evaluate([list(row) for row in matrix], targets, default_metrics())
    assert a == b


# --- cross-checks through TREC files ----------------------------------------------------------


def write_trec(tmp_path: Path, scores, gold, *, tie_free: bool = True) -> tuple[Path, Path]:
    run_path, qrels_path = tmp_path / "run.trec", tmp_path / "qrels.trec"
    with run_path.open("w") as run, qrels_path.open("w") as qrels:
        for i, row in enumerate(scores):
            column = run_scores(row) if tie_free else row
            for position, cand in enumerate(ranking(row)):
                run.write(f"q{i} Q0 d{i}_{cand} {position + 1} {column[cand]:.6f} test\n")
            for g in gold[i]:
                qrels.write(f"q{i} 0 d{i}_{g} 1\n")
    return run_path, qrels_path


def ir_measures_per_query(run_path: Path, qrels_path: Path, measures) -> pd.DataFrame:
    import ir_measures

    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    rows = [
        (m.query_id, str(m.measure), m.value) for m in ir_measures.iter_calc(measures, qrels, run)
    ]
    frame = pd.DataFrame(rows, columns=["qid", "measure", "value"])
    return frame.pivot(index="qid", columns="measure", values="value")


@pytest.mark.parametrize(("seed", "k"), [(0, 3), (1, 3), (7, 2)])
def test_ir_measures_agree_on_tie_free_run_files(tmp_path: Path, seed: int, k: int) -> None:
    from ir_measures import RR, R, Success

    scores, targets, gold = synthetic_queries(seed, n_queries=40)
    target_only = [[t] for t in targets]
    qids = [f"q{i}" for i in range(len(scores))]

    # Hit and reciprocal rank: the target is the only relevant passage.
    run_path, qrels_path = write_trec(tmp_path, scores, target_only)
    theirs = ir_measures_per_query(run_path, qrels_path, [Success @ k, RR, RR @ k]).loc[qids]
    ours = evaluate_per_query(scores, targets, [f"hit@{k}", "mrr", f"mrr@{k}"], query_ids=qids)
    np.testing.assert_allclose(ours[f"hit@{k}"], theirs[f"Success@{k}"])
    np.testing.assert_allclose(ours["mrr"], theirs["RR"])
    np.testing.assert_allclose(ours[f"mrr@{k}"], theirs[f"RR@{k}"])

    # Recall over all gold passages.
    run_path, qrels_path = write_trec(tmp_path, scores, gold)
    theirs = ir_measures_per_query(run_path, qrels_path, [R @ k]).loc[qids]
    ours = evaluate_per_query(scores, targets, [f"recall@{k}", f"all_gold@{k}"], gold=gold)
    np.testing.assert_allclose(ours[f"recall@{k}"].to_numpy(), theirs[f"R@{k}"].to_numpy())
    np.testing.assert_array_equal(
        ours[f"all_gold@{k}"].to_numpy(), (theirs[f"R@{k}"] == 1.0).to_numpy().astype(float)
    )


def test_raw_scores_agree_with_ir_measures_when_there_are_no_ties(tmp_path: Path) -> None:
    from ir_measures import RR

    rng = np.random.default_rng(5)
    scores = [rng.random(int(rng.integers(3, 10))) for _ in range(30)]
    targets = [int(rng.integers(0, s.size)) for s in scores]
    run_path, qrels_path = write_trec(tmp_path, scores, [[t] for t in targets], tie_free=False)
    qids = [f"q{i}" for i in range(30)]
    theirs = ir_measures_per_query(run_path, qrels_path, [RR]).loc[qids]
    ours = evaluate_per_query(scores, targets, ["mrr"])
    np.testing.assert_allclose(ours["mrr"].to_numpy(), theirs["RR"].to_numpy())


# --- registry and validation ------------------------------------------------------------------


def test_parse_metric_canonical_names_round_trip() -> None:
    for metric in default_metrics():
        assert parse_metric(metric.name) == metric
        assert str(metric) == metric.name
    assert parse_metric(" hit@5 ") == Metric("hit", 5)
    assert parse_metric(Metric("auc")) == Metric("auc")


@pytest.mark.parametrize("name", ["hit", "auc@5", "hits@5", "hit@0", "hit@five"])
def test_bad_metric_names_raise(name: str) -> None:
    with refused(ValueError, names=["metrics[0]", repr(name)]):
        evaluate([[0.1, 0.2]], [0], [name])


def test_glossary_covers_every_family() -> None:
    rows = glossary()
    assert [row["metric"].removesuffix("@k") for row in rows] == list(METRICS)
    assert all(row["formula"] and row["example"] for row in rows)


@pytest.mark.parametrize(
    ("scores", "targets", "gold", "names"),
    [
        ([[0.1, float("nan")]], [0], None, ["scores[0]", "finite"]),
        ([[0.1, 0.2]], [2], None, ["targets[0]", "2"]),
        ([[0.1, 0.2], [0.3]], [0], None, ["targets", "2 queries"]),
        ([[0.1, 0.2, 0.3]], [0], [[1, 2]], ["gold[0]", "target"]),
        ([[]], [0], None, ["targets[0]"]),
        ([[0.1, 0.2]], [0.0], None, ["targets[0]", "0.0"]),
        ([[0.1, 0.2]], [-1], None, ["targets[0]", "-1"]),
    ],
)
def test_bad_inputs_raise_value_error(scores, targets, gold, names) -> None:
    with refused(ValueError, names=names):
        evaluate(scores, targets, ["hit@1"], gold=gold)


def test_no_queries_give_an_empty_table() -> None:
    assert evaluate_per_query([], [], default_metrics()).shape == (0, len(default_metrics()))


def test_auc_without_negatives_names_the_query() -> None:
    with pytest.raises(ValueError, match="query 1 has no negative"):
        evaluate([[0.1, 0.2], [0.5, 0.4]], [0, 0], ["auc"], gold=[[0], [0, 1]])


def test_a_metric_named_twice_is_one_column() -> None:
    assert list(evaluate_per_query([[0.1, 0.2]], [0], ["mrr", "mrr"]).columns) == ["mrr"]
