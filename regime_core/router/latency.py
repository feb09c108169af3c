"""How long routing one question takes, in Python and in JavaScript: the paper says under 1 ms.

*Routing* is what the router adds to a retrieval system per question: choose ``B_rel`` among the
bridge's sentences, compute the five features and decide (:meth:`RegimeRouter.route`;
``route`` in ``router.js``). Encoding the query is retrieval's cost under either action and is
not counted; nor is splitting running text into sentences (the datasets give sentences).

Two measurements per language, over the same questions:

- **warm**: every question routed once, one at a time, after :data:`WARMUP_CALLS` calls that are
  not timed (the interpreter's caches filled); each call timed with a monotonic nanosecond clock
  (``time.perf_counter_ns``; ``process.hrtime.bigint`` in Node).
- **cold**: the first call in a fresh process, the package imported and the model loaded before
  the clock starts; :data:`COLD_PROCESSES` processes, each routing another question.

Each gives the median and the 99th percentile (``numpy.percentile``, linear interpolation) and
the maximum. Timings describe the machine they ran on, so the record carries the machine too and
the expected-number checks ignore them. Side effects (processes, temporary files) happen only in
:func:`measure_latency`; :func:`latency_summary` is pure.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from regime_core.router.estimator import RegimeRouter

#: Untimed calls before the warm measurement (fills caches, compiles the JavaScript).
WARMUP_CALLS: int = 200
#: Fresh processes of the cold measurement, per language.
COLD_PROCESSES: int = 20
#: The percentiles each measurement reports.
PERCENTILES: tuple[int, ...] = (50, 99)
#: The Node harness that times ``router.js`` (package data, beside it).
JS_TIMER = "router_timing.js"


@dataclass(frozen=True)
class RoutingItem:
    """One question as the router sees it: the question, the bridge's sentences, its title."""

    question: str
    sentences: tuple[str, ...]
    title: str | None

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "sentences": list(self.sentences), "title": self.title}


def routing_items(examples: Iterable[Any]) -> list[RoutingItem]:
    """The router's input for each example: its question and its bridge passage's sentences and
    title (the gold hop-1 passage, as every router number of the book reads it)."""
    items = []
    for ex in examples:
        bridge = ex.bridge
        items.append(RoutingItem(ex.question, tuple(bridge.sentences), bridge.title or None))
    if not items:
        raise ValueError("routing_items: no examples to route")
    return items


def latency_summary(seconds: Sequence[float] | np.ndarray) -> dict[str, float | int]:
    """``n``, ``p50_seconds``, ``p99_seconds`` and ``max_seconds`` of a measurement; pure.

    >>> latency_summary([1e-4, 2e-4, 3e-4])["p50_seconds"]
    0.0002
    """
    values = np.asarray(seconds, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("latency_summary: needs at least one timing")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError("latency_summary: timings must be finite and non-negative")
    out: dict[str, float | int] = {"n": int(values.size)}
    for q in PERCENTILES:
        out[f"p{q}_seconds"] = float(np.percentile(values, q))
    out["max_seconds"] = float(values.max())
    return out


def time_python_warm(
    router: RegimeRouter, items: Sequence[RoutingItem], warmup: int = WARMUP_CALLS
) -> np.ndarray:
    """Seconds of ``router.route`` for each item, after ``warmup`` untimed calls."""
    for i in range(warmup):
        item = items[i % len(items)]
        router.route(item.question, list(item.sentences), item.title)
    out = np.empty(len(items))
    clock = time.perf_counter_ns
    for i, item in enumerate(items):
        sentences = list(item.sentences)
        start = clock()
        router.route(item.question, sentences, item.title)
        out[i] = (clock() - start) / 1e9
    return out


_PYTHON_COLD = """
import json, sys, time
from regime_core.router.io import load_router
router = load_router(sys.argv[1])
item = json.loads(sys.argv[2])
start = time.perf_counter_ns()
router.route(item["question"], item["sentences"], item["title"])
print((time.perf_counter_ns() - start) / 1e9)
"""


def time_python_cold(
    model_file: Path, items: Sequence[RoutingItem], processes: int = COLD_PROCESSES
) -> np.ndarray:
    """Seconds of the first ``route`` call in each of ``processes`` fresh Python processes."""
    out = []
    for i in range(processes):
        item = json.dumps(items[i % len(items)].to_json())
        done = subprocess.run(
            [sys.executable, "-c", _PYTHON_COLD, str(model_file), item],
            capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"the cold Python timing failed: {done.stderr.strip()[-500:]}")
        out.append(float(done.stdout.strip().splitlines()[-1]))
    return np.asarray(out)


def node_executable() -> str | None:
    """The ``node`` on PATH, or None (then JavaScript is not measured, and the record says so)."""
    return shutil.which("node")


def _timer_script() -> Path:
    import importlib.resources

    return Path(str(importlib.resources.files("regime_core") / "resources" / JS_TIMER))


def time_javascript(
    model_file: Path,
    items: Sequence[RoutingItem],
    *,
    warmup: int = WARMUP_CALLS,
    processes: int = COLD_PROCESSES,
    node: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(warm, cold)`` seconds of ``router.js``'s ``route``, timed by ``router_timing.js`` in
    Node: warm, every item after ``warmup`` untimed calls in one process; cold, the first call
    in each of ``processes`` fresh processes."""
    node = node or node_executable()
    if node is None:
        raise FileNotFoundError("node is not on PATH; JavaScript routing cannot be timed")
    with tempfile.TemporaryDirectory(prefix="regime-latency-") as tmp:
        lines = Path(tmp) / "items.jsonl"
        lines.write_text("".join(json.dumps(i.to_json()) + "\n" for i in items), "utf-8")

        def run(mode: str, *extra: str) -> list[float]:
            done = subprocess.run(
                [node, str(_timer_script()), str(model_file), str(lines), mode, *extra],
                capture_output=True, text=True, check=False, timeout=600,
            )  # fmt: skip
            if done.returncode != 0:
                raise RuntimeError(f"router_timing.js {mode} failed: {done.stderr.strip()[-500:]}")
            return [float(ns) / 1e9 for ns in json.loads(done.stdout)]

        warm = run("warm", str(warmup))
        cold = [run("cold", str(i % len(items)))[0] for i in range(processes)]
    return np.asarray(warm), np.asarray(cold)


def machine() -> dict[str, Any]:
    """What the timings describe: processor, cores, Python and Node versions."""
    node = node_executable()
    node_version = None
    if node is not None:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
        node_version = done.stdout.strip() or None
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count() or 0,
        "python": platform.python_version(),
        "node": node_version or "not installed",
    }


@dataclass(frozen=True)
class LatencyResult:
    """The timings of :func:`measure_latency`, per language and mode (seconds), and where."""

    n_questions: Mapping[str, int]
    python_warm: np.ndarray
    python_cold: np.ndarray
    js_warm: np.ndarray | None
    js_cold: np.ndarray | None
    machine: Mapping[str, Any]

    def to_numbers(self) -> dict[str, Any]:
        """The record's numbers: per language and mode the summary, and ``worst_warm_p99``:
        the larger of the two languages' warm 99th percentiles (what the claim is judged on)."""
        timings: dict[str, Any] = {
            "python": {
                "warm": latency_summary(self.python_warm),
                "cold": latency_summary(self.python_cold),
            }
        }
        if self.js_warm is not None and self.js_cold is not None:
            timings["javascript"] = {
                "warm": latency_summary(self.js_warm),
                "cold": latency_summary(self.js_cold),
            }
        worst = max(t["warm"]["p99_seconds"] for t in timings.values())
        return {
            "n_questions": dict(self.n_questions),
            "n_total": int(sum(self.n_questions.values())),
            "timings": timings,
            "worst_warm_p99_seconds": worst,
            "javascript_measured": "javascript" in timings,
            "machine": dict(self.machine),
            "warmup_calls": WARMUP_CALLS,
            "cold_processes": COLD_PROCESSES,
        }


def measure_latency(
    items_by_dataset: Mapping[str, Sequence[RoutingItem]],
    router: RegimeRouter,
    model_file: Path,
    *,
    warmup: int = WARMUP_CALLS,
    processes: int = COLD_PROCESSES,
    javascript: bool = True,
) -> LatencyResult:
    """Time the router on every item of every dataset, warm and cold, in Python and (when
    ``javascript`` and Node is on PATH) in JavaScript, both with ``model_file``'s model."""
    items = [item for items in items_by_dataset.values() for item in items]
    if not items:
        raise ValueError("measure_latency: no questions to route")
    js_warm = js_cold = None
    if javascript and node_executable() is not None:
        js_warm, js_cold = time_javascript(model_file, items, warmup=warmup, processes=processes)
    return LatencyResult(
        n_questions={name: len(v) for name, v in items_by_dataset.items()},
        python_warm=time_python_warm(router, items, warmup),
        python_cold=time_python_cold(model_file, items, processes),
        js_warm=js_warm,
        js_cold=js_cold,
        machine=machine(),
    )
