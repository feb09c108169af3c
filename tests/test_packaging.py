"""Packaging metadata: the licence, the Python versions, the lint and type-check configuration."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
#: the book's Sphinx extension (``regime_book``), beside the book's pages: never in the wheel
BOOK_EXTENSION = Path("book") / "_ext"


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _dev_pin(package: str) -> str:
    dev = _pyproject()["project"]["optional-dependencies"]["dev"]
    return next(r.split("==")[1] for r in dev if r.split("==")[0] == package)


def test_licence_is_an_spdx_expression_with_its_file() -> None:
    project = _pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"] and (ROOT / "LICENSE").is_file()
    assert "MIT License" in (ROOT / "LICENSE").read_text().splitlines()[0]
    # setuptools accepts the string form from 77 on and refuses a licence classifier beside it
    assert "setuptools>=77" in _pyproject()["build-system"]["requires"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]


def test_classifiers_list_exactly_the_supported_pythons() -> None:
    project = _pyproject()["project"]
    supported = SpecifierSet(project["requires-python"])
    listed = sorted(
        int(c.rsplit(".", 1)[1])
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert listed == [m for m in range(8, 20) if f"3.{m}.0" in supported]
    assert listed[0] == 11 and listed[-1] >= 13


def test_pre_commit_runs_the_pinned_ruff() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    (repo,) = config["repos"]
    assert repo["repo"] == "https://github.com/astral-sh/ruff-pre-commit"
    assert repo["rev"] == f"v{_dev_pin('ruff')}"
    assert [h["id"] for h in repo["hooks"]] == ["ruff-check", "ruff-format"]


def test_mypy_is_configured_strictly_enough_and_run_by_make_lint_and_ci() -> None:
    config = _pyproject()["tool"]["mypy"]
    # the book's checks and the book's Sphinx extension too
    assert config["files"] == ["regime_core", "tools", "book/_ext"]
    assert config["warn_unused_configs"] and config["warn_unused_ignores"]
    assert _dev_pin("mypy")
    for section in [config, *config.get("overrides", [])]:  # nothing switched off wholesale
        assert not section.get("ignore_errors"), section
        assert not section.get("disable_error_code"), section
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make lint$", ci, re.MULTILINE), ".ci/run must run `make lint`"
    if shutil.which("make") is None:
        pytest.skip("needs make")
    out = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "lint"], capture_output=True, text=True, check=True
    ).stdout
    tools = [
        line.split()[0].rsplit("/", 1)[-1] for line in out.splitlines() if ".venv/bin/" in line
    ]
    assert tools[-3:] == ["ruff", "ruff", "mypy"]


def test_mypy_treats_as_untyped_only_libraries_the_package_imports_that_ship_no_types() -> None:
    """Each module of the ``ignore_missing_imports`` override is imported by what mypy checks
    (``regime_core``, the book's checks and its extension: docutils only by the extension) and,
    where installed, carries neither ``py.typed`` nor stubs (else mypy should read them)."""
    config = _pyproject()["tool"]["mypy"]
    (override,) = [o for o in config["overrides"] if o.get("ignore_missing_imports")]
    sources = "\n".join(
        p.read_text() for folder in config["files"] for p in (ROOT / folder).rglob("*.py")
    )
    for pattern in override["module"]:
        name = pattern.removesuffix(".*")
        imported = re.compile(rf"^\s*(?:import|from) {re.escape(name)}\b", re.MULTILINE)
        assert imported.search(sources), f"{name}: not imported by {config['files']}, drop it"
        spec = importlib.util.find_spec(name)
        if spec is None:  # an optional extra's library, not installed here
            continue
        if spec.submodule_search_locations:
            package = Path(next(iter(spec.submodule_search_locations)))
            assert not (package / "py.typed").exists(), f"{name} ships py.typed"
        stubs = [Path(p) / f"{name}-stubs" for p in sys.path if p]
        assert not any(s.is_dir() for s in stubs), f"{name} has stubs installed"


def test_the_package_neither_ships_nor_imports_the_book_s_extension() -> None:
    """Issue 47: the book's Sphinx extension lives beside its pages (``book/_ext/regime_book``,
    found through ``_config.yml``'s ``local_extensions``), so a wheel, which ships no book, has
    none of it; the package never imports it (the extension imports the package)."""
    setuptools = _pyproject()["tool"]["setuptools"]
    assert setuptools["packages"]["find"]["include"] == ["regime_core*"]
    assert not [d for d in setuptools["package-data"]["regime_core"] if "sphinx" in d]
    assert not (ROOT / "regime_core" / "book" / "sphinx").exists()
    assert (ROOT / BOOK_EXTENSION / "regime_book" / "__init__.py").is_file()
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["local_extensions"] == {"regime_book": BOOK_EXTENSION.as_posix()}
    assert BOOK_EXTENSION.as_posix() in config["exclude_patterns"]  # no page is read from it
    importing = re.compile(r"^\s*(?:import|from) regime_book\b", re.MULTILINE)
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "regime_core").rglob("*.py")
        if importing.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def copy_shipped(source: Path) -> None:
    """The checkout's files a build ships inside the package (setup.py), copied to ``source``."""
    from regime_core.paths import SHIPPED_FILES

    for name in SHIPPED_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name)
        else:
            shutil.copy2(ROOT / name, source / name)


@pytest.mark.slow
def test_the_wheel_builds_without_warnings_and_carries_the_licence(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy: the build writes build/ and *.egg-info beside it
    shutil.copytree(
        ROOT / "regime_core", source / "regime_core", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md", "LICENSE", "setup.py", "MANIFEST.in"):
        shutil.copy2(ROOT / name, source / name)
    copy_shipped(source)
    # the book's extension beside its pages, as in a checkout: the build must leave it out
    shutil.copytree(
        ROOT / BOOK_EXTENSION, source / BOOK_EXTENSION, ignore=shutil.ignore_patterns("__pycache__")
    )
    wheels = tmp_path / "wheels"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        check=True,
    )
    output = result.stdout + result.stderr
    assert not re.search(r"deprecat|BuildBackendWarning", output, re.I), output[-2000:]
    (wheel,) = wheels.glob("regime_core-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(metadata).decode()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in archive.namelist())
        names = archive.namelist()
    # the book's Sphinx extension is the book's, not the package's: no module, no style sheet
    assert not [n for n in names if "regime_book" in n or n.startswith("regime_core/book/sphinx")]
    assert not [n for n in names if n.endswith((".css", ".js")) and "resources/" not in n]
    assert "License-Expression: MIT" in text and "License-File: LICENSE" in text
    (requires_python,) = re.findall(r"^Requires-Python: (.+)$", text, re.M)
    assert SpecifierSet(requires_python) == SpecifierSet(_pyproject()["project"]["requires-python"])
