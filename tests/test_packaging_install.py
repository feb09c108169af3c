"""Issue 44: a package that works wherever it is installed. A built package (a wheel, what
``pip install git+URL`` and Binder make) ships the run declarations, the claims and the notebooks
the runner needs (setup.py copies them into ``regime_core/_shipped``), and a non-editable
install outside the checkout runs the toy world and the exercises."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from test_packaging import copy_shipped

from regime_core import paths
from regime_core.runner.declarations import load_declarations

ROOT = Path(__file__).resolve().parent.parent
LAUNCHED = ("toyworld", "exercises")  # the runs that need no prepared dataset


def _setup_constant(name: str) -> object:
    """A top-level constant of setup.py, read without running it."""
    for node in ast.parse((ROOT / "setup.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            name
        ]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"setup.py has no {name}")


def test_setup_ships_what_the_package_looks_for() -> None:
    assert _setup_constant("SHIPPED_FILES") == paths.SHIPPED_FILES
    shipped = Path(str(_setup_constant("SHIPPED_DIR")))
    assert ROOT / shipped == paths.SHIPPED_DIR
    # the declarations name only notebooks of the shipped folder, relative to the file
    decl = load_declarations()
    for spec in decl.runs.values():
        assert spec.notebook.parent == decl.root / "notebooks", spec.notebook


def test_the_checkout_is_read_when_the_package_runs_from_it() -> None:
    assert paths.source_root() == paths.REPO_ROOT
    assert not paths.SHIPPED_DIR.exists(), "a build copied files into the checkout's package"


@pytest.mark.slow
def test_a_wheel_installed_outside_the_checkout_runs_the_toy_world_and_the_exercises(
    tmp_path: Path,
) -> None:
    """The wheel is built as pip builds it; installed with no dependency into a fresh venv that
    borrows this venv's site-packages (torch and the rest, never this venv's editable
    regime_core); then, from a directory outside the checkout, ``regime reproduce --profile
    quick --only toyworld exercises`` runs the shipped notebooks."""
    source = tmp_path / "source"  # a copy: the build writes build/ and *.egg-info beside it
    shutil.copytree(
        ROOT / "regime_core", source / "regime_core", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md", "LICENSE", "setup.py", "MANIFEST.in"):
        shutil.copy2(ROOT / name, source / name)
    copy_shipped(source)
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = dist.glob("regime_core-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    decl = load_declarations()
    wanted = {
        f"regime_core/_shipped/{name}"
        for name in ("reproduce.yml", "paper_claims.yml", "expected_numbers.yml")
    }
    wanted |= {
        f"regime_core/_shipped/{spec.notebook.relative_to(decl.root).as_posix()}"
        for spec in decl.runs.values()
    }
    assert wanted <= names, sorted(wanted - names)
    assert "regime_core/resources/default_router.json" in names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # a plain path line: this venv's packages after the fresh venv's own, its .pth files (the
    # editable regime_core's finder among them) not processed
    (Path(site) / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        text=True,
    )
    session = tmp_path / "session"  # no checkout here, nothing prepared
    session.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "REGIME_WORK_DIR", "REGIME_DATA_DIR", "VIRTUAL_ENV")
    }
    env.update(MPLBACKEND="Agg", JUPYTER_DATA_DIR=str(tmp_path / "jupyter"))
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import regime_core, regime_core.paths as p; print(regime_core.__file__); "
            "print(p.source_root()); from regime_core.runner import expected as e; "
            "print(e.EXPECTED_NUMBERS_FILE) if e.load_expected() else None",
        ],
        cwd=session,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert all(Path(w).is_relative_to(venv) for w in where), where
    work = session / "work"
    reproduce = subprocess.run(
        [
            *(str(venv / "bin" / "regime"), "reproduce", "--profile", "quick"),
            *("--only", *LAUNCHED, "--work", str(work), "--json"),
        ],
        cwd=session,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert reproduce.returncode == 0, reproduce.stderr[-3000:]
    report = json.loads(reproduce.stdout)
    assert {r["run"]: r["status"] for r in report["runs"]} == dict.fromkeys(LAUNCHED, "ran")
    for run_id in LAUNCHED:
        assert (work / "results" / run_id / "record.json").is_file()
        assert (work / "book" / "executed" / f"{run_id}.ipynb").is_file()
    # everything it wrote is in the work directory; the installed package is untouched
    assert sorted(p.name for p in session.iterdir()) == ["work"]
    shipped = Path(where[1])
    assert not list(shipped.rglob("*.ipynb.tmp")) and not (shipped / "_build").exists()
