"""The embed stage (regime_core.encoders.embed), its errors and the store's engine API. The Ray
engine's own test is tests/test_embed_ray.py."""

from __future__ import annotations

import builtins
import hashlib
import socket
from pathlib import Path

import numpy as np
import pytest
from builders import numbered_example
from helpers import refused

import regime_core.data
from regime_core.cli import main
from regime_core.encoders import (
    EmbeddingStore,
    ModelUnavailableError,
    TfidfEncoder,
    embed_dataset,
    get_encoder,
)
from regime_core.encoders.embed import dataset_texts, vectors_digest
from regime_core.encoders.ray_engine import check_reachable, import_ray
from regime_core.encoders.registry import check_device
from regime_core.encoders.shards import decode_shard, encode_shard, text_key
from regime_core.encoders.store import plan_batches
from regime_core.schema import Example


@pytest.fixture
def fixture_corpus(monkeypatch: pytest.MonkeyPatch) -> list[Example]:
    """Six small two-hop examples served as the prepared dataset ``toyworld``."""
    examples = [numbered_example(i) for i in range(6)]
    monkeypatch.setattr(regime_core.data, "load_examples", lambda *a, **k: examples)
    return examples


def test_digest_is_sha256_of_the_vectors_in_text_order(tmp_path: Path, fixture_corpus) -> None:
    report = embed_dataset("toyworld", "tfidf", work=tmp_path)
    documents, queries = dataset_texts("toyworld", tmp_path)
    store = EmbeddingStore(tmp_path / "embeddings")
    encoder = TfidfEncoder(documents)
    matrix = np.concatenate(
        [store.embed(encoder, documents, "document"), store.embed(encoder, queries, "query")]
    )
    expected = hashlib.sha256(np.ascontiguousarray(matrix, dtype="<f4").tobytes()).hexdigest()
    assert report.digest == expected
    assert report.texts == len(documents) + len(queries) == report.encoded
    assert (report.engine, report.workers) == ("local", 1)
    again = embed_dataset("toyworld", "tfidf", work=tmp_path)
    assert (again.encoded, again.cached, again.digest) == (0, report.texts, report.digest)


def test_vectors_digest_does_not_depend_on_chunking() -> None:
    rng = np.random.default_rng(0)
    m = rng.standard_normal((10, 4)).astype(np.float32)
    assert vectors_digest([m]) == vectors_digest([m[:3], m[3:7], m[7:]])
    assert vectors_digest([m]) == hashlib.sha256(m.astype("<f4").tobytes()).hexdigest()


# --- errors ---------------------------------------------------------------------------------
def test_unknown_engine_and_local_only_options_are_refused(tmp_path: Path) -> None:
    with refused(ValueError, names=("'spark'", "local", "ray")):
        embed_dataset("toyworld", "tfidf", work=tmp_path, engine="spark")
    with refused(ValueError, names=("--engine ray",)):
        embed_dataset("toyworld", "tfidf", work=tmp_path, address="localhost:6379")
    with refused(ValueError, names=("regime embed", "'num_workers'", "0")):
        embed_dataset("toyworld", "tfidf", work=tmp_path, engine="ray", num_workers=0)
    with refused(ValueError, names=("regime embed", "'batch_size'", "0")):
        embed_dataset("toyworld", "tfidf", work=tmp_path, batch_size=0)
    assert list(tmp_path.iterdir()) == []  # refused before anything is read or made


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_ray(name: str, *args, **kwargs):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with refused(ValueError, names=("pip install -e .[scale]",)):
        import_ray()


def test_unreachable_address_is_a_clear_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with refused(ValueError, names=(f"127.0.0.1:{port}",)):
        check_reachable(f"127.0.0.1:{port}", timeout=2.0)
    with refused(ValueError, names=("no-port-here", "host:port")):
        check_reachable("no-port-here")


def test_cli_reports_unreachable_address(
    tmp_path: Path, fixture_corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = ["embed", "toyworld", "--encoder", "tfidf", "--work", str(tmp_path)]
    code = main([*argv, "--engine", "ray", "--address", f"127.0.0.1:{port}"])
    assert code == 2
    assert "cannot reach a Ray cluster" in capsys.readouterr().err


def test_cuda_without_cuda_is_a_clear_error(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with refused(ValueError, names=("--device cuda",)):
        check_device("cuda")
    with refused(ValueError, names=("--device cuda",)):
        embed_dataset("toyworld", "minilm", work=tmp_path, device="cuda")
    check_device("cpu")


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("nv-embed-v2", "nvidia/NV-Embed-v2"),
        ("bge-large", "BAAI/bge-large-en-v1.5"),
        ("e5-mistral", "intfloat/e5-mistral-7b-instruct"),
    ],
)
def test_paper_encoders_offline_name_the_model_and_absent_weights(
    tmp_path: Path,
    fixture_corpus,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    model: str,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))
    with refused(ModelUnavailableError, names=(model, "HF_HUB_OFFLINE=1")):
        get_encoder(name, device="cuda")
    code = main(["embed", "toyworld", "--encoder", name, "--work", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and model in err and "weights" in err and "absent" in err


# --- the store's engine API -----------------------------------------------------------------
def test_missing_then_add_is_what_embed_would_have_stored(tmp_path: Path) -> None:
    corpus = ["alpha beta", "beta gamma delta", "gamma", "delta epsilon zeta eta"]
    encoder = TfidfEncoder(corpus)
    store = EmbeddingStore(tmp_path)
    missing = store.missing(encoder, [*corpus, corpus[0]], "document")
    assert list(missing.values()) == corpus  # distinct, first-seen order
    batches = plan_batches(dict(missing), 3)
    assert [len(b) for b in batches] == [3, 1]
    assert batches[0][0][1] == "delta epsilon zeta eta"  # longest first
    for batch in batches:
        store.add(encoder, [k for k, _ in batch], encoder.encode_documents([t for _, t in batch]))
    assert store.missing(encoder, corpus, "document") == {}
    fresh = EmbeddingStore(tmp_path).embed(encoder, corpus, "document")
    np.testing.assert_array_equal(fresh, encoder.encode_documents(corpus))
    with refused(ValueError, names=("L2",)):
        store.add(encoder, [text_key("query", "x")], np.full((1, encoder.dimension_), 3.0))


def test_sparse_shards_stay_sparse_and_read_back_identical() -> None:
    rng = np.random.default_rng(1)
    dense = np.zeros((5, 50), dtype=np.float32)
    dense[np.arange(5), rng.integers(0, 50, 5)] = 1.0
    keys = [text_key("document", str(i)) for i in range(5)]
    blob = encode_shard(keys, dense, "test")
    _, sparse = decode_shard(blob, dense=False)
    assert not isinstance(sparse, np.ndarray)
    np.testing.assert_array_equal(sparse.toarray(), decode_shard(blob)[1])


def test_tfidf_refuses_a_gpu() -> None:
    with refused(ValueError, names=("'tfidf'", "--device cuda")):
        get_encoder("tfidf", corpus=["a b"], device="cuda")
