"""regime expected freeze|check [--work DIR]: our quick-profile numbers, frozen and checked.

freeze writes the numbers of the records of the runs declared in reproduce.yml (under
<work>/results) that a claim of paper_claims.yml names, and each run's first two levels, into
expected_numbers.yml, each with its absolute tolerance; run it after
regime reproduce --profile quick --work DIR and an intended change, then review the diff.
check lists every frozen number that the records do not reproduce within its tolerance and
exits 1 if there is one. With --json one JSON object is printed:

    freeze: {"file", "runs", "numbers"}
    check: {"file", "ok", "drifts": [{"run", "key", "expected", "tolerance", "found", "problem"}]}
"""

from __future__ import annotations

import argparse
from typing import Any

from regime_core.cli._common import add_command_group, add_subcommand, print_result


def register(subparsers: Any) -> None:
    from regime_core.runner.expected import EXPECTED_NUMBERS_FILE

    actions = add_command_group(
        subparsers,
        "expected",
        help="freeze the quick profile's numbers into expected_numbers.yml, or check a run",
        description=__doc__,
        metavar="ACTION",
    )
    files = (
        (
            "--file",
            "the expected-numbers file (default: the repository's expected_numbers.yml)",
            EXPECTED_NUMBERS_FILE,
        ),
        ("--declarations", "reproduce.yml whose runs count (default: the repository's)", None),
    )
    for name, func, help_text in (
        ("freeze", freeze, "write what claims name and each run's first levels to the file"),
        ("check", check, "list every frozen number the records do not reproduce"),
    ):
        add_subcommand(actions, name, func, help=help_text, description=help_text, files=files)


def freeze(args: argparse.Namespace) -> int:
    from regime_core.runner.expected import freeze_work

    frozen, runs = freeze_work(args.work, args.file, args.declarations)
    summary = {"file": str(args.file), "runs": runs, "numbers": len(frozen)}
    text = f"froze {len(frozen)} numbers of {runs} runs into {args.file}"
    print_result(args.json, summary, text)
    return 0


def check(args: argparse.Namespace) -> int:
    from regime_core.runner.expected import check_work

    drifts = check_work(args.work, args.file, args.declarations)
    summary = {
        "file": str(args.file),
        "ok": not drifts,
        "drifts": [
            {
                "run": d.expected.run,
                "key": d.expected.key,
                "expected": d.expected.value,
                "tolerance": d.expected.tolerance,
                "found": d.found,
                "problem": d.problem,
            }
            for d in drifts
        ],
    }
    if drifts:
        text = "\n".join(
            [f"{len(drifts)} numbers drifted:", *(f"  {d.describe()}" for d in drifts)]
        )
    else:
        text = f"every number of {args.file} is within its tolerance"
    print_result(args.json, summary, text)
    return 1 if drifts else 0
