"""How a number is written in words: each kind of a record's numbers, an interval's ends and a
duration as the verdicts write them."""

from __future__ import annotations

import doctest

import pytest
from helpers import refused

from regime_core.runner import wording
from regime_core.runner.wording import duration_text, format_number, interval_text


def test_doctests_pass() -> None:
    assert doctest.testmod(wording).failed == 0


@pytest.mark.parametrize(
    ("value", "kind", "digits", "expected"),
    [
        (0.1234, "pp", None, "+12.3 pp"),
        (-0.0456, "pp", 2, "-4.56 pp"),
        (-0.0004, "pp", None, "0.0 pp"),
        (0.6218, "pct", None, "62.2%"),
        (0.62159, "frac", None, "0.622"),
        (0.0004, "p", None, "p < 0.001"),
        (0.0213, "p", None, "p = 0.021"),
        (12345, "int", None, "12,345"),
        (12.0, "int", None, "12"),
        (0.9123, "r2", None, "R² = 0.91"),
        (0.000123, "time", None, "123 µs"),
        (0.0001234, "time", 1, "123.4 µs"),
        (0.0042, "time", None, "4.20 ms"),
        (0.001, "time", None, "1.00 ms"),
        (2.5, "time", None, "2.50 s"),
        (7, "auto", None, "7"),
        (0.5, "auto", None, "0.500"),
        ("B-dominant", "auto", None, "B-dominant"),
    ],
)
def test_format_number(value: object, kind: str, digits: int | None, expected: str) -> None:
    assert format_number(value, kind, digits) == expected  # type: ignore[arg-type]


def test_format_number_rejects_bad_input() -> None:
    with refused(ValueError, names=("'percent'",)):
        format_number(0.1, "percent")
    with refused(ValueError, names=("'int'", "1.5")):
        format_number(1.5, "int")
    with refused(ValueError, names=("[0, 1]",)):
        format_number(1.5, "p")
    with refused(ValueError, names=("duration",)):
        format_number(-1e-6, "time")


def test_an_interval_end_near_zero_keeps_its_sign() -> None:
    assert interval_text(-0.00045, 0.0267) == "-0.04 pp to +2.7 pp"
    assert interval_text(-0.013, 0.021) == "-1.3 pp to +2.1 pp"


def test_a_duration_reads_in_microseconds_under_a_millisecond() -> None:
    assert duration_text(0.00012, "s") == "120 µs"
    assert duration_text(0.0042, "s") == "4.20 ms"
    assert duration_text(3.0, "queries") == "3 queries"
