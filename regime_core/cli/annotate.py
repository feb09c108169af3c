"""``regime annotate sample|kappa``: the classroom check of the regime predicates P1 and P2.

``sample`` writes a CSV sheet of questions (deterministic given the seed) with empty ``p1`` and
``p2`` columns for students to fill in: 1/0, y/n, yes/no or true/false, plus their name in the
``annotator`` column. ``kappa`` reads filled sheets of one sample and reports Cohen's kappa
for P1 and P2 between every pair of annotators and between each annotator and the automatic
predicates (``auto``, recomputed from the prepared data), listing every disagreement.
See ``regime_core.teaching.annotate`` for the sheet's columns.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from regime_core import config
from regime_core.cli._common import (
    add_command_group,
    add_dataset_argument,
    add_subcommand,
    path_value,
    print_result,
)
from regime_core.schema import SPLITS


def register(subparsers: Any) -> None:
    from regime_core.teaching.annotate import FALSE_VALUES, SHEET_SIZE, TRUE_VALUES

    sub = add_command_group(
        subparsers,
        "annotate",
        help="hand-annotation of P1/P2 and its agreement (Cohen's kappa)",
        description=__doc__,
        metavar="SUBCOMMAND",
    )

    s = add_subcommand(
        sub,
        "sample",
        _sample,
        help="write a CSV sheet of questions to annotate",
        raw_description=False,
    )
    add_dataset_argument(s)
    s.add_argument("--n", type=int, default=SHEET_SIZE, help=f"questions (default {SHEET_SIZE})")
    s.add_argument("--seed", type=int, default=config.SEED, help="sampling seed")
    s.add_argument("--split", choices=SPLITS, default=config.SPLIT)
    s.add_argument("--out", type=path_value, required=True, help="the CSV sheet to write")

    k = add_subcommand(
        sub,
        "kappa",
        _kappa,
        help="Cohen's kappa between filled sheets and the automatic predicates",
        description=f"Labels: {'/'.join(TRUE_VALUES)} (yes), {'/'.join(FALSE_VALUES)} (no).",
        raw_description=False,
    )
    k.add_argument("sheets", nargs="+", type=path_value, metavar="SHEET")


def _sample(args: argparse.Namespace) -> int:
    from regime_core.teaching.annotate import FALSE_VALUES, TRUE_VALUES, make_sheet

    path, spec = make_sheet(
        args.dataset, args.out, n=args.n, seed=args.seed, split=args.split, work=args.work
    )
    n_rows = len(_ids(path))
    text = (
        f"wrote {n_rows} questions to {path} (sample {spec.sample_id})\n"
        "Fill p1 (is the hop-2 entity named in the question?) and p2 (is it named in a sentence "
        f"of the bridge passage?) with {'/'.join(TRUE_VALUES)} or {'/'.join(FALSE_VALUES)}, "
        "and your name in the annotator column; then run `regime annotate kappa SHEET ...`."
    )
    print_result(args.json, {"sheet": str(path), "sample": spec.sample_id, "n": n_rows}, text)
    return 0


def _ids(path: Path) -> list[str]:
    import csv
    import io

    from regime_core.integrity import read_text

    # read without blocking (a FIFO named as the sheet is refused), then parsed
    return [row["id"] for row in csv.DictReader(io.StringIO(read_text(path), newline=""))]


def _kappa(args: argparse.Namespace) -> int:
    from regime_core.teaching.annotate import kappa_report

    report = kappa_report(args.sheets, work=args.work)
    print_result(args.json, report.to_dict(), report.to_text, sort_keys=True)
    return 0
