"""Papermill children: each run's papermill in its own process group, never outliving the runner.

A child is launched through a small launcher that asks Linux to kill it when the runner dies
(``PR_SET_PDEATHSIG``, which a SIGKILL of the runner cannot skip); its pid is kept in a file so
that the next start ends any group still alive (:func:`end_orphans`), and :func:`kill_children`
ends every running group when the runner is interrupted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from regime_core.integrity import pid_alive
from regime_core.runner.records import atomic_write_text

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


def _kill_group(pid: int) -> None:
    # the child leads its own group (start_new_session)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def kill_children() -> None:
    """End the process group of every running child (Ctrl-C or SIGTERM of the runner)."""
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


def run_child(command: Sequence[str], *, env: Mapping[str, str], pid_file: Path) -> tuple[int, str]:
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


def end_orphans(pid_files: Iterable[Path], work: Path, say: Callable[[str], None]) -> None:
    """End the papermill groups that a killed runner on ``work`` left running (their pids in
    ``pid_files``), then delete the pid files."""
    for pid_file in pid_files:
        try:
            pid = int(pid_file.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            pid = 0
        if pid > 0 and pid_alive(pid) and _is_our_papermill(pid, work):
            say(f"ending papermill (pid {pid}) left running by an interrupted run")
            _kill_group(pid)
        pid_file.unlink(missing_ok=True)
