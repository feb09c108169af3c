"""The packaged router: it ships, loads, and routes one question given as running text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import refused

from regime_core import config
from regime_core.router.model import decision_dict, default_router, resolve_router, route_text


def test_default_router_is_packaged_and_loads() -> None:
    model = default_router()
    assert model.alpha == config.ALPHA
    assert model.training_metadata_["dataset"] == "2wikimultihopqa"
    decision = route_text(
        "Who is the mother of the director of the film Kestrel Bay?",
        "Kestrel Bay is a 1931 film. It was directed by Odile Marchetti.",
        bridge_title="Kestrel Bay",
    )
    assert decision.action in ("q", "union")
    assert decision.b_rel_index == 1
    assert 0.0 <= decision.probability <= 1.0
    out = decision_dict(decision)
    assert list(out) == ["action", "probability", "b_rel", "b_rel_index", "features", "alpha",
                         "alpha_rule"]  # fmt: skip
    assert out["alpha_rule"] == "fixed" and out["alpha"] == 0.25  # the packaged file
    assert json.loads(json.dumps(out)) == out


@pytest.mark.parametrize(
    ("question", "bridge", "field"),
    [
        ("", "Some text.", "question"),
        ("Who?", "   ", "bridge"),
        (3, "Some text.", "question"),
        ("Who?", ["Some text."], "bridge"),
    ],
)
def test_route_text_rejects_bad_input(question: Any, bridge: Any, field: str) -> None:
    with refused(ValueError, names=("route", field)):
        route_text(question, bridge)


def test_resolve_router_rejects_missing_file(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        resolve_router(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match=r"bad\.json"):
        resolve_router(bad)
