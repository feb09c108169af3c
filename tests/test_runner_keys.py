"""The reproduce key (issue 21 item 4): a run reruns when what can change its numbers changes
(code cells, parameters, data, the modules its computation imports, upstream), and never for a
docstring, a comment or the presentation wing; ``regime reproduce --plan`` says why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from helpers import refused

from regime_core.runner import keys, stamps
from regime_core.runner.declarations import load_declarations
from regime_core.runner.reproduce import plan

# A package shaped like regime_core: a computation layer, a presentation wing (book/) that
# imports the computation, a module nobody imports, a dynamic import, package data, and a
# registry whose entries name each run's experiment module by string (t8 is run a's, t9 run b's,
# and only t9 imports latency), importing a module every run shares (context).
PACKAGE = {
    "__init__.py": '"""The package."""\n',
    "stats.py": (
        '"""Statistics."""\n\n\ndef mean(xs):\n    """The mean."""\n    return sum(xs) / len(xs)\n'
    ),
    "paper.py": '"""Reads paper_claims.yml."""\nFILE = "paper_claims.yml"\n',
    "experiments/__init__.py": "",
    "experiments/t2.py": (
        '"""T2."""\nfrom ..stats import mean\n\n\ndef run(xs):\n'
        "    from pkg import paper  # a lazy import counts\n\n    return mean(xs)\n"
    ),
    "loader.py": 'import importlib\n\nMOD = importlib.import_module("pkg.dynamic")\n',
    "dynamic.py": "VALUE = 3\n",
    "unused.py": "VALUE = 1\n",
    "context.py": "SHARED = 0\n",
    "experiments/t8.py": "class Config:\n    N = 8\n",
    "experiments/t9.py": "from pkg import latency\n\n\nclass Config:\n    N = 9\n",
    "latency.py": "TIMER = 1\n",
    "runner/__init__.py": "",
    "runner/runs.py": (
        '"""Runs."""\nfrom pkg import context\n\n\nclass Run:\n'
        "    def __init__(self, id, config):\n        self.id, self.config = id, config\n\n\n"
        'RUNS = [\n    Run("a", "pkg.experiments.t8:Config"),\n'
        '    Run(id="b", config="pkg.experiments.t9:Config"),\n]\n'
    ),
    "book/__init__.py": "",
    "book/figures.py": '"""Figures."""\nfrom pkg.experiments import t2\n\nCOLOUR = "red"\n',
}
NOTEBOOK_IMPORTS = (
    "from pkg.runner.runs import RUNS\n"
    "from pkg.experiments.t2 import run\n"
    "from pkg.book import figures\n"
)


def _package(root: Path) -> Path:
    package = root / "pkg"
    for name, text in PACKAGE.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text, encoding="utf-8")
    (root / "paper_claims.yml").write_text("claims: []\n", encoding="utf-8")
    return package


def _notebook(path: Path, code: str) -> Path:
    cell = {"cell_type": "code", "execution_count": None, "outputs": [], "metadata": {}}
    cells = [
        {**cell, "id": "p", "metadata": {"tags": ["parameters"]}, "source": 'output_dir = "o"\n'},
        {**cell, "id": "c", "source": code},
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# words"},
    ]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    body = {"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": 5}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def _edit(file: Path, old: str, new: str) -> None:
    text = file.read_text(encoding="utf-8")
    assert old in text, (file, old)
    file.write_text(text.replace(old, new), encoding="utf-8")


# --- the module rule -----------------------------------------------------------------------------


def test_module_digest_ignores_docstrings_comments_and_layout_only(tmp_path: Path) -> None:
    def digest(source: str) -> str:
        file = tmp_path / "m.py"
        file.write_text(source)
        return keys.load_module("pkg.m", file).digest

    base = digest(
        '"""Module."""\nclass A:\n    """Class."""\n    x: int = 1\n    """Attribute."""\n\n'
        "    def f(self):\n        'Function.'\n        return self.x  # why\n"
    )
    same = digest("class A:\n    x: int = 1\n\n\n\n    def f(self):\n        return (self.x)\n")
    assert base == same
    assert digest("class A:\n    x: int = 2\n    def f(self):\n        return self.x") != base


def test_imports_are_followed_transitively_without_entering_the_book_wing(tmp_path: Path) -> None:
    package = _package(tmp_path)
    closure = keys.computation_modules(
        ["pkg.experiments.t2", "pkg.book.figures", "pkg.loader"], package
    )
    assert sorted(closure) == [
        "pkg",  # each package's __init__ runs on the way
        "pkg.dynamic",  # named in a string: importlib.import_module("pkg.dynamic")
        "pkg.experiments",
        "pkg.experiments.t2",
        "pkg.loader",
        "pkg.paper",  # imported inside a function
        "pkg.stats",  # relative import
    ]


def test_notebook_imports_read_code_cells_and_magics(tmp_path: Path) -> None:
    notebook = _notebook(
        tmp_path / "n.ipynb", "%matplotlib inline\nimport pkg.stats as s\n!echo hi\n"
    )
    assert {"pkg.stats"} <= keys.notebook_imports(notebook, "pkg")
    broken = _notebook(tmp_path / "b.ipynb", "def (:\n")
    with refused(ValueError, names=("b.ipynb", "code cell 1")):
        keys.notebook_imports(broken)


def test_every_package_data_file_is_classified() -> None:
    """A new resource must say which module reads it (keys.DATA_FILES) or why none counts;
    the presentation wing's own files (a style sheet, say) never count."""
    presentation_only = {"router.js", "py.typed"}  # the browser's router; a typing marker
    data = {Path(f).name for files in keys.DATA_FILES.values() for f in files}
    wings = [keys.PACKAGE_DIR / wing for wing in keys.PRESENTATION]
    shipped = {
        p.name
        for p in keys.PACKAGE_DIR.rglob("*")
        if p.is_file()
        and p.suffix not in (".py", ".pyc")
        and not any(p.is_relative_to(w) for w in wings)
    }
    assert shipped - data - presentation_only == set()
    files = keys.module_files()
    for module, relative in keys.DATA_FILES.items():
        assert f"regime_core.{module}" in files
        assert all((keys.PACKAGE_DIR.parent / f).is_file() for f in relative)


# --- keys and the plan on a fixture ---------------------------------------------------------------


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A fixture package, a declarations file with two runs (b after a) and a work directory
    where both runs are stamped as a finished reproduce leaves them."""
    package = _package(tmp_path / "src")
    _notebook(tmp_path / "nb" / "a.ipynb", NOTEBOOK_IMPORTS + "x = run([1, 2])\n")
    _notebook(
        tmp_path / "nb" / "b.ipynb", "from pkg.runner.runs import RUNS\nfrom pkg import unused\n"
    )
    decl = tmp_path / "reproduce.yml"
    runs = {
        "a": {"notebook": "nb/a.ipynb"},
        "b": {"notebook": "nb/b.ipynb", "depends_on": ["a"]},
    }
    decl.write_text(yaml.safe_dump({"runs": runs}), encoding="utf-8")
    work = tmp_path / "work"
    _stamp_all(decl, work, package)
    return decl, work, package


def _stamp_all(decl: Path, work: Path, package: Path) -> None:
    from regime_core.runner.records import write_record

    declarations = load_declarations(decl)
    for run_id, info in keys.run_keys(declarations, "default", work, package).items():
        stamps.executed_path(work, run_id).parent.mkdir(parents=True, exist_ok=True)
        stamps.executed_path(work, run_id).write_text("{}", encoding="utf-8")
        write_record(work / "results" / run_id, name=run_id, config={}, numbers={"n": 1})
        depends = declarations.runs[run_id].depends_on
        stamps.write_stamp(work, run_id, info, seconds=1.0, upstream=depends)


def _actions(decl: Path, work: Path, package: Path, **options: object) -> dict[str, str]:
    report = plan(decl, work=work, package_dir=package, **options)  # type: ignore[arg-type]
    return {entry.run_id: entry.action for entry in report.runs}


def test_a_stamped_work_directory_plans_nothing(setup: tuple[Path, Path, Path]) -> None:
    decl, work, package = setup
    assert _actions(decl, work, package) == {"a": "skip", "b": "skip"}


DOCSTRINGS_COMMENTS_AND_THE_BOOK_WING = [
    ("book/figures.py", '"""Figures."""', '"""Figures, redrawn."""'),
    ("book/figures.py", 'COLOUR = "red"', 'COLOUR = "blue"  # code, too'),
    ("stats.py", '"""The mean."""', '"""The arithmetic mean."""\n    # comment'),
    ("unused.py", "VALUE = 1", '"""Now documented."""\nVALUE = 1'),
]


@pytest.mark.parametrize(
    ("edits", "actions"),
    [
        (DOCSTRINGS_COMMENTS_AND_THE_BOOK_WING, {"a": "skip", "b": "skip"}),
        ([("unused.py", "VALUE = 1", "VALUE = 2")], {"a": "skip", "b": "run"}),  # b's alone
    ],
    ids=["rerun nothing", "rerun the importer alone"],
)
def test_edits_rerun_exactly_the_runs_whose_computation_they_change(
    setup: tuple[Path, Path, Path], edits: list[tuple[str, str, str]], actions: dict[str, str]
) -> None:
    decl, work, package = setup
    for file, old, new in edits:
        _edit(package / file, old, new)
    assert _actions(decl, work, package) == actions


def test_a_registry_entry_names_roots_of_its_own_run_only(tmp_path: Path) -> None:
    package = _package(tmp_path)
    assert keys.registry_entries(package) == {
        "a": {"pkg.experiments.t8"},
        "b": {"pkg.experiments.t9"},
    }
    registry = keys.computation_modules(["pkg.runner.runs"], package)
    # no entry's module
    assert sorted(registry) == ["pkg", "pkg.context", "pkg.runner", "pkg.runner.runs"]
    _edit(
        package / "runner" / "runs.py",
        '"""Runs."""',
        'import importlib\nimportlib.import_module("pkg.dynamic")',
    )
    assert "pkg.dynamic" in keys.computation_modules(["pkg.runner.runs"], package)  # still a rule
    assert keys.registry_entries(tmp_path / "nothing") == {}  # a package without a registry


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ('Run(NAME, "pkg.x:C")', "line 1"),
        ('Run("a", "pkg.x:C"), Run("a", "pkg.y:C")', "'a'"),
    ],
    ids=["id not a constant", "id twice"],
)
def test_a_registry_entry_the_key_cannot_read_is_an_error(
    tmp_path: Path, entry: str, error: str
) -> None:
    package = _package(tmp_path)
    (package / "runner" / "runs.py").write_text(f"RUNS = [{entry}]\n", encoding="utf-8")
    with refused(ValueError, names=("runs.py", error)):
        keys.registry_entries(package)


def _changed(*modules: str, upstream: bool = False) -> tuple[str, ...]:
    return (f"changed: {', '.join([*modules, *(['upstream run a'] if upstream else [])])}",)


@pytest.mark.parametrize(
    ("edit", "reasons"),
    [
        (
            ("experiments/t9.py", "N = 9", "N = 10"),
            {"a": (), "b": _changed("module pkg.experiments.t9")},
        ),
        (("latency.py", "TIMER = 1", "TIMER = 2"), {"a": (), "b": _changed("module pkg.latency")}),
        (
            ("experiments/t8.py", "N = 8", "N = 80"),
            {"a": _changed("module pkg.experiments.t8"), "b": _changed(upstream=True)},
        ),
        (
            ("runner/runs.py", "self.id, self.config = id, config", "self.id = id"),
            {
                "a": _changed("module pkg.runner.runs"),
                "b": _changed("module pkg.runner.runs", upstream=True),
            },
        ),
        (
            ("runner/runs.py", '"pkg.experiments.t9:Config"', '"pkg.experiments.t9:Other"'),
            {
                "a": _changed("module pkg.runner.runs"),
                "b": _changed("module pkg.runner.runs", upstream=True),
            },
        ),
        (
            ("context.py", "SHARED = 0", "SHARED = 1"),
            {
                "a": _changed("module pkg.context"),
                "b": _changed("module pkg.context", upstream=True),
            },
        ),
    ],
    ids=[
        "b's entry: b alone",
        "b's entry, transitively: b alone",
        "a's entry: a, and b below it",
        "the registry: every run",
        "one entry of the registry: every run",
        "a module the registry imports: every run",
    ],
)
def test_a_module_reruns_the_runs_whose_entry_or_notebook_reaches_it(
    setup: tuple[Path, Path, Path],
    edit: tuple[str, str, str],
    reasons: dict[str, tuple[str, ...]],
) -> None:
    decl, work, package = setup
    _edit(package / edit[0], edit[1], edit[2])
    report = plan(decl, work=work, package_dir=package)
    assert {e.run_id: e.reasons for e in report.runs} == reasons
    assert {e.run_id: e.action for e in report.runs} == {
        run: "run" if why else "skip" for run, why in reasons.items()
    }


def test_a_code_change_reruns_the_runs_importing_it_and_names_it(
    setup: tuple[Path, Path, Path],
) -> None:
    decl, work, package = setup
    _edit(package / "stats.py", "return sum(xs) / len(xs)", "return sum(xs) / max(len(xs), 1)")
    report = plan(decl, work=work, package_dir=package)
    a, b = report.runs
    assert (a.action, a.reasons) == ("run", ("changed: module pkg.stats",))
    assert (b.action, b.reasons) == ("run", ("changed: upstream run a",))  # downstream of a
    text = report.table()
    assert "module pkg.stats" in text and "upstream run a" in text


def test_many_changed_modules_fold_into_one_count_with_the_first_names() -> None:
    modules = [f"module regime_core.m{i}" for i in range(6)]
    assert keys.summarise_changes(["profile", *modules, "data file paper_claims.yml"]) == [
        "profile",
        "6 modules (regime_core.m0, regime_core.m1, regime_core.m2 and 3 more)",
        "data file paper_claims.yml",
    ]
    assert keys.summarise_changes(modules[:3]) == modules[:3]  # up to three are named
    assert keys.summarise_changes([]) == []


def test_package_data_parameters_and_profile_are_components(
    setup: tuple[Path, Path, Path],
) -> None:
    decl, work, package = setup
    (package.parent / "paper_claims.yml").write_text("claims: [x]\n", encoding="utf-8")
    a = plan(decl, work=work, package_dir=package).runs[0]
    assert a.reasons == ("changed: data file paper_claims.yml",)
    assert _actions(decl, work, package, profile="quick")["a"] == "run"


def test_upstream_rerun_without_a_key_change_is_checked_after_it(
    setup: tuple[Path, Path, Path],
) -> None:
    decl, work, package = setup
    stamps.stamp_path(work, "a").unlink()  # a failed or interrupted last run of a
    report = plan(decl, work=work, package_dir=package)
    assert [e.action for e in report.runs] == ["run", "after upstream"]
    assert "no stamp" in report.runs[0].reasons[0]
    assert report.runs[1].reasons == ("reruns if the record of upstream run a changes",)


def test_forced_and_damaged_runs_say_so(setup: tuple[Path, Path, Path]) -> None:
    decl, work, package = setup
    assert plan(decl, work=work, package_dir=package, only=["a"], force=True).runs[0].reasons == (
        "--force",
    )
    record = stamps.record_file(work, "b")
    record.write_text(record.read_text(encoding="utf-8") + " ", encoding="utf-8")
    b = plan(decl, work=work, package_dir=package).runs[1]
    assert b.action == "run" and b.reasons == ("its record changed since it was written",)


def test_a_record_whose_inputs_differ_from_its_stamp_is_rerun(
    setup: tuple[Path, Path, Path],
) -> None:
    """The issue's example: the data changed while the notebook ran, so the record's
    inputs.manifest is not the manifest its stamp was keyed on."""
    from regime_core.runner.records import write_record

    decl, work, package = setup
    info = keys.run_keys(load_declarations(decl), "default", work, package)["a"]
    write_record(
        work / "results" / "a", name="a", config={}, numbers={"n": 1}, inputs={"manifest": "b0"}
    )
    stamps.write_stamp(work, "a", info, seconds=1.0)  # outputs hashed as they are now
    a = plan(decl, work=work, package_dir=package).runs[0]
    assert a.action == "run"
    assert a.reasons == ("its record's inputs.manifest differs from its stamp's",)


def test_regime_reproduce_plan_json_runs_nothing(
    setup: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from regime_core import cli
    from regime_core.locks import LOCK_NAME

    decl, work, _package = setup

    def files() -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in work.rglob("*") if p.is_file() and p.name != LOCK_NAME}

    before = files()
    arguments = ["--plan", "--json", "--declarations", str(decl), "--work", str(work)]
    assert cli.main(["reproduce", *arguments]) == 0
    out = json.loads(capsys.readouterr().out)
    # keyed on the installed package, not the fixture's: both runs would run, for that reason
    assert [r["run"] for r in out["runs"]] == ["a", "b"]
    assert out["runs"][0]["action"] == "run" and out["runs"][0]["reasons"]
    assert files() == before
    assert not (decl.parent / "book").exists()  # nothing copied to the book either


def test_the_repository_package_keys_every_notebook(tmp_path: Path) -> None:
    """On the real package: every declared notebook's key covers its experiment module and
    none of the book wing; editing a docstring of a copy of the package changes no key."""
    decl = load_declarations()
    copy = tmp_path / "regime_core"
    shutil.copytree(keys.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(keys.PACKAGE_DIR.parent / "paper_claims.yml", tmp_path / "paper_claims.yml")
    before = keys.run_keys(decl, "quick", tmp_path / "work", copy)
    for run_id, info in before.items():
        modules = info["components"]["modules"]
        assert not any(m.startswith("regime_core.book") for m in modules), run_id
        assert not any(m.startswith("regime_core.cli") for m in modules), run_id
        assert "regime_core.runner.records" in modules, run_id
    for file in (copy / "book" / "palette.py", copy / "stats.py"):
        text = file.read_text(encoding="utf-8")
        first = text.index('"""') + 3
        file.write_text(text[:first] + "Reworded. " + text[first:], encoding="utf-8")
    after = keys.run_keys(decl, "quick", tmp_path / "work", copy)
    assert {r: i["key"] for r, i in after.items()} == {r: i["key"] for r, i in before.items()}


def test_on_the_repository_package_a_run_counts_its_own_entry_not_the_others(
    tmp_path: Path,
) -> None:
    """The registry names every run's modules; each run's key covers its own entry's alone:
    editing router/latency.py reruns routing_latency, never data_regimes."""
    from regime_core.runner.runs import RUNS

    entries = keys.registry_entries()
    assert entries == {
        run_id: frozenset(ref.partition(":")[0] for ref in (run.config_ref, run.run_ref) if ref)
        for run_id, run in RUNS.items()
    }
    found = keys.run_keys(load_declarations(), "quick", tmp_path / "work")
    modules = {run_id: set(info["components"]["modules"]) for run_id, info in found.items()}
    for run_id, named in entries.items():
        assert named <= modules[run_id], run_id
    assert "regime_core.router.latency" in modules["routing_latency"]
    assert "regime_core.router.latency" not in modules["data_regimes"]
    others = set().union(*(named for run_id, named in entries.items() if run_id != "data_regimes"))
    assert modules["data_regimes"] & others == set()
