"""The run configs and every other config dataclass, declared field by field.

A config field declares its kind once, next to its default: ``alpha: float =
declared(config.ALPHA, ALPHA)``. :func:`read_config` checks every field of a config against its
kind through the one reader when the config is built (``ConfigMixin.__post_init__``), converts it
(a YAML list becomes a tuple, a number a float or an int) and refuses a value with an
:class:`~regime_core.inputs.InputError` naming the config class and the field. A field's meaning
is its attribute docstring (:func:`regime_core.config.meaning`), never written here. What a
kind cannot say (a value that must agree with another field, a name resolved against the
prepared datasets or the encoders) stays in the config's ``validate``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from regime_core.inputs import Choice, Items, Kind, Nullable, Number, Pattern, Text, check_value
from regime_core.limits import ALPHA as ALPHA  # α's one rule, declared beside its bound

#: The metadata key of a config field's kind.
KIND = "kind"
#: NumPy holds a seed or a count in 64 bits: a larger integer would overflow downstream.
INT64_MAX = 2**63 - 1

SHARE = Number(low=0.0, high=1.0)
"""a share, from 0 to 1"""
LEVEL = Number(low=0.0, high=1.0, low_open=True, high_open=True)
"""a level or a significance, strictly between 0 and 1"""
NAMES = Items(Text(), min_items=1)
"""a non-empty list of names"""
DATASET_NAME = Pattern(
    r"(?!all\Z)[a-z0-9][a-z0-9_-]{0,63}",
    "a dataset name: lower-case letters, digits, '_' and '-', starting with a letter or digit, "
    "at most 64 characters, not 'all' (the pooled level of the claim tables)",
)
"""a dataset's name, built-in or of one's own (``regime data prepare --jsonl FILE --name NAME``):
it names the prepared file ``NAME.jsonl``, so it is one spelling on a case-insensitive file
system too, and it is one column of a TREC run's tag"""


def integer(low: int = 0, high: int = INT64_MAX) -> Number:
    """An integer from ``low`` to ``high`` (at most 64 bits)."""
    return Number(low=low, high=high, integer=True)


def declared(default: Any = dataclasses.MISSING, kind: Kind | None = None, *,
             factory: Any = dataclasses.MISSING) -> Any:  # fmt: skip
    """A config field: its ``default`` (or default ``factory``) and its ``kind``."""
    return dataclasses.field(default=default, default_factory=factory, metadata={KIND: kind})


def grid(values: Sequence[str]) -> Any:
    """A field listing some of ``values`` (all of them by default), at least one."""
    return declared(tuple(values), Items(Choice(tuple(values)), min_items=1))


def field_kind(config_class: type, name: str) -> Kind:
    """The kind ``name`` declares in ``config_class`` or, where a subclass only changes the
    default, in the nearest base that declares it."""
    for klass in config_class.__mro__:
        found = vars(klass).get("__dataclass_fields__", {}).get(name)
        if found is not None and found.metadata.get(KIND) is not None:
            kind: Kind = found.metadata[KIND]
            return kind
    raise TypeError(f"{config_class.__name__}.{name} declares no kind: use declared(default, kind)")


def wants_items(config_class: type, name: str) -> bool:
    """Field ``name`` of ``config_class`` is a list (or null)."""
    kind = field_kind(config_class, name)
    return isinstance(kind.of if isinstance(kind, Nullable) else kind, Items)


def read_config(config: Any) -> None:
    """Check every field of the frozen dataclass ``config`` against its declared kind; a list is
    stored as the tuple read (its numbers floats), a single value as it was given, so that the
    config hash, which names artefacts, hashes ``1`` as ``1``."""
    for item in dataclasses.fields(config):
        value = getattr(config, item.name)
        kind = field_kind(type(config), item.name)
        checked = check_value(kind, value, where=type(config).__name__, field=item.name)
        if isinstance(checked, tuple):
            object.__setattr__(config, item.name, checked)
