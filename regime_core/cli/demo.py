"""``regime demo``: the two regimes on a small synthetic world, in under a minute, no data needed.

Generates a toy world (``data.toyworld``), retrieves each question's hop-2 passage with
the arms q, union, knockout and bridge (gold B_rel) and with the RegimeRouter, and prints hit@1
and hit@5 per arm and regime. Union (question + alpha x relation sentence) should help the
B-dominant questions (the hop-2 entity is named only in the bridge) and not the Q-dominant ones.

The embedding store is the work directory's, ``<work>/embeddings`` (``--work``, else
``REGIME_WORK_DIR``, else ``_build/regime``), so a second run encodes nothing and takes seconds.
With ``--json`` one JSON object is printed.
"""

from __future__ import annotations

import argparse
from typing import Any

from regime_core import config
from regime_core.cli._common import add_subcommand, print_result


def register(subparsers: Any) -> None:
    from regime_core.teaching.demo import DEMO_ENCODERS, DEMO_QUESTIONS, ROUTER_CHOICES

    parser = add_subcommand(
        subparsers,
        "demo",
        run,
        description=__doc__,
        help="show the two regimes on a small synthetic world (no data needed)",
        work="keep the embedding store in WORK/embeddings (a second run encodes nothing)",
    )
    parser.add_argument(
        "--n",
        type=int,
        default=DEMO_QUESTIONS,
        help=f"questions in the toy world, half of them B-dominant (default {DEMO_QUESTIONS})",
    )
    parser.add_argument("--seed", type=int, default=config.SEED, help="the world's seed")
    parser.add_argument(
        "--encoder",
        choices=DEMO_ENCODERS,
        default=config.ENCODER,
        help=f"bundled MiniLM or TF-IDF (default {config.ENCODER})",
    )
    parser.add_argument(
        "--router",
        choices=ROUTER_CHOICES,
        default="auto",
        help="auto: the packaged router if present, else one cross-fitted on the toy world",
    )


def run(args: argparse.Namespace) -> int:
    from regime_core import paths
    from regime_core.experiments.context import Context
    from regime_core.teaching.demo import DemoConfig, run_demo

    cfg = DemoConfig(n_questions=args.n, seed=args.seed, encoder=args.encoder, router=args.router)
    # the work directory's store (the one rule of paths.work_dir), kept for the next run
    result = run_demo(cfg, context=Context(work=paths.work_dir(args.work)))
    print_result(args.json, result.to_dict(), result.to_text, sort_keys=True)
    return 0
