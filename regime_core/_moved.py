"""Old module paths that moved when the package was re-homed (one release of deprecation).

``import regime_core.records`` still works and gives the very module now at
``regime_core.runner.records`` (the same object, so monkeypatching either name patches both), with
a deprecation warning naming the new path. Sub-modules of a moved package follow it
(``regime_core.toyworld.world`` -> ``regime_core.data.toyworld.world``).

A wing whose names used to be imported from its package (``from regime_core.book import
build_book``) keeps them with :func:`lazy_attributes`, loaded on first use; a module whose
names moved elsewhere keeps them for one release with :func:`moved_attributes`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

#: old dotted path -> new dotted path; the next release deletes this table and the finder.
MOVED: dict[str, str] = {
    "regime_core.regimes": "regime_core.data.regimes",
    "regime_core.corpus_scan": "regime_core.retrieval.corpus_scan",
    "regime_core.experiments.overview": "regime_core.experiments.data_regimes",
    "regime_core.experiments.t1": "regime_core.experiments.t1_auc_margin",
    "regime_core.experiments.t2": "regime_core.experiments.t2_regime_decomposition",
    "regime_core.experiments.t3": "regime_core.experiments.t3_brel_knockout",
    "regime_core.experiments.router": "regime_core.experiments.router_train",
    "regime_core.experiments.transfer": "regime_core.experiments.zero_shot_transfer",
    "regime_core.experiments.plots": "regime_core.book.figures",
    "regime_core.annotate": "regime_core.teaching.annotate",
    "regime_core.toyworld": "regime_core.data.toyworld",
    "regime_core.router_demo": "regime_core.book.router_demo",
    "regime_core.reproduce": "regime_core.runner.reproduce",
    "regime_core.records": "regime_core.runner.records",
    "regime_core.expected": "regime_core.runner.expected",
    "regime_core.verdicts": "regime_core.runner.verdicts",
    "regime_core.sphinx_ext": "regime_core.book.sphinx",
}


def new_name(old: str) -> str | None:
    """The current path of a moved module ``old`` (or of a sub-module of one), else ``None``."""
    for before, after in MOVED.items():
        if old == before or old.startswith(before + "."):
            return after + old[len(before) :]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        warnings.warn(
            f"{self.old} moved to {self.new}; import it from there "
            "(the old path is removed in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.new)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: :meth:`create_module` returned the already-imported new module."""


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(fullname, new))


def lazy_attributes(package: str, module: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that reads a missing name from ``module``,
    imported on first use (so importing ``package`` alone stays light).

    >>> getattr_ = lazy_attributes("regime_core.book", "regime_core.book.build")
    >>> getattr_("build_book").__module__
    'regime_core.book.build'
    """

    def __getattr__(name: str) -> Any:
        loaded = importlib.import_module(module)
        try:
            return getattr(loaded, name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    return __getattr__


def moved_attributes(module: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``module`` whose names ``moved`` (name -> the module now
    holding it) are read from their new home with a deprecation warning naming it.

    >>> getattr_ = moved_attributes("old", {"build_book": "regime_core.book.build"})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     found = getattr_("build_book")
    >>> found.__module__, str(caught[0].message).split(";")[0]
    ('regime_core.book.build', 'old.build_book moved to regime_core.book.build.build_book')
    """

    def __getattr__(name: str) -> Any:
        home = moved.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} moved to {home}.{name}; import it from there "
            "(the old name is removed in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)

    return __getattr__


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
