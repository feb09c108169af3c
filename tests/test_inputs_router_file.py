"""The router file's declaration: router.js holds it as its one generated line, it describes
every key ``save_router`` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from regime_core import paths
from regime_core.inputs import Nested, route_input, router_file
from regime_core.inputs.router_file import ROUTER_FILE
from regime_core.router.model import default_router_path


@pytest.mark.parametrize("module", [router_file, route_input])
def test_router_js_holds_the_generated_declaration(module: Any) -> None:
    """``python -m regime_core.inputs.router_file`` (and ``.route_input``) print the lines
    router.js must hold."""
    source = (paths.REPO_ROOT / "regime_core" / "resources" / "router.js").read_text("utf-8")
    lines = [line for line in source.splitlines() if line.startswith(module.ROUTER_JS_LINE_PREFIX)]
    assert lines == [module.router_js_line()]


def test_the_declaration_holds_every_key_of_the_packaged_model() -> None:
    document = json.loads(default_router_path().read_text(encoding="utf-8"))
    assert set(document) == {field.name for field in ROUTER_FILE.fields}
    kinds = {field.name: field.kind for field in ROUTER_FILE.fields}
    for name in ("params", "scaler", "training", "alpha_rule"):
        kind = kinds[name]
        assert isinstance(kind, Nested)
        assert set(document[name]) <= {field.name for field in kind.format.fields}, name
