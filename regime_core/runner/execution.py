"""Executing one run: its notebook through papermill in a child process, its files in the work
directory, the executed copy for the book, and what interrupted runs leave behind.

Layout under the work directory ``W`` (``REGIME_WORK_DIR``, default ``_build/regime``)::

    W/runs/<run_id>/stamp.json       key, its components, outputs: written after a success
    W/runs/<run_id>/timing.json      wall and CPU seconds of the last execution, its store's
                                     encode counts (benchmarks/bench_build.py; no key reads it)
    W/executed/<run_id>.ipynb        the executed notebook (papermill output)
    W/results/<run_id>/record.json   the record (this folder is the notebook's output_dir)
    W/variants/<run_id>/<hash>/      a variant (regime reproduce --set, or the notebook run
                                     by hand): record, figures, executed notebook; never stamped
    W/book/executed/<run_id>.ipynb   the executed notebook as the book shows it (parameters
                                     hidden, its source named), copied after each success
    W/runs/<run_id>/staging/         where a running notebook writes its record (its
    W/runs/<run_id>/executed.ipynb   output_dir) and papermill its notebook; a success commits
                                     them in one step under the records' lock (commit_run)

Nothing is written outside ``W``: ``regime book --work W`` stages ``W/book/executed`` into the
book's ``book/executed`` when it builds (:func:`regime_core.book.build.stage_executed`), so two
work directories never share a page. Notebooks run in their own directory with
``REGIME_WORK_DIR`` set to the absolute work directory (:func:`run_papermill`).
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from regime_core import paths
from regime_core.encoders.store import ENCODE_LOG_VARIABLE
from regime_core.integrity import (
    fresh_directory,
    make_directory,
    read_bytes,
    remove_file,
    remove_stale_temporaries,
)
from regime_core.locks import LOCK_HELD_VARIABLE, lock_key, records_lock
from regime_core.runner.children import end_orphans, run_child
from regime_core.runner.declarations import OUTPUT_DIR_PARAMETER, Declarations, notebook_parameters
from regime_core.runner.records import atomic_write_text, hash_file, load_record
from regime_core.runner.stamps import executed_path, input_mismatches, stamp_path, write_stamp
from regime_core.strict_json import read_json_file

TIMING_FILENAME = "timing.json"
ENCODE_LOG_FILENAME = "encodes.jsonl"
#: a running notebook's output folder and executed notebook, in ``<work>/runs/<run_id>``
#: until :func:`commit_run`
STAGING_DIRNAME = "staging"
STAGED_NOTEBOOK = "executed.ipynb"

# papermill marks the cells it adds; they are not cells of the source notebook
_PAPERMILL_ADDED_TAGS = frozenset({"injected-parameters", "papermill-error-cell-tag"})


@dataclass
class RunResult:
    """What happened to one run."""

    run_id: str
    status: str  # ran, skipped, failed or blocked
    seconds: float = 0.0
    key: str = ""
    executed: Path | None = None
    record: Path | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run_id,
            "status": self.status,
            "seconds": round(self.seconds, 2),
            "key": self.key,
            "executed": str(self.executed) if self.executed else None,
            "record": str(self.record) if self.record else None,
            "error": self.error,
        }

    def line(self, name: str) -> str:
        """The progress line said when the run named ``name`` ends."""
        detail = f": {self.error}" if self.error else ""
        return f"      {name}: {self.status} in {self.seconds:.1f} s{detail}"


def describe_failure(executed: Path, source: Path) -> str | None:
    """The failing cell of a papermill output notebook and its error; the cell's index (from
    0) counts the cells of the *source* notebook, not those papermill added."""
    if not executed.is_file():
        return None
    try:
        cells = read_json_file(executed).get("cells", [])
    except ValueError:
        return None
    index = -1
    for cell in cells:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & _PAPERMILL_ADDED_TAGS:
            continue
        index += 1
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                source_text = cell.get("source", "")
                if isinstance(source_text, list):
                    source_text = "".join(source_text)
                first_line = next((ln for ln in source_text.splitlines() if ln.strip()), "")
                return (
                    f"notebook {source}, cell {index} ({first_line.strip()[:60]!r}): "
                    f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                )
    return None


def failure_message(executed: Path, notebook_name: str, returncode: int, stderr: str) -> str:
    """Why papermill failed: the failing cell and its error (:func:`describe_failure`), else
    its exit code and the last lines it wrote on stderr."""
    error = describe_failure(executed, Path(notebook_name))
    if error is None:
        tail = "\n".join(stderr.strip().splitlines()[-5:])
        error = f"notebook {notebook_name}: papermill exited {returncode}: {tail}"
    return error


def clean_interrupted(decl: Declarations, work: Path, say: Callable[[str], None]) -> None:
    """End papermill children a killed runner left behind; delete dead writers' temporaries."""
    variants = paths.variants_dir(work)  # regime reproduce --set runs there
    pid_files = [*(work / "runs").glob("*/child.pid"), *variants.glob("*/*/child.pid")]
    end_orphans(sorted(pid_files), work, say)
    directories = [work / "executed", paths.book_executed_dir(work), paths.results_dir(work)]
    directories += [p for p in (work / "runs").glob("*") if p.is_dir()]
    directories += [p for p in (work / "runs").glob(f"*/{STAGING_DIRNAME}") if p.is_dir()]
    directories += [p for p in paths.results_dir(work).glob("*") if p.is_dir()]
    directories += [p for p in variants.glob("*/*") if p.is_dir()]
    for directory in directories:
        for removed in remove_stale_temporaries(directory):
            say(f"removed {removed}, left by an interrupted run")


def existing_file(path: Path) -> Path | None:
    return path if path.is_file() else None


def relative_name(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def hide_injected_parameters(notebook: dict[str, Any]) -> None:
    """Tag papermill's injected-parameters cell ``remove-cell``: the book shows results, and the
    cell holds this machine's paths (``work_dir``, ``output_dir``). The record keeps the values.

    >>> nb = {"cells": [{"metadata": {"tags": ["injected-parameters"]}}, {"metadata": {}}]}
    >>> hide_injected_parameters(nb)
    >>> [c["metadata"].get("tags") for c in nb["cells"]]
    [['injected-parameters', 'remove-cell'], None]
    """
    for cell in notebook.get("cells", []):
        tags = cell.setdefault("metadata", {}).get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell["metadata"]["tags"] = [*tags, "remove-cell"]


def without_machine_paths(value: Any, roots: Sequence[tuple[str, Path]]) -> Any:
    """``value`` (a notebook, or any part of one) with every absolute path under a folder of
    ``roots`` (``(placeholder, folder)`` pairs) written from its placeholder instead, the
    deepest folder first; pure. The book's download of an executed notebook then names no
    folder of the machine that built it.

    >>> without_machine_paths({"a": ["/m/w/runs/x", "/m/wide"]}, [("<work>", Path("/m/w"))])
    {'a': ['<work>/runs/x', '/m/wide']}
    """
    ordered = sorted(roots, key=lambda root: len(str(root[1])), reverse=True)
    patterns = [  # a folder's name ends where no letter, digit, dot or hyphen follows
        (re.compile(re.escape(str(folder)) + r"(?![\w.-])"), placeholder)
        for placeholder, folder in ordered
        if len(folder.parts) > 1
    ]

    def scrub(item: Any) -> Any:
        if isinstance(item, str):
            for pattern, placeholder in patterns:
                item = pattern.sub(placeholder, item)
            return item
        if isinstance(item, list):
            return [scrub(x) for x in item]
        if isinstance(item, dict):
            return {key: scrub(x) for key, x in item.items()}
        return item

    return scrub(value)


def machine_roots(decl: Declarations, work: Path) -> list[tuple[str, Path]]:
    """The folders of this machine an executed notebook may name, each with the placeholder
    that replaces it in the book's copy: the work directory, the data directory, the
    repository, the Python installation and the home directory, each as written and resolved."""
    named = (
        ("<work>", work),
        ("<data>", paths.data_dir()),
        ("<repository>", decl.root),
        ("<python>", Path(sys.prefix)),
        ("<python>", Path(sys.base_prefix)),
        ("~", Path.home()),
    )
    found = {(p, form) for p, folder in named for form in (folder.absolute(), folder.resolve())}
    return sorted(found)


def copy_to_book(decl: Declarations, run_id: str, work: Path) -> None:
    """Copy the executed notebook to ``<work>/book/executed`` for the book, noting its source,
    with every path of this machine replaced by a placeholder (:func:`without_machine_paths`).

    ``metadata.regime.source`` (relative to the declarations' directory) lets the book's launch
    buttons open the source notebook, since the executed copy is not in git;
    ``metadata.regime.executed_sha256`` is the executed notebook's hash, which ``regime book``
    checks against the run's stamp before it renders the page.
    """
    executed = executed_path(work, run_id)
    notebook = read_json_file(executed)
    source = relative_name(decl.runs[run_id].notebook, decl.root)
    notebook.setdefault("metadata", {})["regime"] = {
        "run_id": run_id,
        "source": source,
        "executed_sha256": hash_file(executed),
    }
    hide_injected_parameters(notebook)
    notebook = without_machine_paths(notebook, machine_roots(decl, work))
    target = paths.book_executed_dir(work) / f"{run_id}.ipynb"
    atomic_write_text(target, json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def _encode_lines(file: Path) -> tuple[list[dict[str, Any]], int]:
    """The store calls ``file`` logs, and how many of its lines are not JSON (a kernel killed
    mid-write): counted, not raised, since profiling must never fail a run."""
    try:
        raw = read_bytes(file)  # without blocking: a FIFO in its place is refused, not waited on
    except (FileNotFoundError, ValueError):
        return [], 0
    calls, unreadable = [], 0
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            calls.append(json.loads(line))
        except json.JSONDecodeError:
            unreadable += 1
    return calls, unreadable


def write_timing(
    runs_dir: Path, run_id: str, seconds: float, returncode: int, usage: Mapping[str, float]
) -> None:
    """``runs/<run_id>/timing.json``: the execution's wall seconds, the child's CPU seconds
    (user, system; papermill with its kernel) and the store calls the notebook made (folded in
    from ``encodes.jsonl``, which the kernel appends to). Profiling only: no key or record reads
    it."""
    encode_log = runs_dir / ENCODE_LOG_FILENAME
    encodes, unreadable = _encode_lines(encode_log)
    timing = {
        "run": run_id,
        "returncode": returncode,
        "wall_seconds": round(seconds, 3),
        "user_seconds": round(usage.get("user_seconds", 0.0), 3),
        "system_seconds": round(usage.get("system_seconds", 0.0), 3),
        "encodes": encodes,
        "unreadable_encode_lines": unreadable,
    }
    atomic_write_text(runs_dir / TIMING_FILENAME, json.dumps(timing, indent=1) + "\n")
    remove_file(encode_log)


def run_papermill(
    notebook: Path,
    executed: Path,
    parameters: Mapping[str, Any],
    *,
    work: Path,
    kernel_name: str,
    pid_file: Path,
    environment: Mapping[str, str] | None = None,
    usage: dict[str, float] | None = None,
) -> tuple[int, str]:
    """Execute ``notebook`` with ``parameters`` into ``executed`` through papermill in a child
    process (:func:`~regime_core.runner.children.run_child`,
    :mod:`~regime_core.runner.papermill_child`), in the notebook's directory, with
    ``REGIME_WORK_DIR`` the work directory and the work directory's lock held for it; ``(exit
    code, stderr)``. Its parameters file and its kernel's connection file and sockets lie in a
    private temporary folder of this run, deleted after it; its pid file is ``pid_file`` (where
    :func:`clean_interrupted` looks)."""
    env = {
        **os.environ,
        "REGIME_WORK_DIR": str(work),
        "MPLBACKEND": "Agg",
        "PYTHONHASHSEED": "0",
        LOCK_HELD_VARIABLE: lock_key(work),  # the notebook works under this run's lock
        **dict(environment or {}),
    }
    # in the system's temporary folder, not the work directory: a socket's path has at most
    # 107 bytes
    with tempfile.TemporaryDirectory(prefix="regime-run-") as folder:
        private = Path(folder)
        params_file = private / "parameters.yml"
        params_file.write_text(yaml.safe_dump(dict(parameters)), encoding="utf-8")
        command = [notebook, executed, params_file, kernel_name, private]
        return run_child([str(part) for part in command], env=env, pid_file=pid_file, usage=usage)


def execute_run(
    decl: Declarations,
    run_id: str,
    profile: str,
    key_info: Mapping[str, Any],
    work: Path,
    kernel_name: str,
    stop: threading.Event,
    environment: Mapping[str, str] | None = None,
) -> RunResult:
    """Execute one run's notebook in a child (``environment`` added to its variables: the
    thread counts :mod:`regime_core.runner.scheduling` sets) and stamp it unless it failed or
    ``stop`` was set meanwhile."""
    spec = decl.runs[run_id]
    started = time.perf_counter()
    # the run writes into its staging folder; the last committed outputs stay readable (and
    # stamped) until :func:`commit_run` replaces them at once
    runs_dir = stamp_path(work, run_id).parent
    out_dir, executed = runs_dir / STAGING_DIRNAME, runs_dir / STAGED_NOTEBOOK
    make_directory(runs_dir, inside=work)
    fresh_directory(out_dir, inside=work)
    remove_file(executed)

    declared = set(notebook_parameters(spec.notebook))
    parameters = {**spec.parameters_for(profile), OUTPUT_DIR_PARAMETER: str(out_dir)}
    injected = {"work_dir": str(work), "profile": profile}
    parameters.update({k: v for k, v in injected.items() if k in declared})
    encode_log = runs_dir / ENCODE_LOG_FILENAME
    remove_file(encode_log)
    remove_file(runs_dir / TIMING_FILENAME)
    usage: dict[str, float] = {}
    returncode, stderr = run_papermill(
        spec.notebook,
        executed,
        parameters,
        work=work,
        kernel_name=kernel_name,
        pid_file=runs_dir / "child.pid",
        environment={**dict(environment or {}), ENCODE_LOG_VARIABLE: str(encode_log)},
        usage=usage,
    )
    seconds = time.perf_counter() - started
    write_timing(runs_dir, run_id, seconds, returncode, usage)
    result = functools.partial(RunResult, run_id=run_id, key=str(key_info["key"]), seconds=seconds)
    notebook_name = relative_name(spec.notebook, decl.root)
    if stop.is_set():  # interrupted: whatever it left is unfinished, staged, never committed
        return result(status="failed", error="interrupted")
    problem = None
    if returncode != 0:
        problem = failure_message(executed, notebook_name, returncode, stderr)
    elif (out_dir / "record.json").is_file():
        try:
            loaded = load_record(out_dir / "record.json")
        except ValueError as err:
            problem = f"bad record: {err}"
        else:
            mismatched = input_mismatches(loaded.get("inputs"), key_info["components"])
            if mismatched:
                problem = (
                    f"its record's inputs.{mismatched[0]} is not the one the run was keyed on "
                    "(the prepared data changed while it ran); run it again"
                )
    final = executed_path(work, run_id)
    with records_lock(work, what=f"regime reproduce: committing {run_id}"):
        if problem is not None:
            withdraw_run(run_id, work, failed=executed)
            return result(status="failed", executed=existing_file(final), error=problem)
        if stop.is_set():
            return result(status="failed", error="interrupted")
        commit_run(decl, run_id, work, key_info, seconds=seconds)
    record = existing_file(paths.results_dir(work) / run_id / "record.json")
    return result(status="ran", executed=final, record=record)


def withdraw_run(run_id: str, work: Path, *, failed: Path) -> None:
    """A failed run's end (under the records' lock): its previous outputs are withdrawn, so
    nothing looks current, and its failed notebook takes the executed notebook's place (its
    traceback shows where it stopped)."""
    remove_file(stamp_path(work, run_id))
    remove_file(paths.book_executed_dir(work) / f"{run_id}.ipynb")
    remove_directory(paths.results_dir(work) / run_id, inside=work)
    final = executed_path(work, run_id)
    remove_file(final)
    if failed.is_file() and not failed.is_symlink():
        make_directory(final.parent, inside=work)
        os.replace(failed, final)
    remove_directory(failed.parent / STAGING_DIRNAME, inside=work)


def remove_directory(path: Path, *, inside: Path) -> None:
    """Remove the directory ``path`` and what it holds, under the writers' rule
    (:func:`regime_core.integrity.fresh_directory`: a link or special file there is refused,
    a failed removal raised, never swallowed)."""
    if os.path.lexists(path):
        fresh_directory(path, inside=inside).rmdir()


def commit_run(
    decl: Declarations, run_id: str, work: Path, key_info: Mapping[str, Any], *, seconds: float
) -> None:
    """Replace the run's committed outputs with its staged ones, at once (the caller holds the
    records' lock): its record folder, its executed notebook, its book page, then its stamp."""
    runs_dir = stamp_path(work, run_id).parent
    remove_file(stamp_path(work, run_id))
    target = paths.results_dir(work) / run_id
    # an empty directory in its place: renaming the staged one over it is one step
    fresh_directory(target, inside=work)
    os.replace(runs_dir / STAGING_DIRNAME, target)
    final = executed_path(work, run_id)
    make_directory(final.parent, inside=work)
    os.replace(runs_dir / STAGED_NOTEBOOK, final)
    copy_to_book(decl, run_id, work)
    write_stamp(work, run_id, key_info, seconds=seconds, upstream=decl.runs[run_id].depends_on)
