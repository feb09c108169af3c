"""The old module paths of the re-homing keep working for one release, with a warning."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from regime_core import _moved


@pytest.mark.parametrize(("old", "new"), sorted(_moved.MOVED.items()))
def test_every_old_path_warns_and_gives_the_new_module(old: str, new: str) -> None:
    # a fresh interpreter: this one may have imported the old name already (no warning then)
    code = (
        "import warnings, importlib\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        f"new = importlib.import_module({new!r})\n"
        "try:\n"
        f"    importlib.import_module({old!r})\n"
        "except DeprecationWarning as w:\n"
        "    print(w)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert f"{old} moved to {new}" in out.stdout
    with pytest.warns(DeprecationWarning):
        sys.modules.pop(old, None)
        aliased = importlib.import_module(old)
    assert aliased is importlib.import_module(new)


def test_submodules_of_a_moved_package_follow_it() -> None:
    assert _moved.new_name("regime_core.toyworld.world") == "regime_core.data.toyworld.world"
    assert _moved.new_name("regime_core.toyworldly") is None
    assert _moved.new_name("regime_core.experiments.t1_auc_margin") is None
    with pytest.warns(DeprecationWarning):
        sys.modules.pop("regime_core.toyworld.world", None)
        old = importlib.import_module("regime_core.toyworld.world")
    assert old is importlib.import_module("regime_core.data.toyworld.world")


def test_the_wing_packages_keep_their_old_names() -> None:
    from regime_core.book import build_book
    from regime_core.book.build import build_book as new_build_book
    from regime_core.teaching import DemoConfig
    from regime_core.teaching.demo import DemoConfig as NewDemoConfig

    assert build_book is new_build_book and DemoConfig is NewDemoConfig
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        importlib.import_module("regime_core.teaching").nothing_here  # noqa: B018
