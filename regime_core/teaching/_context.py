"""The teaching wing's test seams: one :class:`~regime_core.experiments.context.Context`, and the
keywords it replaced, accepted for one release.

The teaching functions used to take ``work=``, ``store=`` and ``encoder_factory=``; they now take
``context=Context(...)``, as the experiments do. :func:`context_from` turns the old keywords into
that Context with a :class:`DeprecationWarning` naming the new call.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from regime_core.encoders.registry import EncoderFactory
from regime_core.experiments.context import Context
from regime_core.retrieval import EmbeddingSource

__all__ = ["OldHooks", "context_from"]


class OldHooks(TypedDict, total=False):
    """The keywords ``context`` replaced (removed in the next release)."""

    work: Path | str | None
    store: EmbeddingSource | None
    encoder_factory: EncoderFactory | None


_OLD_HOOKS: tuple[str, ...] = tuple(OldHooks.__annotations__)


def context_from(function: str, context: Context | None, old: Mapping[str, Any]) -> Context | None:
    """``context``, or the Context the old keywords ``old`` of ``function`` describe.

    ``old`` is what the function received in ``**old``: a name that is not an old hook is a
    ``TypeError`` (as Python raises it for an unknown keyword); an old hook next to ``context`` is
    a ``ValueError``; old hooks alone give ``Context(work=..., store=..., encoder_factory=...)``
    with a ``DeprecationWarning``. Nothing given: ``context`` itself (None stays None, so the
    caller keeps its own default).
    """
    unknown = [name for name in old if name not in _OLD_HOOKS]
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    if not old:
        return context
    given = ", ".join(f"{name}=..." for name in _OLD_HOOKS if name in old)
    if context is not None:
        raise ValueError(
            f"{function}(): pass either context= or the old keyword(s) {given}, not both "
            f"(put them in the Context: context=Context({given}))"
        )
    warnings.warn(
        f"{function}({given}) is deprecated: pass context=Context({given}) "
        "(regime_core.experiments.context.Context) instead; the old keywords are removed in the "
        "next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return Context(
        work=None if old.get("work") is None else Path(old["work"]),
        store=old.get("store"),
        encoder_factory=old.get("encoder_factory"),
    )
