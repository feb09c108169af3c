"""pyproject.toml, environment.yml and binder/ must describe the same environment, with the CPU
build of torch wherever an index is named."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def cpu_index() -> str:
    """PyTorch's CPU wheel index, as the Makefile names it (the one place it is set)."""
    match = re.search(r"^TORCH_CPU_INDEX \?= (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert match, "Makefile: no TORCH_CPU_INDEX"
    return match.group(1)


def _pins(requirements: list[str]) -> dict[str, str]:
    pins = {}
    for req in requirements:
        name, sep, version = req.partition("==")
        if not sep:
            raise AssertionError(f"{req!r} is not pinned with ==")
        pins[name.strip().lower()] = version.strip()
    return pins


def _environment_pip_section() -> list[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    return next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))


def test_pyproject_and_environment_yml_pin_the_same_packages() -> None:
    project = _project()
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    requirements = [r for r in _environment_pip_section() if not r.startswith("-")]
    assert _pins(declared) == _pins(requirements)


def test_environment_yml_takes_torch_from_the_cpu_index() -> None:
    options = [r for r in _environment_pip_section() if r.startswith("-")]
    assert options == [f"--extra-index-url {cpu_index()}"]


def test_torch_is_pinned_exactly() -> None:
    assert "torch==2.13.0" in _project()["dependencies"]


def binder_requirements() -> list[str]:
    """binder/requirements.txt's requirement lines (comments and blank lines left out)."""
    return [
        line.strip()
        for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]


def binder_torch_wheel() -> str:
    """The address of the torch wheel binder/requirements.txt installs."""
    (line,) = [r for r in binder_requirements() if r.startswith("torch")]
    name, at, url = line.partition(" @ ")
    assert name == "torch" and at, f"binder: torch by its wheel's address, not {line!r}"
    return url


def test_binder_installs_the_package_without_extras_and_with_cpu_torch() -> None:
    """Issue 33: no extra index (pip would ask it about every package, retrying an unreachable
    one for minutes), and a kernel. Issue 44: the package is installed as a user's pip would,
    not editable (it ships its declarations and notebooks; tests/test_launch.py runs the toy
    world in that install)."""
    from urllib.parse import unquote

    lines = binder_requirements()
    assert not [line for line in lines if line.startswith("-")], lines  # no index, no -e
    ipykernel = next(r for r in _project()["optional-dependencies"]["book"] if "ipykernel" in r)
    assert lines == [f"torch @ {binder_torch_wheel()}", ".", ipykernel]
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    version = runtime.removeprefix("python-")
    assert runtime.startswith("python-") and re.fullmatch(r"3\.\d+", version), runtime
    # the Python Binder builds is one the project supports
    from packaging.specifiers import SpecifierSet

    assert version + ".0" in SpecifierSet(_project()["requires-python"])
    # the wheel: PyTorch's CPU build of the pinned version, for that Python on Linux x86_64
    url = binder_torch_wheel()
    directory, _, wheel = url.rpartition("/")
    assert directory == cpu_index(), url
    pinned = next(r for r in _project()["dependencies"] if r.startswith("torch=="))
    tag = "cp" + version.replace(".", "")
    expected = f"torch-{pinned.removeprefix('torch==')}+cpu-{tag}-{tag}-manylinux_2_28_x86_64.whl"
    assert unquote(wheel) == expected


def test_binder_opens_the_toy_world() -> None:
    post_build = ROOT / "binder" / "postBuild"
    assert post_build.stat().st_mode & 0o111, "binder/postBuild must be executable"
    match = re.search(r'default_url = "/lab/tree/(\S+)"', post_build.read_text())
    assert match and match.group(1) == "notebooks/00_toyworld.ipynb"
    assert (ROOT / match.group(1)).is_file()


def test_the_pages_workflow_takes_torch_from_the_cpu_index() -> None:
    workflow = (ROOT / ".github" / "workflows" / "book.yml").read_text()
    assert f"--extra-index-url {cpu_index()}" in workflow
