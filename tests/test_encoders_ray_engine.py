"""The Ray engine gives the local engine's digest (TF-IDF and the bundled MiniLM), on a local
Ray cluster of 2 workers that the test starts and stops."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import numbered_example

import regime_core.data
from regime_core.encoders import embed_dataset

ray = pytest.importorskip("ray", reason="Ray is the optional extra [scale]")
pytest.importorskip("ray.data")

pytestmark = pytest.mark.slow  # starting Ray and loading MiniLM in 2 actors takes ~30-60 s


@pytest.fixture
def ray_cluster(tmp_path_factory: pytest.TempPathFactory):
    """A private local Ray cluster of 2 CPUs (2 workers), shut down after the test."""
    if ray.is_initialized():
        pytest.skip("a Ray session is already open in this process")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _temp_dir=str(tmp_path_factory.mktemp("ray")),
    )
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.mark.parametrize("encoder", ["tfidf", "minilm"])
def test_ray_and_local_engines_give_the_same_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ray_cluster, encoder: str
) -> None:
    examples = [numbered_example(i) for i in range(8)]
    monkeypatch.setattr(regime_core.data, "load_examples", lambda *a, **k: examples)
    local = embed_dataset("toyworld", encoder, work=tmp_path / "local", batch_size=4)
    remote = embed_dataset(
        "toyworld", encoder, work=tmp_path / "ray", engine="ray", num_workers=2, batch_size=4
    )
    assert remote.engine == "ray" and remote.workers == 2
    assert remote.encoded == local.encoded == local.texts and remote.cached == 0
    assert remote.identity_hash == local.identity_hash
    assert remote.digest == local.digest
    # The Ray engine wrote a store the local engine reads back as complete.
    again = embed_dataset("toyworld", encoder, work=tmp_path / "ray")
    assert (again.encoded, again.digest) == (0, local.digest)
    assert ray_cluster.is_initialized()  # a session the caller opened is left open
