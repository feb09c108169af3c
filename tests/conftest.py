"""Shared fixtures. Real-data tests read REGIME_DATA_DIR; CI sets it and fails if it is missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import (
    copy_book_sources,
    fake_book_build,
    relocated_declarations,
    share_embedding_store,
)

#: the book's Sphinx extension lives beside its pages, not in the package (jupyter-book puts this
#: folder on its sys.path, _config.yml's local_extensions): the tests import ``regime_book`` from it
BOOK_EXTENSIONS = Path(__file__).resolve().parents[1] / "book" / "_ext"
if str(BOOK_EXTENSIONS) not in sys.path:
    sys.path.insert(0, str(BOOK_EXTENSIONS))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


#: Test modules whose results are floating-point computations (scores, statistics, fits, the
#: quick profile's expected numbers): the `numeric` marker, which .ci/run runs a second time
#: under another OpenBLAS kernel. A rule by module name, so a new module of these kinds is
#: numeric without being listed.
NUMERIC_MODULE_PREFIXES: tuple[str, ...] = (
    "test_stats", "test_power", "test_agreement", "test_metrics", "test_retrieval", "test_router_",
    "test_experiments_", "test_runner_expected", "test_teaching_", "test_properties",
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name.startswith(NUMERIC_MODULE_PREFIXES):
            item.add_marker(pytest.mark.numeric)


def quick_modules() -> frozenset[str]:
    """The test modules that read the quick profile: they name its fixtures `quick_run` or
    `quick_book`, directly or through `request.getfixturevalue`."""
    return frozenset(
        module.name
        for module in Path(__file__).parent.glob("test_*.py")
        if re.search(r"\bquick_(run|book)\b", module.read_text(encoding="utf-8"))
    )


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile`` (the Makefile's), each test module on one worker so that its
    module-scoped fixtures are built once, and every module of :func:`quick_modules` on the same
    worker, so that the quick profile runs once per session while the other workers take the rest.
    (pytest-xdist's ``--dist loadgroup`` would say this with markers, but under pytest 9 it no
    longer groups: it renames ``item._nodeid``, which pytest 9's node ids do not read.)"""
    if config.getvalue("dist") != "loadfile" or "not slow" in (config.getoption("markexpr") or ""):
        return None  # without the slow tests no module reads the quick profile: plain loadfile
    from xdist.scheduler import LoadFileScheduling

    quick = quick_modules()  # read here, by the controller, only when it schedules

    class QuickProfileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return "quick_profile" if Path(module).name in quick else module

    return QuickProfileScheduling(config, log)


@pytest.fixture(autouse=True)
def _no_work_directory_left_chosen() -> Any:
    """A notebook's ``start`` names its work directory for the whole process
    (``paths.choose_work_dir``); a test calling it in-process must not pass that on."""
    from regime_core import paths

    yield
    paths._chosen_work = None


@pytest.fixture(scope="module")
def one_blas_thread() -> Any:
    """BLAS on one thread for a module of tiny logistic regressions (threads only add contention
    on a 2-core machine); a module opts in with ``pytest.mark.usefixtures("one_blas_thread")``."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The shared dataset subsets; tests using it are skipped when REGIME_DATA_DIR is unset."""
    env = os.environ.get("REGIME_DATA_DIR")
    if not env:
        if os.environ.get("REGIME_REQUIRE_DATA") == "1":
            raise RuntimeError("REGIME_REQUIRE_DATA=1 but REGIME_DATA_DIR is not set")
        pytest.skip("REGIME_DATA_DIR is not set")
    path = Path(env)
    if not path.is_dir():
        raise RuntimeError(f"REGIME_DATA_DIR={env} is not a directory")
    return path


@pytest.fixture(scope="session")
def prepared_real_work(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A work directory with the three built-in datasets prepared from REGIME_DATA_DIR, once
    per test run; read only. Under pytest-xdist every worker prepares into the same directory
    (the run's shared temporary root): the first one converts while the others wait on its lock,
    then find every sentence split in its cache and rewrite the same bytes in seconds."""
    from regime_core import paths
    from regime_core.data import prepare

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    work = shared / "prepared_real_work"
    prepare(real_data_dir, paths.prepared_dir(work))
    return work


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium executable; tests using it are skipped without one, unless
    REGIME_REQUIRE_CHROMIUM=1 (CI sets it), when they fail."""
    from tools.bookcheck.browser import find_chromium

    found = find_chromium()
    if found is None:
        if os.environ.get("REGIME_REQUIRE_CHROMIUM") == "1":
            raise RuntimeError("REGIME_REQUIRE_CHROMIUM=1 but Chromium is not installed")
        pytest.skip("Chromium is not installed (Debian package chromium)")
    return found


@pytest.fixture(scope="session")
def book_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny rendered book of ``tests/fixtures`` (see ``helpers.fake_book_build``); read only."""
    return fake_book_build(tmp_path_factory.mktemp("book") / "html")


# --- the quick profile, once per session ----------------------------------------------------------
#
# `quick_run` executes every run of reproduce.yml with the `quick` profile ONCE per test session, in
# a private work directory, and `quick_book` builds the book over its records (strict). Any test may
# use them (e.g. a notebook test reading `quick_run.record("t2_regime_decomposition")` instead of
# executing the notebook again). Environment:
#   REGIME_TEST_WORK=DIR   reuse DIR as the work directory across sessions (up-to-date runs are
#                          skipped by the runner's keys, so a warm rerun takes seconds)
#   REGIME_TEST_COLD=1     link no test's store to the persistent one (measure a cold run)
#   REGIME_TEST_JOBS=N     runs executed at once (default 1)


@dataclass(frozen=True)
class QuickRun:
    """What the quick profile left behind: work directory, book copy, runner report, seconds."""

    work: Path
    book_root: Path
    declarations: Path
    report: Any
    seconds: float

    def record(self, run_id: str) -> dict[str, Any]:
        from regime_core.runner.records import load_record

        return load_record(self.work / "results" / run_id)


@pytest.fixture(scope="session")
def quick_run(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    """Prepare the data and run `regime reproduce --profile quick` once per session."""
    from regime_core import paths
    from regime_core.data import prepare
    from regime_core.runner.reproduce import reproduce

    root = tmp_path_factory.mktemp("quick")
    work = Path(os.environ.get("REGIME_TEST_WORK") or root / "work").resolve()
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    prepare(real_data_dir, paths.prepared_dir(work))
    share_embedding_store(work)
    book_root = copy_book_sources(root / "book_root")
    declarations = relocated_declarations(root / "reproduce.yml")
    report = reproduce(
        declarations,
        profile="quick",
        jobs=int(os.environ.get("REGIME_TEST_JOBS", "1")),
        work=work,
        progress=None,
    )
    seconds = time.perf_counter() - started
    print(f"\nquick profile: {seconds:.0f} s\n{report.table()}")
    if not report.ok:
        pytest.fail(f"the quick profile failed:\n{report.table()}", pytrace=False)
    return QuickRun(work, book_root, declarations, report, seconds)


@pytest.fixture(scope="session")
def quick_book(quick_run: QuickRun) -> Any:
    """The book built strictly (warnings are errors) over the quick profile's records."""
    from regime_core.book.build import build_book
    from regime_core.vendor import vendor_mathjax

    try:  # as `regime book` does, so the maths render offline (tests/test_book_readers.py)
        vendor_mathjax(quick_run.work)
    except (OSError, ValueError, subprocess.CalledProcessError) as err:
        print(f"MathJax not vendored ({err}); the book's maths will not render offline")
    result = build_book(quick_run.book_root, work=quick_run.work)
    print(f"book built over the quick records in {result.seconds:.0f} s")
    return result
