"""Headless Chromium, driven over its DevTools protocol, and the local server it reads from.

:class:`DevTools` talks to Chromium through ``--remote-debugging-pipe`` (file descriptors 3 and 4:
JSON messages ended by a NUL byte), so nothing beyond the standard library is needed, no
debugging port is opened, and the browser is the Debian package ``chromium``; :func:`serve`
serves a directory on ``127.0.0.1``. :mod:`regime_core.book.browser` checks the book with them.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PHONE_BELOW = 700  # narrower viewports are emulated as a phone (viewport meta tag, touch)
CHROMIUM_NAMES: tuple[str, ...] = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)
CHROMIUM_ARGS: tuple[str, ...] = (
    "--headless",
    "--remote-debugging-pipe",
    # the sandbox needs user namespaces, which containers and root (CI) often lack; the browser
    # only ever opens the book, served from 127.0.0.1
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--password-store=basic",
    "--use-mock-keychain",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)


def find_chromium(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The Chromium executable: ``explicit`` if given, else the first of :data:`CHROMIUM_NAMES`
    on ``PATH``; None when there is none."""
    if explicit is not None:
        return str(explicit) if Path(explicit).is_file() else shutil.which(str(explicit))
    for name in CHROMIUM_NAMES:
        if found := shutil.which(name):
            return found
    return None


class DevToolsError(RuntimeError):
    """Chromium exited, timed out or answered a DevTools call with an error."""


class DevTools:
    """A headless Chromium driven over ``--remote-debugging-pipe``.

    The browser reads commands from its file descriptor 3 and writes answers and events to 4,
    one JSON object per message, each ended by a NUL byte. ``call`` sends a command and returns
    its result; events that arrive meanwhile are kept for ``wait_event``. The browser runs in
    its own process group, which ``close`` ends.
    """

    def __init__(self, executable: str, *, args: Sequence[str] = CHROMIUM_ARGS) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="regime-chromium-")
        self.log = Path(self._profile.name) / "chromium.log"
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        log = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDWR)
        argv = [executable, *args, f"--user-data-dir={self._profile.name}/profile", "about:blank"]
        try:
            self.pid = os.posix_spawn(
                executable,
                argv,
                dict(os.environ),
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, null, 0),
                    (os.POSIX_SPAWN_DUP2, null, 1),
                    (os.POSIX_SPAWN_DUP2, log, 2),
                    (os.POSIX_SPAWN_DUP2, to_browser_read, 3),
                    (os.POSIX_SPAWN_DUP2, from_browser_write, 4),
                ],
                setpgroup=0,
            )
        finally:
            for fd in (to_browser_read, from_browser_write, log, null):
                os.close(fd)
        self._buffer = bytearray()
        self._scanned = 0
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self._closed = False

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _log_tail(self) -> str:
        try:
            lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        useful = [ln for ln in lines if "dbus" not in ln.lower()]
        return "\n".join(useful[-8:])

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while True:
            end = self._buffer.find(b"\0", self._scanned)
            if end >= 0:
                message = json.loads(bytes(self._buffer[:end]))
                del self._buffer[: end + 1]
                self._scanned = 0
                return message
            self._scanned = len(self._buffer)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DevToolsError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise DevToolsError(f"Chromium exited:\n{self._log_tail()}")
            self._buffer += chunk

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """Send one DevTools command and return its ``result``."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        payload = json.dumps(message).encode() + b"\0"
        try:
            while payload:
                payload = payload[os.write(self._to_browser, payload) :]
        except BrokenPipeError as err:
            raise DevToolsError(f"Chromium exited:\n{self._log_tail()}") from err
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == message["id"]:
                if "error" in answer:
                    raise DevToolsError(f"{method}: {answer['error'].get('message', answer)}")
                return dict(answer.get("result", {}))
            if "method" in answer:
                self._events.append(answer)

    def open_tab(self, *domains: str) -> str:
        """Open a blank tab, attach to it and enable ``domains`` (``"Page"``, ...) there; return
        its session id."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        for domain in domains:
            self.call(f"{domain}.enable", session=attached["sessionId"])
        return str(attached["sessionId"])

    def set_viewport(self, session: str, width: int, height: int) -> None:
        """Show the tab ``width`` x ``height`` CSS px at scale 1, as a phone below
        :data:`PHONE_BELOW` px."""
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1}
        metrics["mobile"] = width < PHONE_BELOW
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=session)

    def clear_events(self) -> None:
        """Forget the events received so far (before a navigation, say)."""
        self._events.clear()

    def events(self, method: str, *, session: str | None = None) -> list[dict[str, Any]]:
        """The parameters of every event ``method`` (of ``session``) received since
        :meth:`clear_events`, in order; they stay received."""
        return [
            dict(event.get("params", {}))
            for event in self._events
            if event.get("method") == method and event.get("sessionId") == session
        ]

    def wait_event(
        self, method: str, *, session: str | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """The first event ``method`` (of ``session``) received since :meth:`clear_events`."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self._events:
                if event.get("method") == method and event.get("sessionId") == session:
                    self._events.remove(event)
                    return dict(event.get("params", {}))
            message = self._read_message(deadline)
            if "method" in message:
                self._events.append(message)

    def _wait(self, seconds: float) -> bool:
        """Whether the browser process has exited (and is reaped) within ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                if os.waitpid(self.pid, os.WNOHANG)[0] != 0:
                    return True
            except ChildProcessError:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def close(self) -> None:
        """Ask the browser to quit, then end its process group; remove its profile."""
        if self._closed:
            return
        self._closed = True
        with suppress(DevToolsError, OSError):
            self.call("Browser.close", timeout=5.0)
        if not self._wait(5.0):
            with suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self._wait(5.0)
        with suppress(ProcessLookupError):  # a browser that quit takes its renderers along
            os.killpg(self.pid, signal.SIGKILL)
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        self._profile.cleanup()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(directory: Path | str) -> Iterator[str]:
    """Serve ``directory`` over HTTP on ``127.0.0.1`` for the duration; yields its base URL."""
    handler = partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="book-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
