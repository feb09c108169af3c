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
import json
from pathlib import Path
from typing import Any

from regime_core import config
from regime_core.schema import DATASETS, SPLITS


def register(subparsers: Any) -> None:
    from regime_core.teaching.annotate import FALSE_VALUES, SHEET_SIZE, TRUE_VALUES

    parser = subparsers.add_parser(
        "annotate",
        help="hand-annotation of P1/P2 and its agreement (Cohen's kappa)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="annotate_command", required=True, metavar="SUBCOMMAND")

    s = sub.add_parser("sample", help="write a CSV sheet of questions to annotate")
    s.add_argument("dataset", choices=DATASETS, metavar="DATASET", help=", ".join(DATASETS))
    s.add_argument("--n", type=int, default=SHEET_SIZE, help=f"questions (default {SHEET_SIZE})")
    s.add_argument("--seed", type=int, default=config.SEED, help="sampling seed")
    s.add_argument("--split", choices=SPLITS, default=config.SPLIT)
    s.add_argument("--out", type=Path, required=True, help="the CSV sheet to write")
    s.add_argument("--work", type=Path, default=None, help="work directory (REGIME_WORK_DIR)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=_sample)

    k = sub.add_parser(
        "kappa",
        help="Cohen's kappa between filled sheets and the automatic predicates",
        description=f"Labels: {'/'.join(TRUE_VALUES)} (yes), {'/'.join(FALSE_VALUES)} (no).",
    )
    k.add_argument("sheets", nargs="+", type=Path, metavar="SHEET")
    k.add_argument("--work", type=Path, default=None, help="work directory (REGIME_WORK_DIR)")
    k.add_argument("--json", action="store_true", help="print one JSON object")
    k.set_defaults(func=_kappa)


def _sample(args: argparse.Namespace) -> int:
    from regime_core.teaching.annotate import FALSE_VALUES, TRUE_VALUES, make_sheet

    path, spec = make_sheet(
        args.dataset, args.out, n=args.n, seed=args.seed, split=args.split, work=args.work
    )
    n_rows = len(_ids(path))
    if args.json:
        print(json.dumps({"sheet": str(path), "sample": spec.sample_id, "n": n_rows}))
        return 0
    print(f"wrote {n_rows} questions to {path} (sample {spec.sample_id})")
    print(
        "Fill p1 (is the hop-2 entity named in the question?) and p2 (is it named in a sentence "
        f"of the bridge passage?) with {'/'.join(TRUE_VALUES)} or {'/'.join(FALSE_VALUES)}, "
        "and your name in the annotator column; then run `regime annotate kappa SHEET ...`."
    )
    return 0


def _ids(path: Path) -> list[str]:
    import csv

    with path.open(encoding="utf-8", newline="") as f:
        return [row["id"] for row in csv.DictReader(f)]


def _kappa(args: argparse.Namespace) -> int:
    from regime_core.teaching.annotate import kappa_report

    report = kappa_report(args.sheets, work=args.work)
    print(json.dumps(report.to_dict(), sort_keys=True) if args.json else report.to_text())
    return 0
