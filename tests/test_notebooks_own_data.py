"""Every notebook that takes a dataset runs on a dataset of one's own (issue 33): the toy world
exported (``regime data export``) and prepared under two other names (``regime data prepare
--jsonl FILE --name NAME``), each notebook executed with papermill on them with its work
directory given only as ``-p work_dir`` (no ``REGIME_WORK_DIR``), and its record read back.

TF-IDF where it can (seconds per notebook), MiniLM (bundled) for the runs that train a router;
minutes in all: ``slow``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import share_embedding_store

from regime_core.cli import main
from regime_core.runner.records import get_number, load_record
from regime_core.runner.runs import RUNS

pytestmark = pytest.mark.slow

#: The router is trained on MINE; OTHER is the same questions under another name, which the
#: router-training run's selection study does not measure (the case that once crashed 06).
MINE, OTHER = "mine", "mine_too"
ENCODER = "tfidf"
#: The router-training runs use MiniLM: on the toy world TF-IDF labels almost every question
#: alike, too few of one class to cross-fit in five folds.
ROUTER_ENCODER = "minilm"

#: (run id, its parameters on the datasets of one's own), in dependency order: router_train
#: writes the router that zero_shot_transfer applies.
RUNS_ON_OWN_DATA: tuple[tuple[str, dict[str, Any]], ...] = (
    ("toyworld", {"encoder": ENCODER, "real_dataset": MINE, "n_questions": 20}),
    ("data_regimes", {"datasets": [MINE], "encoders": [ENCODER]}),
    ("t1_auc_margin", {"datasets": [MINE], "encoders": [ENCODER], "min_cell_n": 10,
                       "bootstrap_resamples": 200}),
    ("t2_regime_decomposition", {"datasets": [MINE, OTHER], "encoders": [ENCODER],
                                 "min_cell_n": 10, "bootstrap_resamples": 200}),
    ("t3_brel_knockout", {"datasets": [MINE], "encoders": [ENCODER],
                          "bootstrap_resamples": 200}),
    ("router_train", {"dataset": MINE, "selector_datasets": [MINE], "encoder": ROUTER_ENCODER,
                      "bootstrap_resamples": 200}),
    ("zero_shot_transfer", {"datasets": [OTHER], "encoder": ROUTER_ENCODER,
                            "router_file": "trained",
                            "bootstrap_resamples": 200}),
    ("ablations", {"train_dataset": MINE, "transfer_datasets": [OTHER],
                   "encoders": [ROUTER_ENCODER],
                   "paper_encoders": [], "pools": ["question"], "bootstrap_resamples": 200}),
    ("exercises", {"encoder": ENCODER, "real_dataset": MINE}),
    ("robustness", {"datasets": [MINE], "encoders": [ENCODER], "primary_encoder": ENCODER,
                    "pools": ["question"], "bootstrap_resamples": 200, "t2_resamples": 200}),
    ("routing_latency", {"datasets": [MINE], "sample_size": 20, "cold_processes": 2,
                         "javascript": False}),
    ("alpha_transfer", {"train_dataset": MINE, "transfer_datasets": [OTHER],
                        "encoders": [ROUTER_ENCODER], "bootstrap_resamples": 200}),
)  # fmt: skip


@pytest.fixture(scope="module")
def own_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A work directory holding the toy world prepared as MINE and OTHER, as a user would."""
    work = tmp_path_factory.mktemp("own") / "work"
    exported = work.parent / "toy.jsonl"
    assert main(["data", "export", "toyworld", "--jsonl", str(exported), "--work", str(work)]) == 0
    for name in (MINE, OTHER):
        argv = ["data", "prepare", "--jsonl", str(exported), "--name", name, "--work", str(work)]
        assert main(argv) == 0
    share_embedding_store(work)
    return work


def test_every_notebook_taking_a_dataset_is_listed() -> None:
    taking = {
        run.id
        for run in RUNS.values()
        if {"dataset", "datasets", "real_dataset", "train_dataset", "transfer_datasets"}
        & set(_declared(run.id))
    }
    assert taking == {run_id for run_id, _ in RUNS_ON_OWN_DATA}


def _declared(run_id: str) -> tuple[str, ...]:
    from regime_core.runner.declarations import notebook_parameters

    return tuple(notebook_parameters(RUNS[run_id].notebook))


@pytest.mark.parametrize(
    ("run_id", "parameters"), RUNS_ON_OWN_DATA, ids=[r for r, _ in RUNS_ON_OWN_DATA]
)
def test_the_notebook_runs_on_a_dataset_of_ones_own(
    run_id: str,
    parameters: dict[str, Any],
    own_work: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import papermill

    from regime_core import paths

    monkeypatch.delenv("REGIME_WORK_DIR", raising=False)  # -p work_dir alone must find them
    monkeypatch.setenv("PYTHONPATH", str(paths.REPO_ROOT))  # the kernel imports this checkout
    notebook = RUNS[run_id].notebook
    out = paths.results_dir(own_work) / run_id
    papermill.execute_notebook(
        str(notebook),
        str(own_work.parent / notebook.name),
        parameters={"output_dir": str(out), "work_dir": str(own_work), **parameters},
        cwd=str(own_work.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    record = load_record(out / "record.json")
    assert record["name"] == run_id
    config = record["config"]
    named = [config.get(key) for key in ("dataset", "datasets", "real_dataset", "train_dataset")]
    ours = {MINE, OTHER}
    assert any(
        {value} & ours if isinstance(value, str) else ours & set(value or ()) for value in named
    )
    if run_id == "zero_shot_transfer":
        # the selection study measured MINE only: OTHER is reported as not measured, with why
        reason = get_number(record, f"selection.not_measured.{OTHER}")
        assert f"measured selection on {MINE} only" in reason
        assert get_number(record, f"transfer.{OTHER}.n") > 0
