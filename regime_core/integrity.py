"""Integrity of the files the package reads and writes: atomic writes, strict reads.

Every file the package derives (prepared data, caches, embedding shards, records, routers) is
written through :func:`atomic_write_bytes`: a temporary file with a unique name carrying the
writer's pid (``.<name>.<pid>.<random>.tmp``), fsync-ed, made ``0644`` and ``os.replace``-d
into place, so a reader never sees half a file and two writers never share a temporary.
Outputs go only where they should (:func:`output_target`): a target that exists and is not a
regular file (a directory, a FIFO, a device, a socket) is refused, never replaced; a symbolic
link is *followed* when it points to an existing regular file (that file is replaced, the link
stays a link) and refused otherwise (dangling, looping, or pointing to anything else).
:func:`remove_stale_temporaries` deletes the temporaries of writers that are no longer running
(an interrupted run's leftovers) and leaves those of live writers alone.

Every file the package reads goes through :func:`read_bytes`: it is opened without blocking and
must be a regular file (a FIFO, a device or a directory is an error naming it, and never hangs
the reader); a dangling symbolic link is named as such. Its JSON and YAML are parsed strictly by
:mod:`regime_core.strict_json`; directories are locked by :mod:`regime_core.locks`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

FILE_MODE = 0o644  # derived files are shared like any cache: readable by group and others
# ``.<name>.<pid>.<random>.tmp`` (ours) and ``.tmp-<random>.part`` / ``<name>.tmp`` (the
# embedding store's and prepare's temporaries before this module, which carry no pid)
_OUR_TEMP = re.compile(r"^\..+\.(\d+)\.[A-Za-z0-9_]+\.tmp$")
_LEGACY_TEMP = re.compile(r"^(\.tmp-[A-Za-z0-9_]+\.part|[^.].*\.(json|jsonl)\.tmp)$")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_bytes(value: Any) -> bytes:
    """The bytes hashes are computed over: sorted keys, no whitespace, no NaN, UTF-8."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def file_kind(mode: int) -> str:
    """What an ``st_mode`` is, for messages: ``a directory``, ``a FIFO (named pipe)``, ..."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "a special file"


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
        errno.ELOOP: "its symbolic links loop",
        errno.ENXIO: "it is a socket or a device without a driver, not a regular file",
        errno.ENAMETOOLONG: "the name is too long",
    }.get(err.errno or 0, err.strerror or str(err))
    return f"cannot {action} {path}: {reason}"


def _given_path(path: Path | str, action: str) -> Path:
    """``path`` as handed in, refused when it holds a NUL (no file name can; the operating
    system's own ``ValueError`` would not name the path)."""
    if "\0" in str(path):
        raise ValueError(f"cannot {action} {str(path)!r}: the path holds a NUL character")
    return Path(path)


def output_target(path: Path | str) -> Path:
    """The regular file a write to ``path`` replaces, by the writer's rule (module docstring).

    ``path`` itself when nothing is there or it is a regular file; the file a symbolic link
    points to when that is an existing regular file (the link is kept). ``ValueError`` naming
    ``path`` otherwise: a directory, FIFO, device or socket is never replaced by a file, and a
    dangling or looping link is not followed to create a file somewhere else.
    """
    target = _given_path(path, "write")
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target
    except OSError as err:
        raise ValueError(os_error_message(err, target, "write")) from err
    resolved, what = target, file_kind(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        link = os.readlink(target)
        try:
            resolved = Path(os.path.realpath(target, strict=True))
            info = os.stat(resolved)
        except FileNotFoundError:
            raise ValueError(
                f"cannot write {target}: it is a symbolic link to {link}, which does not exist "
                "(a link is followed only to an existing regular file)"
            ) from None
        except OSError as err:
            raise ValueError(os_error_message(err, target, "write")) from err
        what = f"a symbolic link to {file_kind(info.st_mode)} ({link})"
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(
            f"cannot write {target}: it is {what}; only a regular file is ever replaced"
        )
    return resolved


def atomic_write_bytes(path: Path | str, data: bytes, *, mode: int = FILE_MODE) -> None:
    """Write ``data`` to ``path`` atomically (unique temporary + fsync + ``os.replace``).

    Where it writes is :func:`output_target`'s rule: a symbolic link to a regular file has that
    file replaced (the link stays); a directory, FIFO, device, socket or dangling link is
    refused. Raises ``ValueError`` naming the path for these and for permission and path
    problems (a parent that is a file), so no caller shows an ``OSError`` traceback.
    """
    given = Path(path)
    target = output_target(given)
    try:
        _existing_ancestor(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp"
        )
    except OSError as err:
        raise ValueError(os_error_message(err, given, "write")) from err
    try:
        os.chmod(tmp, mode)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if output_target(given) != target:  # replaced by a link meanwhile: refuse, not guess
            raise ValueError(f"cannot write {given}: it changed while it was being written")
        os.replace(tmp, target)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise ValueError(os_error_message(err, given, "write")) from err
        raise


def _existing_ancestor(target: Path) -> Path:
    """The nearest existing ancestor of ``target``, a directory: ``NotADirectoryError`` when it
    is a file, ``ValueError`` when an ancestor is a dangling symbolic link (``mkdir`` would say
    "File exists" for both, naming the wrong problem)."""
    for parent in target.parents:
        if os.path.islink(parent) and not parent.exists():
            raise ValueError(
                f"cannot make the directory {target}: {parent} is a symbolic link to "
                f"{os.readlink(parent)}, which does not exist"
            )
        if parent.exists():
            if not parent.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(parent))
            return parent
    return Path(target.anchor or ".")


def check_writable(path: Path | str, what: str) -> None:
    """ValueError naming ``what`` and ``path`` unless :func:`atomic_write_bytes` could write
    ``path``: :func:`output_target` accepts it and its nearest existing ancestor is a writable
    directory."""
    try:
        parent = _existing_ancestor(output_target(path))
    except NotADirectoryError as err:
        raise ValueError(
            f"{what}: cannot write {path}: its parent {err.filename} is not a directory"
        ) from None
    except ValueError as err:
        raise ValueError(f"{what}: {err}") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{what}: cannot write {path}: permission denied on {parent}")


def append_text(path: Path | str, text: str) -> None:
    """Append ``text`` (UTF-8) to the log ``path``, created if missing, by the writers' rule:
    opened without blocking (a FIFO without a reader is refused, not waited on) and written
    only when it is a regular file (a device or FIFO there is a ``ValueError`` naming it)."""
    name = Path(path)
    try:
        fd = _open_regular_fd(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, "append to")
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as err:
        raise ValueError(os_error_message(err, name, "append to")) from err


def write_if_changed(path: Path, data: bytes) -> None:
    """Atomic write that leaves an identical file untouched (its mtime kept)."""
    with contextlib.suppress(OSError, ValueError):
        if read_bytes(path) == data:
            return
    atomic_write_bytes(path, data)


# --- directories -----------------------------------------------------------------------------


def _refuse_outside(target: Path, through: Path, inside: Path | str) -> None:
    """``ValueError`` naming ``target`` when ``through`` (``target`` or its parent), its links
    resolved, lies outside ``inside`` (its links resolved too)."""
    real, real_root = Path(os.path.realpath(through)), Path(os.path.realpath(inside))
    if real != real_root and real_root not in real.parents:
        raise ValueError(
            f"cannot write into {target}: it leads outside {inside} through a symbolic link "
            f"(to {real}); the runner writes only inside its work directory"
        )


def make_directory(path: Path | str, *, inside: Path | str | None = None) -> Path:
    """``path`` as a directory (created with its parents), by the writers' rule.

    ``ValueError`` naming ``path`` when it, or an ancestor, exists and is not a directory (a
    file, a FIFO, a dangling link), when making it fails (permission, read-only), and, given
    ``inside`` (the work directory), when ``path`` resolves outside ``inside``: a link in its
    place or among its ancestors is never followed out of the directory the writer owns.
    """
    target = _given_path(path, "make the directory")
    if inside is not None:
        _refuse_outside(target, target, inside)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        if os.path.islink(target):
            raise ValueError(
                f"cannot make the directory {target}: it is a symbolic link to "
                f"{os.readlink(target)}, which does not exist"
            ) from None
        try:
            _existing_ancestor(target)
            target.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(os_error_message(err, target, "make the directory")) from err
        return make_directory(target, inside=inside)  # made: check what is there now
    except OSError as err:
        raise ValueError(os_error_message(err, target, "make the directory")) from err
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError(
            f"cannot make the directory {target}: it is {file_kind(info.st_mode)}; only a "
            "directory is written into"
        )
    return target


def fresh_directory(path: Path | str, *, inside: Path | str) -> Path:
    """``path`` as a new, empty directory inside ``inside``: what was there is removed first.

    Only a real directory (not a link to one) or a regular file is removed; a symbolic link,
    FIFO, device or socket in its place is refused with a ``ValueError`` naming it, and so is a
    removal that fails (nothing is swallowed: a folder that could not be emptied would mix old
    outputs with new). Then :func:`make_directory` with ``inside``.
    """
    target = Path(path)
    _refuse_outside(target, target.parent, inside)  # checked before anything is removed
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return make_directory(target, inside=inside)
    except OSError as err:
        raise ValueError(os_error_message(err, target, "empty")) from err
    if stat.S_ISDIR(info.st_mode):
        failures: list[str] = []

        def note(_function: Any, failed: str, exc_info: Any) -> None:
            error = exc_info[1] if isinstance(exc_info, tuple) else exc_info
            failures.append(os_error_message(error, failed, "remove"))

        # links inside are removed, never followed; ``onexc`` from 3.12 (``onerror`` warns)
        if sys.version_info >= (3, 12):
            shutil.rmtree(target, onexc=note)
        else:
            shutil.rmtree(target, onerror=note)
        if failures:
            raise ValueError(f"cannot empty {target}: {failures[0]}")
    elif stat.S_ISREG(info.st_mode):
        remove_file(target)
    else:  # a symbolic link (never followed), FIFO, device or socket
        what = file_kind(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            what = f"a symbolic link to {os.readlink(target)}"
        raise ValueError(
            f"cannot empty {target}: it is {what}; the runner replaces only a regular file or a "
            "directory of its own (remove it)"
        )
    return make_directory(target, inside=inside)


def remove_file(path: Path | str) -> None:
    """Delete ``path`` if it is there, a regular file or a symbolic link (the link itself,
    never its target); ``ValueError`` naming it when it is a directory or a special file, or
    the removal fails."""
    target = Path(path)
    try:
        info = os.lstat(target)
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            raise ValueError(
                f"cannot remove {target}: it is {file_kind(info.st_mode)}, not a file of the "
                "runner's; remove it by hand"
            )
        target.unlink()
    except FileNotFoundError:  # nothing there, or removed by another process meanwhile
        return
    except OSError as err:
        raise ValueError(os_error_message(err, target, "remove")) from err


# --- reading ---------------------------------------------------------------------------------


def _open_regular_fd(name: Path, flags: int, action: str) -> int:
    """A descriptor of ``name`` opened with ``flags`` without blocking (a FIFO or a device never
    hangs the caller), if it is a regular file: ``ValueError`` naming it and what it is
    otherwise; the ``OSError`` of opening it is the caller's to word."""
    fd = os.open(name, flags | os.O_NONBLOCK | os.O_CLOEXEC, FILE_MODE)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(
                f"cannot {action} {name}: it is {file_kind(info.st_mode)}, not a regular file"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: Path | str) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file (or a symbolic link to one).

    The file is opened without blocking, so a FIFO or a device never hangs the reader: it is
    refused, as is a directory, with a ``ValueError`` naming the file and what it is.
    ``FileNotFoundError`` when nothing is there (its message says so when ``path`` is a
    dangling symbolic link); permission and path problems are ``ValueError`` naming the file.
    """
    name = _given_path(path, "read")
    try:
        fd = _open_regular_fd(name, os.O_RDONLY, "read")
    except FileNotFoundError:
        if os.path.islink(name):
            raise FileNotFoundError(
                f"cannot read {name}: it is a symbolic link to {os.readlink(name)}, which does "
                "not exist"
            ) from None
        raise FileNotFoundError(f"cannot read {name}: no such file") from None
    except OSError as err:
        raise ValueError(os_error_message(err, name, "read")) from err
    os.set_blocking(fd, True)  # a regular file: ordinary reads from here on
    return os.fdopen(fd, "rb")


def read_bytes(path: Path | str) -> bytes:
    """``path``'s bytes, if it is a regular file (or a symbolic link to one): the refusals of
    :func:`open_regular`."""
    with open_regular(path) as handle:
        try:
            return handle.read()
        except OSError as err:
            raise ValueError(os_error_message(err, Path(path), "read")) from err


def read_text(path: Path | str) -> str:
    """``path``'s text (:func:`read_bytes`, UTF-8); ``ValueError`` naming it if not UTF-8."""
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte {err.start})") from err


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
    removed: list[Path] = []
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
