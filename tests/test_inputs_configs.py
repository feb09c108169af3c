"""Every config class, every declared field: a value its kind refuses is refused when the config is
built, naming the class and the field (generated from the declarations, so a new field is covered
by declaring it)."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any

import pytest

import regime_core
from regime_core.config import ConfigMixin, meaning
from regime_core.inputs import (
    Choice,
    Flag,
    InputError,
    Instance,
    Items,
    Kind,
    Nullable,
    Number,
    Text,
    Word,
)
from regime_core.inputs.configs import field_kind
from regime_core.registry import RUNS


def _config_classes() -> list[type]:
    """Every subclass of ConfigMixin the package defines: the runs' configs and every module that
    names ConfigMixin, imported, then their subclasses."""
    root = Path(regime_core.__file__).parent
    for path in root.rglob("*.py"):
        if "(ConfigMixin)" in path.read_text(encoding="utf-8"):
            module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
            importlib.import_module(module)
    for run in RUNS.values():
        run.config  # noqa: B018  (imported on first use)
    found: list[type] = []
    todo = list(ConfigMixin.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    ours = {cls for cls in found if cls.__module__.startswith("regime_core.")}  # not a test's
    return sorted(ours, key=lambda c: c.__name__)


CONFIGS = _config_classes()


def violations(kind: Kind) -> list[Any]:
    """Values ``kind`` refuses: the wrong type, and each bound crossed."""
    if isinstance(kind, Nullable):
        return violations(kind.of)
    if isinstance(kind, Number):
        out: list[Any] = ["many", True]
        if kind.low is not None:
            out.append(kind.low - 1)
        if kind.high is not None:
            out.append(int(kind.high) + 1 if kind.integer else kind.high * 2 + 1)
        return [*out, 2.5] if kind.integer else out
    if isinstance(kind, Word):
        return ["two words", 3] + (["Upper"] if kind.lowercase else [])
    if isinstance(kind, Text):
        return [3] if kind.blank else [3, "  "]
    if isinstance(kind, Flag):
        return ["yes", 1]
    if isinstance(kind, Choice):
        return ["none of these", 7]
    if isinstance(kind, Items):
        inner = [[bad] for bad in violations(kind.of)]
        return [{"a": 1}, *inner] + ([[]] if kind.min_items else [])
    if isinstance(kind, Instance):
        return ["text", {}]
    raise AssertionError(f"no violation written for {kind!r}")


CASES = [
    pytest.param(cls, f.name, bad, id=f"{cls.__name__}.{f.name}={bad!r}")
    for cls in CONFIGS
    for f in dataclasses.fields(cls)
    for bad in violations(field_kind(cls, f.name))
]


def test_the_configs_are_found() -> None:
    names = {cls.__name__ for cls in CONFIGS}
    assert {"T1Config", "RouterRules", "ToyWorldConfig", "TfidfParams", "LessonConfig"} <= names
    assert len(CASES) > 10 * len(CONFIGS)


@pytest.mark.parametrize(("cls", "name", "bad"), CASES)
def test_a_value_the_kind_refuses_names_the_class_and_field(cls: type, name: str, bad: Any) -> None:
    with pytest.raises(InputError) as info:
        cls(**{name: bad})
    assert info.value.where == cls.__name__
    assert info.value.field.startswith(name), info.value


def test_a_field_means_what_its_attribute_docstring_says() -> None:
    from regime_core.experiments.t1_auc_margin import T1Config

    alpha = meaning([T1Config], "alpha")  # on RunConfig
    assert alpha is not None and alpha.text.startswith("weight α of the bridge side")
