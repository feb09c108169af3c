"""Encode once, up front: which encoders and datasets a profile's runs need, and that after the
fill an experiment on the toy world encodes nothing (the store's encode log counts it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import HashingEncoder

from regime_core import config
from regime_core.encoders import embed, prefill
from regime_core.encoders.store import ENCODE_LOG_VARIABLE
from regime_core.runner.declarations import load_declarations


def test_the_default_profile_fills_minilm_for_the_three_datasets() -> None:
    decl = load_declarations()
    wanted = prefill.encodings(spec.parameters_for("default") for spec in decl.runs.values())
    dev = [(dataset, "dev") for dataset in ("hotpotqa", "2wikimultihopqa", "musique")]
    assert wanted == {"minilm": dev}  # tfidf: fitted per run
    quick = [spec.parameters_for("quick") for spec in decl.runs.values()]
    assert prefill.encodings(quick) == {"minilm": dev}  # a sample reads its split's vectors


def test_encodings_read_every_dataset_and_encoder_parameter() -> None:
    got = prefill.encodings(
        [
            {"datasets": ["musique"], "encoders": ["tfidf"]},  # lexical only: nothing
            {"transfer_datasets": ["hotpotqa"], "encoder": "bge-large"},
            {"selector_datasets": ["musique"], "primary_encoder": "bge-large"},
            {"encoders": ["minilm"]},  # no dataset: nothing
            {"datasets": ["hotpotqa"], "encoders": ["e5-mistral"], "sample_size": 40},  # a sample
        ]
    )
    assert got == {
        "bge-large": [("hotpotqa", config.SPLIT), ("musique", config.SPLIT)],
        "e5-mistral": [("hotpotqa", config.SPLIT)],
    }


@pytest.mark.parametrize("pool", config.POOL_MODES)
def test_after_the_fill_an_experiment_encodes_nothing(
    pool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from regime_core.experiments.common import ExperimentConfig
    from regime_core.experiments.context import Context
    from regime_core.experiments.outcomes import collect_outcomes
    from regime_core.experiments.router_train import load_routing_data

    encoder = HashingEncoder(32)  # stands in for minilm: same store, no model loaded
    monkeypatch.setattr(embed, "make_encoder", lambda *_args, **_kwargs: encoder)
    work = tmp_path / "work"
    reports = prefill.fill_for_runs(
        [{"datasets": ["toyworld"], "encoders": ["minilm"]}], work, progress=False
    )
    assert [(r.encoder, r.datasets) for r in reports] == [("minilm", ("toyworld/dev",))]
    assert reports[0].encoded == reports[0].texts > 0

    log = tmp_path / "encodes.jsonl"
    monkeypatch.setenv(ENCODE_LOG_VARIABLE, str(log))
    cfg = ExperimentConfig(datasets=("toyworld",), encoders=("minilm",), pool=pool)
    context = Context(work=work, encoder_factory=lambda _name, _corpus: encoder)
    outcomes = collect_outcomes(cfg, config.ARMS, context)
    assert len(outcomes.table) > 0
    # the robustness multiverse's retrieved bridges: their sentences were listed too
    routing = load_routing_data(cfg, ("toyworld",), "minilm", "retrieved", context)
    assert (routing["toyworld"].table["hop1"] == "distractor").any()
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert {line["mode"] for line in lines} == {"query", "document"}
    assert [line["n_encoded"] for line in lines] == [0] * len(lines)

    again = prefill.fill_for_runs(
        [{"datasets": ["toyworld"], "encoders": ["minilm"]}], work, progress=False
    )
    assert again[0].encoded == 0 and again[0].texts == reports[0].texts


def test_the_toy_worlds_listed_are_the_texts_the_teaching_pages_encode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worlds a teaching run generates (``LessonConfig.generated_worlds``) list every text
    the toy-world and exercises notebooks' calls encode: every passage exactly, and the
    queries among those listed (every arm's; the sweeps read two)."""
    from regime_core.data import corpus_passages
    from regime_core.encoders.shards import text_key
    from regime_core.experiments.context import Context
    from regime_core.retrieval import document_text
    from regime_core.teaching import lesson, sweeps
    from regime_core.teaching.demo import run_demo

    encoder = HashingEncoder(32)
    cfg = lesson.LessonConfig(encoder="minilm", n_questions=12, similarity_grid=(0.0, 1.0))
    worlds = cfg.generated_worlds()
    assert len(worlds) == 3  # the page's world (similarity 0.5) and the sweep's two
    log = tmp_path / "encodes.jsonl"
    monkeypatch.setenv(ENCODE_LOG_VARIABLE, str(log))
    context = Context(work=tmp_path / "work", encoder_factory=lambda _name, _corpus: encoder)
    examples = worlds[0]
    run_demo(cfg, context=context)
    sweeps.sweep_distractor_similarity(cfg.similarity_grid, cfg, context=context)
    sweeps.knockout_table(examples, cfg, context=context)
    sweeps.sweep_alpha(cfg.alpha_grid, examples, cfg, context=context)
    lesson.regime_arm_summary(examples, cfg, context=context)
    encoded: dict[str, set[str]] = {"document": set(), "query": set()}
    for line in log.read_text(encoding="utf-8").splitlines():
        call = json.loads(line)
        encoded[call["mode"]].update(call["encoded_keys"])

    def keys(mode: str, texts: list[str]) -> set[str]:
        return {text_key(mode, t).hex()[: len(next(iter(encoded[mode])))] for t in texts}

    passages = [document_text(p) for world in worlds for p in corpus_passages(world)]
    queries = [t for world in worlds for t in embed.query_texts(world)]
    assert encoded["document"] == keys("document", passages)
    assert encoded["query"] and encoded["query"] <= keys("query", queries)


def test_reproduce_encodes_up_front_once_and_times_it_like_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's stage, the notebook execution replaced: the store is filled before any run
    starts, timed in runs/_encode_up_front/timing.json, and a second reproduce encodes
    nothing more."""
    import shutil

    import yaml

    from regime_core.runner import reproduce as reproduce_module
    from regime_core.runner.execution import RunResult
    from regime_core.runner.reproduce import UP_FRONT_STAGE, reproduce

    encoder = HashingEncoder(32)
    monkeypatch.setattr(embed, "make_encoder", lambda *_args, **_kwargs: encoder)
    work = tmp_path / "work"
    started: list[str] = []

    def fake_run(decl, run_id, profile, key_info, work_dir, kernel_name, stop, environment):
        assert (work_dir / "runs" / UP_FRONT_STAGE / "timing.json").is_file()  # filled first
        started.append(run_id)
        return RunResult(run_id, "ran", key=str(key_info["key"]))

    monkeypatch.setattr(reproduce_module, "execute_run", fake_run)
    notebook = Path(__file__).resolve().parents[1] / "notebooks" / "00_toyworld.ipynb"
    shutil.copyfile(notebook, tmp_path / notebook.name)
    parameters = {"encoder": "minilm", "real_dataset": "toyworld"}
    runs = {"toy": {"notebook": notebook.name, "parameters": parameters}}
    declarations = tmp_path / "reproduce.yml"
    declarations.write_text(yaml.safe_dump({"runs": runs}))

    said: list[str] = []
    report = reproduce(declarations, work=work, progress=said.append)
    assert report.ok and started == ["toy"]
    timing = json.loads((work / "runs" / UP_FRONT_STAGE / "timing.json").read_text())
    encoded = sum(call["n_encoded"] for call in timing["encodes"])
    assert encoded > 0 and timing["wall_seconds"] > 0
    assert any(line.startswith("encoded up front with minilm") for line in said)

    again = reproduce(declarations, work=work, force=True, progress=None)
    assert again.ok and started == ["toy", "toy"]
    timing = json.loads((work / "runs" / UP_FRONT_STAGE / "timing.json").read_text())
    assert timing["encodes"] and {call["n_encoded"] for call in timing["encodes"]} == {0}


@pytest.mark.realdata
@pytest.mark.slow
def test_after_the_quick_profile_fill_no_notebook_encodes_a_dense_text(quick_run: Any) -> None:
    """Every run's ``timing.json`` counts its store calls: once the up-front stage has run, no
    notebook encodes a text with a dense encoder (TF-IDF is fitted per run, by design)."""
    from regime_core.runner.reproduce import UP_FRONT_STAGE

    late = [
        (timing.parent.name, call["encoder"], call["mode"], call["n_encoded"])
        for timing in sorted((quick_run.work / "runs").glob("*/timing.json"))
        if timing.parent.name != UP_FRONT_STAGE
        for call in json.loads(timing.read_text(encoding="utf-8"))["encodes"]
        if call["encoder"] not in prefill.LEXICAL_ENCODERS and call["n_encoded"]
    ]
    assert late == []
