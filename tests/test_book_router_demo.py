"""The "Route your own question" page: presets chosen from the data with the Python router's
decisions (the no-JavaScript table), the same decisions from router.js, and page HTML that keeps
the embedded JSON intact."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from regime_core import paths
from regime_core.book.router_demo import (
    MAX_PRESET_BRIDGE_CHARS,
    Preset,
    choose_presets,
    demo_html,
    load_model_json,
)
from regime_core.data import load_examples
from regime_core.router.model import default_router, default_router_path
from regime_core.router.sentences import route_bridge_text

ROUTER_JS = paths.REPO_ROOT / "regime_core" / "resources" / "router.js"


def js_batch(items: list[dict[str, str]], tmp_path: Path) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: `apt-get install -y nodejs` (.ci/run does it)")
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    done = subprocess.run(
        [node, str(ROUTER_JS), "--batch", str(source)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def toy_presets() -> list[Preset]:
    return choose_presets({"toyworld": load_examples("toyworld")}, default_router(), per_source=3)


def test_presets_hold_both_decisions_and_the_python_routers_numbers(
    toy_presets: list[Preset],
) -> None:
    assert len(toy_presets) == 3
    assert {p.action for p in toy_presets} == {"q", "union"}
    router = default_router()
    for p in toy_presets:
        assert len(p.bridge) <= MAX_PRESET_BRIDGE_CHARS
        d = route_bridge_text(router, p.question, p.bridge, p.title)
        assert (p.action, p.probability, p.b_rel) == (d.action, d.probability, d.b_rel)
    assert toy_presets == choose_presets(
        {"toyworld": load_examples("toyworld")}, router, per_source=3
    )


def test_router_js_decides_the_presets_as_the_static_table_says(
    toy_presets: list[Preset], tmp_path: Path
) -> None:
    items = [
        {"id": p.example_id, "question": p.question, "bridge": p.bridge, "title": p.title}
        for p in toy_presets
    ]
    for p, js in zip(toy_presets, js_batch(items, tmp_path), strict=True):
        assert (js["action"], js["b_rel"]) == (p.action, p.b_rel)
        assert abs(js["probability"] - p.probability) <= 1e-9


def test_per_source_must_be_positive() -> None:
    with pytest.raises(ValueError, match="per_source"):
        choose_presets({}, default_router(), per_source=0)


def test_demo_html_embeds_model_and_presets_safely() -> None:
    model = load_model_json(default_router_path())
    nasty = Preset("Toy", "x", "Who wrote </script><b>?", "", "A. B.", "q", 0.25, "A.")
    page = demo_html(model, [nasty], "rr")
    scripts = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S)
    assert [s[0] for s in scripts] == ["rr-model", "rr-presets"]
    assert json.loads(scripts[0][1]) == model
    assert json.loads(scripts[1][1])[0]["question"] == nasty.question
    assert 'class="regime-router-demo" id="rr" data-model="rr-model"' in page


def test_the_page_is_in_the_router_part_of_the_book() -> None:
    toc = yaml.safe_load((paths.REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    router_part = next(p for p in toc["parts"] if p["caption"] == "The router")
    files = [s["file"] for c in router_part["chapters"] for s in c.get("sections", [])]
    assert "book/router/try_the_router" in files
    page = (paths.REPO_ROOT / "book" / "router" / "try_the_router.md").read_text(encoding="utf-8")
    assert "```{regime-router-demo}" in page
