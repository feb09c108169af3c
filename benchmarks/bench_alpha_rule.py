"""A bridge weight that transfers (issue 26, part 1): the score geometry, the union α curves, the
calibrated rule's ``c`` and the regret of the fixed and calibrated rules, with the cost.

The rule, its inputs and its fitting protocol are those of :mod:`regime_core.retrieval.alpha_rule`
(committed before this script first ran on anything but 2WikiMultiHopQA with MiniLM). The data are
a default run's: every dataset's seeded sample (``ExperimentConfig`` defaults: all items of the
dev split, tiny pools excluded, question pools, bridge excluded, gold bridge), the selector's
``B_rel``, loaded as the ablations load them (``load_routing_data``).

- ``--stage fit``: 2WikiMultiHopQA with MiniLM only: its spreads, its α curve, ``c`` (the
  calibrated rule and its per-question variant), cross-fitted.
- ``--stage all``: the fit, then every dataset under every encoder of ``--encoders`` (MiniLM,
  TF-IDF, any sentence-transformers model already in the local cache): spreads per regime, α
  curves on the fine grid and on ``config.ALPHA_GRID``, each rule's α, and the regret of each
  rule against the best grid α (cross-fitted and in-sample), with paired intervals.

Timings: ``load_seconds`` (samples, selector, vectors from the embedding store) and
``compute_seconds`` (everything after), per encoder. Prints one JSON object; never asserted.

    REGIME_DATA_DIR=/work/shared/data HF_HUB_OFFLINE=1 \\
        python benchmarks/bench_alpha_rule.py --work _build/regime --stage all [--out F]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from json_values import json_number

from regime_core import config
from regime_core.data.regimes import REGIMES
from regime_core.experiments.alpha_transfer import Measured, fit_rules, measure, rule_outcome
from regime_core.retrieval.alpha_rule import (
    RULE_VARIANTS,
    AlphaRuleProtocol,
    Regret,
    check_grid,
    cross_fitted_best,
    in_sample_best,
    regret,
)
from regime_core.retrieval.spread import (
    ScoreSpreads,
    median_ratio,
    spread_table,
)
from regime_core.router.training import RoutingData

GRIDS = {"fine": None, "coarse": config.ALPHA_GRID}  # fine: the protocol's grid


def _load(encoder: str, datasets: tuple[str, ...], work: Path | None) -> dict[str, RoutingData]:
    from regime_core.experiments.common import ExperimentConfig
    from regime_core.experiments.context import Context
    from regime_core.experiments.router_train import load_routing_data

    experiment = ExperimentConfig(datasets=datasets, encoders=(encoder,))
    return load_routing_data(experiment, datasets, encoder, "gold", Context(work=work))


def _geometry_rows(data: RoutingData, spreads: ScoreSpreads) -> list[dict[str, Any]]:
    regime = data.table["regime"].astype(str).to_numpy()
    table = spread_table(spreads, {"regime": regime})
    whole = spread_table(spreads)
    whole.insert(0, "regime", "all")
    rows = [*whole.to_dict("records"), *table.to_dict("records")]
    return [{k: json_number(v) for k, v in row.items()} for row in rows]


def _curves(data: RoutingData, grid: np.ndarray, hits: np.ndarray) -> dict[str, Any]:
    regime = data.table["regime"].astype(str).to_numpy()
    out: dict[str, Any] = {
        "alpha": [float(a) for a in grid],
        "hit_union": [json_number(v) for v in hits.mean(axis=1)],
        "n": int(data.n),
    }
    for name in REGIMES:
        mask = regime == name
        if mask.any():
            out[f"hit_union_{name}"] = [json_number(v) for v in hits[:, mask].mean(axis=1)]
            out[f"n_{name}"] = int(mask.sum())
    best_alpha, _ = in_sample_best(hits, grid)
    out["best_alpha_in_sample"] = best_alpha
    out["best_at_grid_edge"] = bool(best_alpha == grid[-1])
    return out


def _rows(m: Measured, grid: tuple[float, ...]) -> np.ndarray:
    """The rows of ``m.hits`` of a sub-grid (``config.ALPHA_GRID`` lies on the fine grid)."""
    sub = check_grid(np.asarray(grid))
    missing = [float(a) for a in sub if float(a) not in m.grid]
    if missing:
        raise ValueError(f"the α {missing} are not on the protocol's grid")
    return np.stack([m.hits[int(np.flatnonzero(m.grid == a)[0])] for a in sub])


def _fit(protocol: AlphaRuleProtocol, work: Path | None) -> dict[str, Any]:
    t0 = time.perf_counter()
    data = _load(protocol.train_encoder, (protocol.train_dataset,), work)[protocol.train_dataset]
    t1 = time.perf_counter()
    m = measure(data, protocol)
    fit = fit_rules(m, protocol)  # the run's own fit (regime_core.experiments.alpha_transfer)
    fitted = fit.fitted
    fold_alphas, _ = cross_fitted_best(m.hits, m.grid, m.folds)
    t2 = time.perf_counter()
    return {
        "measured": m,
        "fit": fit,
        "summary": {
            "dataset": protocol.train_dataset,
            "encoder": protocol.train_encoder,
            "n": data.n,
            "R": json_number(median_ratio(m.ratios)),
            "c": {scope: json_number(f.c) for scope, f in fitted.items()},
            "fold_c": {scope: [json_number(c) for c in f.fold_c] for scope, f in fitted.items()},
            "fold_best_alpha": [json_number(a) for a in fold_alphas],
            "tuned_fixed_alpha": fit.tuned_alpha,
            "cross_fitted_hit_calibrated": {
                scope: json_number(f.hits.mean()) for scope, f in fitted.items()
            },
            "geometry": _geometry_rows(data, m.spreads),
            "curve": _curves(data, m.grid, m.hits),
            "load_seconds": round(t1 - t0, 3),
            "compute_seconds": round(t2 - t1, 3),
        },
    }


def _regret_row(r: Regret, grid: str) -> dict[str, Any]:
    c = r.comparison
    return {
        "rule": r.rule,
        "best": r.best,
        "grid": grid,
        "alpha_rule": json_number(r.alpha_rule),
        "alpha_best": [json_number(a) for a in r.alpha_best],
        "hit_best": json_number(c.mean_a),
        "hit_rule": json_number(c.mean_b),
        "regret": json_number(c.diff),
        "ci": [json_number(c.ci_lo), json_number(c.ci_hi)],
        "p_mcnemar": json_number(c.p_value),
        "n": c.n,
        "n_discordant": c.n_discordant,
    }


def _transfer(
    protocol: AlphaRuleProtocol, fit: dict[str, Any], encoder: str, work: Path | None
) -> dict[str, Any]:
    t0 = time.perf_counter()
    training_here = encoder == protocol.train_encoder
    datasets = tuple(
        d for d in config.DATASETS if not (training_here and d == protocol.train_dataset)
    )
    loaded = _load(encoder, datasets, work)
    t1 = time.perf_counter()
    measured = {dataset: measure(data, protocol) for dataset, data in loaded.items()}
    if training_here:
        measured = {protocol.train_dataset: fit["measured"], **measured}
    rows: dict[str, Any] = {}
    for dataset, m in measured.items():
        training = training_here and dataset == protocol.train_dataset
        rules = {
            name: rule_outcome(name, m, fit["fit"], fitting=training, protocol=protocol)
            for name in RULE_VARIANTS
        }
        regrets = []
        curves = {}
        for grid_name, values in GRIDS.items():
            grid = m.grid if values is None else check_grid(np.asarray(values))
            hits = m.hits if values is None else _rows(m, values)
            curves[grid_name] = _curves(m.data, grid, hits)
            bests = {
                "cross_fitted": cross_fitted_best(hits, grid, m.folds),
                "in_sample": in_sample_best(hits, grid),
            }
            for best_name, (alpha_best, hits_best) in bests.items():
                alphas = np.atleast_1d(alpha_best)
                for rule_name, (alpha_rule, hits_rule) in rules.items():
                    r = regret(
                        hits_best,
                        hits_rule,
                        rule=rule_name,
                        best=best_name,
                        alpha_rule=alpha_rule,
                        alpha_best=alphas.tolist(),
                        resamples=config.BOOTSTRAP_RESAMPLES,
                    )
                    regrets.append(_regret_row(r, grid_name))
        rows[dataset] = {
            "n": m.data.n,
            "training": training,
            "R": json_number(median_ratio(m.ratios)),
            "hit_q": json_number(m.data.hit_q.mean()),
            "alpha": {name: json_number(a) for name, (a, _) in rules.items()},
            "hit": {name: json_number(h.mean()) for name, (_, h) in rules.items()},
            "geometry": _geometry_rows(m.data, m.spreads),
            "curves": curves,
            "regret": regrets,
        }
    t2 = time.perf_counter()
    return {
        "datasets": rows,
        "load_seconds": round(t1 - t0, 3),
        "compute_seconds": round(t2 - t1, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="work directory")
    parser.add_argument("--stage", choices=("fit", "all"), default="all")
    parser.add_argument("--encoders", nargs="+", default=["minilm", "tfidf"])
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    protocol = AlphaRuleProtocol()
    fit = _fit(protocol, args.work)
    result: dict[str, Any] = {
        "protocol": protocol.to_dict(),
        "protocol_hash": protocol.config_hash(),
        "fit": fit["summary"],
    }
    if args.stage == "all":
        from regime_core.experiments.ablations import encoder_unavailable_reason

        result["transfer"] = {}
        result["unavailable"] = {}
        for encoder in args.encoders:
            reason = encoder_unavailable_reason(encoder)
            if reason is not None:
                result["unavailable"][encoder] = reason
                continue
            result["transfer"][encoder] = _transfer(protocol, fit, encoder, args.work)
    text = json.dumps(result, indent=1)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
