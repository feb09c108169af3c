"""The packaged router: where it lives, loading it, and routing one question given as text.

The deployment router ships as package data (``regime_core/resources/default_router.json``),
fitted on every 2WikiMultiHopQA two-hop item with MiniLM retrieval outcomes
(:mod:`regime_core.experiments.router_train`; ``regime route train`` rebuilds it).
``regime route``, the book's router page and ``router.js`` route with it.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import os
from pathlib import Path
from typing import Any

from regime_core.router.estimator import RegimeRouter, RouteDecision
from regime_core.router.io import load_router
from regime_core.router.sentences import route_bridge_text

#: File name of the packaged model inside ``regime_core/resources``.
DEFAULT_ROUTER_FILE: str = "default_router.json"


def default_router_path() -> Path:
    """Where the packaged router lives (package data, present right after ``pip install``)."""
    return Path(str(importlib.resources.files("regime_core") / "resources" / DEFAULT_ROUTER_FILE))


def default_router() -> RegimeRouter:
    """The packaged deployment router: fitted on every 2WikiMultiHopQA two-hop item with
    MiniLM retrieval outcomes, α = ``config.ALPHA``. Rebuild it with ``regime route train``.

    >>> decision = default_router().route(
    ...     "Who is the mother of the director of Kestrel Bay?",
    ...     ["Kestrel Bay is a film.", "It was directed by Ann Lee."],
    ... )
    >>> decision.b_rel, decision.action in ("q", "union")
    ('It was directed by Ann Lee.', True)
    """
    return load_router(default_router_path())  # package data; missing: FileNotFoundError


def resolve_router(model: str | os.PathLike[str] | RegimeRouter | None) -> RegimeRouter:
    """A router from a loaded model, a JSON file written by ``save_router``, or None (the
    packaged default). Raises ValueError for a path that is not a file."""
    if isinstance(model, RegimeRouter):
        return model
    if model is None:
        return default_router()
    path = Path(model)
    if not path.is_file():
        raise ValueError(f"router model file {path} does not exist or is not a file")
    return load_router(path)


def route_text(
    question: str,
    bridge: str,
    *,
    bridge_title: str | None = None,
    model: str | os.PathLike[str] | RegimeRouter | None = None,
) -> RouteDecision:
    """Route one question given the bridge passage as running text, exactly as ``regime route``
    and the book's ``router.js`` do: the text is split by
    :func:`regime_core.router.sentences.split_bridge`, then :meth:`RegimeRouter.route` selects
    ``B_rel``, computes the features and decides.

    Raises ValueError for a non-string or empty question or bridge, or a bad model file.
    """
    return route_bridge_text(resolve_router(model), question, bridge, bridge_title)


def decision_dict(decision: RouteDecision) -> dict[str, Any]:
    """The JSON object ``regime route --json`` prints: the decision's fields, in order."""
    return dataclasses.asdict(decision)
