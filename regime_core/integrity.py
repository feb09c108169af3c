"""Integrity of derived files: atomic writes, hash-sealed JSON, stale temporaries, locks.

Every file the package derives (prepared data, caches, embedding shards, records, routers) is
written through :func:`atomic_write_bytes`: a temporary file with a unique name carrying the
writer's pid (``.<name>.<pid>.<random>.tmp``), fsync-ed, made ``0644`` and ``os.replace``-d
into place, so a reader never sees half a file and two writers never share a temporary.
:func:`remove_stale_temporaries` deletes the temporaries of writers that are no longer running
(an interrupted run's leftovers) and leaves those of live writers alone.

:func:`seal_json` / :func:`open_sealed_json` wrap a JSON payload with the sha256 of its
canonical form, so a flipped bit that still parses is detected on read.
:class:`DamagedFileError` names the file and the command that rebuilds it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

FILE_MODE = 0o644  # derived files are shared like any cache: readable by group and others
LOCK_NAME = ".regime.lock"
SEAL_KEY = "sha256"
PAYLOAD_KEY = "payload"
# ``.<name>.<pid>.<random>.tmp`` (ours) and ``.tmp-<random>.part`` / ``<name>.tmp`` (the
# embedding store's and prepare's temporaries before this module, which carry no pid)
_OUR_TEMP = re.compile(r"^\..+\.(\d+)\.[A-Za-z0-9_]+\.tmp$")
_LEGACY_TEMP = re.compile(r"^(\.tmp-[A-Za-z0-9_]+\.part|[^.].*\.(json|jsonl)\.tmp)$")


class DamagedFileError(ValueError):
    """A derived file failed its integrity check; the message names it and how to rebuild it."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_bytes(value: Any) -> bytes:
    """The bytes hashes are computed over: sorted keys, no whitespace, no NaN, UTF-8."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


# --- writing ---------------------------------------------------------------------------------


def os_error_message(err: OSError, path: Path | str, action: str) -> str:
    """``cannot <action> <path>: <reason>`` for permission and path problems."""
    reason = {
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.EISDIR: "it is a directory",
        errno.ENOTDIR: "a parent of it is not a directory",
        errno.ENOENT: "no such file or directory",
        errno.ENOSPC: "no space left on the device",
        errno.EROFS: "the file system is read-only",
    }.get(err.errno or 0, err.strerror or str(err))
    return f"cannot {action} {path}: {reason}"


def atomic_write_bytes(path: Path | str, data: bytes, *, mode: int = FILE_MODE) -> None:
    """Write ``data`` to ``path`` atomically (unique temporary + fsync + ``os.replace``).

    Raises ``ValueError`` naming the path for permission and path problems (a directory in
    the way, a parent that is a file), so no caller shows an ``OSError`` traceback.
    """
    target = Path(path)
    try:
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(target))
        _check_parents(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp"
        )
    except OSError as err:
        raise ValueError(os_error_message(err, target, "write")) from err
    try:
        os.chmod(tmp, mode)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise ValueError(os_error_message(err, target, "write")) from err
        raise


def _check_parents(target: Path) -> None:
    """``NotADirectoryError`` when an existing ancestor of ``target`` is a file (``mkdir``
    would say "File exists", naming the wrong problem)."""
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(parent))
            return


def check_writable(path: Path | str, what: str) -> None:
    """ValueError naming ``what`` and ``path`` unless a file could be written at ``path``:
    it is not a directory, its nearest existing ancestor is a writable directory."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{what}: cannot write {target}: it is a directory")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(
                    f"{what}: cannot write {target}: its parent {parent} is not a directory"
                )
            if not os.access(parent, os.W_OK | os.X_OK):
                raise ValueError(f"{what}: cannot write {target}: permission denied on {parent}")
            return


def write_if_changed(path: Path, data: bytes) -> None:
    """Atomic write that leaves an identical file untouched (its mtime kept)."""
    with contextlib.suppress(OSError):
        if path.is_file() and path.read_bytes() == data:
            return
    atomic_write_bytes(path, data)


def read_bytes(path: Path | str) -> bytes:
    """``path``'s bytes; permission and path problems as ``ValueError`` naming the file."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise
    except OSError as err:
        raise ValueError(os_error_message(err, path, "read")) from err


# --- stale temporaries -----------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    try:  # a zombie has exited; only its process-table entry waits to be reaped
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def remove_stale_temporaries(directory: Path | str) -> list[Path]:
    """Delete temporaries left in ``directory`` by writers no longer running; return them.

    A temporary whose pid is alive (another process writing now) is kept; one without a pid
    (written before temporaries carried one) is stale by construction of today's writers.
    """
    removed = []
    root = Path(directory)
    if not root.is_dir():
        return removed
    for entry in root.iterdir():
        ours = _OUR_TEMP.match(entry.name)
        stale = (ours is not None and not pid_alive(int(ours.group(1)))) or (
            ours is None and _LEGACY_TEMP.match(entry.name) is not None
        )
        if stale and entry.is_file():
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
                removed.append(entry)
    return removed


# --- sealed JSON -----------------------------------------------------------------------------


def seal_json(payload: Any) -> bytes:
    """``{"payload": ..., "sha256": <hash of the payload's canonical JSON>}`` as bytes."""
    body = {PAYLOAD_KEY: payload, SEAL_KEY: sha256_hex(canonical_bytes(payload))}
    return (json.dumps(body, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def read_json(path: Path | str, rebuild: str) -> Any:
    """The JSON value stored in ``path`` (UTF-8).

    Raises :class:`DamagedFileError` naming ``path`` and ``rebuild`` (the command or action that
    rebuilds it) when the file is not UTF-8 or not JSON.
    """
    raw = read_bytes(path)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise DamagedFileError(
            f"{path} is damaged (not UTF-8 at byte {err.start}); {rebuild}"
        ) from err
    except json.JSONDecodeError as err:
        raise DamagedFileError(
            f"{path} is damaged (not JSON: {err.msg} at line {err.lineno}); {rebuild}"
        ) from err


def open_sealed_json(path: Path | str, rebuild: str) -> Any:
    """The payload of a file written from :func:`seal_json`, verified.

    Raises :class:`DamagedFileError` naming ``path`` and ``rebuild`` (the command or action
    that rebuilds it) when the file is not UTF-8, not JSON, not sealed, or its hash differs.
    """
    body = read_json(path, rebuild)
    if not isinstance(body, dict) or set(body) != {PAYLOAD_KEY, SEAL_KEY}:
        raise DamagedFileError(f"{path} is damaged or of an older format (no seal); {rebuild}")
    if sha256_hex(canonical_bytes(body[PAYLOAD_KEY])) != body[SEAL_KEY]:
        raise DamagedFileError(
            f"{path} is damaged (its content does not match its sha256); {rebuild}"
        )
    return body[PAYLOAD_KEY]


# --- locks -----------------------------------------------------------------------------------

LOCK_MODES: tuple[str, ...] = ("exclusive", "shared")
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


def lock_key(directory: Path | str) -> str:
    """The lock file of ``directory``, resolved: what :data:`LOCK_HELD_VARIABLE` holds."""
    return os.path.realpath(Path(directory) / LOCK_NAME)


def _open_lock_file(root: Path, shared: bool) -> int | None:
    """A descriptor of ``root/.regime.lock`` (not inherited by children), or None for a reader
    of a directory that does not exist or cannot hold a lock file: nothing writes there."""
    lock_file = root / LOCK_NAME
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
    root.mkdir(parents=True, exist_ok=True)
    return os.open(lock_file, os.O_RDWR | os.O_CREAT | flags, FILE_MODE)


@contextlib.contextmanager
def directory_lock(
    directory: Path | str,
    *,
    what: str,
    on_wait: Callable[[], None] | None = None,
    shared: bool = False,
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
    reads without a lock. ``what`` names the holder in error messages.
    """
    root = Path(directory)
    held = _held_locks()
    key = lock_key(root)
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
        fd = _open_lock_file(root, shared)
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
