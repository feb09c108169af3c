"""Bounds on inputs, stated once: sizes of texts, nesting of files, expanded sizes, numbers.

Every cap on user input lives here and nowhere else; ``router.js`` holds the router's share of
them (:data:`ROUTER_LIMITS`) in one generated line that ``tests/test_limits.py`` compares with
this table (``python -m regime_core.limits`` prints the line), so ``regime route`` and the book's
page refuse the same inputs.

Why each: a question or title of :data:`MAX_QUESTION_CHARS` is a hundred times a real one; a
bridge of :data:`MAX_BRIDGE_CHARS` is three hundred Wikipedia paragraphs; :data:`MAX_NESTING`
keeps every recursive consumer of JSON (hashing, validation, router.js's parser) far from a
stack limit; :data:`MAX_INT_DIGITS` is Python's own ``int()`` limit for decimal strings;
:data:`MAX_EXPANDED_BYTES` bounds what one compressed input may expand to in memory.

α (the weight of the bridge side of a query, ``q + α·b``) has one rule, the kind :data:`ALPHA`
(bounded by :data:`MAX_ALPHA` = 10^18): every config field, the router file and
:func:`check_alpha` (``--alpha``) read α with it, and router.js reads :data:`MAX_ALPHA`.
Both vectors are unit vectors, so the combined query has norm at most ``1 + α``; normalising
it squares its components, and the squares must stay below float32's largest value
(3.4·10^38), that is ``1 + α < 1.8·10^19``. Beyond that the norm overflows to infinity and the
query silently becomes the zero vector (every candidate scores 0); 10^18 keeps a factor 340 of
margin for rounding.
(Any α above about 10^8 already makes ``q`` invisible in float32: ``1/α`` is below its
precision.)

>>> check_alpha(0.25)
0.25
>>> try:
...     check_alpha(1e39)
... except ValueError as err:
...     print(err)
alpha must be a number in [0, 1e+18], got 1e+39
"""

from __future__ import annotations

import json
from typing import Any

from regime_core.inputs import InputError, Kind, Number, check_value

#: the largest α: ``(1 + α)²`` must stay below float32's maximum (module docstring)
MAX_ALPHA: float = 1e18
ALPHA = Number(low=0.0, high=MAX_ALPHA)
"""a bridge weight α: finite, from 0 to the largest weight float32 queries q + α·b hold"""
#: characters (code points) of a question, and of a bridge title, that ``route`` accepts
MAX_QUESTION_CHARS: int = 10_000
MAX_TITLE_CHARS: int = 10_000
#: characters of a bridge passage (its sentences together) that ``route`` accepts
MAX_BRIDGE_CHARS: int = 1_000_000
#: characters of one text (a passage, a context paragraph) split into sentences or read as data
MAX_TEXT_CHARS: int = 1_000_000
#: how deep JSON and YAML values may nest (our deepest files nest about 6 levels)
MAX_NESTING: int = 100
#: decimal digits of an integer in JSON (Python's ``sys.int_info.default_max_str_digits``)
MAX_INT_DIGITS: int = 4300
#: what a compressed input (gzip, bzip2, xz, a zip member) may expand to: at most
#: MAX_EXPANSION_RATIO times its compressed size (JSON text compresses 5-20 times; a
#: "bomb" thousands of times), never less than MIN_EXPANDED_BYTES (small files are never
#: refused) and never more than MAX_EXPANDED_BYTES (held in memory while parsed)
MAX_EXPANSION_RATIO: int = 200
MIN_EXPANDED_BYTES: int = 64 << 20
MAX_EXPANDED_BYTES: int = 2 << 30


def expanded_bound(compressed_bytes: int) -> int:
    """How many bytes ``compressed_bytes`` of compressed input may expand to (see above).

    >>> expanded_bound(100_000) == MIN_EXPANDED_BYTES, expanded_bound(10**9) == MAX_EXPANDED_BYTES
    (True, True)
    """
    return min(MAX_EXPANDED_BYTES, max(MIN_EXPANDED_BYTES, MAX_EXPANSION_RATIO * compressed_bytes))


#: the caps ``router.js`` applies as ``regime route`` does (one generated line there)
ROUTER_LIMITS: dict[str, float | int] = {
    "max_question_chars": MAX_QUESTION_CHARS,
    "max_title_chars": MAX_TITLE_CHARS,
    "max_bridge_chars": MAX_BRIDGE_CHARS,
    "max_nesting": MAX_NESTING,
    "max_int_digits": MAX_INT_DIGITS,
    "max_alpha": MAX_ALPHA,
}
ROUTER_JS_LINE_PREFIX = "  const LIMITS = "


def router_js_line() -> str:
    """The line of ``router.js`` that holds :data:`ROUTER_LIMITS` (JSON: router.js reads it as
    a JavaScript object literal)."""
    return ROUTER_JS_LINE_PREFIX + json.dumps(ROUTER_LIMITS, separators=(", ", ": ")) + ";"


def check_alpha(value: Any, what: str = "alpha") -> float:
    """``value`` read as :data:`ALPHA`, or ``ValueError`` naming ``what``."""
    return float(_read(ALPHA, value, what))


def check_number(
    value: Any,
    what: str,
    *,
    low: float | None = None,
    high: float | None = None,
    integer: bool = False,
) -> float | int:
    """``value`` read as a :class:`~regime_core.inputs.Number` from ``low`` to ``high``
    (``integer``: an integer), or ``ValueError`` naming ``what``.

    >>> check_number(3, "k", low=1, integer=True)
    3
    >>> try:
    ...     check_number(10**400, "alpha", low=0, high=1e18)
    ... except ValueError as err:
    ...     print(err)
    alpha must be a number in [0, 1e+18], got an integer of 401 digits
    """
    number: float | int = _read(Number(low=low, high=high, integer=integer), value, what)
    return number


def _read(kind: Kind, value: Any, what: str) -> Any:
    """``kind``'s reading of ``value``; its refusal as ``"<what> <problem>"`` (a CLI option or
    a function's argument has no file or record to name)."""
    try:
        return check_value(kind, value, where="", field=what)
    except InputError as err:
        raise ValueError(f"{err.field} {err.problem}") from None


if __name__ == "__main__":  # pragma: no cover
    print(router_js_line())
