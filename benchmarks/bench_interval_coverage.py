"""Coverage of the intervals of a paired difference of hit rates, simulated and exact.

Over the grid of :mod:`regime_core.coverage` (n in ``GRID_N``, discordance ψ in
``GRID_DISCORDANCE``, asymmetry a in ``GRID_ASYMMETRY``: arm a wins a share (1 + a)/2 of the
discordant questions, so Δ = a·ψ; arm b's hit rate ``--hit-rate-b``, which only Newcombe's
interval depends on), ``--replications`` paired tables per point are drawn from the multinomial
law (``numpy.random.default_rng(config.SEED)``, the points in grid order), and each method's
coverage of Δ and mean width are recorded: the conditional exact interval the book used first,
Tango's score interval with continuity correction (the book's second, ``score_cc``) and without
it (the book's now, ``score``: ``stats.score_interval``), Bonett–Price and Newcombe's method 10.
The same is done at the book's sample sizes (the n of every comparison claim in the records of
``--work``, or ``--book-n``) crossed with the grid's discordances and asymmetries. The methods
that depend on (b, c) alone also get their exact coverage and mean width by enumeration
(``coverage.coverage_grid``), and the simulation is checked against it (the largest gap in
binomial standard errors).

Prints one JSON object: per method, over the points with n·ψ >= 1, the mean and minimum
coverage, the share of points far below the nominal level and the mean width, on the grid and at
the book's sizes (simulated, and exact where there is one), the interval the selection rule
(``coverage.SELECTION_RULE``: mean coverage close to nominal, rarely far below, short) picks, the
minimum of each and where it is reached, and the seconds taken (never asserted). The grid, one
row per point and method, goes to ``--out`` (CSV).

    python benchmarks/bench_interval_coverage.py [--replications 2000] [--work DIR]
        [--book-n 485 657 ...] [--out F.csv]
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
OLD_METHOD = "score_cc"


def book_sizes(work: Path | None) -> list[int]:
    """The number of questions of every comparison claim in the records of ``work`` (the
    default work directory when None), sorted; empty when there are no records."""
    from regime_core.paper import load_claims
    from regime_core.runner.ledger import claim_counts
    from regime_core.runner.verdicts import load_run_records

    claims = load_claims()
    try:
        records = load_run_records([c.run for c in claims], work)
    except FileNotFoundError:
        return []
    sizes = set()
    for claim in claims:
        found = claim_counts(claim, records[claim.run])
        sizes.update(c.n for c in (found or {}).values())
    return sorted(sizes)


def simulate(
    replications: int,
    hit_rate_b: float,
    confidence: float,
    seed: int,
    ns: tuple[int, ...] = coverage.GRID_N,
) -> pd.DataFrame:
    """One row per grid point and method: simulated coverage, its binomial standard error and
    the mean width."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in ns:
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


def _summaries(table: pd.DataFrame) -> dict[str, Any]:
    """Per method: mean and minimum coverage, share far below and mean width, simulated and
    exact (where there is one), and the interval the selection rule picks from each."""
    out: dict[str, Any] = {}
    for kind in ("sim", "exact"):
        summary = coverage.coverage_summary(
            table.dropna(subset=[f"coverage_{kind}"]),
            column=f"coverage_{kind}",
            width_column=f"mean_width_{kind}",
        )
        out[kind] = {
            row.pop("method"): {k: json_number(v) for k, v in row.items()}
            for row in summary.to_dict("records")
        }
        out[f"selected_{kind}"] = coverage.select_interval(summary)
    return out


def run_points(
    ns: tuple[int, ...], args: argparse.Namespace
) -> tuple[pd.DataFrame, dict[str, float]]:
    """The simulation at ``ns`` crossed with the grid's discordances and asymmetries, merged with
    the exact coverage, and the seconds each took."""
    started = time.perf_counter()
    simulated = simulate(args.replications, args.hit_rate_b, args.confidence, args.seed, ns)
    simulate_seconds = time.perf_counter() - started
    started = time.perf_counter()
    exact = coverage.coverage_grid(ns, confidence=args.confidence, widths=True)
    exact_seconds = time.perf_counter() - started
    keys = ["n", "discordance", "asymmetry", "method"]
    grid = simulated.merge(
        exact[[*keys, "coverage", "mean_width"]].rename(
            columns={"coverage": "coverage_exact", "mean_width": "mean_width_exact"}
        ),
        on=keys,
        how="left",
    )
    return grid, {"simulation": round(simulate_seconds, 2), "exact": round(exact_seconds, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=2000, help="tables per grid point")
    parser.add_argument("--hit-rate-b", type=float, default=coverage.HIT_RATE_B)
    parser.add_argument("--confidence", type=float, default=config.CONFIDENCE)
    parser.add_argument("--seed", type=int, default=config.SEED)
    parser.add_argument("--out", type=Path, default=None, help="write the grid here (CSV)")
    parser.add_argument("--work", type=Path, default=None, help="read the book's sizes here")
    parser.add_argument(
        "--book-n", type=int, nargs="*", default=None, help="the book's sizes (else --work's)"
    )
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
    sizes = tuple(args.book_n if args.book_n is not None else book_sizes(args.work))
    at_book = run_points(sizes, args) if sizes else None
    result = {
        "selection_rule": coverage.SELECTION_RULE,
        "summary_grid": _summaries(grid),
        "book_sizes": list(sizes),
        "summary_book_sizes": None if at_book is None else _summaries(at_book[0]),
        "old_interval": OLD_METHOD,
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
            "book_sizes": None if at_book is None else at_book[1],
        },
    }
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        grid.to_csv(args.out, index=False)
        result["out"] = str(args.out)
    print(json.dumps(result, indent=1, ensure_ascii=False))
    verdict = "reaches" if book_min >= floor else "does not reach"
    print(
        f"\nThe old selection rule's floor: the book's interval ({BOOK_METHOD}) {verdict} "
        f"{floor:.0%} at every point with "
        f"n·ψ >= {coverage.MIN_EXPECTED_DISCORDANT:g}: exact minimum {book_min:.2%}, simulated "
        f"minimum {sim_minima[BOOK_METHOD]['minimum']:.2%}."
    )
    for where, summary in (("grid", result["summary_grid"]),
                           ("book sizes", result["summary_book_sizes"])):  # fmt: skip
        if summary is None:
            continue
        exact = summary["exact"]
        for method in (OLD_METHOD, BOOK_METHOD):
            row = exact[method]
            print(
                f"{where}: {method}: mean coverage {row['mean']:.2%}, minimum "
                f"{row['minimum']:.2%}, mean width {100 * row['mean_width']:.2f} pp"
            )
        print(f"{where}: the selection rule picks {summary['selected_exact']}")


if __name__ == "__main__":
    main()
