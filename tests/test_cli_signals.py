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
from helpers import refused

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
REGIME = [sys.executable, "-m", "regime_core"]


def _from_a_terminal() -> None:
    """A child's SIGINT as a terminal gives it: the default action. A pytest-xdist worker ignores
    SIGINT and a child would inherit that, and main() rightly keeps an ignored SIGINT ignored
    (a background job's), so without this Ctrl-C would never reach it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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


class _Runner:
    """A ``regime reproduce`` of one sleeping notebook, in its own directory."""

    def __init__(self, root: Path) -> None:
        root.mkdir()
        self.kernel_file = root / "kernel.pid"
        _sleeping_notebook(root / "nap.ipynb", self.kernel_file)
        decl = root / "reproduce.yml"
        decl.write_text(yaml.safe_dump({"runs": {"nap": {"notebook": "nap.ipynb"}}}))
        self.runs = root / "work" / "runs" / "nap"
        self.proc = subprocess.Popen(
            [*REGIME, "reproduce", "--declarations", str(decl), "--work", str(root / "work")],
            env=ENV,
            preexec_fn=_from_a_terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.pids: list[int] = []

    def started(self) -> bool:
        if not self.kernel_file.exists():
            return False
        papermill = int((self.runs / "child.pid").read_text())
        self.pids = [papermill, *(int(p) for p in self.kernel_file.read_text().split())]
        return True

    def end(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for pid in self.pids:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_signal_ends_the_running_notebook_and_stamps_nothing(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) to one runner and SIGTERM to another, each with a notebook whose kernel
    started a process of its own: papermill, the kernel and its child all end within seconds,
    nothing is stamped, and each runner exits 130 or 143 with one line."""
    cases = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}
    runners = {signum: _Runner(tmp_path / signum.name) for signum in cases}
    try:
        assert _wait_until(lambda: all(r.started() for r in runners.values()), 180)
        started = time.monotonic()
        for signum, runner in runners.items():
            runner.proc.send_signal(signum)
        for signum, runner in runners.items():
            code, word = cases[signum]
            _out, err = runner.proc.communicate(timeout=30)
            assert time.monotonic() - started < 10
            assert runner.proc.returncode == code
            assert "Traceback" not in err
            assert [ln for ln in err.splitlines() if "regime:" in ln] == [f"regime: {word}"]
            assert err.strip().splitlines()[-1] == f"regime: {word}"
            assert _wait_until(lambda r=runner: all(_gone(p) for p in r.pids), 5), runner.pids
            assert not (runner.runs / "stamp.json").exists()
            assert not (runner.runs / "child.pid").exists()
            assert not (runner.runs / "child.token").exists()
    finally:
        for runner in runners.values():
            runner.end()


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
    for delay_ms in (0, 5, 20, 80, 300, 800, 1500, 2200):
        proc = subprocess.Popen(
            [*REGIME, "verdicts", "--work", str(tmp_path / "none")],
            env=ENV,
            preexec_fn=_from_a_terminal,
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
    # 2: it finished first ("no record ..."); -SIGINT: then the signal came while the
    # interpreter was shutting down, which restores the default action (it printed nothing)
    assert outcomes <= {130, 2, -signal.SIGINT}
    assert 130 in outcomes


def test_a_closed_stdout_ends_a_command_quietly() -> None:
    """As ``regime verdicts | head -1`` once ``head`` has gone: no traceback, no message."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader went away before the command printed
    try:
        arguments = ["route", "--question", "Who founded it?", "--bridge", "Ann did.", "--json"]
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
    assert proc.returncode == 141  # what a shell reports for a command ended by SIGPIPE


def test_a_reader_waits_for_a_writer_and_a_signal_while_waiting_exits_cleanly(
    tmp_path: Path,
) -> None:
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


def test_an_interrupt_wrapped_by_an_import_is_still_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Python 3.11 wraps what __set_name__ raises (a signal in a dataclass's creation) in a
    RuntimeError, a C extension's initialisation in an ImportError: main() reads the interrupt
    behind either; any other RuntimeError or ImportError propagates."""
    import regime_core.cli as cli

    def interrupted_import(argv: object) -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as err:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from err

    monkeypatch.setattr(cli, "_main", interrupted_import)
    assert cli.main([]) == 130
    assert capsys.readouterr().err.strip() == "regime: interrupted"

    def interrupted_extension(argv: object) -> int:
        # CI met it: Ctrl-C 800 ms into start-up, while a C extension initialised
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ImportError("initialization failed")  # noqa: B904 - as the extension raises it

    monkeypatch.setattr(cli, "_main", interrupted_extension)
    assert cli.main([]) == 130
    assert capsys.readouterr().err.strip() == "regime: interrupted"

    def missing(argv: object) -> int:
        raise ImportError("No module named 'nothing'")

    monkeypatch.setattr(cli, "_main", missing)
    with refused(ImportError, names=("nothing",)):
        cli.main([])

    def broken(argv: object) -> int:
        raise RuntimeError("a real bug")

    monkeypatch.setattr(cli, "_main", broken)
    with refused(RuntimeError, names=("a real bug",)):
        cli.main([])
