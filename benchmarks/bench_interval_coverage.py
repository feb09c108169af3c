"""Coverage of the intervals of a paired difference of hit rates, simulated and exact.

Over the grid of :mod:`regime_core.coverage` (n in ``GRID_N``, discordance ψ in
``GRID_DISCORDANCE``, asymmetry a in ``GRID_ASYMMETRY``: arm a wins a share (1 + a)/2 of the
discordant questions, so Δ = a·ψ; arm b's hit rate ``--hit-rate-b``, which only Newcombe's
interval depends on), ``--replications`` paired tables per point are drawn from the multinomial
law (``numpy.random.default_rng(config.SEED)``, the points in grid order), and each method's
coverage of Δ and mean width are recorded: the conditional exact interval the book used first,
the book's score interval with continuity correction (``stats.score_interval``), plain Tango,
Bonett–Price and Newcombe's method 10. The methods that depend on (b, c) alone also get their
exact coverage and mean width by enumeration (``coverage.coverage_grid``), and the simulation
is checked against it (the largest gap in binomial standard errors).

Prints one JSON object: per method the minimum coverage over the points with n·ψ >= 1 and where
it is reached (simulated, and exact where there is one), whether the book's interval reaches
``coverage.COVERAGE_FLOOR`` at every such point, and the seconds taken (never asserted). The
grid, one row per point and method, goes to ``--out`` (CSV).

    python benchmarks/bench_interval_coverage.py [--replications 2000] [--out F.csv]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from json_values import json_number

from regime_core import config, coverage

BOOK_METHOD = "score_cc" if config.CONTINUITY_CORRECTION else "score"


def simulate(replications: int, hit_rate_b: float, confidence: float, seed: int) -> pd.DataFrame:
    """One row per grid point and method: simulated coverage, its binomial standard error and
    the mean width."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in coverage.GRID_N:
        for psi in coverage.GRID_DISCORDANCE:
            for a in coverage.GRID_ASYMMETRY:
                point = coverage.simulate_point(
                    n, psi, a, replications, rng, hit_rate_b=hit_rate_b, confidence=confidence
                )
                for method, (cover, width) in point.items():
                    rows.append(
                        {
                            **coverage.point_columns(n, psi, a),
                            "method": method,
                            "coverage_sim": cover,
                            "se_sim": math.sqrt(max(cover * (1.0 - cover), 1e-12) / replications),
                            "mean_width_sim": width,
                        }
                    )
    return pd.DataFrame(rows)


def _minima(table: pd.DataFrame, column: str) -> dict[str, Any]:
    minima = coverage.minimum_coverage(table.dropna(subset=[column]), column=column)
    return {
        row.pop("method"): {k: json_number(v) for k, v in row.items()}
        for row in minima.to_dict("records")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=2000, help="tables per grid point")
    parser.add_argument("--hit-rate-b", type=float, default=coverage.HIT_RATE_B)
    parser.add_argument("--confidence", type=float, default=config.CONFIDENCE)
    parser.add_argument("--seed", type=int, default=config.SEED)
    parser.add_argument("--out", type=Path, default=None, help="write the grid here (CSV)")
    args = parser.parse_args()
    if args.replications < 1:
        parser.error("--replications must be at least 1")

    started = time.perf_counter()
    simulated = simulate(args.replications, args.hit_rate_b, args.confidence, args.seed)
    simulate_seconds = time.perf_counter() - started
    started = time.perf_counter()
    exact = coverage.coverage_grid(confidence=args.confidence, widths=True)
    exact_seconds = time.perf_counter() - started
    started = time.perf_counter()
    coverage.coverage_grid(confidence=args.confidence)
    exact_coverage_seconds = time.perf_counter() - started

    keys = ["n", "discordance", "asymmetry", "method"]
    grid = simulated.merge(
        exact[[*keys, "coverage", "mean_width"]].rename(
            columns={"coverage": "coverage_exact", "mean_width": "mean_width_exact"}
        ),
        on=keys,
        how="left",
    )
    # the gap in standard errors of the exact coverage (never below that of one miss in all)
    p = grid["coverage_exact"]
    se = np.sqrt(np.maximum(p * (1.0 - p), 1.0 / args.replications) / args.replications)
    gap = (grid["coverage_sim"] - p).abs() / se
    grid["gap_in_se"] = gap
    judged = coverage.judged(grid)
    worst_gap = judged.loc[judged["gap_in_se"].idxmax()]
    sim_minima = _minima(grid, "coverage_sim")
    exact_minima = _minima(grid, "coverage_exact")
    book_min = exact_minima[BOOK_METHOD]["minimum"]
    floor = coverage.COVERAGE_FLOOR
    result = {
        "replications": args.replications,
        "hit_rate_b": args.hit_rate_b,
        "confidence": args.confidence,
        "seed": args.seed,
        "points": int(len(grid) // len(coverage.METHODS)),
        "judged_points": f"n·ψ >= {coverage.MIN_EXPECTED_DISCORDANT:g}",
        "minimum_coverage_simulated": sim_minima,
        "minimum_coverage_exact": exact_minima,
        "book_interval": BOOK_METHOD,
        "book_interval_reaches_floor": {
            "floor": floor,
            "exact": bool(book_min >= floor),
            "simulated": bool(sim_minima[BOOK_METHOD]["minimum"] >= floor),
        },
        "simulation_against_exact": {
            "largest_gap_in_se": json_number(worst_gap["gap_in_se"]),
            "at": {k: json_number(worst_gap[k]) for k in keys},
            "judged_rows_compared": int(judged["gap_in_se"].notna().sum()),
        },
        "seconds": {
            "simulation": round(simulate_seconds, 2),
            "exact_with_widths": round(exact_seconds, 2),
            "exact_coverage_only": round(exact_coverage_seconds, 2),
        },
    }
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        grid.to_csv(args.out, index=False)
        result["out"] = str(args.out)
    print(json.dumps(result, indent=1, ensure_ascii=False))
    verdict = "reaches" if book_min >= floor else "does NOT reach"
    print(
        f"\nThe book's interval ({BOOK_METHOD}) {verdict} {floor:.0%} at every point with "
        f"n·ψ >= {coverage.MIN_EXPECTED_DISCORDANT:g}: exact minimum {book_min:.2%}, simulated "
        f"minimum {sim_minima[BOOK_METHOD]['minimum']:.2%}."
    )


if __name__ == "__main__":
    main()
