"""How long routing one question takes, in Python and in JavaScript: the paper says under 1 ms.

*Routing* is what the router adds to a retrieval system per question: choose ``B_rel`` among the
bridge's sentences, compute the five features and decide (:meth:`RegimeRouter.route`;
``route`` in ``router.js``). Encoding the query is retrieval's cost under either action and is
not counted; nor is splitting running text into sentences (the datasets give sentences), nor
loading the model (once per process, before any clock starts).

Two measurements per language, over the same questions:

- **warm**: a process that has already routed :data:`WARMUP_CALLS` questions (untimed: the
  interpreter's caches filled, the JavaScript compiled) routes every question, one at a time,
  each timed with a monotonic nanosecond clock (``time.perf_counter_ns``;
  ``process.hrtime.bigint`` in Node). This is done :data:`WARM_PASSES` times and a question's
  time is the **median of its passes**: on a shared machine another process may take the core
  in the middle of a call (a time slice is milliseconds, a call a tenth of one), which only
  ever adds time to that one call; the median of five passes drops such an interruption unless
  it hits three of them. Python memoises its text analysis per text (``_text.view``); the memo
  is cleared before each pass, so every timed call is the first one that sees its question's
  texts, as for a question a service has never met (``router.js`` memoises nothing).
- **cold**: the first call in a fresh process, the package imported and the model loaded before
  the clock starts; :data:`COLD_PROCESSES` processes, each routing another question, one after
  the other. It includes what the first call of an interpreter costs (lazy imports, the first
  compilation of the code): reported beside the warm numbers, never judged.

Each gives ``n``, the median and the 99th percentile (``numpy.percentile``, linear
interpolation) and the maximum. Timings describe the machine they ran on, so the record carries
the machine too (processor, cores, Python and Node versions, the one-minute load average at the
end of the measurement), and the expected-number checks ignore them
(:func:`regime_core.runner.expected.is_timing_key`). Side effects (processes, temporary files)
happen only in the ``time_*`` functions and :func:`measure_latency`; :func:`latency_summary` and
:func:`median_of_passes` are pure.
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

from regime_core.router import _text
from regime_core.router.estimator import RegimeRouter

#: Untimed calls before the warm measurement (fills caches, compiles the JavaScript).
WARMUP_CALLS: int = 200
#: Timed passes over every question in the warm measurement; a question's time is their median.
WARM_PASSES: int = 5
#: Fresh processes of the cold measurement, per language, one after the other. Each Python one
#: imports the package (scikit-learn with it: 1.5 s of a core, 3 s on a busy machine) before its
#: one timed call, so this count sets most of the run's time: 6 keep the book's latency run near
#: 30 s on two busy cores (10 took 42 s). Cold numbers are reported, not judged.
COLD_PROCESSES: int = 6
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
    return [
        RoutingItem(ex.question, tuple(ex.bridge.sentences), ex.bridge.title or None)
        for ex in examples
    ]


def latency_summary(seconds: Sequence[float] | np.ndarray) -> dict[str, float | int]:
    """``n``, ``p50_seconds``, ``p99_seconds`` and ``max_seconds`` of a measurement; pure.

    >>> latency_summary([1e-4, 2e-4, 3e-4])["p50_seconds"]
    0.0002
    """
    values = np.asarray(seconds, dtype=np.float64)
    out: dict[str, float | int] = {"n": int(values.size)}
    for q in PERCENTILES:
        out[f"p{q}_seconds"] = float(np.percentile(values, q))
    out["max_seconds"] = float(values.max())
    return out


def median_of_passes(passes: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """Per question (column), the median of its timed passes (rows); pure.

    >>> median_of_passes([[1e-4, 5e-3], [2e-4, 3e-4], [1e-4, 2e-4]]).tolist()
    [0.0001, 0.0003]
    """
    return np.median(np.asarray(passes, dtype=np.float64), axis=0)


def time_python_warm(
    router: RegimeRouter,
    items: Sequence[RoutingItem],
    warmup: int = WARMUP_CALLS,
    passes: int = WARM_PASSES,
) -> np.ndarray:
    """Seconds of ``router.route`` for each item: ``warmup`` untimed calls, then ``passes``
    timed passes over every item, the text-analysis memo cleared before each (so each timed
    call is the first to see its question's texts); shape ``(passes, len(items))``."""
    for i in range(warmup):
        item = items[i % len(items)]
        router.route(item.question, list(item.sentences), item.title)
    out = np.empty((passes, len(items)))
    clock = time.perf_counter_ns
    for p in range(passes):
        _text.view.cache_clear()
        for i, item in enumerate(items):
            sentences = list(item.sentences)
            start = clock()
            router.route(item.question, sentences, item.title)
            out[p, i] = (clock() - start) / 1e9
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


def cold_indices(n_items: int, processes: int) -> list[int]:
    """Which item each cold process routes: ``processes`` indices spread evenly over the items
    (every dataset's questions, in order), repeating only when there are more processes; pure.

    >>> cold_indices(10, 4), cold_indices(2, 3)
    ([0, 2, 5, 7], [0, 0, 1])
    """
    return [i * n_items // processes for i in range(processes)]


def time_python_cold(
    model_file: Path, items: Sequence[RoutingItem], processes: int = COLD_PROCESSES
) -> np.ndarray:
    """Seconds of the first ``route`` call in each of ``processes`` fresh Python processes, one
    after the other, each routing the item :func:`cold_indices` gives it."""
    out = []
    for index in cold_indices(len(items), processes):
        item = json.dumps(items[index].to_json())
        argv = [sys.executable, "-c", _PYTHON_COLD, str(model_file), item]
        stdout = _timing_child(argv, "the cold Python timing", timeout=120)
        out.append(float(stdout.strip().splitlines()[-1]))
    return np.asarray(out)


def _timing_child(argv: list[str], what: str, *, timeout: int) -> str:
    """The standard output of the timing process ``argv``; RuntimeError naming ``what`` and
    ending with its standard error when it fails."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def node_executable() -> str | None:
    """The ``node`` on PATH, or None."""
    return shutil.which("node")


def _timer_script() -> Path:
    import importlib.resources

    return Path(str(importlib.resources.files("regime_core") / "resources" / JS_TIMER))


def time_javascript(
    model_file: Path,
    items: Sequence[RoutingItem],
    *,
    warmup: int = WARMUP_CALLS,
    passes: int = WARM_PASSES,
    processes: int = COLD_PROCESSES,
    node: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(warm, cold)`` seconds of ``router.js``'s ``route``, timed by ``router_timing.js`` in
    Node: warm, ``passes`` timed passes over every item after ``warmup`` untimed calls, in one
    process (shape ``(passes, len(items))``); cold, the first call in each of ``processes``
    fresh processes (the items of :func:`cold_indices`)."""
    node = node or node_executable()
    if node is None:
        raise FileNotFoundError(
            "node is not on PATH, so JavaScript routing cannot be timed: install Node "
            "(Debian package nodejs) or time Python only (javascript=False)"
        )
    with tempfile.TemporaryDirectory(prefix="regime-latency-") as tmp:
        lines = Path(tmp) / "items.jsonl"
        lines.write_text("".join(json.dumps(i.to_json()) + "\n" for i in items), "utf-8")

        def run(mode: str, *extra: str) -> Any:
            argv = [node, str(_timer_script()), str(model_file), str(lines), mode, *extra]
            return json.loads(_timing_child(argv, f"router_timing.js {mode}", timeout=600))

        warm = np.asarray(run("warm", str(warmup), str(passes)), dtype=np.float64) / 1e9
        cold = [
            float(run("cold", str(index))[0]) / 1e9 for index in cold_indices(len(items), processes)
        ]
    return warm, np.asarray(cold)


def machine() -> dict[str, Any]:
    """What the timings describe: processor, cores, Python and Node versions, and the one-minute
    load average (how busy the machine was: other processes share its cores)."""
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
    try:
        load = f"{os.getloadavg()[0]:.2f}"  # text, as the other fields: it describes, not measures
    except (AttributeError, OSError):  # not on every platform
        load = "unknown"
    return {
        "cpu": cpu,
        "cores": os.cpu_count() or 0,
        "python": platform.python_version(),
        "node": node_version or "not installed",
        "load_average_1min": load,
    }


@dataclass(frozen=True)
class LatencyResult:
    """The timings of :func:`measure_latency` in seconds: warm ones as ``(passes, questions)``
    arrays, cold ones one per process; JavaScript's None when it was not timed."""

    n_questions: Mapping[str, int]
    python_warm: np.ndarray
    python_cold: np.ndarray
    js_warm: np.ndarray | None
    js_cold: np.ndarray | None
    machine: Mapping[str, Any]
    warmup_calls: int = WARMUP_CALLS
    warm_passes: int = WARM_PASSES
    cold_processes: int = COLD_PROCESSES

    def seconds(self) -> dict[str, dict[str, np.ndarray]]:
        """Per language (``python``, ``javascript``) and mode (``warm``: each question's median
        over the passes; ``cold``: each process's first call), the timings summarised."""
        out = {"python": {"warm": median_of_passes(self.python_warm), "cold": self.python_cold}}
        if self.js_warm is not None and self.js_cold is not None:
            out["javascript"] = {"warm": median_of_passes(self.js_warm), "cold": self.js_cold}
        return out

    def to_numbers(self) -> dict[str, Any]:
        """The record's numbers: per language and mode the summary (``timings``), and
        ``worst_warm_p99_seconds``: the larger of the languages' warm 99th percentiles (what
        the claim is judged on). Every timing sits under ``timings``, ``machine`` or in a key
        ending in ``_seconds``, the keys the expected-number checks leave out."""
        timings = {
            language: {mode: latency_summary(values) for mode, values in modes.items()}
            for language, modes in self.seconds().items()
        }
        worst = max(t["warm"]["p99_seconds"] for t in timings.values())
        return {
            "n_questions": dict(self.n_questions),
            "n_total": int(sum(self.n_questions.values())),
            "timings": timings,
            "worst_warm_p99_seconds": worst,
            "javascript_measured": "javascript" in timings,
            "machine": dict(self.machine),
            "warmup_calls": self.warmup_calls,
            "warm_passes": self.warm_passes,
            "cold_processes": self.cold_processes,
        }


def measure_latency(
    items_by_dataset: Mapping[str, Sequence[RoutingItem]],
    router: RegimeRouter,
    model_file: Path,
    *,
    warmup: int = WARMUP_CALLS,
    passes: int = WARM_PASSES,
    processes: int = COLD_PROCESSES,
    javascript: bool = True,
) -> LatencyResult:
    """Time the router on every item of every dataset, warm and cold, in Python and (unless
    ``javascript`` is False) in JavaScript, both with ``model_file``'s model. JavaScript needs
    Node on PATH: without it :func:`time_javascript` says so rather than leaving it out."""
    items = [item for items in items_by_dataset.values() for item in items]
    js_warm = js_cold = None
    if javascript:
        js_warm, js_cold = time_javascript(
            model_file, items, warmup=warmup, passes=passes, processes=processes
        )
    python_warm = time_python_warm(router, items, warmup, passes)
    python_cold = time_python_cold(model_file, items, processes)
    return LatencyResult(
        n_questions={name: len(v) for name, v in items_by_dataset.items()},
        python_warm=python_warm,
        python_cold=python_cold,
        js_warm=js_warm,
        js_cold=js_cold,
        machine=machine(),
        warmup_calls=warmup,
        warm_passes=passes,
        cold_processes=processes,
    )
