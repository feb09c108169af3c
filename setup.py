"""Ship the checkout's run declarations, claims and notebooks inside every built package.

Everything else about the build is in pyproject.toml. ``regime reproduce``, a notebook's
``start()`` and ``regime verdicts`` read ``reproduce.yml``, ``paper_claims.yml`` and the
notebooks the declarations name; they stay at the repository's top (the layout the design
fixes), so a build copies them into ``regime_core/_shipped/`` of the wheel, where an installed
package finds them (``regime_core.paths.source_root``). An editable install reads the checkout
itself and copies nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

TOP = Path(__file__).resolve().parent
#: kept in step with regime_core.paths.SHIPPED_FILES (tests/test_packaging_install.py checks it)
SHIPPED_FILES = ("reproduce.yml", "paper_claims.yml", "notebooks", "expected_numbers.yml")
SHIPPED_DIR = "regime_core/_shipped"


class BuildWithShippedFiles(build_py):
    """``build_py``, then the checkout's files the runner needs, copied into the package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / SHIPPED_DIR
        shutil.rmtree(target, ignore_errors=True)
        for name in SHIPPED_FILES:
            source = TOP / name
            if source.is_dir():
                shutil.copytree(
                    source, target / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints")
                )
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)


setup(cmdclass={"build_py": BuildWithShippedFiles})
