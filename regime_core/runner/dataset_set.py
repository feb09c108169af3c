"""``regime reproduce --dataset NAME``: every notebook that takes a dataset, run on one dataset of
one's own, into one named variant set beside the default records.

The set is a work directory of its own, ``<work>/sets/<NAME>`` (:func:`set_dir`): its records
(``results/``), stamps, executed notebooks and the book's copies of them, with the prepared data
and the embedding store of ``<work>`` linked in (``prepared``, ``embeddings``), so nothing is
prepared or encoded twice and nothing of the default run (``<work>/results``, ``book/executed``)
is written. :func:`set_declarations` rewrites each run's dataset parameters by the role they
fill (the roles of ``paper_claims.yml``, :mod:`regime_core.runner.roles`):

* every dataset of a run (``datasets``), each transfer set (``transfer_datasets``) and the real
  dataset of the teaching notebooks (``real_dataset``): ``NAME``;
* the training set (``dataset`` of the router-training run, ``train_dataset``), where the
  router is trained: the paper's, 2WikiMultiHopQA, unless ``--train-dataset`` names another;
  the router-training run measures its B_rel selector on both (``selector_datasets``), and the
  zero-shot run applies the router trained in the set, so the transfer to ``NAME`` stays
  zero-shot.

The reproduce runner (:func:`regime_core.runner.reproduce.reproduce`) executes them, so a second
``--dataset NAME`` reruns only what changed. ``regime verdicts --dataset NAME`` judges every
claim on the set beside the default (:func:`set_report`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.runner.declarations import Declarations, notebook_parameters

#: where the named variant sets live under a work directory
SETS_DIRNAME = "sets"
#: the directories of the work directory a set reads and shares (linked, never copied)
SHARED_DIRNAMES: tuple[str, ...] = ("prepared", "embeddings")
#: the last error of a run of a set (``<set>/runs/<run>/error.txt``), which its verdicts name
ERROR_FILENAME = "error.txt"
#: the paper's training set, where the router is trained unless told otherwise
PAPER_TRAINING_SET = "2wikimultihopqa"


def sets_dir(work: Path | str | None = None) -> Path:
    """``<work>/sets``: every named variant set of a work directory."""
    return paths.work_dir(work) / SETS_DIRNAME


def set_dir(name: str, work: Path | str | None = None) -> Path:
    """``<work>/sets/<name>``: the work directory of the variant set of dataset ``name``.

    >>> set_dir("mine", "w")
    PosixPath('w/sets/mine')
    """
    return sets_dir(work) / name


def dataset_parameters(declared: Sequence[str], dataset: str, train_dataset: str) -> dict[str, Any]:
    """The parameters a notebook declaring ``declared`` takes for the set of ``dataset``, by
    the role each fills (the module docstring); pure.

    >>> dataset_parameters(["datasets", "k"], "mine", "2wikimultihopqa")
    {'datasets': ['mine']}
    >>> dataset_parameters(["dataset", "selector_datasets"], "mine", "2wikimultihopqa")
    {'dataset': '2wikimultihopqa', 'selector_datasets': ['2wikimultihopqa', 'mine']}
    """
    values: dict[str, Any] = {}
    for name in declared:
        if name in ("datasets", "transfer_datasets"):
            values[name] = [dataset]
        elif name == "real_dataset":
            values[name] = dataset
        elif name in ("dataset", "train_dataset"):
            values[name] = train_dataset
        elif name == "selector_datasets":
            values[name] = list(dict.fromkeys([train_dataset, dataset]))
    return values


def set_declarations(decl: Declarations, dataset: str, train_dataset: str) -> Declarations:
    """``decl`` with every run's dataset parameters those of the set (:func:`dataset_parameters`,
    over every profile's overrides); the zero-shot run applies the router its set trained. Run
    in the set's own work directory, its executed notebooks land there (``<set>/book/executed``),
    never in the book's ``book/executed``."""
    runs = {}
    for run_id, spec in decl.runs.items():
        values = dataset_parameters(notebook_parameters(spec.notebook), dataset, train_dataset)
        if run_id == "zero_shot_transfer":
            values["router_file"] = "trained"
        profiles = {
            profile: {k: v for k, v in overrides.items() if k not in values}
            for profile, overrides in spec.profiles.items()
        }
        runs[run_id] = replace(spec, parameters={**spec.parameters, **values}, profiles=profiles)
    return Declarations(decl.path, runs)


def check_dataset(dataset: str, train_dataset: str, work: Path | str | None) -> None:
    """``ValueError`` unless ``dataset`` and ``train_dataset`` are prepared datasets of ``work``
    (the toy world counts), distinct, and ``dataset`` a dataset of one's own or a built-in one."""
    from regime_core.data.prepared import known_datasets

    known = known_datasets(work)
    for flag, name in (("--dataset", dataset), ("--train-dataset", train_dataset)):
        if name not in known:
            raise ValueError(
                f"{flag} {name!r}: no such dataset in {paths.work_dir(work)} (known: "
                f"{', '.join(known)}); prepare it first with `regime data prepare --jsonl FILE "
                f"--name {name}`"
            )
    if dataset == train_dataset:
        raise ValueError(
            f"--dataset {dataset!r} is the training set too: the transfer claims would be "
            "judged on the data the router learnt from. Name another --train-dataset (the "
            f"default is the paper's, {PAPER_TRAINING_SET})"
        )


def link_shared(root: Path, work: Path) -> None:
    """Link the work directory's prepared data and embedding store into the set's ``root``
    (relative links, so the work directory can move); an existing link is kept."""
    root.mkdir(parents=True, exist_ok=True)
    for name in SHARED_DIRNAMES:
        (work / name).mkdir(parents=True, exist_ok=True)
        link = root / name
        if os.path.lexists(link):
            if link.is_symlink() and link.resolve() == (work / name).resolve():
                continue
            raise ValueError(
                f"{link}: expected a link to {work / name}; the set's folder holds something "
                "else there: delete it and run again"
            )
        link.symlink_to(os.path.relpath(work / name, root), target_is_directory=True)


def reproduce_dataset(
    dataset: str,
    *,
    train_dataset: str = PAPER_TRAINING_SET,
    profile: str,
    work: Path | str | None = None,
    jobs: int = 1,
    declarations: Path | str | None = None,
    plan_only: bool = False,
) -> Any:
    """Run (or with ``plan_only`` plan) every declared run on the set of ``dataset`` in its
    work directory (:func:`set_declarations`, :func:`set_dir`): the runner's report or plan."""
    from regime_core.runner.declarations import load_declarations
    from regime_core.runner.reproduce import plan, reproduce

    check_dataset(dataset, train_dataset, work)
    work_root = paths.work_dir(work).resolve()
    root = set_dir(dataset, work_root)
    link_shared(root, work_root)
    decl = set_declarations(load_declarations(declarations), dataset, train_dataset)
    if plan_only:
        return plan(decl, profile=profile, work=root)
    report = reproduce(decl, profile=profile, jobs=jobs, work=root)
    for result in report.results:  # what `regime verdicts --dataset` says of a failed run
        error_file = root / "runs" / result.run_id / ERROR_FILENAME
        if result.status in ("failed", "blocked") and result.error:
            error_file.parent.mkdir(parents=True, exist_ok=True)
            error_file.write_text(result.error + "\n", encoding="utf-8")
        elif result.status in ("ran", "skipped"):
            error_file.unlink(missing_ok=True)
    return report


# --- verdicts --------------------------------------------------------------------------------


def _side_verdicts(
    work: Path, claims: Sequence[Any], roles: Mapping[str, Any]
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Each claim judged on the stamped records of the work directory ``work`` (its side of
    :func:`set_report`), or the reason it is not: a run without a record (never run, or
    failed: its error), a role its run left unfilled, a number its record lacks."""
    from regime_core.runner.stamps import load_stamped_record, read_stamp
    from regime_core.runner.verdicts import NotJudgedError, judge_claims

    records: dict[str, Any] = {}
    absent: dict[str, str] = {}
    for run in dict.fromkeys(r for c in claims for r in c.runs()):
        try:
            records[run] = load_stamped_record(work, run)
        except (FileNotFoundError, ValueError) as err:
            stamp = read_stamp(work, run)
            failed = _failure(work, run)
            absent[run] = (
                f"run {run!r} failed: {failed}"
                if failed
                else f"run {run!r} has no current record ({err})"
                if stamp is not None
                else f"run {run!r} has no record in {work}"
            )
    judged: dict[str, dict[str, Any]] = {}
    reasons: dict[str, str] = {}
    for claim in claims:
        if claim.run in absent:
            reasons[claim.id] = absent[claim.run]
            continue
        # the claim's diagnosis and why may read runs that did not run: judged without them
        present = {run: records[run] for run in claim.runs() if run in records}
        reduced = replace(
            claim,
            diagnosis=tuple(d for d in claim.diagnosis if str(d["run"]) in present),
            why=tuple(w for w in claim.why if str(w.get("run", claim.run)) in present),
        )
        try:
            try:
                (verdict,) = judge_claims(present, [reduced], roles=roles)
            except KeyError:  # a why naming a run inside its text that did not run here
                bare = replace(reduced, diagnosis=(), why=())
                (verdict,) = judge_claims(present, [bare], roles=roles)
        except NotJudgedError as err:
            reasons[claim.id] = err.reason
            continue
        judged[claim.id] = {
            "state": verdict.judgement.verdict,  # the verdict itself, whatever its words
            **verdict.side(),
            "reason": verdict.judgement.reason,
        }
    return judged, reasons


def _failure(work: Path, run: str) -> str | None:
    """The error a run's last attempt in a set left (:data:`ERROR_FILENAME`), if any."""
    file = work / "runs" / run / ERROR_FILENAME
    return file.read_text(encoding="utf-8").strip() if file.is_file() else None


def set_report(
    dataset: str, work: Path | str | None = None, claims_file: Path | str | None = None
) -> dict[str, Any]:
    """``regime verdicts --dataset NAME``: every claim judged on the default records and on the
    set of ``dataset``, side by side; a claim not judged on a side says why. Never raises for
    a claim: only for a set that was never run."""
    from regime_core.paper import load_claims, load_roles

    root = set_dir(dataset, work)
    if not (root / "results").is_dir():
        raise FileNotFoundError(
            f"no variant set for dataset {dataset!r} ({root}); run `regime reproduce --dataset "
            f"{dataset}` first"
        )
    claims, roles = load_claims(claims_file), load_roles(claims_file)
    default, default_reasons = _side_verdicts(paths.work_dir(work), claims, roles)
    variant, reasons = _side_verdicts(root, claims, roles)
    rows: list[dict[str, Any]] = []
    for c in claims:  # each side None when the claim is not judged there, with the reason
        row: dict[str, Any] = {"id": c.id, "claim": c.claim, "default": default.get(c.id)}
        if row["default"] is None:
            row["default_not_judged"] = default_reasons.get(c.id)
        row["variant"] = variant.get(c.id)
        if row["variant"] is None:
            row["not_judged"] = reasons.get(c.id)
        rows.append(row)
    return {
        "set": {"dataset": dataset, "path": str(root)},
        "claims": rows,
        "judged": sum(row["variant"] is not None for row in rows),
        "not_judged": sum(row["variant"] is None for row in rows),
    }
