"""The claims chart's layout kernel (regime_book.claims_chart) on constructed rows:
the axis, each element's place in % of the track, and the rows built from judged claims. The
rendered chart is checked on the fixture book by tests/test_book_build.py."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from helpers import refused

from regime_book.claims_chart import (
    MAX_TICKS,
    TICK_STEPS,
    ChartRow,
    chart_axis,
    chart_layout,
    chart_rows,
    place_row,
    tick_text,
)
from regime_core.paper import Claim
from regime_core.runner.records import Record


def _row(estimate: float, lo: float, hi: float, **paper: Any) -> ChartRow:
    return ChartRow("r", "", "reproduced", "reproduced", "", "", estimate, lo, hi, **paper)


def test_the_axis_holds_zero_and_every_value_on_whole_ticks() -> None:
    axis = chart_axis([3.2, 7.8, 14.1])
    assert (axis.low, axis.high, axis.step) == (0.0, 15.0, 5)
    assert axis.ticks == (0.0, 5.0, 10.0, 15.0)
    assert axis.at(0.0) == 0.0 and axis.at(7.5) == 50.0


def test_negative_values_put_zero_inside_the_axis() -> None:
    axis = chart_axis([-45.2, 3.0])
    assert (axis.low, axis.high, axis.step) == (-50.0, 10.0, 10)
    assert axis.at(0.0) == pytest.approx(100 * 50 / 60)
    only_negative = chart_axis([-7.0, -2.0])
    assert only_negative.high == 0.0 and only_negative.at(0.0) == 100.0
    assert only_negative.at(-7.0) == pytest.approx(100 * 1 / 8)


def test_a_value_on_a_tick_is_the_axis_end() -> None:
    axis = chart_axis([0.0, 15.0])
    assert axis.high == 15.0 and axis.at(15.0) == 100.0
    layout = place_row(_row(15.0, 10.0, 15.0, paper_value=15.0), axis)
    assert layout.estimate == 100.0 and layout.paper_value == 100.0
    left, width = layout.interval
    assert left + width == pytest.approx(100.0)
    # beyond the axis (never from chart_axis's own values): held at the end, never past it
    assert axis.at(40.0) == 100.0 and axis.at(-3.0) == 0.0


def test_an_interval_of_zero_width() -> None:
    row = _row(0.0, 0.0, 0.0)
    layout = chart_layout([row])
    assert (layout.axis.low, layout.axis.high) == (-1.0, 1.0)  # only zero: one tick each side
    assert layout.rows[0].interval == (50.0, 0.0)
    assert layout.rows[0].estimate == layout.zero == 50.0
    point = place_row(_row(4.0, 4.0, 4.0), chart_axis([4.0]))
    assert point.interval == (100.0, 0.0)


def test_ticks_are_whole_pp_and_never_too_many() -> None:
    rng = random.Random(7)
    for _ in range(500):
        values = [rng.uniform(-80, 80) for _ in range(rng.randint(1, 6))]
        axis = chart_axis(values)
        assert len(axis.ticks) <= MAX_TICKS and axis.step in TICK_STEPS
        assert all(t == round(t) and t % axis.step == 0 for t in axis.ticks)
        assert axis.low <= min([0.0, *values]) and axis.high >= max([0.0, *values])
        assert axis.low < 0 < axis.high or 0.0 in (axis.low, axis.high)
        # one step fewer would not hold the values in MAX_TICKS ticks
        smaller = [s for s in TICK_STEPS if s < axis.step]
        if smaller:
            s = smaller[-1]
            lo, hi = min([0.0, *values]), max([0.0, *values])
            assert math.ceil(hi / s) - math.floor(lo / s) + 1 > MAX_TICKS


def test_paper_marks_are_placed_on_the_same_axis() -> None:
    rows = [
        _row(7.8, 5.0, 10.6, paper_band=(8.6, 14.1)),
        _row(1.2, -0.2, 2.1, allowed=(0.0, None)),
        _row(-0.5, -2.0, 1.0, allowed=(-1.0, None), margins=(-1.0,), paper_value=1.1),
        _row(0.2, -0.6, 0.9, allowed=(-1.0, 1.0), margins=(-1.0, 1.0)),
    ]
    layout = chart_layout(rows)
    axis = layout.axis
    assert (axis.low, axis.high, axis.step) == (-5.0, 15.0, 5)
    band, implied, no_loss, invariant = layout.rows
    assert band.paper_band == (pytest.approx(axis.at(8.6)), pytest.approx(5.5 / 20 * 100))
    assert implied.allowed == (25.0, 75.0)  # from zero to the axis's end
    assert no_loss.margins == (20.0,) and no_loss.allowed == (20.0, 80.0)
    assert no_loss.paper_value == pytest.approx(axis.at(1.1))
    assert invariant.allowed == (20.0, pytest.approx(10.0))


def test_a_value_beyond_the_largest_step_is_refused() -> None:
    with refused(ValueError, names=("1000000",)):
        chart_axis([0.0, 1e6])


def test_tick_labels_have_a_sign_and_a_true_minus() -> None:
    assert [tick_text(v) for v in (-10.0, 0.0, 5.0, -0.0)] == ["\u221210", "0", "+5", "0"]


def _claim(claim_id: str, rule: str, paper: dict[str, Any], ours: dict[str, Any]) -> Claim:
    return Claim(claim_id, claim_id, "s", rule, paper, "r", ours, label=f"L {claim_id}",
                 chapter="book/claims/x")  # fmt: skip


def test_chart_rows_from_judged_claims() -> None:
    """Comparison claims become pp rows (one per part), the others text rows; fractions become
    pp, each kind its paper mark, each part its own verdict."""
    from regime_core.runner.verdicts import judge_claims

    keys = {"estimate": "c.diff", "ci_lo": "c.ci_lo", "ci_hi": "c.ci_hi"}
    near = {"estimate": "z.diff", "ci_lo": "z.ci_lo", "ci_hi": "z.ci_hi"}
    parts = {"parts": {"a": near, "b": keys}}
    claims = [
        _claim("gain", "estimate", {"value": 0.056}, keys),
        _claim("knock", "range", {"low": 0.086, "high": 0.141}, keys),
        _claim("implied", "positive", {"statement": "implied > 0"}, keys),
        _claim("noloss", "no_loss", {"statement": "no regret", "value": 0.011}, keys),
        _claim("same", "equivalence", {"statement": "unchanged"}, parts),
        _claim("share", "share", {"passing": 6, "total": 8}, {"passing": "s.p", "total": "s.t"}),
    ]  # fmt: skip
    numbers = {
        "c": {"diff": 0.066, "ci_lo": 0.045, "ci_hi": 0.091},
        "z": {"diff": 0.0, "ci_lo": -0.004, "ci_hi": 0.005},
        "s": {"p": 7, "t": 8},
    }
    verdicts = judge_claims({"r": Record({"name": "r", "config": {}, "numbers": numbers})}, claims)
    pp_rows, text_rows = chart_rows(verdicts)
    assert [r.label for r in pp_rows] == [
        "L gain", "L knock", "L implied", "L noloss", "L same · a", "L same · b",
    ]  # fmt: skip
    gain, knock, implied, noloss, same_a, same_b = pp_rows
    assert (gain.estimate, gain.ci_lo, gain.ci_hi) == pytest.approx((6.6, 4.5, 9.1))
    assert gain.paper_value == pytest.approx(5.6) and gain.verdict == "reproduced"
    assert gain.ours_text == "+6.6 pp (95% CI +4.5 to +9.1 pp)"
    assert (
        knock.paper_band == pytest.approx((8.6, 14.1)) and knock.verdict == "smaller than reported"
    )
    assert knock.verdict_label == "smaller than reported (consistent with the paper's range)"
    assert implied.allowed == (0.0, None) and implied.paper_value is None
    assert noloss.margins == (-1.0,) and noloss.paper_value == pytest.approx(1.1)
    assert same_a.margins == (-1.0, 1.0) and same_a.verdict == "reproduced"
    assert same_b.verdict == "not reproduced"
    assert all(r.chapter == "book/claims/x" for r in pp_rows)
    (share,) = text_rows
    assert (share.label, share.verdict, share.ours_text) == (
        "L share", "reproduced", "7 of 8 cells",
    )  # fmt: skip


def test_doctests_pass() -> None:
    import doctest

    from regime_book import claims_chart

    assert doctest.testmod(claims_chart).failed == 0
