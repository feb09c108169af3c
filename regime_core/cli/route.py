"""``regime route``: route one question with the RegimeRouter, or retrain the packaged model.

Route (the bridge passage is given as running text and split into sentences by
:func:`regime_core.router.sentences.split_bridge`, the rule ``router.js`` shares)::

    regime route --question "Who is the mother of the director of Titanic?" \\
                 --bridge "Titanic is a 1997 film. It was directed by James Cameron." \\
                 --bridge-title "Titanic (1997 film)" --json
    {"action": "union", "probability": 0.71, "b_rel": "It was directed by James Cameron.",
     "b_rel_index": 1, "features": {"comparison_cues": 0.0, ...}}

``--model FILE`` uses a router saved by ``save_router``; the default is the packaged model
(``regime_core/resources/default_router.json``).

Retrain the packaged model in one command (prepares 2WikiMultiHopQA first if needed; the MiniLM
embeddings are cached under the work directory)::

    regime route train [--out PATH] [--work W] [--data-dir D] [--json]

It trains on every 2WikiMultiHopQA two-hop item (comparison items included) with the default
label rule, α and encoder, reports the 5-fold cross-fitted Δ hit@5, and writes the deployment
router (refit on all items) to ``--out`` (default: the packaged model's path).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from regime_core.cli._common import add_subcommand, path_value, print_result


def register(subparsers: Any) -> None:
    p = add_subcommand(
        subparsers,
        "route",
        run_route,
        help="route one question to q or union with the RegimeRouter (or `route train`)",
        description=(
            "Choose q (question only) or union (question + alpha * B_rel) for one two-hop "
            "question from its bridge passage, with the packaged RegimeRouter or --model. "
            "`regime route train` rebuilds the packaged model from 2WikiMultiHopQA."
        ),
        raw_description=False,
        work=None,
    )
    p.add_argument("--question", default=None, help="the question text")
    p.add_argument("--bridge", default=None, help="the bridge (hop-1) passage as running text")
    p.add_argument("--bridge-title", default=None, help="the bridge passage's title (optional)")
    p.add_argument(
        "--model",
        type=path_value,
        default=None,
        help="a router JSON file written by save_router (default: the packaged model)",
    )

    sub = p.add_subparsers(dest="route_command", metavar="train")
    t = add_subcommand(
        sub,
        "train",
        run_train,
        help="retrain the packaged router on 2WikiMultiHopQA",
        description=(
            "Train the RegimeRouter on every 2WikiMultiHopQA two-hop item (MiniLM, "
            "question pools, alpha and label rule from regime_core.config), report the "
            "cross-fitted result, and save the deployment router."
        ),
        raw_description=False,
        files=[("--data-dir", "raw datasets (REGIME_DATA_DIR), for prepare", None)],
    )
    t.add_argument(
        "--out",
        type=path_value,
        default=None,
        help="where to write the router JSON (default: the packaged model's path)",
    )


def run_route(args: argparse.Namespace) -> int:
    from regime_core.router.model import decision_dict, route_text

    if args.question is None or args.bridge is None:
        raise ValueError(
            "regime route needs --question TEXT and --bridge TEXT (or the `train` subcommand)"
        )
    # split_bridge, not spaCy: the same rule as regime_core/resources/router.js (the book's page)
    decision = route_text(
        args.question, args.bridge, bridge_title=args.bridge_title, model=args.model
    )
    out = decision_dict(decision)
    lines = [
        f"action       {out['action']}  (p(union) = {out['probability']:.3f})",
        f"B_rel [{out['b_rel_index']}]    {out['b_rel']}",
        *(f"  {name:<28} {value:g}" for name, value in out["features"].items()),
    ]
    print_result(args.json, out, "\n".join(lines))
    return 0


def prepare_missing(
    datasets: tuple[str, ...], work: Path | None, data_dir: Path | None
) -> list[str]:
    """Run ``regime data prepare`` for those of ``datasets`` with no prepared file under
    ``work``; returns them (the edge's job: the training pipeline only reads)."""
    from regime_core import paths
    from regime_core.data import prepare

    prepared = paths.prepared_dir(work)
    missing = [d for d in datasets if not (prepared / f"{d}.jsonl").is_file()]
    if missing:
        prepare(paths.data_dir(data_dir), prepared, tuple(missing))
    return missing


def run_train(args: argparse.Namespace) -> int:
    import time

    from regime_core.experiments.context import Context
    from regime_core.experiments.router_train import (
        RouterConfig,
        save_trained_router,
        train_router,
    )
    from regime_core.integrity import check_writable
    from regime_core.router.model import default_router_path

    started = time.perf_counter()
    out = args.out if args.out is not None else default_router_path()
    check_writable(out, "--out")  # refused before minutes of training, not after them
    cfg = RouterConfig()
    prepared = prepare_missing((cfg.dataset,), args.work, args.data_dir)
    result = train_router(cfg, Context(work=args.work))
    path = save_trained_router(result, out)
    seconds = time.perf_counter() - started
    c = result.outcome.comparison("routed_vs_q")
    summary = {
        "path": str(path),
        "dataset": cfg.dataset,
        "prepared": prepared,
        "n": result.data.n,
        "labels": {**result.label_counts, "ties": result.fitted.n_ties},
        "label_rule": cfg.label_rule,
        "alpha": cfg.alpha,
        "coefficients": result.coefficients(),
        "intercept": float(result.router.intercept_[0]),
        "cross_fitted": {
            f"hit@{cfg.k}_q": c.mean_b,
            f"hit@{cfg.k}_routed": c.mean_a,
            "delta": c.diff,
            "ci_lo": c.ci_lo,
            "ci_hi": c.ci_hi,
            "p_value": c.p_value,
            "oracle_gap": result.outcome.comparison("oracle_vs_routed").diff,
        },
        "seconds": round(seconds, 1),
    }
    text = (
        f"wrote {path} (trained on {summary['n']} {cfg.dataset} items, {seconds:.0f} s)\n"
        f"cross-fitted: hit@{cfg.k} routed - q = {100 * c.diff:+.1f} pp "
        f"[{100 * c.ci_lo:+.1f}, {100 * c.ci_hi:+.1f}], McNemar p = {c.p_value:.3g}"
    )
    print_result(args.json, summary, text)
    sys.stdout.flush()
    return 0
