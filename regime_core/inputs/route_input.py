"""One question and its bridge passage as the router's public functions take them, declared.

:meth:`~regime_core.router.estimator.RegimeRouter.route`,
:func:`~regime_core.router.selector.select_b_rel` and
:func:`~regime_core.router.selector.sentence_scores` read their texts through :data:`ROUTE_INPUT`;
``regime route`` and :func:`~regime_core.router.model.route_text` read the bridge as running
text through :data:`ROUTE_TEXT` (:func:`~regime_core.router.sentences.route_bridge_text`).
What a field cannot say alone (the sizes ``regime route`` caps and text that was not UTF-8, in
the words router.js shares) stays with those functions.
"""

from __future__ import annotations

import json

from regime_core.inputs import Field, Format, Items, Nullable, Text
from regime_core.inputs.router_file import js_table

ROUTE_INPUT = Format(
    "route input",
    (
        Field("question", Text(), meaning="the two-hop question"),
        Field(
            "bridge_sentences",
            Items(Text(), min_items=1),
            meaning="the bridge passage's sentences, in order (a list, not one string)",
        ),
        Field("bridge_title", Nullable(Text()), meaning="the bridge passage's title, or null"),
    ),
)
ROUTE_TEXT = Format(
    "route text",
    (
        Field("question", Text(), meaning="the two-hop question"),
        Field("bridge", Text(), meaning="the bridge passage as running text"),
    ),
)

ROUTER_JS_LINE_PREFIX = "  const ROUTE_INPUTS = "


def router_js_line() -> str:
    """The line of ``router.js`` that holds :data:`ROUTE_INPUT` and :data:`ROUTE_TEXT`, so that
    router.js refuses a question and a bridge with Python's very messages."""
    tables = {"input": js_table(ROUTE_INPUT), "text": js_table(ROUTE_TEXT)}
    return ROUTER_JS_LINE_PREFIX + json.dumps(tables, separators=(",", ":")) + ";"


if __name__ == "__main__":  # pragma: no cover
    print(router_js_line())
