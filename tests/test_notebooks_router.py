"""Notebooks 05-07 execute with papermill on a small real-data sample and write their records.

The work directory is fresh (prepared from ``REGIME_DATA_DIR``), but its embedding store is the
checkout's persistent one (``helpers.share_embedding_store``), so a warm machine encodes nothing
and the three notebooks stay well under three minutes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import share_embedding_store

from regime_core import paths
from regime_core.runner.records import get_number, load_record
from regime_core.runner.runs import RUNS

#: The router's runs: training, zero-shot transfer, ablations.
ROUTER_RUNS = ("router_train", "zero_shot_transfer", "ablations")
SAMPLE = 60  # per dataset: enough for both label classes in every training fold
RESAMPLES = 500


@pytest.fixture(scope="module")
def work(real_data_dir: Path, tmp_path_factory: Any) -> Path:
    from regime_core.data import prepare

    root = tmp_path_factory.mktemp("router_work")
    prepare(real_data_dir, paths.prepared_dir(root))
    share_embedding_store(root)
    return root


def _execute(run_id: str, out: Path, work: Path, **parameters: Any) -> dict[str, Any]:
    import papermill

    notebook = RUNS[run_id].notebook
    out.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        str(notebook),
        str(out / notebook.name),
        parameters={
            "output_dir": str(out),
            "work_dir": str(work),
            "sample_size": SAMPLE,
            "bootstrap_resamples": RESAMPLES,
            **parameters,
        },
        cwd=str(notebook.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    return load_record(out / "record.json")


def test_notebook_sources_are_clean() -> None:
    for run_id in ROUTER_RUNS:
        name = RUNS[run_id].notebook.name
        nb = json.loads(RUNS[run_id].notebook.read_text(encoding="utf-8"))
        tagged = [c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", [])]
        assert len(tagged) == 1, name
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, name
        params = "".join(tagged[0]["source"])
        for required in ("output_dir", "work_dir", "sample_size", "seed", "split", "pool"):
            assert f"{required} =" in params, (name, required)
        assert nb["cells"][0]["cell_type"] == "markdown"
        markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
        assert any(text.startswith("## Summary") for text in markdown), name


@pytest.mark.realdata
@pytest.mark.slow
def test_router_notebooks_execute(work: Path, tmp_path: Path) -> None:
    r05 = _execute("router_train", work / "results" / "router_train", work)
    assert get_number(r05, "train.n") == SAMPLE
    assert get_number(r05, "train.dataset") == "2wikimultihopqa"
    diff = get_number(r05, "train.outcome.routed_vs_q.diff")
    lo, hi = (get_number(r05, f"train.outcome.routed_vs_q.{b}") for b in ("ci_lo", "ci_hi"))
    assert lo <= diff <= hi
    assert get_number(r05, "train.outcome.hit@5_oracle") >= get_number(
        r05, "train.outcome.hit@5_routed"
    )
    assert 0.0 <= get_number(r05, "selector.musique.all.selected") <= 1.0
    assert (work / "results" / "router_train" / "router.json").is_file()

    # 06 with the model 05 just wrote, and the headline row read from 05's record.
    r06 = _execute("zero_shot_transfer", tmp_path / "06", work, router_file="trained")
    assert get_number(r06, "train.diff") == diff
    for dataset in ("musique", "hotpotqa"):
        assert get_number(r06, f"transfer.{dataset}.n") == SAMPLE
        assert isinstance(get_number(r06, f"transfer.{dataset}.no_regret"), bool)
    assert r06["inputs"]["router_file"] == r05["inputs"]["router_file"]

    r07 = _execute(
        "ablations",
        tmp_path / "07",
        work,
        alphas=[0.0, 0.25, 1.0],
        encoders=["minilm", "tfidf"],
        pools=["question"],
    )
    numbers = r07["numbers"]
    # the sweep runs per encoder: alpha_sweep.<encoder>.<dataset>.<α>
    assert set(numbers["alpha_sweep"]) == {"minilm", "tfidf"}
    assert set(numbers["alpha_sweep"]["tfidf"]["musique"]) == {"0p00", "0p25", "1p00"}
    zero = numbers["alpha_sweep"]["minilm"]["2wikimultihopqa"]["0p00"]
    assert zero["degenerate"] is True and zero["hit_routed"] == zero["hit_q"]
    assert set(numbers["encoders"]) == {"minilm", "tfidf"}
    assert "nv-embed-v2" in numbers["unavailable_encoders"]
    assert len(numbers["leave_one_out"]["hotpotqa"]) == 6

    # what a reader sees: results only, every figure shown
    from test_notebooks_style import check_executed_page

    check_executed_page(work / "results" / "router_train" / "05_router_train.ipynb", r05)
    check_executed_page(tmp_path / "06" / "06_zero_shot_transfer.ipynb", r06)
    check_executed_page(tmp_path / "07" / "07_ablations.ipynb", r07)


#: What every comparison of the ``selection`` node carries (the claims' power reads the last two).
SELECTION_COMPARISON_KEYS = ("n", "diff", "ci_lo", "ci_hi", "p_value", "n_a_better", "n_b_better")


@pytest.mark.realdata
@pytest.mark.slow
def test_the_quick_records_measure_every_selector_at_three_levels(quick_run: Any) -> None:
    from regime_core import config
    from regime_core.router.selector_evaluation import MEASURED, ROUTED_COMPARISONS

    train = quick_run.record("router_train")
    transfer = quick_run.record("zero_shot_transfer")
    for record, datasets in (
        (train, ("2wikimultihopqa", "musique", "hotpotqa")),
        (transfer, ("musique", "hotpotqa")),
    ):
        assert get_number(record, "selection.selector") == "rule"
        for dataset in datasets:
            head = f"selection.{dataset}"
            setting = "cross-fitted" if dataset == "2wikimultihopqa" else "zero-shot"
            assert get_number(record, f"{head}.setting") == setting
            for selector in MEASURED:
                share = get_number(record, f"{head}.agreement.all.{selector}")
                assert 0.0 <= share <= 1.0
            assert 0.0 < get_number(record, f"{head}.agreement.all.chance") <= 1.0
            for selector in set(MEASURED) - {"gold"}:
                for key in SELECTION_COMPARISON_KEYS:
                    get_number(record, f"{head}.union.{selector}.{key}")
            for selector in config.SELECTORS:
                for comparison in ROUTED_COMPARISONS:
                    for key in SELECTION_COMPARISON_KEYS:
                        get_number(record, f"{head}.routed.{selector}.{comparison}.{key}")
                        if selector != "gold":
                            get_number(
                                record, f"{head}.routed.{selector}.vs_gold.{comparison}.{key}"
                            )
    # the rule's routed numbers are the chapter's own
    assert get_number(train, "selection.2wikimultihopqa.routed.rule.routed_vs_q.diff") == (
        get_number(train, "train.outcome.routed_vs_q.diff")
    )
    for dataset in ("musique", "hotpotqa"):
        assert get_number(transfer, f"selection.{dataset}.routed.rule.routed_vs_q.diff") == (
            get_number(transfer, f"transfer.{dataset}.routed_vs_q.diff")
        )
