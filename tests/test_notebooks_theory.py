"""Execute the four theory notebooks (01-04) with papermill on a small real-data sample and check
their records: keys present, values in range, parameters echoed, hashes stable.

One prepared work directory is shared by the four notebooks; its embedding store is the
checkout's persistent one (``helpers.share_embedding_store``), which the quick profile's notebooks
have filled when the slow tier gets here, so the samples' texts are read, not encoded again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import share_embedding_store

from regime_core import config, paths
from regime_core.runner.records import load_record
from regime_core.runner.runs import RUNS

#: The four theory runs: the data page, T1, T2 and T3.
THEORY = ("data_regimes", "t1_auc_margin", "t2_regime_decomposition", "t3_brel_knockout")
SAMPLE_SIZE = 30
ENCODERS = ["minilm", "tfidf"]
DATASETS = list(config.DATASETS)
# Small enough to keep the suite fast; the CIs are then coarse, which these checks allow for.
RESAMPLES = 200
COMMON = {
    "datasets": DATASETS,
    "encoders": ENCODERS,
    "sample_size": SAMPLE_SIZE,
    "bootstrap_resamples": RESAMPLES,
}

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


@pytest.fixture(scope="module")
def work(real_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from regime_core.data import prepare

    root = tmp_path_factory.mktemp("theory_work")
    prepare(real_data_dir, paths.prepared_dir(root), DATASETS)
    share_embedding_store(root)
    return root


def _execute(run_id: str, work: Path, out: Path, **extra: Any) -> dict[str, Any]:
    import papermill

    notebook = RUNS[run_id].notebook
    parameters = {**COMMON, **extra, "output_dir": str(out), "work_dir": str(work)}
    out.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        str(notebook),
        str(out / f"{notebook.stem}.executed.ipynb"),
        parameters=parameters,
        cwd=str(notebook.parent),
        kernel_name="python3",
        progress_bar=False,
    )
    return load_record(out)


@pytest.fixture(scope="module")
def records(work: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("theory_out")
    extra = {"t1_auc_margin": {"min_cell_n": 8}, "t2_regime_decomposition": {"min_cell_n": 8}}
    return {
        run_id: _execute(run_id, work, out / run_id, **extra.get(run_id, {})) for run_id in THEORY
    }


def _expected_samples(work: Path, tiny_pools: str, k: int) -> dict[str, str]:
    """The sample every notebook with these tiny-pool settings must use: the hit@k claims (T2,
    T3) leave pools of at most k candidates out before sampling, the data page and T1 keep them."""
    from regime_core.data import load_examples
    from regime_core.experiments.common import ExperimentConfig
    from regime_core.experiments.sampling import sample_examples

    cfg = ExperimentConfig(tiny_pools=tiny_pools, k=k)
    return {
        ds: sample_examples(
            load_examples(ds, split=cfg.split, work=work),
            SAMPLE_SIZE,
            seed=cfg.seed,
            dataset=ds,
            split=cfg.split,
            settings=cfg.retrieval,
        ).ids_hash
        for ds in DATASETS
    }


def _in_unit(value: float) -> bool:
    return 0.0 <= value <= 1.0


def test_every_record_echoes_parameters_and_shares_the_sample(records, work) -> None:
    data, t1, t2, t3 = (records[run_id]["config"] for run_id in THEORY)
    assert data["tiny_pools"] == t1["tiny_pools"] == "keep"
    assert t2["tiny_pools"] == t3["tiny_pools"]
    for key, record in records.items():
        config = record["config"]
        expected = _expected_samples(work, config["tiny_pools"], config["k"])
        assert config["sample_size"] == SAMPLE_SIZE, key
        assert config["datasets"] == DATASETS, key
        assert config["encoders"] == ENCODERS, key
        assert config["bootstrap_resamples"] == RESAMPLES, key
        for ds, ids_hash in expected.items():
            assert record["inputs"][f"sample_{ds}"] == ids_hash, (key, ds)
            assert record["numbers"]["sample"][ds]["ids_hash"] == ids_hash, (key, ds)
            assert record["numbers"]["sample"][ds]["n"] == SAMPLE_SIZE, (key, ds)
        assert record["figures"], key
        assert len(record["inputs"]["manifest"]) == 64


def test_config_hash_matches_the_config_class(records) -> None:
    for run_id in THEORY:
        cls, record = RUNS[run_id].config, records[run_id]
        assert record["config_kind"] == cls.__name__
        params = {**COMMON}
        if run_id in ("t1_auc_margin", "t2_regime_decomposition"):
            params["min_cell_n"] = 8
        assert cls.from_parameters(**params).config_hash() == record["config_hash"], run_id


def test_overview_record(records) -> None:
    numbers = records["data_regimes"]["numbers"]
    for ds in DATASETS:
        prepared = numbers["prepared"][ds]
        assert 0 < prepared["two_hop"] <= prepared["questions"]
        assert prepared["excluded"] == sum(prepared.get("excluded_by_reason", {}).values())
        overall = numbers["regimes"][ds]["all"]
        assert overall["n"] == SAMPLE_SIZE
        shares = [overall[r]["share"] for r in ("Q-dominant", "B-dominant", "neither")]
        assert sum(shares) == pytest.approx(1.0)
        assert all(_in_unit(numbers["predicates"][ds]["all"][p]) for p in ("p1_share", "p2_share"))
        assert sum(numbers["hop_order_rules"][ds].values()) == SAMPLE_SIZE
    assert numbers["worked_examples"]


def test_t1_record(records) -> None:
    numbers = records["t1_auc_margin"]["numbers"]
    summary = numbers["summary"]
    assert numbers["arm"] == "q" and numbers["min_cell_n"] == 8
    assert summary["cells"] == summary["cells_fitted"] + summary["cells_not_fitted"]
    assert summary["cells_fitted"] >= 1
    assert 0 <= summary["probit_cells_passing"] <= summary["cells_fitted"]
    n_total = 0
    for datasets in numbers["cells"].values():
        for types in datasets.values():
            for cell in types.values():
                n_total += cell["n"]
                if cell["fitted"]:
                    assert cell["r2_probit_lo"] <= cell["r2_probit"] <= cell["r2_probit_hi"] <= 1
                    assert cell["scale_probit"] > 0
                    assert -1 <= cell.get("spearman_rho", 0) <= 1
    assert n_total == SAMPLE_SIZE * len(DATASETS) * len(ENCODERS)
    assert numbers["paper"]["cells_passing"] == 6


def test_t2_record(records) -> None:
    numbers = records["t2_regime_decomposition"]["numbers"]
    for encoder in ENCODERS:
        pooled = numbers["cells"][encoder]["all"]
        assert sum(cell["n"] for cell in pooled.values()) <= SAMPLE_SIZE * len(DATASETS)
        for cell in pooled.values():
            for arm in ("q", "bridge", "union"):
                assert _in_unit(cell[f"hit_{arm}"])
            for comparison in ("union_vs_q", "bridge_vs_q"):
                c = cell[comparison]
                assert c["ci_lo"] <= c["diff"] <= c["ci_hi"]
                assert c["p"] <= c["p_holm"] <= 1
        for comparison in ("union_vs_q", "bridge_vs_q"):
            verdict = numbers["verdict"][comparison][encoder]
            assert verdict["holds"] == (
                verdict["b_dominant_significant"] and verdict["q_dominant_not_significant"]
            )
    assert isinstance(numbers["verdict"]["union_vs_q"]["holds_across_encoders"], bool)


def test_t3_record(records) -> None:
    numbers = records["t3_brel_knockout"]["numbers"]
    assert numbers["subset"] == "b_dominant"
    for comparison in ("union_vs_knockout", "union_vs_entity"):
        for encoder in ENCODERS:
            pooled = numbers["comparisons"][comparison][encoder]["all"]
            assert 0 < pooled["n"] <= SAMPLE_SIZE * len(DATASETS)
            assert pooled["drop"] == pytest.approx(pooled["hit_a"] - pooled["hit_b"])
            assert pooled["ci_lo"] <= pooled["drop"] <= pooled["ci_hi"]
            assert _in_unit(pooled["p_holm"])
    for encoder in ENCODERS:
        audit = numbers["entity"][encoder]["all"]
        assert 0 <= audit["mention_is_title"] <= audit["with_mention"] <= audit["subset_n"]


def test_rerun_gives_the_same_record_hash(records, work, tmp_path) -> None:
    again = _execute("data_regimes", work, tmp_path / "data_regimes")
    assert again["record_hash"] == records["data_regimes"]["record_hash"]
    assert json.dumps(again["numbers"], sort_keys=True) == json.dumps(
        records["data_regimes"]["numbers"], sort_keys=True
    )


def test_executed_pages_show_results_only(records, tmp_path_factory) -> None:
    from test_notebooks_style import check_executed_page

    base = Path(tmp_path_factory.getbasetemp())
    for run_id, record in records.items():
        executed = next(base.glob(f"theory_out*/{run_id}/*.executed.ipynb"))
        check_executed_page(executed, record)
