"""The registry of runs: one entry per run of reproduce.yml, each naming its config, run function,
notebook, chapter, tables and figures; and the notebook helper that replaces their boilerplate."""

from __future__ import annotations

import ast
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import refused

from regime_core import paths
from regime_core.book import figures, tables
from regime_core.paper import load_claims
from regime_core.registry import start
from regime_core.runner.declarations import (
    PROFILES,
    load_declarations,
    notebook_defaults,
    notebook_parameters,
)
from regime_core.runner.identity import variant_hash
from regime_core.runner.records import load_record
from regime_core.runner.runs import RUNS, Run

NOTEBOOKS = sorted((paths.REPO_ROOT / "notebooks").glob("*.ipynb"))


def test_every_declared_run_and_every_notebook_is_registered_once() -> None:
    assert set(RUNS) == set(load_declarations().runs)
    assert sorted(run.notebook for run in RUNS.values()) == NOTEBOOKS
    for run_id, run in RUNS.items():
        assert run.id == run_id
        assert (paths.REPO_ROOT / f"{run.chapter}.md").is_file(), run.chapter


@pytest.mark.parametrize("run_id", list(RUNS))
def test_each_config_builds_from_the_parameters_of_every_profile(run_id: str) -> None:
    run = RUNS[run_id]
    fields = set(inspect.signature(run.config).parameters)
    for profile in PROFILES:
        parameters = run.spec.parameters_for(profile)
        cfg = run.config.from_parameters(**parameters)
        for name, value in parameters.items():
            if name in fields and value is not None:
                shown = getattr(cfg, name)
                assert list(shown) == list(value) if isinstance(value, list) else shown == value


@pytest.mark.parametrize("run_id", list(RUNS))
def test_each_notebook_opens_its_own_run_and_declares_only_known_parameters(run_id: str) -> None:
    run = RUNS[run_id]
    cells = json.loads(run.notebook.read_text(encoding="utf-8"))["cells"]
    code = "\n".join(
        "".join(c["source"])
        for c in cells
        if c["cell_type"] == "code" and "parameters" not in c["metadata"].get("tags", [])
    )
    assert re.findall(r'start\("([\w-]+)", globals\(\)\)', code) == [run_id]
    assert "write_record(" not in code and "from_parameters(" not in code  # the helper's job
    fields = set(inspect.signature(run.config).parameters)
    extra = set(notebook_parameters(run.notebook)) - fields - {"output_dir", "work_dir"}
    # a parameter that is not a config field is read by the notebook itself
    for name in extra:
        assert re.search(rf"\b{name}\b", code), f"{run.notebook.name}: {name} is never read"


def test_every_claim_is_judged_on_a_registered_run_and_shown_in_its_chapter() -> None:
    for claim in load_claims():
        assert claim.run in RUNS, claim.id
        assert claim.chapter == RUNS[claim.run].chapter, claim.id
    judged = {c.id for run in RUNS.values() for c in run.claims()}
    assert judged == {c.id for c in load_claims()}


def _public_functions(module: object, home: str) -> set[str]:
    return {
        name
        for name, obj in vars(module).items()
        if inspect.isfunction(obj) and not name.startswith("_") and obj.__module__.startswith(home)
    }


def test_every_figure_and_table_is_reachable_from_a_run() -> None:
    # the table of runs names them (it imports nothing of the book): each name is a function
    shown = [(figures, name) for run in RUNS.values() for name in run.figures]
    shown += [(tables, name) for run in RUNS.values() for name in run.tables]
    assert [name for module, name in shown if not callable(getattr(module, name, None))] == []
    reachable = {name for _, name in shown}
    # a figure the book's extension draws while it builds (no record behind it), named there
    from regime_book import coverage as coverage_directive

    drawn_by_the_book = {"interval_coverage"}
    source = Path(coverage_directive.__file__).read_text(encoding="utf-8")
    assert all(name in source for name in drawn_by_the_book)
    plots = _public_functions(figures, "regime_core.book.figures.")
    assert plots - reachable - drawn_by_the_book == set()
    ready = _public_functions(tables, "regime_core.book.tables.")
    assert ready - reachable == set()


def test_start_builds_the_config_and_writes_the_record(tmp_path: Path) -> None:
    namespace = {
        "output_dir": str(tmp_path / "out"),
        "work_dir": str(tmp_path),
        "encoder": "tfidf",
        "seed": 3,
        "n_questions": None,  # None: the default
        "unrelated": "not a parameter of the notebook",
    }
    nb = start("exercises", namespace)
    assert (nb.config.encoder, nb.config.seed) == ("tfidf", 3)
    assert nb.config.n_questions == type(nb.config)().n_questions
    assert "unrelated" not in nb.parameters and nb.work == tmp_path
    assert nb.context.work == tmp_path and nb.manifest_hash() is None  # nothing prepared here
    record = nb.record({"answer": 42}, inputs={"sample": "abc"})
    assert record == load_record(tmp_path / "out")
    assert record["name"] == "exercises" and record["numbers"] == {"answer": 42}
    assert record["config_kind"] == "LessonConfig" and record["inputs"] == {"sample": "abc"}
    assert record["config_hash"] == nb.config.config_hash()


@pytest.mark.parametrize("run_id", sorted(RUNS))
def test_each_run_s_default_config_shows_no_changed_setting(run_id: str) -> None:
    """The settings table compares with the config class built without arguments."""
    shown = tables.settings_table(RUNS[run_id].config(), []).frame
    assert shown.empty, shown


def test_settings_show_changed_fields_and_name_a_borrowed_record(tmp_path: Path) -> None:
    from regime_core.experiments.router_train import RouterConfig
    from regime_core.runner.records import write_record

    lender = tmp_path / "results" / "router_train"
    write_record(lender, name="router_train", config=RouterConfig(encoder="minilm"), numbers={})
    namespace = {"output_dir": str(tmp_path / "out"), "work_dir": str(tmp_path)}
    nb = start("zero_shot_transfer", {**namespace, "encoder": "tfidf", "alpha": 0.5})
    assert nb.borrow("router_train", what="the training row") is not None
    assert nb.borrow("router_train", tmp_path / "none.json", what="the selection") is None
    shown = nb.settings(["datasets"])
    changed = dict(zip(shown.frame["setting"], shown.frame["vs the default"], strict=True))
    assert set(changed) == {"datasets", "encoder", "alpha"}
    assert changed["encoder"] == "changed (default MiniLM-L6)"
    assert shown.note is not None
    assert "run router_train (results/router_train/record.json), encoder MiniLM-L6" in shown.note
    assert "That is not this run's encoder (TF-IDF)" in shown.note
    assert "No record of run router_train at none.json" in shown.note  # relative to work
    with refused(ValueError, names=("'router_train'", "'ablations'")):
        nb.borrow("ablations", lender / "record.json", what="x")
    with refused(ValueError, names=("borrow", "'nope'")):
        nb.borrow("nope", what="x")
    # a notebook opening a run the registry lacks: the runs it has, not a bare KeyError
    with refused(ValueError, names=("start", "'nope'", "'ablations'")):
        start("nope", namespace)


def test_a_missing_work_directory_is_an_error_only_for_a_run_that_reads_prepared_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REGIME_WORK_DIR", raising=False)
    missing = tmp_path / "not-yet"
    assert {r.id for r in RUNS.values() if r.generates_its_data} == {"toyworld", "exercises"}
    opened = start("toyworld", {"work_dir": str(missing), "output_dir": str(tmp_path / "o1")})
    assert opened.work == missing  # the generated world's store creates it when it writes
    with refused(FileNotFoundError, names=("work_dir", str(missing))):
        start("data_regimes", {"work_dir": str(missing), "output_dir": str(tmp_path / "o2")})


def _refs(run: Run) -> list[str]:
    """The ``"module:attribute"`` strings an entry names: its config's and its run function's."""
    return [ref for ref in (run.config_ref, run.run_ref) if ref]


def test_importing_the_registry_imports_no_run_s_own_module() -> None:
    """Entries name their config and run function by string, imported when first read."""
    own = sorted({ref.partition(":")[0] for run in RUNS.values() for ref in _refs(run)})
    code = "import sys, regime_core.{} as r; print(sorted(sys.modules))"
    loaded = {
        module: subprocess.run(
            [sys.executable, "-c", code.format(module)], check=True, capture_output=True, text=True
        ).stdout
        for module in ("registry", "runner.runs")
    }
    assert [m for m in own if f"'{m}'" in loaded["registry"]] == []
    assert "'regime_core.book" not in loaded["runner.runs"]  # the table names the book's functions
    assert sorted(ref.partition(":")[0] for ref in _refs(RUNS["robustness"])) == [
        "regime_core.experiments.robustness",
        "regime_core.experiments.robustness_grid",
    ]
    run = RUNS["robustness"].run  # imported now
    assert run is not None and run.__name__ == "run_robustness"


def test_a_notebook_run_by_hand_writes_into_its_variant_s_own_folder(tmp_path: Path) -> None:
    """output_dir None (every notebook's default): <work>/variants/<run>/<variant hash>, so a
    variant overwrites neither the default record nor another variant, and a default spelled
    out names the same folder as the default left out."""
    base = {"output_dir": None, "work_dir": str(tmp_path)}
    default = start("exercises", base)
    seeded = start("exercises", {**base, "seed": 3})
    inputs = RUNS["exercises"].inputs(
        {**notebook_defaults(RUNS["exercises"].notebook), "seed": 3}, tmp_path
    )
    assert seeded.output_dir == paths.variant_dir(
        "exercises", variant_hash(seeded.config.config_hash(), inputs), tmp_path
    )
    assert start("exercises", {**base, "my_predictions": None}).output_dir == default.output_dir
    assert seeded.output_dir != default.output_dir and seeded.output_dir.is_dir()
    assert start("exercises", {**base, "seed": 3}).output_dir == seeded.output_dir
    with refused(ValueError, names=("output_dir",)):
        start("exercises", {**base, "output_dir": ""})


def test_every_notebook_defaults_to_its_variant_s_folder() -> None:
    for run in RUNS.values():
        cells = json.loads(Path(run.notebook).read_text(encoding="utf-8"))["cells"]
        (cell,) = [c for c in cells if "parameters" in c["metadata"].get("tags", [])]
        defaults = {
            node.targets[0].id: ast.literal_eval(node.value)
            for node in ast.parse("".join(cell["source"])).body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        }
        assert defaults["output_dir"] is None, run.notebook
