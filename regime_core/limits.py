"""Bounds on input numbers that the float32 arithmetic downstream needs, stated once.

α (the weight of the bridge side of a query, ``q + α·b``) is bounded by
:data:`MAX_ALPHA` = 10^18. Both vectors are unit vectors, so the combined query has norm at most
``1 + α``; normalising it squares its components, and the squares must stay below float32's
largest value (3.4·10^38), that is ``1 + α < 1.8·10^19``. Beyond that the norm overflows to
infinity and the query silently becomes the zero vector (every candidate scores 0); 10^18 keeps
a factor 340 of margin for rounding. (Any α above about 10^8 already makes ``q`` invisible in
float32: ``1/α`` is below its precision.)

>>> check_alpha(0.25)
0.25
>>> try:
...     check_alpha(1e39)
... except ValueError as err:
...     print(str(err).split(" (")[0])
alpha must be a finite number in [0, 1e+18], got 1e+39
"""

from __future__ import annotations

import math
import numbers
from typing import Any

#: the largest α: ``(1 + α)²`` must stay below float32's maximum (module docstring)
MAX_ALPHA: float = 1e18


def check_alpha(value: Any, what: str = "alpha") -> float:
    """``value`` as α, or ``ValueError`` naming ``what`` unless it is a real number (not a
    boolean) with ``0 <= value <= MAX_ALPHA``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} must be a number, got {value!r}")
    number = float(value)
    if not (math.isfinite(number) and 0 <= number <= MAX_ALPHA):
        raise ValueError(
            f"{what} must be a finite number in [0, {MAX_ALPHA:g}], got {value!r} "
            "(float32 queries q + α·b overflow beyond it)"
        )
    return number
