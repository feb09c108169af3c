"""Directory locks: a writer holds a directory exclusively, readers share it (``flock``).

Written here rather than taken from ``filelock`` (which torch and huggingface_hub bring): its
native lock (``FileLock``) is exclusive only, and readers here share; its reader/writer lock
(``ReadWriteLock``) is an SQLite database with journal files beside it in the work directory, needs
write access where a reader of a read-only directory must read without a lock, and raises on a
shared hold inside an exclusive one, which :func:`directory_lock` allows (a writer reading what it
wrote). The handoff to child processes (:data:`LOCK_HELD_VARIABLE`) and ``on_wait`` would be
ours either way.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from regime_core.integrity import FILE_MODE, make_directory, os_error_message

LOCK_NAME = ".regime.lock"
#: set by a process holding a directory's lock exclusively for the children that work on its
#: behalf (``regime reproduce``'s notebooks), to that lock file's path: in them, taking the same
#: lock is free instead of waiting for the parent forever
LOCK_HELD_VARIABLE = "REGIME_LOCK_HELD"
_HELD = threading.local()  # this thread's locks: lock file -> [mode, depth]


def _held_locks() -> dict[str, list[Any]]:
    held = getattr(_HELD, "locks", None)
    if held is None:
        held = _HELD.locks = {}
    return held


def lock_key(directory: Path | str, name: str = LOCK_NAME) -> str:
    """The lock file of ``directory``, resolved: what :data:`LOCK_HELD_VARIABLE` holds."""
    return os.path.realpath(Path(directory) / name)


def _open_lock_file(root: Path, shared: bool, name: str = LOCK_NAME) -> int | None:
    """A descriptor of ``root/<name>`` (not inherited by children), or None for a reader of a
    directory that does not exist or cannot hold a lock file: nothing writes there."""
    lock_file = root / name
    flags = os.O_CLOEXEC | os.O_NOFOLLOW
    if shared:
        if not root.is_dir():
            return None
        for mode in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
            try:
                return os.open(lock_file, mode | flags, FILE_MODE)
            except (PermissionError, FileNotFoundError):
                continue
            except OSError as err:
                if err.errno != errno.EROFS:
                    raise
        return None
    make_directory(root)  # ValueError naming it when it is a file, a FIFO, a dangling link
    return os.open(lock_file, os.O_RDWR | os.O_CREAT | flags, FILE_MODE)


@contextlib.contextmanager
def directory_lock(
    directory: Path | str,
    *,
    what: str,
    on_wait: Callable[[], None] | None = None,
    shared: bool = False,
    name: str = LOCK_NAME,
) -> Iterator[None]:
    """Hold the lock of ``directory`` (``.regime.lock`` in it): exclusive for a writer,
    ``shared`` for a reader.

    A writer excludes every other holder and a reader excludes writers only, across processes
    and threads, so a reader never sees a half-written directory and two writers never
    interleave; whoever must wait calls ``on_wait`` once, then waits. The lock is the kernel's
    (``flock``): it ends with its process, even a killed one, and no child inherits it (a child
    working for an exclusive holder is told so by :data:`LOCK_HELD_VARIABLE`). Within
    one thread, nesting is free (the same lock again, or a shared one inside an exclusive one);
    an exclusive lock inside a shared one is a ``ValueError`` (it would wait for itself). A
    reader of a directory that does not exist, or where no lock file can be made (read-only),
    reads without a lock. ``what`` names the holder in error messages. ``name``: the lock file,
    for a finer lock of the same directory (:func:`runs_lock`, :func:`records_lock`).
    """
    root = Path(directory)
    held = _held_locks()
    key = lock_key(root, name)
    if os.environ.get(LOCK_HELD_VARIABLE) == key:  # a child of the holder, working for it
        yield
        return
    if key in held:
        entry = held[key]
        if entry[0] == "shared" and not shared:
            raise ValueError(
                f"{what}: cannot lock {root} for writing inside a read of it (take the "
                "exclusive lock first)"
            )
        entry[1] += 1
        try:
            yield
        finally:
            entry[1] -= 1
        return
    fd: int | None = None
    try:
        fd = _open_lock_file(root, shared, name)
        if fd is not None:
            operation = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
            try:
                fcntl.flock(fd, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait()
                fcntl.flock(fd, operation)
    except BaseException as err:
        if fd is not None:
            os.close(fd)
        if isinstance(err, OSError):
            raise ValueError(os_error_message(err, root, f"lock ({what})")) from err
        raise
    if fd is None:
        yield
        return
    held[key] = ["shared" if shared else "exclusive", 1]
    try:
        yield
    finally:
        del held[key]
        os.close(fd)  # releases the lock


# --- the work directory's finer locks ------------------------------------------------------------
#
# A run of ``regime reproduce`` takes minutes to hours. It holds the work directory's lock only
# *shared* (commands that rewrite what runs read, ``regime data prepare`` or ``regime embed``,
# still wait for it), and two finer locks: :func:`runs_lock`, exclusive for the whole reproduce
# (two reproduces never interleave), and :func:`records_lock`, exclusive only while one run
# commits its outputs (record, executed notebook, book page, stamp: a few renames). A reader of
# records (``regime verdicts``, ``regime book``) holds :func:`records_lock` shared, so it reads
# the last committed, stamped records at once, never a run's half-done commit.

#: the lock file in ``<work>`` a reproduce holds exclusively throughout
RUNS_LOCK_NAME = ".regime-runs.lock"
#: the lock file in ``<work>`` guarding the committed records
RECORDS_LOCK_NAME = ".regime-records.lock"


def runs_lock(
    work: Path | str, *, what: str, on_wait: Callable[[], None] | None = None
) -> contextlib.AbstractContextManager[None]:
    """The lock a writer of runs holds exclusively for its whole duration."""
    return directory_lock(work, what=what, on_wait=on_wait, name=RUNS_LOCK_NAME)


def records_lock(
    work: Path | str,
    *,
    what: str,
    shared: bool = False,
    on_wait: Callable[[], None] | None = None,
) -> contextlib.AbstractContextManager[None]:
    """The lock of the committed records: exclusive while a run commits, shared while a reader
    reads records."""
    return directory_lock(work, what=what, shared=shared, on_wait=on_wait, name=RECORDS_LOCK_NAME)
