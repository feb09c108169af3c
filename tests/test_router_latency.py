"""Routing latency: the summary kernels, and both timers on a small toy world."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import Any
from unittest import mock

import numpy as np
import pytest

from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.router import _text, latency
from regime_core.router.latency import (
    PERCENTILES,
    cold_indices,
    latency_summary,
    measure_latency,
    median_of_passes,
    routing_items,
    time_javascript,
    time_python_warm,
)
from regime_core.router.model import default_router, default_router_path

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture(scope="module")
def items():
    return routing_items(generate(ToyWorldConfig(n_questions=40)))


def _measure(items: Sequence[latency.RoutingItem], **knobs: Any) -> latency.LatencyResult:
    """:func:`measure_latency` of the packaged router on ``items`` as one toy-world dataset."""
    return measure_latency({"toyworld": items}, default_router(), default_router_path(), **knobs)


def test_summary_is_the_percentiles_and_the_maximum() -> None:
    seconds = np.arange(1, 101) * 1e-5
    s = latency_summary(seconds)
    assert s["n"] == 100 and s["max_seconds"] == pytest.approx(1e-3)
    for q in PERCENTILES:
        assert s[f"p{q}_seconds"] == pytest.approx(np.percentile(seconds, q))


def test_a_question_takes_the_median_of_its_passes() -> None:
    # question 0: one pass interrupted (5 ms), the median drops it; question 1: two of three
    passes = np.array([[1e-4, 5e-3], [5e-3, 6e-3], [2e-4, 3e-4]])
    assert median_of_passes(passes).tolist() == [2e-4, 5e-3]
    assert median_of_passes([[1e-4, 2e-4]]).tolist() == [1e-4, 2e-4]  # one pass: itself


def test_cold_processes_spread_over_every_dataset() -> None:
    assert cold_indices(1362, 4) == [0, 340, 681, 1021]
    assert cold_indices(3, 5) == [0, 0, 1, 1, 2]  # more processes than items: each item used
    assert cold_indices(5, 5) == [0, 1, 2, 3, 4]


def test_python_warm_timing_routes_every_item_in_every_pass_after_clearing_the_memo(
    items,
) -> None:
    with mock.patch.object(_text.view, "cache_clear", wraps=_text.view.cache_clear) as clear:
        seconds = time_python_warm(default_router(), items, warmup=5, passes=3)
    assert seconds.shape == (3, len(items)) and np.all(seconds > 0)
    assert clear.call_count == 3  # before each pass: every timed call is a first sight


def test_without_node_javascript_is_an_error_not_a_silent_omission(items, monkeypatch) -> None:
    monkeypatch.setattr(latency, "node_executable", lambda: None)
    with pytest.raises(FileNotFoundError, match="node is not on PATH"):
        _measure(items[:4])
    result = _measure(items[:4], warmup=1, passes=2, processes=1, javascript=False)
    numbers = result.to_numbers()
    assert set(numbers["timings"]) == {"python"} and numbers["javascript_measured"] is False
    assert numbers["timings"]["python"]["warm"]["n"] == 4
    assert numbers["timings"]["python"]["cold"]["n"] == 1
    assert (numbers["warmup_calls"], numbers["warm_passes"], numbers["cold_processes"]) == (1, 2, 1)
    assert numbers["worst_warm_p99_seconds"] == numbers["timings"]["python"]["warm"]["p99_seconds"]
    machine = numbers["machine"]
    assert machine["cores"] >= 1 and isinstance(machine["load_average_1min"], str)


@needs_node
def test_javascript_timing_and_the_record(items) -> None:
    warm, cold = time_javascript(default_router_path(), items[:10], warmup=5, passes=2, processes=2)
    assert warm.shape == (2, 10) and cold.shape == (2,) and np.all(warm > 0)
    result = _measure(items[:8], warmup=2, passes=3, processes=2)
    numbers = result.to_numbers()
    assert numbers["n_total"] == 8 and numbers["javascript_measured"] is True
    assert set(numbers["timings"]) == {"python", "javascript"}
    worst = max(t["warm"]["p99_seconds"] for t in numbers["timings"].values())
    assert numbers["worst_warm_p99_seconds"] == worst
    # the summary reads each question's median over the passes
    medians = median_of_passes(result.js_warm)
    assert numbers["timings"]["javascript"]["warm"]["p50_seconds"] == pytest.approx(
        float(np.percentile(medians, 50))
    )
    assert result.seconds()["python"]["warm"].shape == (8,)


def test_doctests_pass() -> None:
    import doctest

    assert doctest.testmod(latency).failed == 0
