"""One lock per work directory (issue 22 item 1): writers exclusive, readers shared, in and
across processes; every ``regime`` command declares which it takes."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import refused

from regime_core.locks import LOCK_NAME, directory_lock

ROOT = Path(__file__).resolve().parent.parent
# Holds the lock of argv[1] ("shared" or "exclusive" in argv[2]) until stdin closes.
HOLDER = (
    "import sys\n"
    "from regime_core.locks import directory_lock\n"
    "with directory_lock(sys.argv[1], what='a test', shared=sys.argv[2] == 'shared'):\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.read()\n"
)


class Holder:
    """Another process holding the lock of a directory."""

    def __init__(self, directory: Path, mode: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(directory), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "held"

    def release(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0


def _acquired_within(directory: Path, shared: bool, seconds: float, name: str = LOCK_NAME) -> bool:
    """Whether this process gets the lock within ``seconds`` (a thread waits for it)."""
    got = threading.Event()
    release = threading.Event()

    def take() -> None:
        with directory_lock(directory, what="a test", shared=shared, name=name):
            got.set()
            release.wait(30)

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    acquired = got.wait(seconds)
    release.set()
    if acquired:
        thread.join(5)
    return acquired


def test_readers_share_writers_exclude(tmp_path: Path) -> None:
    reader = Holder(tmp_path, "shared")
    try:
        assert _acquired_within(tmp_path, shared=True, seconds=5)  # readers together
        assert not _acquired_within(tmp_path, shared=False, seconds=0.5)  # a writer waits
    finally:
        reader.release()
    writer = Holder(tmp_path, "exclusive")
    waiting: list[str] = []
    done = threading.Event()

    def read() -> None:
        with directory_lock(tmp_path, what="r", shared=True, on_wait=lambda: waiting.append("w")):
            done.set()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    time.sleep(0.5)
    assert not done.is_set() and waiting == ["w"]  # a reader waits for the writer, and says so
    writer.release()
    assert done.wait(10)
    thread.join(5)


def test_a_killed_holder_releases_the_lock(tmp_path: Path) -> None:
    writer = Holder(tmp_path, "exclusive")
    writer.proc.kill()
    writer.proc.wait()
    assert _acquired_within(tmp_path, shared=False, seconds=5)


def test_nesting_in_one_thread_is_free_but_a_write_inside_a_read_is_refused(
    tmp_path: Path,
) -> None:
    with (
        directory_lock(tmp_path, what="outer"),
        directory_lock(tmp_path, what="inner", shared=True),
        directory_lock(tmp_path, what="again"),
    ):
        pass
    with (
        directory_lock(tmp_path, what="reader", shared=True),
        refused(ValueError, names=(str(tmp_path),)),
        directory_lock(tmp_path, what="writer"),
    ):
        pass
    assert _acquired_within(tmp_path, shared=False, seconds=5)  # everything was released


def test_a_reader_of_a_missing_or_read_only_directory_reads_without_a_lock(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with directory_lock(missing, what="a reader", shared=True):
        pass
    assert not missing.exists()  # a read creates nothing
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        with directory_lock(locked, what="a reader", shared=True):
            pass
        with refused(ValueError, names=(str(locked),)), directory_lock(locked, what="w"):
            pass
    finally:
        locked.chmod(0o755)


def test_a_child_told_it_works_for_the_holder_does_not_wait_for_it(tmp_path: Path) -> None:
    """A notebook of ``regime reproduce`` that takes its work directory's lock (through any
    library call) must not wait forever for its own runner."""
    from regime_core.locks import LOCK_HELD_VARIABLE, lock_key

    take = (
        "import sys\nfrom regime_core.locks import directory_lock\n"
        "with directory_lock(sys.argv[1], what='child', shared=sys.argv[2] == 'shared'):\n"
        "    print('in')\n"
    )
    with directory_lock(tmp_path, what="runner"):
        for mode in ("shared", "exclusive"):
            env = {**os.environ, "PYTHONPATH": str(ROOT), LOCK_HELD_VARIABLE: lock_key(tmp_path)}
            child = subprocess.run(
                [sys.executable, "-c", take, str(tmp_path), mode],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert child.stdout.strip() == "in", child.stderr


def test_the_lock_file_is_not_inherited_by_children(tmp_path: Path) -> None:
    """A papermill child of a killed runner must not keep the work directory locked."""
    with directory_lock(tmp_path, what="runner"):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert _acquired_within(tmp_path, shared=False, seconds=5)
    finally:
        child.kill()
        child.wait()
    assert (tmp_path / LOCK_NAME).is_file()


# --- the commands ---------------------------------------------------------------------------------


def _leaf_commands() -> dict[str, object]:
    """Every runnable ``regime`` command by its words, e.g. ``"data prepare"``."""
    import argparse

    from regime_core.cli import build_parser

    found: dict[str, object] = {}

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        if parser.get_default("func") is not None and words:
            found[" ".join(words)] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*words, name))

    walk(build_parser(), ())
    return found


def test_every_command_declares_its_lock() -> None:
    from regime_core.cli import LOCKS, build_parser, lock_mode

    commands = _leaf_commands()
    assert sorted(commands) == sorted(LOCKS), "a command without a lock mode, or a stale entry"
    parser = build_parser()

    def mode(*argv: str) -> str:
        return lock_mode(parser.parse_args(list(argv)))

    for writer in (
        ["data", "prepare"], ["embed", "toyworld", "--encoder", "tfidf"],
        ["route", "train"], ["expected", "freeze"],
        ["retrieve", "toyworld", "--arm", "q"],
    ):  # fmt: skip
        assert mode(*writer) == "exclusive", writer
    # issue 44: reproduce holds the runs' lock and commits each run under the records' lock
    # (tests/test_runner_reproduce.py), so it shares the work directory with readers; book
    # reads under the records' lock; demo adds to the shared, content-addressed store
    for reader in (
        ["data", "stats", "musique"], ["verdicts"], ["expected", "check"],
        ["annotate", "sample", "musique", "--out", "x.csv"], ["reproduce", "--plan"],
        ["reproduce"], ["book"], ["demo"], ["demo", "--work", "w"],
    ):  # fmt: skip
        assert mode(*reader) == "shared", reader
    assert mode("data", "fetch") == mode("route", "--question", "q") == "none"


def test_a_writer_command_waits_for_the_holder_of_its_work_directory(tmp_path: Path) -> None:
    """The issue's example: a ``data prepare`` started while a ``reproduce`` holds the work
    directory waits for it instead of swapping the data under its notebook. (A reader command
    waiting: tests/test_cli_signals.py.)"""
    from helpers import DATA_FIXTURES, FIXTURE_SPLITS

    work = tmp_path / "work"
    work.mkdir()
    writer = Holder(work, "exclusive")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    splits = [a for f, split in FIXTURE_SPLITS.items() for a in ("--split", f"{f}={split}")]
    command = ["data", "prepare", "--data-dir", str(DATA_FIXTURES), *splits]
    reader = subprocess.Popen(
        [sys.executable, "-m", "regime_core", *command, "--work", str(work)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert reader.stderr is not None
        ready, _, _ = select.select([reader.stderr], [], [], 120)
        assert ready, "the command neither waited nor finished"
        assert "waiting for another regime command" in reader.stderr.readline()
        time.sleep(0.5)
        assert reader.poll() is None  # still waiting
        assert not (work / "prepared").exists()  # and it wrote nothing meanwhile
    finally:
        writer.release()
    _out, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, err
    assert (work / "prepared" / "manifest.json").is_file()


def test_a_reader_does_not_wait_for_a_running_reproduce(tmp_path: Path) -> None:
    """Issue 44: while a reproduce holds its locks (the work directory's shared, the runs'
    exclusive), ``regime verdicts`` answers at once from the last committed records; only a
    run's commit (the records' lock, held exclusively) makes it wait, and another reproduce
    waits for the first."""
    from regime_core.locks import RECORDS_LOCK_NAME, RUNS_LOCK_NAME, records_lock, runs_lock
    from regime_core.runner.reproduce import writing_lock

    work = tmp_path / "work"
    (work / "results").mkdir(parents=True)
    got, release = threading.Event(), threading.Event()

    def reproduce_running() -> None:
        with writing_lock(work, "a test reproduce", lambda _message: None):
            got.set()
            release.wait(60)

    thread = threading.Thread(target=reproduce_running, daemon=True)
    thread.start()
    try:
        assert got.wait(30)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "regime_core", "verdicts", "--work", str(work)]
        reader = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        assert "waiting for another regime command" not in reader.stderr
        assert reader.returncode in (0, 2), reader.stderr  # answered (no record: an error)
        assert _acquired_within(work, shared=True, seconds=5)  # readers share it
        assert not _acquired_within(work, shared=False, seconds=1)  # data prepare waits
        assert not _acquired_within(work, shared=False, seconds=1, name=RUNS_LOCK_NAME)
    finally:
        release.set()
        thread.join(30)
    with records_lock(work, what="a commit"):  # while a run commits, a reader waits
        assert not _acquired_within(work, shared=True, seconds=1, name=RECORDS_LOCK_NAME)
    assert _acquired_within(work, shared=True, seconds=5, name=RECORDS_LOCK_NAME)
    with runs_lock(work, what="a test"):
        pass
