"""regime verdicts [--work DIR] [--json]: every claim of the paper judged on a run's records.

For each claim of paper_claims.yml: the paper's side, ours (estimate, CI, p, n; differences as
fractions), the verdict by the verdict rules of regime_core.runner.expected (printed on the book's
page "The paper's numbers and ours") and, when the run holds the robustness record, the share
of plausible readings under which the claim holds and the knob that moves its verdict most.
With --json one JSON object is printed:

    {"claims": [{"id", "claim", "paper", "ours": {"estimate", "ci_lo", "ci_hi", "p", "n"},
                 "verdict", "robustness": {"readings", "holding", "share",
                 "most_sensitive_knob"}, ...}], ...}
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verdicts",
        help="judge every claim of the paper on a run's records",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--work", type=Path, default=None, help="work directory (REGIME_WORK_DIR)")
    parser.add_argument(
        "--claims",
        type=Path,
        default=None,
        help="the claims file (default: the repository's paper_claims.yml)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from regime_core.runner.verdicts import verdicts_report

    report = verdicts_report(args.work, args.claims)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print_human(report, sys.stdout)
    return 0


def print_human(report: dict[str, Any], out: TextIO) -> None:
    for claim in report["claims"]:
        robustness = claim["robustness"]
        print(f"{claim['id']}: {claim['verdict']}", file=out)
        print(f"  paper: {claim['paper']['text']}", file=out)
        print(f"  ours:  {claim['ours_text']}", file=out)
        if robustness is not None:
            print(
                f"  robustness: {robustness['holding']} of {robustness['readings']} readings "
                f"hold (most sensitive knob: {robustness['most_sensitive_knob']})",
                file=out,
            )
