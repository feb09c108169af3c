"""How many runs execute at once and how many threads each kernel gets (no notebook runs)."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
import yaml
from helpers import refused

from regime_core.runner.declarations import load_declarations
from regime_core.runner.reproduce import reproduce
from regime_core.runner.scheduling import (
    THREAD_VARIABLES,
    available_cores,
    default_jobs,
    independent_width,
    thread_environment,
    threads_per_job,
)

DEMO = Path(__file__).parent / "fixtures" / "notebooks" / "demo_record.ipynb"
DIAMOND = {"a": (), "b": ("a",), "c": ("a",), "d": ("b", "c")}


def test_the_width_is_the_widest_level_of_the_selection() -> None:
    assert independent_width(DIAMOND, list(DIAMOND)) == 2
    assert independent_width(DIAMOND, ["a", "b", "d"]) == 1  # a chain
    assert independent_width({"x": (), "y": (), "z": ()}, ["x", "y", "z"]) == 3
    assert independent_width(DIAMOND, []) == 0
    # an upstream run left out of the selection does not hold its downstream runs back
    assert independent_width({"a": (), "b": ("a",), "c": ()}, ["b", "c"]) == 2


def test_the_declared_runs_leave_two_independent_runs_for_two_cores() -> None:
    decl = load_declarations()
    deps = {rid: spec.depends_on for rid, spec in decl.runs.items()}
    width = independent_width(deps, list(decl.runs))
    assert width >= 2
    assert default_jobs(2, width) == 2
    assert default_jobs(64, width) == width


def test_jobs_are_one_per_core_at_most_the_width_at_least_one() -> None:
    assert default_jobs(2, 5) == 2
    assert default_jobs(8, 3) == 3
    assert default_jobs(4, 0) == 1
    assert available_cores() >= 1


def test_each_kernel_gets_its_share_of_the_cores() -> None:
    assert threads_per_job(2, 2) == 1
    assert threads_per_job(8, 3) == 2
    assert threads_per_job(2, 4) == 1  # more jobs than cores: one thread each, never zero
    assert threads_per_job(2, 1) == 2


def test_the_thread_variables_keep_a_users_own_setting() -> None:
    env = thread_environment(1, {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": ""})
    assert "OMP_NUM_THREADS" not in env
    assert env["MKL_NUM_THREADS"] == "1"
    assert set(env) == set(THREAD_VARIABLES) - {"OMP_NUM_THREADS"}
    assert set(thread_environment(2, {}).values()) == {"2"}


def test_reproduce_without_jobs_runs_two_at_a_time_on_two_cores_with_one_thread_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's scheduling with the notebook execution replaced: how many run at once, in
    dependency order, and the thread variables each child is given."""
    from regime_core.runner import reproduce as reproduce_module
    from regime_core.runner.execution import RunResult

    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(reproduce_module, "available_cores", lambda: 2)
    lock = threading.Lock()
    running: list[str] = []
    most_at_once = [0]
    environments: dict[str, dict[str, str]] = {}
    finished: list[str] = []

    def fake_run(decl, run_id, profile, key_info, work, kernel_name, stop, environment):
        with lock:
            running.append(run_id)
            most_at_once[0] = max(most_at_once[0], len(running))
            environments[run_id] = dict(environment)
        time.sleep(0.2)  # long enough for an independent run to start meanwhile
        with lock:
            running.remove(run_id)
            finished.append(run_id)
        return RunResult(run_id, "ran", key=str(key_info["key"]))

    monkeypatch.setattr(reproduce_module, "execute_run", fake_run)
    notebook = tmp_path / "nb.ipynb"
    shutil.copyfile(DEMO, notebook)
    runs = {
        "a": {"notebook": "nb.ipynb", "parameters": {"n_points": 1}},
        "b": {"notebook": "nb.ipynb", "parameters": {"n_points": 2}},
        "c": {"notebook": "nb.ipynb", "parameters": {"n_points": 3}, "depends_on": ["a", "b"]},
    }
    declarations = tmp_path / "reproduce.yml"
    declarations.write_text(yaml.safe_dump({"runs": runs}))
    report = reproduce(declarations, jobs=None, work=tmp_path / "work", progress=None)
    assert [r.status for r in report.results] == ["ran", "ran", "ran"]
    assert most_at_once[0] == 2  # a and b together, never three
    assert finished[-1] == "c"  # after both of its upstream runs
    assert all(env["OMP_NUM_THREADS"] == "1" for env in environments.values())
    assert set(environments["c"]) == set(THREAD_VARIABLES)  # the threads, and nothing else

    environments.clear()
    reproduce(declarations, jobs=1, force=True, work=tmp_path / "work", progress=None)
    assert {env["OPENBLAS_NUM_THREADS"] for env in environments.values()} == {"2"}


def test_a_run_declared_alone_never_runs_beside_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``alone: true`` (the routing latency run, which times the machine): with two jobs, no
    other run executes while it does, and the independent runs still share the cores."""
    from regime_core.runner import reproduce as reproduce_module
    from regime_core.runner.execution import RunResult

    lock = threading.Lock()
    running: list[str] = []
    beside: dict[str, set[str]] = {}

    def fake_run(decl, run_id, profile, key_info, work, kernel_name, stop, environment):
        with lock:
            for other in running:
                beside.setdefault(other, set()).add(run_id)
                beside.setdefault(run_id, set()).add(other)
            running.append(run_id)
        time.sleep(0.2)
        with lock:
            running.remove(run_id)
        return RunResult(run_id, "ran", key=str(key_info["key"]))

    monkeypatch.setattr(reproduce_module, "execute_run", fake_run)
    shutil.copyfile(DEMO, tmp_path / "nb.ipynb")
    runs = {
        name: {"notebook": "nb.ipynb", "parameters": {"n_points": i + 1}}
        for i, name in enumerate(["a", "timed", "b", "c"])
    }
    runs["timed"]["alone"] = True
    declarations = tmp_path / "reproduce.yml"
    declarations.write_text(yaml.safe_dump({"runs": runs}))
    report = reproduce(declarations, jobs=2, work=tmp_path / "work", progress=None)
    assert [r.status for r in report.results] == ["ran"] * 4
    assert "timed" not in beside  # it never ran with another
    assert beside  # the others did run two at a time


def test_alone_must_be_true_or_false(tmp_path: Path) -> None:
    shutil.copyfile(DEMO, tmp_path / "nb.ipynb")
    declarations = tmp_path / "reproduce.yml"
    runs = {"a": {"notebook": "nb.ipynb", "alone": "yes"}}
    declarations.write_text(yaml.safe_dump({"runs": runs}))
    with refused(ValueError, names=("'alone'",)):
        load_declarations(declarations)
