"""Tiny notebooks executed many at once through the runner's own function: do all kernels start?

    python benchmarks/bench_kernels.py [--notebooks K] [--at-once M] [--hang-seconds H]

Issue 46: two notebooks executing at once once left a kernel dead at start-up and papermill
waiting without end. This script executes K one-cell notebooks (each printing its own parameter
back) M at a time through :func:`regime_core.runner.execution.run_papermill`, and counts each as
*finished* (exit 0 and its own output in the executed notebook), *failed* (anything else), or
*hung* (still running after H seconds: then killed, by its pid and token, as Ctrl-C would). It
prints the counts, the wall seconds and the machine's load (``uptime``) before and after.
"""

from __future__ import annotations

import argparse
import concurrent.futures as futures
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import nbformat

from regime_core.runner.children import kill_run
from regime_core.runner.execution import run_papermill

KERNEL_NAME = "python3"


def tiny_notebook(folder: Path) -> Path:
    """A notebook with a ``parameters`` cell (``n``) and a cell printing ``n``."""
    parameters = nbformat.v4.new_code_cell("n = 0", metadata={"tags": ["parameters"]})
    notebook = nbformat.v4.new_notebook(cells=[parameters, nbformat.v4.new_code_cell("print(n)")])
    notebook.metadata["kernelspec"] = {"name": KERNEL_NAME, "language": "python",
                                       "display_name": "Python 3"}  # fmt: skip
    path = folder / "tiny.ipynb"
    nbformat.write(notebook, path)
    return path


def printed(executed: Path) -> str:
    """What the executed notebook's last cell printed ("" if it never ran)."""
    if not executed.is_file():
        return ""
    outputs = nbformat.read(executed, as_version=4).cells[-1].get("outputs", [])
    return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")


def execute_one(notebook: Path, work: Path, index: int, hang_seconds: float) -> tuple[str, str]:
    """Execute the notebook with ``n = index``: ``finished``, ``failed`` or ``hung``, and the last
    line papermill wrote on stderr."""
    run_dir = work / "runs" / f"r{index}"
    run_dir.mkdir(parents=True)
    executed, pid_file = run_dir / "executed.ipynb", run_dir / "child.pid"
    hung = threading.Event()

    def end_hung_run() -> None:
        hung.set()
        try:
            pid = int(pid_file.read_text())
            token = pid_file.with_suffix(".token").read_text().strip()
        except (OSError, ValueError):
            return
        kill_run(pid, token)

    watchdog = threading.Timer(hang_seconds, end_hung_run)
    watchdog.start()
    try:
        returncode, stderr = run_papermill(
            notebook, executed, {"n": index}, work=work, kernel_name=KERNEL_NAME, pid_file=pid_file
        )
    finally:
        watchdog.cancel()
    last_line = (stderr.strip().splitlines() or [""])[-1]
    if hung.is_set():
        return "hung", last_line
    finished = returncode == 0 and printed(executed).strip() == str(index)
    return ("finished" if finished else "failed"), last_line


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=24, help="K: notebooks in all")
    parser.add_argument("--at-once", type=int, default=6, help="M: notebooks at a time")
    parser.add_argument("--hang-seconds", type=float, default=180.0,
                        help="H: a notebook still running after this long is hung")  # fmt: skip
    args = parser.parse_args()
    load_before = uptime()
    with tempfile.TemporaryDirectory(prefix="bench-kernels-") as folder:
        work = Path(folder) / "work"
        notebook = tiny_notebook(Path(folder))
        started = time.perf_counter()
        with futures.ThreadPoolExecutor(args.at_once) as pool:
            outcomes = list(pool.map(lambda i: execute_one(notebook, work, i, args.hang_seconds),
                                     range(args.notebooks)))  # fmt: skip
        seconds = time.perf_counter() - started
    statuses = [status for status, _ in outcomes]
    counts = {status: statuses.count(status) for status in ("finished", "failed", "hung")}
    print(
        f"{args.notebooks} notebooks, {args.at_once} at a time, in {seconds:.1f} s: "
        f"{counts['finished']} finished, {counts['failed']} failed, {counts['hung']} hung"
    )
    print(f"before: {load_before}\nafter:  {uptime()}")
    for status, last_line in outcomes:
        if status != "finished":
            print(f"{status}: {last_line}")


if __name__ == "__main__":
    main()
