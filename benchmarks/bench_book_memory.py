"""Peak memory and wall time of a command's whole process tree, per notebook.

``/usr/bin/time -v`` reports the largest *single* process; a book build is a runner, papermill
and a kernel at once, so this samples ``/proc`` every ``--interval`` seconds and reports:

- ``peak_tree_rss_mb``: the largest sum of resident memory over the command and all its
  descendants at one sample (what the machine must hold);
- ``peak_process_rss_mb``: the largest single process (what ``/usr/bin/time -v`` reports);
- ``by_notebook``: the tree peak while each notebook's papermill child was alive (named by the
  ``.ipynb`` on its command line), with that notebook's seconds.

Sampling can miss a spike shorter than the interval; the kernel's own ``VmHWM`` (its true peak)
is read at every sample, so each notebook's ``peak_kernel_hwm_mb`` misses nothing.

Usage (a cold default book, install excluded)::

    python benchmarks/bench_book_memory.py --json -- \
        .venv/bin/regime reproduce --profile default --work _build/cold
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: the fields start after the last ')'
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    return children


def _tree(root: int, children: dict[int, list[int]]) -> list[int]:
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def _rss_mb(pid: int) -> float:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_MB
    except OSError:
        return 0.0


def _hwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _notebook(pid: int) -> str | None:
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    if not any(b"papermill" in a for a in args):
        return None
    for arg in args:
        if arg.endswith(b".ipynb"):
            return Path(arg.decode()).stem
    return None


def measure(command: list[str], interval: float) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=sys.stderr)  # stdout keeps only our JSON
    peak_tree = peak_process = 0.0
    notebooks: dict[str, dict] = {}
    while proc.poll() is None:
        children = _children_map()  # one scan of /proc per sample, shared by every lookup
        pids = _tree(proc.pid, children)
        rss = {pid: _rss_mb(pid) for pid in pids}
        total = sum(rss.values())
        peak_tree = max(peak_tree, total)
        peak_process = max(peak_process, max(rss.values(), default=0.0))
        now = time.perf_counter() - start
        for pid in pids:
            name = _notebook(pid)
            if name is None:
                continue
            fresh = {"first": now, "last": now, "peak_tree_rss_mb": 0.0, "peak_kernel_hwm_mb": 0.0}
            entry = notebooks.setdefault(name, fresh)
            entry["last"] = now
            entry["peak_tree_rss_mb"] = max(entry["peak_tree_rss_mb"], total)
            kernel = max((_hwm_mb(p) for p in _tree(pid, children) if p != pid), default=0.0)
            entry["peak_kernel_hwm_mb"] = max(entry["peak_kernel_hwm_mb"], kernel)
        time.sleep(interval)
    return {
        "command": command,
        "returncode": proc.returncode,
        "seconds": round(time.perf_counter() - start, 1),
        "peak_tree_rss_mb": round(peak_tree, 1),
        "peak_process_rss_mb": round(peak_process, 1),
        "by_notebook": {
            name: {
                "seconds": round(e["last"] - e["first"], 1),
                "peak_tree_rss_mb": round(e["peak_tree_rss_mb"], 1),
                "peak_kernel_hwm_mb": round(e["peak_kernel_hwm_mb"], 1),
            }
            for name, e in notebooks.items()
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    if args.interval <= 0:
        parser.error(f"--interval must be positive, got {args.interval}")
    result = measure(command, args.interval)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['seconds']} s, peak tree RSS {result['peak_tree_rss_mb']:.0f} MB")
        for name, entry in result["by_notebook"].items():
            print(
                f"  {name:32s} {entry['seconds']:7.1f} s  tree {entry['peak_tree_rss_mb']:7.0f} MB"
                f"  kernel HWM {entry['peak_kernel_hwm_mb']:7.0f} MB"
            )
    return 0 if result["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
