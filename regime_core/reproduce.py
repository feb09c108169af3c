"""The reproduce runner: a small DAG of papermill runs declared in ``reproduce.yml``.

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
    W/results/<run_id>/record.json   the record (the notebook gets ``output_dir`` = this dir)

Interrupted runs leave nothing behind: papermill runs in its own process group, under a small
launcher that asks Linux to kill it when the runner dies (``PR_SET_PDEATHSIG``, which a SIGKILL
of the runner cannot skip); its pid is kept in ``W/runs/<run_id>/child.pid`` so the next start
ends any group still alive, and deletes the temporaries of dead writers. One ``reproduce`` per
work directory runs at a time (a lock in ``W/runs``); a second one waits for it.

and each successful run is copied to ``<book_executed_dir>/<run_id>.ipynb`` (``book/executed``,
gitignored), which is where ``_toc.yml`` points. Notebooks run in their own directory with
``REGIME_WORK_DIR`` set to the absolute work directory, through papermill's command line in a
child process (one kernel per run, ``--jobs`` runs at a time).

Declarations (``reproduce.yml``)::

    book_executed_dir: book/executed      # optional, relative to this file
    runs:
      t2_minilm:
        notebook: notebooks/03_t2_regime_decomposition.ipynb   # relative to this file
        parameters: {encoder: minilm}     # every profile
        profiles:                          # per-profile overrides (optional)
          quick: {max_examples: 200}
        depends_on: [data_regimes]         # optional
"""

from __future__ import annotations

import concurrent.futures as futures
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from regime_core import paths
from regime_core.integrity import directory_lock, pid_alive, remove_stale_temporaries
from regime_core.records import atomic_write_text, canonical_json, hash_file, load_record

#: ``paper`` is the paper's own setting (1,000-question subsets, corpus pools, its three encoders
#: by hub name): it needs GPUs and the hub (book page "Scale: the paper's setting").
PROFILES: tuple[str, ...] = ("quick", "default", "full", "paper")
DEFAULT_PROFILE = "default"
DEFAULT_DECLARATIONS = paths.REPO_ROOT / "reproduce.yml"
DEFAULT_BOOK_EXECUTED_DIR = "book/executed"
KERNEL_NAME = "python3"  # the venv's own ipykernel (papermill runs it from the venv)
#: parameters the runner injects; ``output_dir`` must be declared by every notebook
OUTPUT_DIR_PARAMETER = "output_dir"
OPTIONAL_INJECTED_PARAMETERS: tuple[str, ...] = ("work_dir", "profile")
STATUSES: tuple[str, ...] = ("ran", "skipped", "failed", "blocked")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_RUN_FIELDS = frozenset({"notebook", "parameters", "profiles", "depends_on", "description"})
_PACKAGE_DIR = Path(__file__).resolve().parent
# papermill marks the cells it adds; they are not cells of the source notebook
_PAPERMILL_ADDED_TAGS = frozenset({"injected-parameters", "papermill-error-cell-tag"})


# --- declarations --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSpec:
    """One declared run: a notebook, its parameters per profile, the runs it needs first."""

    run_id: str
    notebook: Path
    parameters: Mapping[str, Any] = field(default_factory=dict)
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()
    description: str = ""

    def parameters_for(self, profile: str) -> dict[str, Any]:
        """The common parameters overlaid with the profile's overrides."""
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
        return {**self.parameters, **self.profiles.get(profile, {})}


@dataclass(frozen=True)
class Declarations:
    """The parsed ``reproduce.yml``: runs by id (in file order) and where executed copies go."""

    path: Path
    runs: Mapping[str, RunSpec]
    book_executed_dir: Path

    @property
    def root(self) -> Path:
        return self.path.parent


def load_declarations(path: Path | str | None = None) -> Declarations:
    """Parse and validate ``reproduce.yml``.

    Raises ``ValueError`` naming the file, the run and the field for: unknown fields or profiles,
    a notebook that does not exist or has no cell tagged ``parameters``, a parameter the notebook
    does not declare, a missing ``output_dir`` parameter, an unknown dependency or a cycle.
    """
    file = Path(path) if path is not None else DEFAULT_DECLARATIONS
    if not file.is_file():
        raise FileNotFoundError(f"no run declarations at {file}")
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"{file}: not valid YAML ({err})") from err
    if not isinstance(raw, dict) or not isinstance(raw.get("runs", {}), dict):
        raise ValueError(f"{file}: expected a mapping with a 'runs' mapping")
    unknown_top = set(raw) - {"runs", "book_executed_dir"}
    if unknown_top:
        raise ValueError(f"{file}: unknown top-level fields {sorted(unknown_top)}")
    root = file.resolve().parent
    runs: dict[str, RunSpec] = {}
    for run_id, body in (raw.get("runs") or {}).items():
        runs[str(run_id)] = _parse_run(file, root, str(run_id), body)
    topological_order({rid: spec.depends_on for rid, spec in runs.items()}, source=str(file))
    executed_dir = raw.get("book_executed_dir", DEFAULT_BOOK_EXECUTED_DIR)
    if not isinstance(executed_dir, str) or not executed_dir:
        raise ValueError(f"{file}: book_executed_dir must be a relative path string")
    return Declarations(path=file.resolve(), runs=runs, book_executed_dir=root / executed_dir)


def _parse_run(file: Path, root: Path, run_id: str, body: Any) -> RunSpec:
    where = f"{file}: run {run_id!r}"
    if not _RUN_ID.match(run_id):
        raise ValueError(f"{where}: run ids use letters, digits, '_' and '-' only")
    if not isinstance(body, dict):
        raise ValueError(f"{where}: expected a mapping with at least 'notebook'")
    unknown = set(body) - _RUN_FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}; known: {sorted(_RUN_FIELDS)}")
    if not isinstance(body.get("notebook"), str):
        raise ValueError(f"{where}: 'notebook' (a path relative to {file.name}) is required")
    notebook = (root / body["notebook"]).resolve()
    if not notebook.is_file():
        raise ValueError(f"{where}: notebook {body['notebook']} does not exist (at {notebook})")
    parameters = _mapping(body.get("parameters", {}), f"{where}: 'parameters'")
    profiles_raw = _mapping(body.get("profiles", {}), f"{where}: 'profiles'")
    bad_profiles = set(profiles_raw) - set(PROFILES)
    if bad_profiles:
        raise ValueError(f"{where}: unknown profiles {sorted(bad_profiles)}; known: {PROFILES}")
    profiles = {
        name: _mapping(value, f"{where}: profile {name!r}") for name, value in profiles_raw.items()
    }
    depends = body.get("depends_on", [])
    if isinstance(depends, str):
        depends = [depends]
    if not isinstance(depends, list) or not all(isinstance(d, str) for d in depends):
        raise ValueError(f"{where}: 'depends_on' must be a list of run ids")
    declared = notebook_parameters(notebook)
    if OUTPUT_DIR_PARAMETER not in declared:
        raise ValueError(
            f"{where}: notebook {body['notebook']} must declare '{OUTPUT_DIR_PARAMETER}' in its "
            "parameters cell (the runner passes the record directory there)"
        )
    used = set(parameters).union(*(set(p) for p in profiles.values()))
    undeclared = sorted(used - set(declared))
    if undeclared:
        raise ValueError(
            f"{where}: parameters {undeclared} are not declared in the parameters cell of "
            f"{body['notebook']} (it declares {sorted(declared)})"
        )
    for name, value in {
        **parameters,
        **{k: v for p in profiles.values() for k, v in p.items()},
    }.items():
        try:
            canonical_json(value)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{where}: parameter {name!r} is not plain JSON data ({err})") from err
    return RunSpec(
        run_id=run_id,
        notebook=notebook,
        parameters=parameters,
        profiles=profiles,
        depends_on=tuple(depends),
        description=str(body.get("description", "")),
    )


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a mapping, got {type(value).__name__}")
    return {str(k): v for k, v in value.items()}


def notebook_parameters(notebook: Path) -> list[str]:
    """Names assigned in the notebook's cell tagged ``parameters`` (papermill's own parser)."""
    import papermill

    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    if not any("parameters" in c.get("metadata", {}).get("tags", []) for c in cells):
        raise ValueError(f"{notebook}: no cell is tagged 'parameters' (papermill needs one)")
    return list(papermill.inspect_notebook(str(notebook)))


# --- the DAG -------------------------------------------------------------------------------------


def topological_order(
    dependencies: Mapping[str, Sequence[str]], source: str = "reproduce.yml"
) -> list[str]:
    """Order run ids so that every run follows the runs it depends on (ties: declaration order).

    Raises ``ValueError`` for a dependency on an undeclared run or for a cycle (naming it).

    >>> topological_order({"b": ["a"], "a": [], "c": ["a", "b"]})
    ['a', 'b', 'c']
    """
    for run_id, deps in dependencies.items():
        for dep in deps:
            if dep not in dependencies:
                raise ValueError(
                    f"{source}: run {run_id!r} depends on {dep!r}, which is not declared "
                    f"(declared: {', '.join(dependencies) or 'none'})"
                )
    order: list[str] = []
    state: dict[str, str] = {}  # "visiting" | "done"

    def visit(run_id: str, trail: list[str]) -> None:
        if state.get(run_id) == "done":
            return
        if state.get(run_id) == "visiting":
            cycle = [*trail[trail.index(run_id) :], run_id]
            raise ValueError(f"{source}: dependency cycle {' -> '.join(cycle)}")
        state[run_id] = "visiting"
        for dep in dependencies[run_id]:
            visit(dep, [*trail, run_id])
        state[run_id] = "done"
        order.append(run_id)

    for run_id in dependencies:
        visit(run_id, [])
    return order


def with_upstream(dependencies: Mapping[str, Sequence[str]], selected: Sequence[str]) -> set[str]:
    """The selected runs and every run they depend on, transitively."""
    keep: set[str] = set()
    stack = list(selected)
    while stack:
        run_id = stack.pop()
        if run_id not in keep:
            keep.add(run_id)
            stack.extend(dependencies[run_id])
    return keep


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
            _kill_children()  # Ctrl-C or SIGTERM: no papermill outlives its runner
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


# --- child processes -----------------------------------------------------------------------------

# Launcher run by the child's Python before it becomes papermill: PR_SET_PDEATHSIG (1) = SIGKILL,
# so the kernel kills papermill when the runner thread dies, even by SIGKILL; then exec. The
# ppid check closes the race where the runner died before the prctl call.
_LAUNCHER = (
    "import ctypes, os, sys\n"
    "if sys.platform.startswith('linux'):\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(137)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'papermill', *sys.argv[2:]])\n"
)
_CHILDREN: set[int] = set()
_CHILDREN_LOCK = threading.Lock()


def _child_pid_path(work: Path, run_id: str) -> Path:
    return work / "runs" / run_id / "child.pid"


def _kill_group(pid: int) -> None:
    # the child leads its own group (start_new_session)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _kill_children() -> None:
    with _CHILDREN_LOCK:
        pids = list(_CHILDREN)
    for pid in pids:
        _kill_group(pid)


def _is_our_papermill(pid: int, work: Path) -> bool:
    """Whether ``pid`` is still a papermill child of a runner on ``work`` (not a reused pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return pid_alive(pid) and not Path("/proc").is_dir()
    return b"papermill" in b" ".join(cmdline) and any(str(work).encode() in c for c in cmdline)


def _clean_interrupted(decl: Declarations, work: Path, say: Callable[[str], None]) -> None:
    """End papermill children a killed runner left behind; delete dead writers' temporaries."""
    for pid_file in sorted((work / "runs").glob("*/child.pid")):
        try:
            pid = int(pid_file.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            pid = 0
        if pid > 0 and pid_alive(pid) and _is_our_papermill(pid, work):
            say(f"ending papermill (pid {pid}) left running by an interrupted run")
            _kill_group(pid)
        pid_file.unlink(missing_ok=True)
    directories = [work / "executed", decl.book_executed_dir, paths.results_dir(work)]
    directories += [p for p in (work / "runs").glob("*") if p.is_dir()]
    directories += [p for p in paths.results_dir(work).glob("*") if p.is_dir()]
    for directory in directories:
        for removed in remove_stale_temporaries(directory):
            say(f"removed {removed}, left by an interrupted run")


def _run_child(
    command: Sequence[str], *, env: Mapping[str, str], pid_file: Path
) -> tuple[int, str]:
    """Run papermill's command line (the arguments after ``-m papermill``) in its own process
    group; ``(exit code, stderr)``. The group is killed if this thread is interrupted."""
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *command],
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    with _CHILDREN_LOCK:
        _CHILDREN.add(proc.pid)
    try:
        atomic_write_text(pid_file, f"{proc.pid}\n")
        _, stderr = proc.communicate()
    except BaseException:
        _kill_group(proc.pid)
        proc.wait()
        raise
    finally:
        with _CHILDREN_LOCK:
            _CHILDREN.discard(proc.pid)
        pid_file.unlink(missing_ok=True)
    return proc.returncode, stderr


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


def _copy_to_book(decl: Declarations, run_id: str, work: Path) -> None:
    """Copy the executed notebook where the book's toc expects it, noting its source.

    ``metadata.regime.source`` (relative to the declarations' directory) lets the book's launch
    buttons open the source notebook, since the executed copy is not in git.
    """
    notebook = json.loads(_executed_path(work, run_id).read_text(encoding="utf-8"))
    source = _relative(decl.runs[run_id].notebook, decl.root)
    notebook.setdefault("metadata", {})["regime"] = {"run_id": run_id, "source": source}
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
        returncode, stderr = _run_child(
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
