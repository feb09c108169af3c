"""What the benchmarks share: a value as their JSON reports print it.

Imported by its neighbours (``from json_values import json_number``), which run as
``python benchmarks/<script>.py`` with this folder first on the path.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def json_number(x: Any) -> Any:
    """``x`` for a JSON report: a float (numpy's too) rounded to 6 decimals, ``None`` when not
    finite (JSON has no NaN); a numpy integer as an ``int``; anything else unchanged.

    >>> json_number(np.float32(0.25)), json_number(1 / 3), json_number(float("nan"))
    (0.25, 0.333333, None)
    >>> json_number(np.int64(7)), json_number("fit")
    (7, 'fit')
    """
    if isinstance(x, float | np.floating):
        x = float(x)
        return None if not math.isfinite(x) else round(x, 6)
    if isinstance(x, np.integer):
        return int(x)
    return x
