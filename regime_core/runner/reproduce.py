"""The reproduce runner: executes the papermill runs declared in ``reproduce.yml`` in dependency
order (:mod:`regime_core.runner.declarations`), skipping those whose inputs are unchanged.

Each run executes one parameterised notebook with the parameters of a *profile* and writes a
results record. A run is skipped when its key (:mod:`regime_core.runner.keys`) equals its stamp's
and the stamp still holds (:mod:`regime_core.runner.stamps`). :func:`plan` says what would run
and why, running nothing (``regime reproduce --plan``). Each run executes in a child process
(:mod:`regime_core.runner.execution`), ``--jobs`` runs at a time, each kernel's threads sized so
that they share the cores (:mod:`regime_core.runner.scheduling`).

The work directory's lock (:func:`regime_core.locks.directory_lock`) is held shared for the
whole of a reproduce, with the runs' lock exclusively (:func:`writing_lock`): no other reproduce,
``regime data prepare`` or ``regime embed`` runs on ``W`` meanwhile, but a reader does not wait.
Each run commits its outputs at once under the records' lock
(:func:`regime_core.locks.records_lock`, :mod:`regime_core.runner.execution`), so ``regime
verdicts`` and ``regime book`` read the last committed, stamped records while a reproduce runs.
Interrupted runs leave nothing trusted behind: on Ctrl-C or SIGTERM every running notebook's
processes are killed at once (:mod:`regime_core.runner.children`), no unfinished run is
stamped, and the interrupt propagates (``regime`` exits 130 or 143); the next start ends any
process a killed runner left and deletes the temporaries of dead writers.
"""

from __future__ import annotations

import concurrent.futures as futures
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core import paths
from regime_core.encoders.store import ENCODE_LOG_VARIABLE
from regime_core.locks import directory_lock, records_lock, runs_lock
from regime_core.runner.children import kill_children
from regime_core.runner.declarations import (
    DEFAULT_PROFILE,
    Declarations,
    check_profile,
    load_declarations,
    topological_order,
    with_upstream,
)
from regime_core.runner.execution import (
    ENCODE_LOG_FILENAME,
    RunResult,
    clean_interrupted,
    copy_to_book,
    execute_run,
    existing_file,
    relative_name,
    write_timing,
)
from regime_core.runner.keys import PACKAGE_DIR, changed_components, run_keys, summarise_changes
from regime_core.runner.prerequisites import prerequisites
from regime_core.runner.scheduling import (
    available_cores,
    default_jobs,
    independent_width,
    thread_environment,
    threads_per_job,
)
from regime_core.runner.stamps import executed_path, read_stamp, record_file, stamp_problems

KERNEL_NAME = "python3"  # the venv's own ipykernel (papermill runs it from the venv)
#: what :func:`plan` says of a run (it runs, it is current, or it reruns only if an upstream
#: run that reruns first writes a different record)
ACTIONS: tuple[str, ...] = ("run", "skip", "after upstream")
#: the directory under ``W/runs`` where the up-front encoding stage keeps its timing (a name no
#: run id can take: a run id starts with a letter or digit)
UP_FRONT_STAGE = "_encode_up_front"


# --- results -------------------------------------------------------------------------------------


@dataclass
class ReproduceReport:
    """The outcome of :func:`reproduce`: one :class:`RunResult` per selected run."""

    profile: str
    work: Path
    results: list[RunResult]

    @property
    def ok(self) -> bool:
        return all(r.status in ("ran", "skipped") for r in self.results)

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


@dataclass(frozen=True)
class PlannedRun:
    """What :func:`plan` says of one run: its action (:data:`ACTIONS`) and why."""

    run_id: str
    action: str
    reasons: tuple[str, ...]
    key: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run_id,
            "action": self.action,
            "reasons": list(self.reasons),
            "key": self.key,
        }


@dataclass(frozen=True)
class Plan:
    """What ``regime reproduce`` would do (:func:`plan`), in dependency order."""

    profile: str
    work: Path
    runs: tuple[PlannedRun, ...]
    #: what the profile needs before it can run (the paper's: GPUs, weights, data, hours)
    prerequisites: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "work": str(self.work),
            "prerequisites": list(self.prerequisites),
            "to_run": [r.run_id for r in self.runs if r.action == "run"],
            "runs": [r.to_dict() for r in self.runs],
        }

    def table(self) -> str:
        """The profile's prerequisites first (if any), then run, action and why, one line each."""
        lines = []
        if self.prerequisites:
            lines.append(f"profile {self.profile} needs, before it runs:")
            lines += [f"  - {line}" for line in self.prerequisites]
            lines.append("")
        width = max([len("run"), *(len(r.run_id) for r in self.runs)])
        lines.append(f"{'run':<{width}}  {'action':<14}  why")
        for r in self.runs:
            why = "; ".join(r.reasons) if r.reasons else "up to date"
            lines.append(f"{r.run_id:<{width}}  {r.action:<14}  {why}")
        return "\n".join(lines)


def profile_encoders(decl: Declarations, profile: str) -> dict[str, str]:
    """Every encoder the runs of ``profile`` name whose weights come from the hub (a preset of
    :data:`~regime_core.encoders.sentence_transformer.PRESETS`), with its model; the bundled
    MiniLM and TF-IDF need none."""
    from regime_core.encoders.sentence_transformer import PRESETS

    named: dict[str, str] = {}
    for spec in decl.runs.values():
        parameters = spec.parameters_for(profile)
        for key in ("encoders", "encoder"):
            value = parameters.get(key) or []
            for name in [value] if isinstance(value, str) else value:
                if name in PRESETS:
                    named[str(name)] = PRESETS[name].model
    return named


# --- deciding ------------------------------------------------------------------------------------


def stale_reasons(run_id: str, key_info: Mapping[str, Any], work: Path) -> list[str]:
    """Why a run must run again (empty: it is current): no stamp, a changed key (naming the
    components that changed), or a stamp that no longer holds."""
    stamp = read_stamp(work, run_id)
    if stamp is None:
        return ["no stamp: never run in this work directory, or its last run failed or stopped"]
    reasons: list[str] = []
    if stamp.get("key") != key_info["key"]:
        before = stamp.get("components")
        changed = changed_components(
            key_info["components"], before if isinstance(before, dict) else {}
        )
        reasons.append(f"changed: {', '.join(summarise_changes(changed)) or 'its key'}")
    return reasons + stamp_problems(work, run_id, stamp)


def _why_run(run_id: str, key_info: Mapping[str, Any], work: Path, forced: set[str]) -> list[str]:
    """Why a run executes (empty: it is skipped): ``--force``, then :func:`stale_reasons`."""
    return (["--force"] if run_id in forced else []) + stale_reasons(run_id, key_info, work)


def _selection(decl: Declarations, only: Sequence[str], force: bool) -> tuple[list[str], set[str]]:
    unknown = [r for r in only if r not in decl.runs]
    if unknown:
        raise ValueError(
            f"unknown run ids {unknown}; {decl.path.name} declares {', '.join(decl.runs) or 'none'}"
        )
    deps = {rid: spec.depends_on for rid, spec in decl.runs.items()}
    selected = with_upstream(deps, only) if only else set(decl.runs)
    forced = set(only or decl.runs) if force else set()
    order = [rid for rid in topological_order(deps, source=str(decl.path)) if rid in selected]
    return order, forced


def _load(declarations: Declarations | Path | str | None, profile: str) -> Declarations:
    decl = (
        declarations if isinstance(declarations, Declarations) else load_declarations(declarations)
    )
    check_profile(profile)
    return decl


def plan(
    declarations: Declarations | Path | str | None = None,
    *,
    profile: str = DEFAULT_PROFILE,
    only: Sequence[str] = (),
    force: bool = False,
    work: Path | str | None = None,
    package_dir: Path = PACKAGE_DIR,
) -> Plan:
    """What :func:`reproduce` with these arguments would run, and why; runs and writes nothing.
    ``package_dir``: the package whose modules the keys hash. A run downstream of one that
    reruns without a change of key is ``"after upstream"``: it reruns only if that run's new
    record differs."""
    decl = _load(declarations, profile)
    work_root = paths.work_dir(work).resolve()
    with directory_lock(work_root, what="regime reproduce --plan", shared=True):
        order, forced = _selection(decl, only, force)
        keys = run_keys(decl, profile, work_root, package_dir)
        actions: dict[str, str] = {}
        planned = []
        for run_id in order:
            reasons = _why_run(run_id, keys[run_id], work_root, forced)
            upstream_runs = [d for d in decl.runs[run_id].depends_on if actions.get(d) != "skip"]
            if reasons:
                action = "run"
            elif upstream_runs:
                action = "after upstream"
                reasons = [
                    f"reruns if the record of upstream run {d} changes" for d in upstream_runs
                ]
            else:
                action = "skip"
            actions[run_id] = action
            planned.append(PlannedRun(run_id, action, tuple(reasons), keys[run_id]["key"]))
    needs = prerequisites(profile, profile_encoders(decl, profile))
    return Plan(profile, work_root, tuple(planned), needs)


# --- running -------------------------------------------------------------------------------------


def to_stderr(message: str) -> None:
    """The default ``progress`` of a reproduce or its variants: each line to stderr at once."""
    print(message, file=sys.stderr, flush=True)


def _silent(_message: str) -> None:
    """``progress=None``: nothing is said (and no progress bar is drawn)."""


@contextmanager
def writing_lock(work_root: Path, what: str, say: Callable[[str], None]) -> Iterator[None]:
    """The locks of a command that writes runs (``what``): the work directory's, shared (a
    command that rewrites prepared data or the store waits for it, a reader does not), and the
    runs' lock, exclusive (:func:`regime_core.locks.runs_lock`: another writer of runs waits);
    says once that it waits when another regime command holds either."""

    def waiting() -> None:
        say(f"waiting for another regime command on {work_root} to finish")

    with (
        directory_lock(work_root, what=what, shared=True, on_wait=waiting),
        runs_lock(work_root, what=what, on_wait=waiting),
    ):
        yield


def reproduce(
    declarations: Declarations | Path | str | None = None,
    *,
    profile: str = DEFAULT_PROFILE,
    jobs: int | None = 1,
    only: Sequence[str] = (),
    force: bool = False,
    work: Path | str | None = None,
    kernel_name: str = KERNEL_NAME,
    progress: Callable[[str], None] | None = to_stderr,
    encode_first: bool = True,
) -> ReproduceReport:
    """Execute the declared runs in dependency order, skipping those that are current.

    With ``encode_first``, the texts the runs to execute encode densely are encoded first, one
    pass per encoder (:func:`regime_core.encoders.prefill.fill_for_runs`). ``only`` selects
    these ids *and the runs they depend on*; ``force`` reruns the selected runs even when up to
    date. Up to ``jobs`` independent runs execute at once (None:
    :func:`~regime_core.runner.scheduling.default_jobs`), each kernel with ``cores // jobs``
    threads; a run whose upstream failed is ``blocked``. An interrupt (SIGTERM too, under
    ``regime``) kills every running notebook, stamps none of them and propagates.
    """
    decl = _load(declarations, profile)
    order, forced = _selection(decl, only, force)
    cores = available_cores()
    if jobs is None:
        deps = {rid: spec.depends_on for rid, spec in decl.runs.items()}
        jobs = default_jobs(cores, independent_width(deps, order))
    work_root = paths.work_dir(work).resolve()
    say = progress or _silent
    with writing_lock(work_root, "regime reproduce", say):
        clean_interrupted(decl, work_root, say)
        runner = _Runner(decl, profile, jobs, forced, work_root, kernel_name, say)
        runner.environment = thread_environment(threads_per_job(cores, jobs), os.environ)
        if encode_first:
            runner.encode_up_front(order)
        return ReproduceReport(profile, work_root, runner.run(order))


class _Runner:
    """One reproduce: schedules the selected runs on a thread pool, in dependency order."""

    def __init__(
        self,
        decl: Declarations,
        profile: str,
        jobs: int,
        forced: set[str],
        work: Path,
        kernel_name: str,
        say: Callable[[str], None],
    ) -> None:
        self.decl, self.profile, self.jobs, self.forced = decl, profile, jobs, forced
        self.work, self.kernel_name, self.say = work, kernel_name, say
        self.keys = run_keys(decl, profile, work)
        self.stop = threading.Event()  # set on an interrupt: no worker stamps after it
        self.environment: dict[str, str] = {}  # added to each child's (its thread counts)

    def to_execute(self, order: list[str]) -> list[str]:
        """The runs of ``order`` that may execute: forced, stale, or downstream of one that is."""
        chosen: list[str] = []
        for run_id in order:
            upstream = set(self.decl.runs[run_id].depends_on) & set(chosen)
            if upstream or _why_run(run_id, self.keys[run_id], self.work, self.forced):
                chosen.append(run_id)
        return chosen

    def encode_up_front(self, order: list[str]) -> None:
        """Fill the store with what the runs to execute will encode with a dense encoder, and
        time it as the runs are timed (``runs/_encode_up_front/timing.json``, which
        ``benchmarks/bench_build.py`` lists beside the runs)."""
        from regime_core.encoders.prefill import encodings, fill_for_runs
        from regime_core.runner.runs import RUNS

        runs = self.to_execute(order)
        parameters = [self.decl.runs[r].parameters_for(self.profile) for r in runs]
        generated: dict[str, list[Any]] = {}  # the toy worlds the teaching runs generate
        for run_id, params in zip(runs, parameters, strict=True):
            if run_id in RUNS and RUNS[run_id].generates_its_data:
                cfg = RUNS[run_id].config.from_parameters(**params)
                generated.setdefault(cfg.encoder, []).extend(cfg.generated_worlds())
        if not encodings(parameters) and not generated:
            return
        progress = self.say is not _silent and sys.stderr.isatty()
        runs_dir = self.work / "runs" / UP_FRONT_STAGE
        runs_dir.mkdir(parents=True, exist_ok=True)
        log = runs_dir / ENCODE_LOG_FILENAME
        log.unlink(missing_ok=True)
        started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        previous = os.environ.get(ENCODE_LOG_VARIABLE)
        os.environ[ENCODE_LOG_VARIABLE] = str(log)  # no worker thread runs yet
        try:
            reports = fill_for_runs(
                parameters,
                self.work,
                generated=generated,
                progress=progress,
                say=self.say,
            )
        finally:
            if previous is None:
                os.environ.pop(ENCODE_LOG_VARIABLE, None)
            else:
                os.environ[ENCODE_LOG_VARIABLE] = previous
        after = resource.getrusage(resource.RUSAGE_SELF)
        usage = {
            "user_seconds": after.ru_utime - before.ru_utime,
            "system_seconds": after.ru_stime - before.ru_stime,
        }
        write_timing(runs_dir, UP_FRONT_STAGE, time.perf_counter() - started, 0, usage)
        for report in reports:
            self.say(report.line())

    def run(self, order: list[str]) -> list[RunResult]:
        results: dict[str, RunResult] = {}
        pool = futures.ThreadPoolExecutor(max_workers=self.jobs)
        try:
            self._schedule(order, results, pool)
        except BaseException:
            self.stop.set()
            kill_children()  # Ctrl-C or SIGTERM: every running notebook ends now
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return [results[r] for r in order]

    def _schedule(
        self,
        order: list[str],
        results: dict[str, RunResult],
        pool: futures.ThreadPoolExecutor,
    ) -> None:
        pending = list(order)
        running: dict[futures.Future[RunResult], str] = {}
        total = len(order)
        while pending or running:
            for run_id in list(pending):
                if len(running) >= self.jobs or any(self._alone(r) for r in running.values()):
                    break
                upstream = [results.get(d) for d in self.decl.runs[run_id].depends_on]
                if any(u is None for u in upstream):
                    continue  # an upstream run is still executing
                if running and self._alone(run_id):
                    break  # the others wait too, so that it starts as soon as the running end
                pending.remove(run_id)
                number = f"[{total - len(pending)}/{total}]"
                future = self._start(run_id, number, upstream, results, pool)
                if future is not None:
                    running[future] = run_id
            if running:
                done, _ = futures.wait(running, return_when=futures.FIRST_COMPLETED)
                for future in done:
                    run_id = running.pop(future)
                    result = future.result()
                    results[run_id] = result
                    self.say(result.line(run_id))

    def _alone(self, run_id: str) -> bool:
        return self.decl.runs[run_id].alone

    def _start(
        self,
        run_id: str,
        number: str,
        upstream: list[RunResult | None],
        results: dict[str, RunResult],
        pool: futures.ThreadPoolExecutor,
    ) -> futures.Future[RunResult] | None:
        key = self.keys[run_id]["key"]
        bad = [u.run_id for u in upstream if u is not None and u.status in ("failed", "blocked")]
        if bad:
            results[run_id] = RunResult(run_id, "blocked", key=key, error=f"upstream {bad} failed")
            self.say(f"{number} {run_id}: blocked (upstream {', '.join(bad)} failed)")
            return None
        reasons = _why_run(run_id, self.keys[run_id], self.work, self.forced)
        if not reasons:
            with records_lock(self.work, what=f"regime reproduce: {run_id}'s book page"):
                copy_to_book(self.decl, run_id, self.work)
            results[run_id] = RunResult(
                run_id,
                "skipped",
                key=key,
                executed=executed_path(self.work, run_id),
                record=existing_file(record_file(self.work, run_id)),
            )
            self.say(f"{number} {run_id}: up to date, skipped")
            return None
        notebook = relative_name(self.decl.runs[run_id].notebook, self.decl.root)
        self.say(f"{number} {run_id}: running {notebook} ({'; '.join(reasons)})")
        return pool.submit(
            execute_run,
            self.decl,
            run_id,
            self.profile,
            self.keys[run_id],
            self.work,
            self.kernel_name,
            self.stop,
            self.environment,
        )
