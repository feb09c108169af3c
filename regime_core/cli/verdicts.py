"""regime verdicts [--work DIR] [--variant RUN/HASH] [--json]: every claim of the paper judged
on a run's records.

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

With --variant, the record of a notebook run by hand (papermill without -p output_dir writes it
to <work>/variants/RUN/HASH; a folder path is accepted too) is judged beside the default: the
claims of its run, each with the default's and the variant's verdict and numbers, labelled by
the config fields that differ:

    {"variant": {"run", "config_hash", "path", "differs": {field: {"default", "variant"}}},
     "default_config_hash", "claims": [{"id", "claim", "default": {"verdict", "ours",
     "ours_text", "computed_on"}, "variant": {...}}]}
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from regime_core.cli._common import add_subcommand, print_result


def register(subparsers: Any) -> None:
    parser = add_subcommand(
        subparsers,
        "verdicts",
        run,
        description=__doc__,
        help="judge every claim of the paper on a run's records",
        files=[("--claims", "the claims file (default: the repository's paper_claims.yml)", None)],
    )
    judged = parser.add_mutually_exclusive_group()  # they judge different things: one of them
    judged.add_argument(
        "--dataset",
        metavar="NAME",
        help="judge every claim on the variant set `regime reproduce --dataset NAME` ran, "
        "beside the default records (a claim not judged says why)",
    )
    judged.add_argument(
        "--variant",
        metavar="RUN/HASH",
        help="judge a notebook run by hand (its folder under <work>/variants, or a path) "
        "beside the default records",
    )


def run(args: argparse.Namespace) -> int:
    from regime_core import paths
    from regime_core.locks import records_lock

    # the last committed records: a running reproduce commits each run under this lock
    with records_lock(paths.work_dir(args.work), what="regime verdicts", shared=True):
        return _report(args)


def _report(args: argparse.Namespace) -> int:
    from regime_core.runner.verdicts import variant_report, verdicts_report

    if args.dataset is not None:
        from regime_core.runner.dataset_set import set_report

        judged = set_report(args.dataset, args.work, args.claims)
        print_result(args.json, judged, lambda: set_text(judged), ensure_ascii=False)
        return 0
    if args.variant is not None:
        found = variant_report(args.variant, args.work, args.claims).to_dict()
        print_result(args.json, found, lambda: variant_text(found), ensure_ascii=False)
        return 0
    report = verdicts_report(args.work, args.claims)
    print_result(args.json, report, lambda: human_text(report), ensure_ascii=False)
    return 0


def variant_text(report: dict[str, Any]) -> str:
    """A variant's report in plain text: what differs from the default, then per claim the
    default's verdict and numbers and the variant's."""
    variant = report["variant"]
    differs = ", ".join(
        f"{key} {change['default']!r} -> {change['variant']!r}"
        for key, change in variant["differs"].items()
    )
    lines = [
        f"variant {variant['run']}/{Path(variant['path']).name} ({variant['path']})",
        f"  differs from the default: {differs or 'nothing (the default parameters)'}",
    ]
    for claim in report["claims"]:
        lines += _sides(claim, {"default": "not_judged", "variant": "not_judged"}, data=False)
    return "\n".join(lines)


def set_text(report: dict[str, Any]) -> str:
    """A dataset's variant set in plain text: per claim the default's verdict and the set's,
    or why a side is not judged."""
    found = report["set"]
    lines = [
        f"variant set {found['dataset']} ({found['path']}): {report['judged']} claims judged, "
        f"{report['not_judged']} not judged"
    ]
    for claim in report["claims"]:
        lines += _sides(
            claim, {"default": "default_not_judged", "variant": "not_judged"}, data=True
        )
    return "\n".join(lines)


def _sides(claim: dict[str, Any], reasons: dict[str, str], *, data: bool) -> list[str]:
    """A claim judged on two sides, a line each: its verdict, flags and ours (with ``data``,
    the datasets filling its roles), or why it is not judged (the field ``reasons`` names)."""
    lines = [f"{claim['id']}:"]
    for label, reason_key in reasons.items():
        side = claim[label]
        if side is None:
            lines.append(f"  {label + ':':9}not judged: {claim[reason_key]}")
            continue
        flags = "".join(f" ({flag})" for flag in side.get("flags") or ())
        filled = ", ".join(f"{role}: {name}" for role, name in side["data"].items()) if data else ""
        on = f" [{filled}]" if filled else ""
        lines.append(f"  {label + ':':9}{side['verdict']}{flags}; {side['ours_text']}{on}")
    return lines


def human_text(report: dict[str, Any]) -> str:
    """The report in plain text: per claim its verdict, the paper's side, ours, why it did not
    reproduce (when the claim has a diagnosis or a why) and its robustness."""
    lines: list[str] = []
    for claim in report["claims"]:
        robustness = claim["robustness"]
        flags = "".join(f" ({flag})" for flag in claim.get("flags") or ())
        lines.append(f"{claim['id']}: {claim['verdict']}{flags}")
        lines.append(f"  paper: {claim['paper']['text']}")
        lines.append(f"  ours:  {claim['ours_text']}")
        why = claim.get("why") or {}
        if why.get("sentence"):  # the diagnosis and the claim's why, as the book's card says it
            lines.append(f"  why:   {why['sentence']}")
        holm = claim.get("ledger_holm")
        if holm is not None:
            lines.append(
                f"  ledger-wide Holm: {holm['survives']} (at its Holm level: "
                f"{holm['verdict_at_holm_level']})"
            )
        if robustness is not None:
            lines.append(
                f"  robustness: {robustness['holding']} of {robustness['readings']} readings "
                f"hold (most sensitive knob: {robustness['most_sensitive_knob']})"
            )
    return "\n".join(lines)
