"""How a number is written: each kind a record holds (:func:`format_number`, for every page), an
interval and a duration as the verdicts of :mod:`~regime_core.runner.judge` and ours write them."""

from __future__ import annotations

import math
import numbers as _numbers

from regime_core.runner.records import Scalar
from regime_core.vocabulary import NUMBER_KINDS as NUMBER_KINDS


def format_number(value: Scalar, kind: str = "auto", digits: int | None = None) -> str:
    """Render a recorded value for prose and tables.

    ========  ==========================================  ======================
    kind      meaning (default digits)                    example
    ========  ==========================================  ======================
    ``pp``    a difference of fractions, in signed        0.1234 -> ``+12.3 pp``
              percentage points (1)
    ``pct``   a fraction as a percentage (1)              0.6215 -> ``62.2%``
    ``frac``  a fraction or any real (3)                  0.6215 -> ``0.622``
    ``p``     a p-value, floored at 10^-digits (3)        0.0004 -> ``p < 0.001``
    ``int``   a count, with thousands separators          12345 -> ``12,345``
    ``r2``    a coefficient of determination (2)          0.912 -> ``R² = 0.91``
    ``time``  a duration in seconds: in µs under 1 ms     0.000123 -> ``123 µs``
              (0), in ms under 1 s (2), else in s (2)     0.0042 -> ``4.20 ms``
    ``str``   the value as written                        ``B-dominant``
    ``auto``  ``int`` for integers, ``frac`` for floats,
              strings as written
    ========  ==========================================  ======================

    >>> format_number(-0.00049, "pp")
    '0.0 pp'
    >>> format_number(0.0213, "p")
    'p = 0.021'
    >>> format_number(0.000123, "time"), format_number(0.0042, "time")
    ('123 µs', '4.20 ms')
    """
    if kind not in NUMBER_KINDS:
        raise ValueError(f"unknown number format {kind!r}; known: {', '.join(NUMBER_KINDS)}")
    if kind == "str" or isinstance(value, str):
        if kind not in ("str", "auto"):
            raise ValueError(f"cannot format the string {value!r} as {kind!r}")
        return str(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if kind == "auto":
        kind = "int" if isinstance(value, _numbers.Integral) else "frac"
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"cannot format the non-finite value {x!r}")
    if kind == "int":
        if x != round(x):
            raise ValueError(f"format 'int' needs an integral value, got {value!r}")
        return f"{round(x):,}"
    if kind == "pp":
        text = _fixed(100.0 * x, 1 if digits is None else digits, signed=True)
        return f"{text} pp"
    if kind == "pct":
        return f"{_fixed(100.0 * x, 1 if digits is None else digits)}%"
    if kind == "frac":
        return _fixed(x, 3 if digits is None else digits)
    if kind == "r2":
        return f"R² = {_fixed(x, 2 if digits is None else digits)}"
    if kind == "time":
        if x < 0.0:
            raise ValueError(f"a duration is not negative, got {x!r}")
        if x < 1e-3:
            return f"{_fixed(x * 1e6, 0 if digits is None else digits)} µs"
        if x < 1.0:
            return f"{_fixed(x * 1e3, 2 if digits is None else digits)} ms"
        return f"{_fixed(x, 2 if digits is None else digits)} s"
    # kind == "p"
    n = 3 if digits is None else max(1, digits)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"a p-value lies in [0, 1], got {x!r}")
    floor = 10.0**-n
    return f"p < {floor:.{n}f}" if x < floor else f"p = {x:.{n}f}"


def interval_end(x: float, *, unit: bool = True) -> str:
    """An interval's end in signed percentage points: one decimal, or two or three where one
    would round a non-zero end to ``0.0`` and hide on which side of zero it lies.

    >>> interval_end(-0.00045), interval_end(0.0267, unit=False), interval_end(0.0)
    ('-0.04 pp', '+2.7', '0.0 pp')
    """
    text = format_number(x, "pp")
    for digits in (2, 3):
        if text.lstrip("+-").startswith(("0.0 ", "0.00 ")) and float(x) != 0.0:
            text = format_number(x, "pp", digits)
    return text if unit else text.removesuffix(" pp")


def _fixed(x: float, digits: int, signed: bool = False) -> str:
    text = f"{x:.{digits}f}"
    if float(text) == 0.0:
        return f"{0.0:.{digits}f}"  # never "-0.0" or "+0.0"
    return f"+{text}" if signed and x > 0 else text


def pp(x: float) -> str:
    return format_number(x, "pp")


def interval_text(lo: float, hi: float) -> str:
    """``-0.04 pp to +2.7 pp``: each end as :func:`interval_end` writes it (its sign kept where
    one decimal would show 0.0).

    >>> interval_text(-0.00045, 0.0267)
    '-0.04 pp to +2.7 pp'
    """
    return f"{interval_end(lo)} to {interval_end(hi)}"


def duration_text(seconds: float, unit: str) -> str:
    if unit != "s":
        return f"{seconds:g} {unit}"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    return f"{seconds * 1e3:.2f} ms"
