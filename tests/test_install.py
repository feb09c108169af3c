"""Which torch build an install takes: the Makefile's torch step (`make torch`, run by `make
install`) and the extra index of environment.yml, against stand-in indexes that mimic
PyPI (whose torch==VERSION pulls CUDA wheels) and PyTorch's CPU index (torch==VERSION+cpu), built
from tiny fake wheels. Nothing here reaches a network: an unreachable index is 127.0.0.1:9."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNREACHABLE = "http://127.0.0.1:9/simple"  # the discard port: nothing listens, refused at once

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _torch_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    match = re.search(r'^\s*"torch==([^"]+)",?$', text, re.M)
    assert match, "pyproject.toml: torch is not pinned"
    return match.group(1)


VERSION = _torch_version()


def _wheel(where: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A minimal pure-Python wheel (one empty module) declaring ``requires``."""
    where.mkdir(parents=True, exist_ok=True)
    module = name.replace("-", "_")
    dist_info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": "",
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    files[f"{dist_info}/RECORD"] = "".join(f"{f},,\n" for f in [*files, f"{dist_info}/RECORD"])
    path = where / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


def _index(root: Path, wheels: list[Path]) -> str:
    """A PEP 503 simple index over ``wheels`` (file: URL); pip reads ``<project>/index.html``."""
    for wheel in wheels:
        project = root / wheel.name.split("-")[0].replace("_", "-")
        project.mkdir(parents=True, exist_ok=True)
        with (project / "index.html").open("a") as page:
            page.write(f'<a href="{wheel.as_uri()}">{wheel.name}</a>\n')
    return root.as_uri()


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("indexes")
    files = root / "files"
    cuda_dep = "nvidia-stand-in==1.0"  # PyPI's torch pulls about 19 such wheels
    pypi = _index(
        root / "pypi",
        [
            _wheel(files / "pypi", "torch", VERSION, (cuda_dep,)),
            _wheel(files / "pypi", "nvidia-stand-in", "1.0"),
            _wheel(files / "pypi", "needs-torch", "1.0", (f"torch=={VERSION}",)),
        ],
    )
    cpu = _index(root / "cpu", [_wheel(files / "cpu", "torch", f"{VERSION}+cpu")])
    local = files / "local"  # a find-links folder, like this machine's /opt/wheels
    _wheel(local, "torch", f"{VERSION}+cpu")
    return {"pypi": pypi, "cpu": cpu, "local": str(local)}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path


def _env(*, index: str, find_links: str | None = None) -> dict[str, str]:
    """pip with no configuration file and only the given sources (and no outer make's flags)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PIP_") and k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    }
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_INDEX_URL=index,
        PIP_NO_CACHE_DIR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    if find_links:
        env["PIP_FIND_LINKS"] = find_links
    return env


def _make_torch(venv: Path, env: dict[str, str], **variables: str) -> None:
    args = [f"{k}={v}" for k, v in {"VENV": str(venv), **variables}.items()]
    subprocess.run(["make", "-s", "-C", str(ROOT), "torch", *args], env=env, check=True)


def _pip(venv: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )


def _installed(venv: Path, env: dict[str, str]) -> dict[str, str]:
    listed = _pip(venv, env, "list", "--format=json").stdout
    return {p["name"].lower(): p["version"] for p in json.loads(listed)}


@pytest.fixture
def clean(venv: Path) -> Path:
    """The module's venv without any torch (or what came with one)."""
    env = _env(index=UNREACHABLE)
    _pip(venv, env, "uninstall", "--yes", "torch", "nvidia-stand-in", "needs-torch")
    return venv


def test_fresh_machine_takes_the_cpu_build_from_the_cpu_index(clean, stand_ins) -> None:
    env = _env(index=stand_ins["pypi"])
    _make_torch(clean, env, TORCH_CPU_INDEX=stand_ins["cpu"])
    assert _installed(clean, env)["torch"] == f"{VERSION}+cpu"
    # the main install (a package pinning torch, from the CUDA-pulling index) keeps it
    _pip(clean, env, "install", "needs-torch")
    installed = _installed(clean, env)
    assert installed["torch"] == f"{VERSION}+cpu" and "needs-torch" in installed
    assert "nvidia-stand-in" not in installed


def test_a_local_cpu_wheel_is_taken_without_asking_any_index(clean, stand_ins) -> None:
    env = _env(index=UNREACHABLE, find_links=stand_ins["local"])
    _make_torch(clean, env, TORCH_CPU_INDEX=UNREACHABLE)
    assert _installed(clean, env)["torch"] == f"{VERSION}+cpu"


def test_torch_cuda_takes_the_pypi_build_even_beside_a_local_cpu_wheel(clean, stand_ins) -> None:
    env = _env(index=stand_ins["pypi"], find_links=stand_ins["local"])
    _make_torch(clean, env, TORCH="cuda", TORCH_CPU_INDEX=UNREACHABLE)
    assert _installed(clean, env)["torch"] == VERSION
    _pip(clean, env, "install", "needs-torch")  # its CUDA dependencies come with the main install
    installed = _installed(clean, env)
    assert installed["torch"] == VERSION and "nvidia-stand-in" in installed


def test_no_torch_build_but_cpu_or_cuda(venv) -> None:
    result = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "torch", "TORCH=gpu", f"VENV={venv}"],
        env=_env(index=UNREACHABLE),
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0 and "TORCH is cpu or cuda, not 'gpu'" in result.stderr


@pytest.mark.parametrize("extra", [True, False])
def test_the_cpu_index_beside_pypi_gives_the_cpu_build(clean, stand_ins, extra) -> None:
    """environment.yml adds the CPU index with --extra-index-url (binder/ names the wheel): pip
    then prefers torch==VERSION+cpu to PyPI's torch==VERSION (without it: the CUDA build)."""
    env = _env(index=stand_ins["pypi"])
    options = ["--extra-index-url", stand_ins["cpu"]] if extra else []
    report = _pip(
        clean, env, "install", "--dry-run", "--quiet", "--report", "-", *options, "needs-torch"
    ).stdout
    chosen = {
        i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(report)["install"]
    }
    if extra:
        assert chosen["torch"] == f"{VERSION}+cpu" and "nvidia-stand-in" not in chosen
    else:
        assert chosen["torch"] == VERSION and "nvidia-stand-in" in chosen


def test_make_keeps_the_torch_build_the_venv_has(tmp_path: Path) -> None:
    def torch_step(venv: Path, *variables: str) -> str:
        return subprocess.run(
            ["make", "-n", "-s", "-C", str(ROOT), "torch", f"VENV={venv}", *variables],
            env=_env(index=UNREACHABLE),
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    assert f'"torch=={VERSION}+cpu"' in torch_step(tmp_path)  # a new venv: the CPU build
    (tmp_path / ".installed-torch-cuda").touch()  # what `make install TORCH=cuda` leaves
    assert f'"torch==={VERSION}"' in torch_step(tmp_path)
    assert f'"torch=={VERSION}+cpu"' in torch_step(tmp_path, "TORCH=cpu")
