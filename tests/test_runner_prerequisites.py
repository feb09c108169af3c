"""Issue 44: ``regime reproduce --profile paper --plan`` tells a GPU user up front what the
paper's setting needs (GPU memory, the weights from the hub or a local directory,
``regime data fetch``, the estimated hours); every other profile needs nothing more."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regime_core import cli
from regime_core.encoders.registry import CUDA_INSTALL
from regime_core.runner import prerequisites as P
from regime_core.runner.declarations import PROFILES, load_declarations
from regime_core.runner.reproduce import profile_encoders


@pytest.mark.parametrize("profile", [p for p in PROFILES if p != P.GPU_PROFILE])
def test_only_the_paper_profile_has_prerequisites(profile: str) -> None:
    assert P.prerequisites(profile, {"bge-large": "BAAI/bge-large-en-v1.5"}) == ()


def test_the_paper_profile_names_gpu_weights_data_and_hours(tmp_path: Path) -> None:
    encoders = profile_encoders(load_declarations(), "paper")
    assert encoders == {
        "nv-embed-v2": "nvidia/NV-Embed-v2",
        "bge-large": "BAAI/bge-large-en-v1.5",
        "e5-mistral": "intfloat/e5-mistral-7b-instruct",
    }
    gpu, weights, data, hours = P.prerequisites(
        "paper", encoders, environ={"HF_HUB_OFFLINE": "1"}, data_dir=tmp_path
    )
    assert f"at least {P.GPU_MEMORY_GB} GB" in gpu
    if "+cpu" in (P.torch_build() or ""):
        assert CUDA_INSTALL in gpu
    assert all(model in weights for model in encoders.values())
    assert "HF_HUB_OFFLINE is set" in weights and "local cache" in weights
    assert "regime data fetch" in data and f"none in {tmp_path}" in data
    (tmp_path / "checksums.json").write_text(json.dumps({"hotpotqa/dev.json": "0" * 64}))
    online = P.prerequisites("paper", encoders, environ={}, data_dir=tmp_path)
    assert "hotpotqa/dev.json" in online[2] and "not switched off" in online[1]
    low, high = P.GPU_HOURS
    assert f"{low} to {high} A100-hours" in hours and P.SCALE_PAGE in hours


def test_plan_states_them_before_the_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = ["--work", str(tmp_path / "w")]
    assert cli.main(["reproduce", "--profile", "paper", "--plan", *work]) == 0
    text = capsys.readouterr().out
    assert text.startswith("profile paper needs, before it runs:\n  - GPU: ")
    assert text.index("regime data fetch") < text.index("data_regimes")
    assert cli.main(["reproduce", "--profile", "paper", "--plan", "--json", *work]) == 0
    assert len(json.loads(capsys.readouterr().out)["prerequisites"]) == 4
    assert cli.main(["reproduce", "--profile", "quick", "--plan", *work]) == 0
    assert capsys.readouterr().out.startswith("run ")
