"""The ``paper`` profile of reproduce.yml: the paper's setting, declared and valid; here (no GPU,
no hub) it stops at the clear error that the weights are absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from regime_core import paths
from regime_core.encoders import PRESETS, ModelUnavailableError, get_encoder
from regime_core.runner.declarations import PROFILES, load_declarations

PAPER_MODELS = {
    "nv-embed-v2": "nvidia/NV-Embed-v2",
    "bge-large": "BAAI/bge-large-en-v1.5",
    "e5-mistral": "intfloat/e5-mistral-7b-instruct",
}


def _paper_encoders(parameters: dict) -> list[str]:
    names = list(parameters.get("encoders") or [])
    if parameters.get("encoder"):
        names.append(parameters["encoder"])
    return names


def test_paper_profile_declares_the_papers_setting() -> None:
    assert "paper" in PROFILES
    decl = load_declarations(paths.REPO_ROOT / "reproduce.yml")
    embedding_runs = 0
    for run_id, spec in decl.runs.items():
        if "paper" not in spec.profiles:
            continue
        params = spec.parameters_for("paper")
        embedding_runs += 1
        assert params["sample_size"] == 1000, run_id
        assert params.get("pool") == "corpus" or "corpus" in params.get("pools", []), run_id
        # alpha_transfer's protocol fits c with MiniLM on 2WikiMultiHopQA and applies it to the
        # other encoders, so its paper profile keeps MiniLM as the fitting encoder
        fitting = {"minilm"} if run_id == "alpha_transfer" else set()
        for name in _paper_encoders(params):
            assert name in PAPER_MODELS or name in fitting, (run_id, name)
    assert embedding_runs >= 7
    assert {name: PRESETS[name].model for name in PAPER_MODELS} == PAPER_MODELS


def test_paper_encoders_stop_at_absent_weights_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants as hub_constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))
    for name, model in PAPER_MODELS.items():
        with pytest.raises(ModelUnavailableError) as info:
            get_encoder(name)
        message = str(info.value)
        assert model in message and "absent" in message and "HF_HUB_OFFLINE=1" in message
