"""Papermill children: each run's papermill in its own process group, never outliving the runner.

A child is launched through a small launcher that asks Linux to kill it when the runner dies
(``PR_SET_PDEATHSIG``, which a SIGKILL of the runner cannot skip). Papermill starts the notebook's
kernel in a session of its own, and the kernel may start processes too; so every child carries a
token of its run in its environment (``REGIME_RUN_TOKEN``, inherited by the kernel and whatever
it starts), and ending a run kills its group *and* every process holding its token
(:func:`kill_children` on Ctrl-C or SIGTERM of the runner, within a fraction of a second). The
pid and token are kept in ``child.pid`` and ``child.token`` so that the next start ends whatever
a killed runner left (:func:`end_orphans`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from regime_core.integrity import make_directory, pid_alive, read_text, remove_file
from regime_core.runner.records import atomic_write_text

#: the environment variable naming a child's run; every process of the run inherits it
TOKEN_VARIABLE = "REGIME_RUN_TOKEN"
# Launcher run by the child's Python before it becomes papermill (runner.papermill_child):
# PR_SET_PDEATHSIG (1) = SIGKILL, so the kernel kills papermill when the runner thread dies, even
# by SIGKILL; then exec. The ppid check closes the race where the runner died before the prctl.
_LAUNCHER = (
    "import ctypes, os, sys\n"
    "if sys.platform.startswith('linux'):\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(137)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'regime_core.runner.papermill_child',"
    " *sys.argv[2:]])\n"
)
_CHILDREN: dict[int, str] = {}  # pid -> token of every running child
_CHILDREN_LOCK = threading.Lock()


def _kill_group(pid: int) -> None:
    # the child leads its own group (start_new_session)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _holders_of(token: str) -> Iterator[int]:
    """The processes whose environment carries ``token`` (their own start-up environment)."""
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            yield int(entry)


def kill_run(pid: int, token: str | None) -> None:
    """Kill a run: the process group of its papermill ``pid`` and every process holding its
    ``token`` (the kernel and its children, in sessions of their own), until none is left."""
    if pid > 0:
        _kill_group(pid)
    if not token:
        return
    for _ in range(20):  # a process forked while we looked is found on the next look
        found = list(_holders_of(token))
        if not found:
            return
        for holder in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(holder, signal.SIGKILL)
        time.sleep(0.02)


def kill_children() -> None:
    """End every running child's run (Ctrl-C or SIGTERM of the runner)."""
    with _CHILDREN_LOCK:
        children = list(_CHILDREN.items())
    for pid, token in children:
        kill_run(pid, token)


def _is_our_papermill(pid: int, work: Path) -> bool:
    """Whether ``pid`` is still a papermill child of a runner on ``work`` (not a reused pid)."""
    for _ in range(20):
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return pid_alive(pid) and not Path("/proc").is_dir()
        if raw or not pid_alive(pid):
            break
        time.sleep(0.05)  # a process in the middle of exec shows no command line yet
    cmdline = raw.split(b"\0")
    return b"papermill" in b" ".join(cmdline) and any(str(work).encode() in c for c in cmdline)


def _wait_measured(proc: subprocess.Popen[str], usage: dict[str, float]) -> str:
    """Drain ``proc``'s pipes and reap it with ``os.wait4``, so that ``usage`` gets the CPU
    seconds of the child and of every descendant it waited for (papermill reaps its kernel):
    ``user_seconds``, ``system_seconds``. Per child, so runs executing at once do not mix."""
    chunks: dict[str, str] = {}

    def drain(name: str, stream: Any) -> None:
        chunks[name] = stream.read()
        stream.close()

    readers = [
        threading.Thread(target=drain, args=(name, stream), daemon=True)
        for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    _, status, rusage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    usage["user_seconds"] = rusage.ru_utime
    usage["system_seconds"] = rusage.ru_stime
    return chunks.get("stderr", "")


def run_child(
    command: Sequence[str],
    *,
    env: Mapping[str, str],
    pid_file: Path,
    usage: dict[str, float] | None = None,
) -> tuple[int, str]:
    """Run :mod:`~regime_core.runner.papermill_child` with the arguments ``command`` in its own
    process group; ``(exit code, stderr)``. The run is killed if this thread is interrupted. Given a
    ``usage`` dict, it is filled with the child's CPU seconds (:func:`_wait_measured`)."""
    make_directory(pid_file.parent)
    token = secrets.token_hex(16)
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *command],
        env={**env, TOKEN_VARIABLE: token},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    with _CHILDREN_LOCK:
        _CHILDREN[proc.pid] = token
    token_file = _token_file(pid_file)
    try:
        atomic_write_text(token_file, f"{token}\n")
        atomic_write_text(pid_file, f"{proc.pid}\n")
        if usage is None:
            _, stderr = proc.communicate()
        else:
            stderr = _wait_measured(proc, usage)
    except BaseException:
        kill_run(proc.pid, token)
        proc.wait()
        raise
    finally:
        with _CHILDREN_LOCK:
            _CHILDREN.pop(proc.pid, None)
        pid_file.unlink(missing_ok=True)
        token_file.unlink(missing_ok=True)
    return proc.returncode, stderr


def _token_file(pid_file: Path) -> Path:
    """Beside ``child.pid``, ``child.token``: the run's token."""
    return pid_file.with_suffix(".token")


def end_orphans(pid_files: Iterable[Path], work: Path, say: Callable[[str], None]) -> None:
    """End the runs that a killed runner on ``work`` left running (their pid and token in
    ``pid_files``), then delete the pid files."""
    for pid_file in pid_files:
        try:
            # without blocking: a FIFO or device in its place is refused, never waited on
            pid = int(read_text(pid_file).strip())
        except (OSError, ValueError):
            pid = 0
        try:
            token: str | None = read_text(_token_file(pid_file)).strip()
        except (OSError, ValueError):
            token = None
        alive = pid > 0 and pid_alive(pid) and _is_our_papermill(pid, work)
        if alive:
            say(f"ending papermill (pid {pid}) left running by an interrupted run")
        leftovers = list(_holders_of(token)) if token else []
        if leftovers and not alive:
            say(f"ending {len(leftovers)} process(es) left running by an interrupted run")
        if alive or leftovers:
            kill_run(pid if alive else 0, token)
        remove_file(pid_file)  # a FIFO or directory in its place is named, not removed
        remove_file(_token_file(pid_file))
