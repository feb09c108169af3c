"""regime verdicts [--work DIR] [--json]: every claim of the paper judged on a run's records.

For each claim of paper_claims.yml: the paper's side, ours (estimate, CI, p, n; differences as
fractions), the verdict by the verdict rules of regime_core.runner.judge (printed on the book's
page "The paper's numbers and ours") and, when the run holds the robustness record, the share
of plausible readings under which the claim holds and the knob that moves its verdict most,
and, for a claim that did not reproduce, why (its diagnosis and its why, filled from the
records: regime_core.runner.diagnosis). With --json one JSON object is printed:

    {"claims": [{"id", "claim", "paper", "ours": {"estimate", "ci_lo", "ci_hi", "p", "n"},
                 "verdict", "robustness": {"readings", "holding", "share",
                 "most_sensitive_knob"}, "why": {"sentence", "alternatives",
                 "explanation", "not_run"}, ...}], ...}
"""

from __future__ import annotations

import argparse
from typing import Any

from regime_core.cli._common import Command, print_result

COMMAND = Command(
    "verdicts",
    help="judge every claim of the paper on a run's records",
    files=(("--claims", "the claims file (default: the repository's paper_claims.yml)", None),),
)


def run(args: argparse.Namespace) -> int:
    from regime_core.runner.verdicts import verdicts_report

    report = verdicts_report(args.work, args.claims)
    print_result(args.json, report, lambda: human_text(report), ensure_ascii=False)
    return 0


def human_text(report: dict[str, Any]) -> str:
    """The report in plain text: per claim its verdict, the paper's side, ours, why it did not
    reproduce (when the claim has a diagnosis or a why) and its robustness."""
    lines: list[str] = []
    for claim in report["claims"]:
        robustness = claim["robustness"]
        lines.append(f"{claim['id']}: {claim['verdict']}")
        lines.append(f"  paper: {claim['paper']['text']}")
        lines.append(f"  ours:  {claim['ours_text']}")
        why = claim.get("why") or {}
        if why.get("sentence"):  # the diagnosis and the claim's why, as the book's card says it
            lines.append(f"  why:   {why['sentence']}")
        if robustness is not None:
            lines.append(
                f"  robustness: {robustness['holding']} of {robustness['readings']} readings "
                f"hold (most sensitive knob: {robustness['most_sensitive_knob']})"
            )
    return "\n".join(lines)
