"""Interrupts and pipes (issue 22 item 6): Ctrl-C or SIGTERM ends the running notebook's processes
within seconds, stamps nothing unfinished, exits 130/143 with one line and no traceback at any
moment; a closed stdout ends a command quietly. Real signals to real child processes."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
REGIME = [sys.executable, "-m", "regime_core"]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux signals")


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "\nState:\tZ" in state


def _wait_until(predicate: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return bool(predicate())  # type: ignore[operator]


def _sleeping_notebook(path: Path, pid_file: Path) -> None:
    """A notebook whose kernel writes its pid and that of a child of its own, then sleeps."""
    cell = {"cell_type": "code", "execution_count": None, "outputs": [], "metadata": {}}
    code = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(pid_file)!r} + '.tmp', 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        f"os.replace({str(pid_file)!r} + '.tmp', {str(pid_file)!r})\n"
        "time.sleep(300)\n"
    )
    notebook = {
        "cells": [
            {**cell, "metadata": {"tags": ["parameters"]}, "source": 'output_dir = "o"'},
            {**cell, "source": code},
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code", "word"), [
    (signal.SIGINT, 130, "interrupted"),
    (signal.SIGTERM, 143, "terminated"),
])  # fmt: skip
def test_a_signal_ends_the_running_notebook_and_stamps_nothing(
    tmp_path: Path, signum: int, code: int, word: str
) -> None:
    kernel_file = tmp_path / "kernel.pid"
    _sleeping_notebook(tmp_path / "nap.ipynb", kernel_file)
    decl = tmp_path / "reproduce.yml"
    decl.write_text(yaml.safe_dump({"runs": {"nap": {"notebook": "nap.ipynb"}}}))
    work = tmp_path / "work"
    runner = subprocess.Popen(
        [*REGIME, "reproduce", "--declarations", str(decl), "--work", str(work)],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids: list[int] = []
    try:
        assert _wait_until(kernel_file.exists, 120), "the notebook never started"
        kernel, grandchild = (int(p) for p in kernel_file.read_text().split())
        papermill = int((work / "runs" / "nap" / "child.pid").read_text())
        pids = [papermill, kernel, grandchild]
        started = time.monotonic()
        runner.send_signal(signum)
        _out, err = runner.communicate(timeout=30)
        assert time.monotonic() - started < 10
        assert runner.returncode == code
        assert "Traceback" not in err
        assert err.strip().splitlines()[-1] == f"regime: {word}"
        assert [ln for ln in err.splitlines() if "regime:" in ln] == [f"regime: {word}"]
        assert _wait_until(lambda: all(_gone(p) for p in pids), 5), "a process outlived its run"
        assert not (work / "runs" / "nap" / "stamp.json").exists()
        assert not (work / "runs" / "nap" / "child.pid").exists()
        assert not (work / "runs" / "nap" / "child.token").exists()
    finally:
        runner.kill()
        runner.wait()
        for pid in pids:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


def _catches_sigterm(pid: int) -> bool:
    """Whether ``regime``'s main() has installed its handlers (Python alone leaves SIGTERM)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # it already ended
    caught = int(next(ln for ln in status.splitlines() if ln.startswith("SigCgt:")).split()[1], 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def test_ctrl_c_at_any_moment_of_start_up_prints_no_traceback(tmp_path: Path) -> None:
    """SIGINT from 0 to 2.2 s after main() starts ``regime verdicts`` (the imports of every
    command take seconds, then parsing, the lock, the command): one line or nothing, never a
    traceback. (Before main() runs, the interpreter's own start-up is CPython's, as for any
    Python program.)"""
    outcomes: set[int | None] = set()
    for delay_ms in (0, 2, 5, 10, 20, 40, 80, 150, 300, 600, 1000, 1500, 2200):
        proc = subprocess.Popen(
            [*REGIME, "verdicts", "--work", str(tmp_path / "none")],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert _wait_until(lambda p=proc.pid: _catches_sigterm(p), 60)  # type: ignore[misc]
        time.sleep(delay_ms / 1000)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, (delay_ms, err)
        assert len(err.strip().splitlines()) <= 1, (delay_ms, err)
        if proc.returncode == 130:
            assert err.strip() == "regime: interrupted"
        outcomes.add(proc.returncode)
    assert outcomes <= {130, 2}  # 2: it finished first ("no record ..."), then ended quietly
    assert 130 in outcomes


@pytest.mark.parametrize(
    ("arguments", "codes"),
    [
        # 141: what a shell reports for a command ended by SIGPIPE
        (
            ["route", "--question", "Who founded it?", "--bridge", "Ann founded it.", "--json"],
            {141},
        ),
        (["--help"], {0, 141}),  # argparse ignores a failed write of its help, then exits 0
    ],
)
def test_a_closed_stdout_ends_a_command_quietly(arguments: list[str], codes: set[int]) -> None:
    """As ``regime verdicts | head -1`` once ``head`` has gone: no traceback, no message."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader went away before the command printed
    try:
        proc = subprocess.run(
            [*REGIME, *arguments],
            env=ENV,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode in codes


def test_a_signal_while_waiting_for_the_lock_exits_cleanly(tmp_path: Path) -> None:
    from test_integrity_lock import Holder

    work = tmp_path / "work"
    work.mkdir()
    holder = Holder(work, "exclusive")
    try:
        proc = subprocess.Popen(
            [*REGIME, "data", "stats", "musique", "--work", str(work)],
            env=ENV,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        assert ready and "waiting for another regime command" in proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
        err = proc.stderr.read()
        assert proc.wait(timeout=30) == 143
        assert err.strip() == "regime: terminated"
    finally:
        holder.release()


def test_a_signal_ignored_on_purpose_stays_ignored() -> None:
    """Under ``nohup`` (SIGHUP ignored) or as a background job (SIGINT ignored), main() must
    not start handling what its caller chose to ignore; it restores what it changed."""
    from regime_core.cli import _Signals

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    term = signal.getsignal(signal.SIGTERM)
    try:
        signals = _Signals()
        signals.install()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) == signals.handle
        signals.restore()
        assert signal.getsignal(signal.SIGTERM) == term
    finally:
        signal.signal(signal.SIGHUP, before)
