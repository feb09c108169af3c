"""Routing latency: the summary kernel, and both timers on a small toy world."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.router.latency import (
    PERCENTILES,
    latency_summary,
    measure_latency,
    routing_items,
    time_javascript,
    time_python_warm,
)
from regime_core.router.model import default_router, default_router_path


@pytest.fixture(scope="module")
def items():
    return routing_items(generate(ToyWorldConfig(n_questions=40)))


def test_summary_is_the_percentiles_and_the_maximum() -> None:
    seconds = np.arange(1, 101) * 1e-5
    s = latency_summary(seconds)
    assert s["n"] == 100 and s["max_seconds"] == pytest.approx(1e-3)
    for q in PERCENTILES:
        assert s[f"p{q}_seconds"] == pytest.approx(np.percentile(seconds, q))
    for bad in ([], [1e-3, np.nan], [-1.0]):
        with pytest.raises(ValueError, match="latency_summary"):
            latency_summary(bad)


def test_routing_items_read_the_question_and_the_bridge(items) -> None:
    assert len(items) == 40 and all(i.sentences for i in items)
    with pytest.raises(ValueError, match="no examples"):
        routing_items([])


def test_python_warm_timing_routes_every_item_once(items) -> None:
    seconds = time_python_warm(default_router(), items, warmup=5)
    assert seconds.shape == (len(items),) and np.all(seconds > 0)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_timing_and_the_record(items) -> None:
    warm, cold = time_javascript(default_router_path(), items[:10], warmup=5, processes=2)
    assert warm.shape == (10,) and cold.shape == (2,) and np.all(warm > 0)
    result = measure_latency(
        {"toyworld": items[:8]}, default_router(), default_router_path(), warmup=2, processes=2
    )
    numbers = result.to_numbers()
    assert numbers["n_total"] == 8 and numbers["javascript_measured"] is True
    worst = max(t["warm"]["p99_seconds"] for t in numbers["timings"].values())
    assert numbers["worst_warm_p99_seconds"] == worst
    assert set(numbers["timings"]) == {"python", "javascript"}
