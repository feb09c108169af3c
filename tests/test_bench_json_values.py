"""benchmarks/json_values.py: how the benchmarks' JSON reports print a value."""

from __future__ import annotations

import doctest
import json
import math

import numpy as np
from helpers import load_benchmark


def test_a_number_is_printed_rounded_and_never_as_nan() -> None:
    json_number = load_benchmark("json_values").json_number
    values = [np.float64(2 / 3), np.float32(0.5), math.inf, np.nan, np.int32(-4), 3, True, None]
    printed = [json_number(v) for v in values]
    assert printed == [0.666667, 0.5, None, None, -4, 3, True, None]
    assert [type(v) for v in printed[:5]] == [float, float, type(None), type(None), int]
    assert json.dumps(printed, allow_nan=False) == "[0.666667, 0.5, null, null, -4, 3, true, null]"


def test_doctests_pass() -> None:
    result = doctest.testmod(load_benchmark("json_values"))
    assert result.attempted > 0 and result.failed == 0
