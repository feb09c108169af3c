"""pyproject.toml and environment.yml must describe the same environment."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _pins(requirements: list[str]) -> dict[str, str]:
    pins = {}
    for req in requirements:
        name, sep, version = req.partition("==")
        if not sep:
            raise AssertionError(f"{req!r} is not pinned with ==")
        pins[name.strip().lower()] = version.strip()
    return pins


def test_pyproject_and_environment_yml_pin_the_same_packages() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert _pins(declared) == _pins(pip_section)


def test_torch_is_pinned_exactly() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "torch==2.13.0" in project["dependencies"]
