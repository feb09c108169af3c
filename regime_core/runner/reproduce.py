"""The reproduce runner: executes the papermill runs declared in ``reproduce.yml`` in dependency
order (:mod:`regime_core.runner.declarations`), skipping those whose inputs are unchanged.

Each run executes one parameterised notebook with the parameters of a *profile* (``quick``,
``default`` or ``full``) and writes a results record. A run is skipped when nothing it depends
on has changed; its *key* is a SHA-256 over

* the notebook's code cells (markdown edits do not rerun anything),
* its resolved parameters and the profile name,
* the prepared-data manifest ``<work>/prepared/manifest.json`` (``"absent"`` if there is none),
* the source files of the ``regime_core`` package,
* the keys of the runs it depends on (so a change upstream reruns everything downstream).

Layout under the work directory ``W`` (``REGIME_WORK_DIR``, default ``_build/regime``)::

    W/runs/<run_id>/stamp.json       key, its components, seconds: written after a success
    W/executed/<run_id>.ipynb        the executed notebook (papermill output)
    W/results/<run_id>/record.json   the record (this folder is the notebook's output_dir)

and each successful run is copied to ``<book_executed_dir>/<run_id>.ipynb`` (``book/executed``,
gitignored), which is where ``_toc.yml`` points. Notebooks run in their own directory with
``REGIME_WORK_DIR`` set to the absolute work directory, through papermill's command line in a
child process (one kernel per run, ``--jobs`` runs at a time).

Interrupted runs leave nothing behind: papermill runs in its own process group that dies with
the runner (:mod:`regime_core.runner.children`); its pid is kept in
``W/runs/<run_id>/child.pid`` so the next start ends any group still alive, and deletes the
temporaries of dead writers. One ``reproduce`` per work directory runs at a time (a lock in
``W/runs``); a second one waits for it.
"""

from __future__ import annotations

import concurrent.futures as futures
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from regime_core import paths
from regime_core.integrity import directory_lock, remove_stale_temporaries
from regime_core.runner.children import end_orphans, kill_children, run_child
from regime_core.runner.declarations import (
    DEFAULT_BOOK_EXECUTED_DIR,
    DEFAULT_DECLARATIONS,
    DEFAULT_PROFILE,
    OPTIONAL_INJECTED_PARAMETERS,
    OUTPUT_DIR_PARAMETER,
    PROFILES,
    Declarations,
    RunSpec,
    load_declarations,
    notebook_parameters,
    topological_order,
    with_upstream,
)
from regime_core.runner.records import atomic_write_text, canonical_json, hash_file, load_record

__all__ = [
    "DEFAULT_BOOK_EXECUTED_DIR",
    "DEFAULT_DECLARATIONS",
    "DEFAULT_PROFILE",
    "KERNEL_NAME",
    "OPTIONAL_INJECTED_PARAMETERS",
    "OUTPUT_DIR_PARAMETER",
    "PROFILES",
    "STATUSES",
    "Declarations",
    "ReproduceReport",
    "RunResult",
    "RunSpec",
    "describe_failure",
    "load_declarations",
    "manifest_hash",
    "notebook_code_hash",
    "notebook_parameters",
    "package_source_hash",
    "reproduce",
    "run_keys",
    "topological_order",
    "with_upstream",
]

KERNEL_NAME = "python3"  # the venv's own ipykernel (papermill runs it from the venv)
STATUSES: tuple[str, ...] = ("ran", "skipped", "failed", "blocked")
_PACKAGE_DIR = Path(__file__).resolve().parent.parent
# papermill marks the cells it adds; they are not cells of the source notebook
_PAPERMILL_ADDED_TAGS = frozenset({"injected-parameters", "papermill-error-cell-tag"})


# --- keys ----------------------------------------------------------------------------------------


def notebook_code_hash(notebook: Path) -> str:
    """SHA-256 over the sources of the notebook's code cells (markdown and outputs ignored)."""
    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    sources = [
        "".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source", ""))
        for c in cells
        if c.get("cell_type") == "code"
    ]
    return hashlib.sha256(canonical_json(sources).encode("utf-8")).hexdigest()


def package_source_hash(package_dir: Path = _PACKAGE_DIR) -> str:
    """SHA-256 over every ``*.py`` file of the package (relative path and bytes, sorted)."""
    digest = hashlib.sha256()
    for file in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in file.parts:
            continue
        digest.update(file.relative_to(package_dir).as_posix().encode("utf-8") + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


def manifest_hash(work: Path) -> str:
    """Hash of ``<work>/prepared/manifest.json``, or ``"absent"`` before data preparation."""
    manifest = work / "prepared" / "manifest.json"
    return hash_file(manifest) if manifest.is_file() else "absent"


def run_keys(decl: Declarations, profile: str, work: Path) -> dict[str, dict[str, Any]]:
    """Each run's key and the components it was computed from, in dependency order."""
    deps = {rid: spec.depends_on for rid, spec in decl.runs.items()}
    shared = {"manifest": manifest_hash(work), "package": package_source_hash()}
    keys: dict[str, dict[str, Any]] = {}
    for run_id in topological_order(deps, source=str(decl.path)):
        spec = decl.runs[run_id]
        components = {
            "notebook": notebook_code_hash(spec.notebook),
            "parameters": spec.parameters_for(profile),
            "profile": profile,
            **shared,
            "upstream": {dep: keys[dep]["key"] for dep in sorted(spec.depends_on)},
        }
        key = hashlib.sha256(canonical_json(components).encode("utf-8")).hexdigest()
        keys[run_id] = {"key": key, "components": components}
    return keys


# --- results -------------------------------------------------------------------------------------


@dataclass
class RunResult:
    """What happened to one run."""

    run_id: str
    status: str  # one of STATUSES
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


@dataclass
class ReproduceReport:
    """The outcome of :func:`reproduce`: one :class:`RunResult` per selected run."""

    profile: str
    work: Path
    results: list[RunResult]

    @property
    def ok(self) -> bool:
        return all(r.status in ("ran", "skipped") for r in self.results)

    def by_id(self) -> dict[str, RunResult]:
        return {r.run_id: r for r in self.results}

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "work": str(self.work),
            "ok": self.ok,
            "runs": [r.to_dict() for r in self.results],
        }

    def table(self) -> str:
        """A plain-text summary: run, status, seconds; then the errors."""
        width = max([len("run"), *(len(r.run_id) for r in self.results)])
        lines = [f"{'run':<{width}}  {'status':<8}  {'seconds':>8}"]
        lines += [f"{r.run_id:<{width}}  {r.status:<8}  {r.seconds:>8.1f}" for r in self.results]
        lines += [f"\n{r.run_id}: {r.error}" for r in self.results if r.error]
        return "\n".join(lines)


def describe_failure(executed: Path, source: Path) -> str | None:
    """Locate the failing cell in a papermill output notebook: source cell index and the error.

    The index counts the cells of the *source* notebook (papermill's injected-parameters and
    error-banner cells are skipped), starting at 0.
    """
    if not executed.is_file():
        return None
    try:
        cells = json.loads(executed.read_text(encoding="utf-8")).get("cells", [])
    except json.JSONDecodeError:
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


# --- running -------------------------------------------------------------------------------------


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def reproduce(
    declarations: Declarations | Path | str | None = None,
    *,
    profile: str = DEFAULT_PROFILE,
    jobs: int = 1,
    only: Sequence[str] = (),
    force: bool = False,
    work: Path | str | None = None,
    kernel_name: str = KERNEL_NAME,
    progress: Callable[[str], None] | None = _stderr,
) -> ReproduceReport:
    """Execute the declared runs in dependency order, skipping those whose key is unchanged.

    ``only`` restricts the runs to these ids *and the runs they depend on* (which are skipped
    when up to date); ``force`` reruns the selected runs (``only``, or all) even when up to date.
    Up to ``jobs`` independent runs execute at once. A run whose upstream failed is ``blocked``.
    """
    decl = (
        declarations if isinstance(declarations, Declarations) else load_declarations(declarations)
    )
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    unknown = [r for r in only if r not in decl.runs]
    if unknown:
        raise ValueError(
            f"unknown run ids {unknown}; {decl.path.name} declares {', '.join(decl.runs) or 'none'}"
        )
    work_root = paths.work_dir(work).resolve()
    say = progress or (lambda _message: None)
    with directory_lock(
        work_root / "runs",
        what="regime reproduce",
        on_wait=lambda: say(f"waiting for another regime reproduce on {work_root} to finish"),
    ):
        _clean_interrupted(decl, work_root, say)
        try:
            return _reproduce_locked(decl, profile, jobs, only, force, work_root, kernel_name, say)
        except BaseException:
            kill_children()  # Ctrl-C or SIGTERM: no papermill outlives its runner
            raise


def _reproduce_locked(
    decl: Declarations,
    profile: str,
    jobs: int,
    only: Sequence[str],
    force: bool,
    work_root: Path,
    kernel_name: str,
    say: Callable[[str], None],
) -> ReproduceReport:
    deps = {rid: spec.depends_on for rid, spec in decl.runs.items()}
    selected = with_upstream(deps, only) if only else set(decl.runs)
    forced = set(only or decl.runs) if force else set()
    keys = run_keys(decl, profile, work_root)
    order = [rid for rid in topological_order(deps, source=str(decl.path)) if rid in selected]

    results: dict[str, RunResult] = {}
    pending = list(order)
    running: dict[futures.Future[RunResult], str] = {}
    total = len(order)
    with futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        while pending or running:
            for run_id in list(pending):
                if len(running) >= jobs:
                    break
                upstream = [results.get(d) for d in decl.runs[run_id].depends_on]
                if any(u is None for u in upstream):
                    continue  # an upstream run is still executing
                pending.remove(run_id)
                number = f"[{total - len(pending)}/{total}]"
                bad = [
                    u.run_id
                    for u in upstream
                    if u is not None and u.status in ("failed", "blocked")
                ]
                if bad:
                    results[run_id] = RunResult(
                        run_id, "blocked", key=keys[run_id]["key"], error=f"upstream {bad} failed"
                    )
                    say(f"{number} {run_id}: blocked (upstream {', '.join(bad)} failed)")
                    continue
                key = keys[run_id]["key"]
                damage = _damaged_output(run_id, work_root)
                if damage is not None:
                    say(f"{number} {run_id}: {damage}; running it again")
                if (
                    run_id not in forced
                    and damage is None
                    and _up_to_date(decl, run_id, key, work_root)
                ):
                    _copy_to_book(decl, run_id, work_root)
                    results[run_id] = RunResult(
                        run_id,
                        "skipped",
                        key=key,
                        executed=_executed_path(work_root, run_id),
                        record=_existing(_record_file(work_root, run_id)),
                    )
                    say(f"{number} {run_id}: up to date, skipped")
                    continue
                say(
                    f"{number} {run_id}: running {_relative(decl.runs[run_id].notebook, decl.root)}"
                )
                future = pool.submit(
                    _execute, decl, run_id, profile, keys[run_id], work_root, kernel_name
                )
                running[future] = run_id
            if running:
                done, _ = futures.wait(running, return_when=futures.FIRST_COMPLETED)
                for future in done:
                    run_id = running.pop(future)
                    result = future.result()
                    results[run_id] = result
                    detail = f": {result.error}" if result.error else ""
                    say(f"      {run_id}: {result.status} in {result.seconds:.1f} s{detail}")
    return ReproduceReport(profile, work_root, [results[r] for r in order])


# --- the work directory -------------------------------------------------------------------------


def _clean_interrupted(decl: Declarations, work: Path, say: Callable[[str], None]) -> None:
    """End papermill children a killed runner left behind; delete dead writers' temporaries."""
    end_orphans(sorted((work / "runs").glob("*/child.pid")), work, say)
    directories = [work / "executed", decl.book_executed_dir, paths.results_dir(work)]
    directories += [p for p in (work / "runs").glob("*") if p.is_dir()]
    directories += [p for p in paths.results_dir(work).glob("*") if p.is_dir()]
    for directory in directories:
        for removed in remove_stale_temporaries(directory):
            say(f"removed {removed}, left by an interrupted run")


def _child_pid_path(work: Path, run_id: str) -> Path:
    return work / "runs" / run_id / "child.pid"


def _executed_path(work: Path, run_id: str) -> Path:
    return work / "executed" / f"{run_id}.ipynb"


def _record_file(work: Path, run_id: str) -> Path:
    return paths.results_dir(work) / run_id / "record.json"


def _stamp_path(work: Path, run_id: str) -> Path:
    return work / "runs" / run_id / "stamp.json"


def _existing(path: Path) -> Path | None:
    return path if path.is_file() else None


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _output_hashes(work: Path, run_id: str) -> dict[str, str | None]:
    """sha256 of the executed notebook and the record (None when absent), for the stamp."""
    executed, record = _executed_path(work, run_id), _record_file(work, run_id)
    return {
        "executed": hash_file(executed) if executed.is_file() else None,
        "record": hash_file(record) if record.is_file() else None,
    }


def _damaged_output(run_id: str, work: Path) -> str | None:
    """Why a stamped run's outputs cannot be trusted (changed since the stamp), or None."""
    stamp_file = _stamp_path(work, run_id)
    try:
        stamp = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no (readable) stamp: the run is out of date anyway
    recorded = stamp.get("outputs") if isinstance(stamp, dict) else None
    if not isinstance(recorded, dict):
        return None
    current = _output_hashes(work, run_id)
    changed = [name for name, digest in current.items() if recorded.get(name) != digest]
    if not changed:
        return None
    return f"its {' and '.join(changed)} changed since it was written (damaged or edited)"


def _up_to_date(decl: Declarations, run_id: str, key: str, work: Path) -> bool:
    stamp_file = _stamp_path(work, run_id)
    if not stamp_file.is_file():
        return False
    try:
        stamp = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a damaged stamp means: run again
        return False
    if not isinstance(stamp, dict) or "outputs" not in stamp:
        return False
    if stamp.get("key") != key or not _executed_path(work, run_id).is_file():
        return False
    return not stamp.get("record") or _record_file(work, run_id).is_file()


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


def _copy_to_book(decl: Declarations, run_id: str, work: Path) -> None:
    """Copy the executed notebook where the book's toc expects it, noting its source.

    ``metadata.regime.source`` (relative to the declarations' directory) lets the book's launch
    buttons open the source notebook, since the executed copy is not in git.
    """
    notebook = json.loads(_executed_path(work, run_id).read_text(encoding="utf-8"))
    source = _relative(decl.runs[run_id].notebook, decl.root)
    notebook.setdefault("metadata", {})["regime"] = {"run_id": run_id, "source": source}
    hide_injected_parameters(notebook)
    target = decl.book_executed_dir / f"{run_id}.ipynb"
    atomic_write_text(target, json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")


def _execute(
    decl: Declarations,
    run_id: str,
    profile: str,
    key_info: Mapping[str, Any],
    work: Path,
    kernel_name: str,
) -> RunResult:
    spec = decl.runs[run_id]
    started = time.perf_counter()
    executed = _executed_path(work, run_id)
    out_dir = paths.results_dir(work) / run_id
    # a failed run must not leave the previous run's outputs looking current
    _stamp_path(work, run_id).unlink(missing_ok=True)
    (decl.book_executed_dir / f"{run_id}.ipynb").unlink(missing_ok=True)
    shutil.rmtree(out_dir, ignore_errors=True)
    executed.unlink(missing_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    executed.parent.mkdir(parents=True, exist_ok=True)

    declared = set(notebook_parameters(spec.notebook))
    parameters = {**spec.parameters_for(profile), OUTPUT_DIR_PARAMETER: str(out_dir)}
    injected = {"work_dir": str(work), "profile": profile}
    parameters.update({k: v for k, v in injected.items() if k in declared})
    env = {**os.environ, "REGIME_WORK_DIR": str(work), "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    # in the run's directory, named like every temporary, so an interrupted run's is cleaned up
    runs_dir = _stamp_path(work, run_id).parent
    runs_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", dir=runs_dir, prefix=f".parameters.yml.{os.getpid()}.", suffix=".tmp", delete=False
    ) as handle:
        yaml.safe_dump(parameters, handle)
        params_file = handle.name
    try:
        returncode, stderr = run_child(
            [
                str(spec.notebook), str(executed),
                "-f", params_file, "-k", kernel_name, "--cwd", str(spec.notebook.parent),
                "--no-progress-bar", "--log-level", "WARNING",
            ],
            env=env,
            pid_file=_child_pid_path(work, run_id),
        )  # fmt: skip
    finally:
        Path(params_file).unlink(missing_ok=True)
    seconds = time.perf_counter() - started
    base = {"run_id": run_id, "key": str(key_info["key"]), "seconds": seconds}
    notebook_name = _relative(spec.notebook, decl.root)
    if returncode != 0:
        error = describe_failure(executed, Path(notebook_name))
        if error is None:
            tail = "\n".join(stderr.strip().splitlines()[-5:])
            error = f"notebook {notebook_name}: papermill exited {returncode}: {tail}"
        return RunResult(status="failed", executed=_existing(executed), error=error, **base)
    record = _existing(out_dir / "record.json")
    if record is not None:
        try:
            load_record(record)
        except ValueError as err:
            return RunResult(status="failed", executed=executed, error=f"bad record: {err}", **base)
    _copy_to_book(decl, run_id, work)
    stamp = {
        "run_id": run_id,
        "key": key_info["key"],
        "components": key_info["components"],
        "record": record is not None,
        "outputs": _output_hashes(work, run_id),
        "seconds": round(seconds, 2),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    atomic_write_text(_stamp_path(work, run_id), json.dumps(stamp, indent=2) + "\n")
    return RunResult(status="ran", executed=executed, record=record, **base)
