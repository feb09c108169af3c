"""Issue 22: α's float32 bound, blamed on α wherever it is given."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import refused

from regime_core.encoders.vectors import l2_normalize
from regime_core.limits import MAX_ALPHA, check_alpha


def test_the_bound_keeps_the_normalised_query_finite_and_non_zero() -> None:
    rng = np.random.default_rng(0)
    q, b = l2_normalize(rng.standard_normal((2, 384)))
    combined = (q + np.float32(MAX_ALPHA) * b)[None, :].astype(np.float32)
    unit = l2_normalize(combined)
    assert np.isfinite(unit).all() and abs(float(np.linalg.norm(unit)) - 1) < 1e-5
    # just beyond (1 + α)² > float32 max the norm overflows and the query becomes zero
    with np.errstate(over="ignore"):
        beyond = l2_normalize((q + np.float32(2e19) * b)[None, :].astype(np.float32))
    assert not beyond.any()


@pytest.mark.parametrize("value", [-1e-9, float("nan"), float("inf"), 1e39, 2e18, True, "0.5"])
def test_check_alpha_names_alpha(value: object) -> None:
    with refused(ValueError, names=("alpha", repr(value))):
        check_alpha(value)


@pytest.mark.parametrize("value", [0, 0.25, 1, 1e18, np.float32(0.5), np.int64(2)])
def test_check_alpha_accepts_every_number_in_range(value: object) -> None:
    assert check_alpha(value) == float(value)  # type: ignore[arg-type]


def test_retrieval_blames_alpha_not_the_encoder() -> None:
    from helpers import settings

    # the retrieval settings are the one place α is checked: 1e30 never reaches a kernel, where
    # the float32 query would overflow and the scorer blame "the encoder returned NaN or inf"
    with refused(ValueError, names=("alpha", "1e+18")):
        settings(alpha=1e30)


def test_router_js_holds_the_router_limits_of_the_one_table() -> None:
    """router.js's LIMITS line is the generated one (``python -m regime_core.limits``)."""
    from regime_core import paths
    from regime_core.limits import ROUTER_JS_LINE_PREFIX, router_js_line

    source = (paths.REPO_ROOT / "regime_core" / "resources" / "router.js").read_text("utf-8")
    lines = [line for line in source.splitlines() if line.startswith(ROUTER_JS_LINE_PREFIX)]
    assert lines == [router_js_line()]


@pytest.mark.parametrize("exponent", [19, 40, 309, 400, 4299])
def test_an_integer_alpha_of_any_size_is_a_message(exponent: int) -> None:
    with refused(ValueError, names=("alpha",)):
        check_alpha(10**exponent)
