"""``regime reproduce`` (execute the declared notebooks) and ``regime book`` (build the HTML)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable

from regime_core import paths
from regime_core.cli._common import (
    add_file_option,
    add_json_option,
    add_work_option,
    count_value,
    path_value,
    print_result,
)
from regime_core.runner.declarations import DEFAULT_DECLARATIONS, DEFAULT_PROFILE, PROFILES
from regime_core.runner.reproduce import plan, reproduce


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser(
        "reproduce",
        help="execute the notebooks declared in reproduce.yml (skipping unchanged runs)",
        description=(
            "Execute the parameterised notebooks declared in reproduce.yml with papermill, in "
            "dependency order, skipping runs whose notebook code cells, parameters, profile, "
            "prepared data, computation modules (docstrings and the book wing never count; "
            "see regime_core/runner/keys.py) and upstream runs are unchanged. Records go to "
            "<work>/results/<run>/record.json, executed notebooks to <work>/executed and "
            "<work>/book/executed (nothing outside the work directory). Exits 1 if any run "
            "fails. --plan lists what would run and why (with --profile paper, first what it "
            "needs: GPUs, weights, data, hours). "
            "--set RUN.PARAM=VALUE (repeatable; VALUE in YAML: 0.5, corpus, [minilm]) runs a "
            "variant instead: the runs it names alone, their parameters for --profile with the "
            "values set, each writing its record, figures and executed notebook to "
            "<work>/variants/<run>/<variant hash> (the config hash with every file and upstream "
            "record it reads; where the notebook run by hand with the same parameters writes), "
            "never to <work>/results, the stamps or the book's pages. Their "
            "upstream runs are not run: they must be current (else an error names the "
            "`regime reproduce --only UPSTREAM` to run first), since running them would "
            "rewrite the default records. It ends with the `regime verdicts --variant "
            "RUN/HASH` command that judges the variant beside the default."
        ),
    )
    run.add_argument(
        "--profile",
        choices=PROFILES,
        default=DEFAULT_PROFILE,
        help="parameter set: quick (minutes), default (the book), full (everything), "
        "paper (the paper's setting: its encoders by hub name, on GPUs)",
    )
    runs_nothing = run.add_mutually_exclusive_group()  # --plan runs nothing: no --jobs
    runs_nothing.add_argument(
        "--jobs",
        type=count_value,
        default=None,
        help="independent runs to execute at once (default: one per core, at most the "
        "independent runs selected); each notebook's kernel gets cores/jobs threads",
    )
    run.add_argument(
        "--only",
        nargs="+",
        metavar="RUN",
        default=[],
        help="run only these (and, when out of date, the runs they depend on)",
    )
    run.add_argument("--force", action="store_true", help="rerun the selected runs even if current")
    run.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="RUN.PARAM=VALUE",
        help="run a variant of RUN with its notebook's parameter PARAM set to VALUE (YAML; "
        "repeatable, e.g. --set t3_brel_knockout.alpha=0.5 --set "
        "'t3_brel_knockout.encoders=[minilm]'): only the runs named execute, into "
        "<work>/variants/RUN/HASH; their upstream runs must already be current",
    )
    run.add_argument(
        "--dataset",
        metavar="NAME",
        default=None,
        help="run every notebook that takes a dataset on NAME (a prepared dataset of one's "
        "own) into the variant set <work>/sets/NAME, training the router on the training set; "
        "`regime verdicts --dataset NAME` then judges every claim on it beside the default",
    )
    run.add_argument(
        "--train-dataset",
        metavar="NAME",
        default=None,
        help="with --dataset: the training set the set's router learns from (default: the "
        "paper's, 2wikimultihopqa)",
    )
    runs_nothing.add_argument(
        "--plan",
        action="store_true",
        help="list what would run and why (which component changed), without running anything",
    )
    add_work_option(run)
    add_file_option(
        run,
        "--declarations",
        "the run declarations file (default: reproduce.yml at the repository top)",
        DEFAULT_DECLARATIONS,
    )
    add_json_option(run)
    run.set_defaults(func=_run_reproduce)

    book = subparsers.add_parser(
        "book",
        help="build the Jupyter Book (HTML in _build/html), warnings as errors",
        description=(
            "Build the book with jupyter-book (--warningiserror --nitpick --keep-going). "
            "Notebooks are not executed here; run `regime reproduce` first: the build renders "
            "the executed notebooks of the work directory (--work), each checked against its "
            "run's stamp, and reads its records. A build reads "
            "again the pages that changed or whose records changed, and every page after a "
            "build that did not pass strictly (one that warned, stopped or never finished, or "
            "a --no-strict one), so a build that failed on a warning fails again on it until "
            "the page is fixed (book/_ext/regime_book/strict_pass.py)."
        ),
    )
    book.add_argument("--root", type=path_value, default=paths.REPO_ROOT, help="the book's root")
    book.add_argument("--output", type=path_value, default=None, help="jupyter-book --path-output")
    add_work_option(book, help="where the results records are")
    book.add_argument(
        "--all", action="store_true", help="read and write every page, from a fresh environment"
    )
    book.add_argument("--no-strict", action="store_true", help="do not fail on warnings")
    book.add_argument(
        "--timing",
        type=path_value,
        default=None,
        metavar="FILE",
        help="write the build's phases, pages and own handlers' seconds to FILE (JSON; "
        "benchmarks/bench_build.py --book-timing FILE prints them)",
    )
    book.add_argument(
        "--no-vendor-mathjax",
        action="store_true",
        help="do not fetch MathJax with npm; pages then load it from its CDN when viewed",
    )
    add_json_option(book)
    book.set_defaults(func=_run_book)


def _run_reproduce(args: argparse.Namespace) -> int:
    if args.dataset is not None:
        return _run_dataset(args)
    if args.train_dataset is not None:
        raise ValueError("--train-dataset goes with --dataset NAME; add --dataset")
    if args.settings:
        return _run_variants(args)
    selection = {"profile": args.profile, "only": args.only, "force": args.force, "work": args.work}
    if args.plan:
        planned = plan(args.declarations, **selection)
        print_result(args.json, planned.to_dict(), planned.table, indent=2)
        return 0
    report = reproduce(args.declarations, jobs=args.jobs, **selection)
    print_result(args.json, report.to_dict(), report.table, indent=2)
    return 0 if report.ok else 1


def _run_dataset(args: argparse.Namespace) -> int:
    """``--dataset NAME``: every run on the variant set of NAME
    (:mod:`regime_core.runner.dataset_set`)."""
    from regime_core.runner.dataset_set import PAPER_TRAINING_SET, reproduce_dataset

    given = {
        "--set": bool(args.settings),
        "--only": bool(args.only),
    }
    _refuse("--dataset", given, lambda flag: "the set runs every run; drop it")
    report = reproduce_dataset(
        args.dataset,
        train_dataset=args.train_dataset or PAPER_TRAINING_SET,
        profile=args.profile,
        work=args.work,
        jobs=args.jobs,
        declarations=args.declarations,
        plan_only=args.plan,
    )
    text = report.table
    if not args.plan:
        work = "" if args.work is None else f" --work {args.work}"
        text = lambda: f"{report.table()}\n\nnext: regime verdicts --dataset {args.dataset}{work}"  # noqa: E731
    print_result(args.json, report.to_dict(), text, indent=2)
    return 0 if args.plan else 0 if report.ok else 1


def _run_variants(args: argparse.Namespace) -> int:
    """``--set``: the variants alone (:mod:`regime_core.runner.variants`)."""
    from regime_core.runner.declarations import load_declarations
    from regime_core.runner.variants import plan_variants, reproduce_variants

    refused = {
        "--only": bool(args.only),
        "--force": args.force,
        "--jobs": args.jobs is not None,
    }
    why = {
        "--only": "--set runs the runs it names and no other",
        "--force": "a variant always runs",
        "--jobs": "variants run one after another",
    }
    _refuse("--set", refused, lambda flag: f"{why[flag]}; drop {flag}")
    decl = load_declarations(args.declarations)
    selection = {"profile": args.profile, "work": args.work}
    if args.plan:
        report = plan_variants(decl, args.settings, **selection)
    else:
        report = reproduce_variants(decl, args.settings, **selection)
    print_result(args.json, report.to_dict(), report.table, indent=2)
    return 0 if report.planned or report.ok else 1


def _refuse(mode: str, given: dict[str, bool], why: Callable[[str], str]) -> None:
    """``ValueError`` naming the first flag of ``given`` that was given, which ``mode`` refuses."""
    refused = [flag for flag, was_given in given.items() if was_given]
    if refused:
        raise ValueError(f"{refused[0]} does not go with {mode}: {why(refused[0])}")


def _run_book(args: argparse.Namespace) -> int:
    from regime_core.book.build import build_book
    from regime_core.vendor import vendor_mathjax

    if not args.no_vendor_mathjax:
        try:
            vendor_mathjax(args.work)
        except (FileNotFoundError, subprocess.CalledProcessError) as err:
            print(f"MathJax not vendored ({err}); pages will load it from its CDN", file=sys.stderr)
    result = build_book(
        args.root,
        output=args.output,
        work=args.work,
        strict=not args.no_strict,
        all_pages=args.all,
        timing=args.timing,
    )
    if not result.ok and not args.json:
        print(result.log, file=sys.stderr)
    summary = {
        "ok": result.ok,
        "seconds": round(result.seconds, 2),
        "html": str(result.html_dir),
        "warnings": result.warnings(),
    }
    status = "built" if result.ok else "FAILED"
    text = f"book {status} in {result.seconds:.1f} s: {result.html_dir / 'index.html'}"
    print_result(args.json, summary, text, indent=2)
    return 0 if result.ok else 1
