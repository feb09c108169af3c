"""Holm's adjustment and the Holm-level intervals (regime_core.multiplicity): their examples."""

from __future__ import annotations

import doctest

from regime_core import multiplicity


def test_doctests_pass() -> None:
    result = doctest.testmod(multiplicity)
    assert result.attempted >= 3
    assert result.failed == 0
