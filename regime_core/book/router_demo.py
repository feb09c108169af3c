"""The book's "Route your own question" page: presets, their decisions, and the page's HTML.

The page runs ``regime_core/resources/router.js`` (the router ported to JavaScript) in the
reader's browser. This module computes, at build time and with the Python router, what the page
shows without JavaScript: the presets (a few questions of the toy world and of each dataset) and
the decision ``regime route`` gives each. The Sphinx directive ``regime-router-demo``
(``regime_core.book.sphinx``) renders them.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core.schema import Example

ROUTER_JS = "router.js"
# Readable presets: bridges longer than this are skipped when choosing.
MAX_PRESET_BRIDGE_CHARS = 900
SOURCE_NAMES: dict[str, str] = {
    "toyworld": "Toy world",
    "2wikimultihopqa": "2WikiMultiHopQA",
    "hotpotqa": "HotpotQA",
    "musique": "MuSiQue",
}


@dataclass(frozen=True)
class Preset:
    """One preset question with the decision the Python router gives it (``regime route``)."""

    source: str
    example_id: str
    question: str
    title: str
    bridge: str
    action: str
    probability: float
    b_rel: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "id": self.example_id,
            "question": self.question,
            "title": self.title,
            "bridge": self.bridge,
            "action": self.action,
            "probability": self.probability,
            "b_rel": self.b_rel,
        }


def _bridge(example: Example) -> tuple[str, str]:
    passage = next(p for p in example.pool if p.pid == example.bridge_pid)
    return passage.title, " ".join(passage.sentences)


def choose_presets(
    examples: Mapping[str, Sequence[Example]], router: Any, per_source: int = 2
) -> list[Preset]:
    """Up to ``per_source`` presets per dataset, in id order: the first question routed ``q``
    and the first routed ``union`` whose bridge has at most
    :data:`MAX_PRESET_BRIDGE_CHARS` characters (then more of either, alternating).

    ``router`` is a :class:`~regime_core.router.RegimeRouter`; the bridge is routed as running
    text, as ``regime route`` and the page do. Deterministic.
    """
    from regime_core.router.sentences import route_bridge_text

    if isinstance(per_source, bool) or not isinstance(per_source, int) or per_source < 1:
        raise ValueError(f"per_source must be a positive integer, got {per_source!r}")
    presets: list[Preset] = []
    for dataset, items in examples.items():
        by_action: dict[str, list[Preset]] = {"q": [], "union": []}
        for ex in sorted(items, key=lambda e: e.id):
            title, bridge = _bridge(ex)
            if len(bridge) > MAX_PRESET_BRIDGE_CHARS:
                continue
            d = route_bridge_text(router, ex.question, bridge, title)
            if len(by_action[d.action]) < per_source:
                source = SOURCE_NAMES.get(dataset, dataset)
                by_action[d.action].append(
                    Preset(
                        source, ex.id, ex.question, title, bridge, d.action, d.probability, d.b_rel
                    )
                )
            if all(len(v) >= per_source for v in by_action.values()):
                break
        chosen: list[Preset] = []
        for i in range(per_source):
            chosen += [by_action[a][i] for a in ("q", "union") if i < len(by_action[a])]
        presets += chosen[:per_source]
    return presets


def _json_script(element_id: str, value: Any) -> str:
    # "</" would close the script element early; JSON allows "<\/".
    text = json.dumps(value, ensure_ascii=True).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def demo_html(model: Mapping[str, Any], presets: Sequence[Preset], element_id: str) -> str:
    """The page's live part: the model and the presets as JSON (no fetch: the page works from
    ``file://``), and the element ``router.js`` mounts the form on."""
    model_id, presets_id = f"{element_id}-model", f"{element_id}-presets"
    return "\n".join(
        (
            _json_script(model_id, model),
            _json_script(presets_id, [p.to_dict() for p in presets]),
            f'<div class="regime-router-demo" id="{html.escape(element_id)}" '
            f'data-model="{model_id}" data-presets="{presets_id}">'
            '<p class="rr-nojs"><em>The live router needs JavaScript. The table below shows the '
            "presets and the decision the Python router gives each.</em></p></div>",
        )
    )


def load_model_json(path: Path) -> dict[str, Any]:
    """The router JSON file as a dict (validated by :func:`~regime_core.router.load_router`
    first, so the page never embeds a model the Python side would refuse)."""
    from regime_core.router import load_router

    load_router(path)
    return json.loads(path.read_text(encoding="utf-8"))


STYLE = """<style>
.regime-router-demo { margin: 1em 0 1.5em; }
.regime-router-demo .rr-field { margin-bottom: .6em; }
.regime-router-demo label { display: block; font-weight: 600; margin-bottom: .2em; }
.regime-router-demo textarea, .regime-router-demo input, .regime-router-demo select {
  width: 100%; box-sizing: border-box; font: inherit; padding: .35em; max-width: 100%; }
.regime-router-demo small { color: #555; }
.regime-router-demo .rr-error { color: #a40000; font-weight: 600; margin: .3em 0; }
.regime-router-demo .rr-note { color: #7a5200; margin: .3em 0; }
.regime-router-demo .rr-verdict { font-size: 1.15em; margin: .6em 0; display: flex;
  flex-wrap: wrap; align-items: center; gap: .5em; }
.regime-router-demo .rr-action { font-weight: 700; padding: .1em .6em; border-radius: .3em;
  color: #fff; }
.regime-router-demo .rr-q { background: #3b6ea8; }
.regime-router-demo .rr-union { background: #2e8540; }
.regime-router-demo meter { width: 8em; }
.regime-router-demo .rr-table-wrap { overflow-x: auto; max-width: 100%; }
.regime-router-demo .rr-features { border-collapse: collapse; width: 100%; font-size: .9em; }
.regime-router-demo .rr-features code { overflow-wrap: anywhere; }
.regime-router-demo .rr-features th { white-space: nowrap; }
.regime-router-demo .rr-features th, .regime-router-demo .rr-features td {
  border-bottom: 1px solid #ddd; padding: .25em .5em; text-align: right; }
.regime-router-demo .rr-features th:first-child, .regime-router-demo .rr-features td:first-child {
  text-align: left; }
.regime-router-demo .rr-pos { color: #2e8540; }
.regime-router-demo .rr-neg { color: #3b6ea8; }
.regime-router-demo .rr-sum td { font-weight: 600; }
.regime-router-demo .rr-sentences li { margin: .2em 0; overflow-wrap: anywhere; }
.regime-router-demo mark { background: #ffe58a; padding: 0 .15em; }
.regime-router-demo .rr-bridge-label { margin-top: .8em; font-weight: 600; }
table.regime-router-presets td { overflow-wrap: break-word; }
table.regime-router-presets td:first-child { overflow-wrap: anywhere; font-size: .85em; }
@media (max-width: 640px) {
  .regime-router-demo .rr-features { font-size: .8em; }
  .regime-router-demo .rr-features th, .regime-router-demo .rr-features td { padding: .2em .25em; }
  table.regime-router-presets thead { display: none; }
  table.regime-router-presets, table.regime-router-presets tbody,
  table.regime-router-presets tr, table.regime-router-presets td { display: block; width: auto; }
  table.regime-router-presets tr { border-bottom: 2px solid #ccc; padding: .4em 0; }
  table.regime-router-presets td { border: none; padding: .1em 0; }
  table.regime-router-presets td:first-child { font-weight: 600; }
  table.regime-router-presets td:nth-child(3)::before { content: "Bridge title: "; color: #555; }
  table.regime-router-presets td:nth-child(4)::before { content: "B_rel: "; color: #555; }
  table.regime-router-presets td:nth-child(5)::before { content: "Decision: "; color: #555; }
  table.regime-router-presets td:nth-child(6)::before { content: "p(union): "; color: #555; }
  table.regime-router-presets td p { display: inline; }
}
</style>"""
