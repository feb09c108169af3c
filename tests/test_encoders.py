"""Encoders: bundled MiniLM, any sentence-transformers model, TF-IDF cosine, registry."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from builders import numbered_example
from helpers import refused

from regime_core import config
from regime_core.encoders import (
    KNOWN_ENCODERS,
    PRESETS,
    Encoder,
    ModelUnavailableError,
    SentenceTransformerEncoder,
    TfidfEncoder,
    TfidfParams,
    get_encoder,
    l2_normalize,
    minilm_path,
)
from regime_core.encoders.embed import EmbedReport
from regime_core.encoders.sentence_transformer import directory_sha256, resolve_model_source

SENTENCES = [
    "Paris is the capital and most populous city of France.",
    "The Eiffel Tower was designed by the engineering company of Gustave Eiffel.",
    "Who designed the tower that stands on the Champ de Mars?",
    "Berlin is the capital of Germany.",
    "Mount Everest is Earth's highest mountain above sea level.",
    "A short one.",
]


@pytest.fixture(scope="module")
def minilm() -> Encoder:
    return get_encoder("minilm")


# --- MiniLM ----------------------------------------------------------------------------------
def test_minilm_vectors_are_float32_normalised_and_bit_identical(minilm: Encoder) -> None:
    first = minilm.encode_documents(SENTENCES)
    second = minilm.encode_documents(SENTENCES)
    assert first.dtype == np.float32 and first.shape == (len(SENTENCES), 384)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(first, second)  # fp32 on CPU is deterministic
    # no prompt: query and document mode agree
    assert np.array_equal(minilm.encode_queries(SENTENCES), first)


def test_minilm_is_semantically_sane(minilm: Encoder) -> None:
    q = minilm.encode_queries(["Who designed the Eiffel Tower?"])
    d = minilm.encode_documents(SENTENCES)
    assert int(np.argmax(d @ q[0])) == 1


def test_minilm_identity_hashes_the_weights(minilm: Encoder) -> None:
    identity = minilm.identity
    assert identity["model"] == "all-MiniLM-L6-v2"
    assert identity["dtype"] == "float32" and identity["query_prompt"] == ""
    assert identity["weights_sha256"] == directory_sha256(str(minilm_path()))
    assert len(identity["weights_sha256"]) == 64
    assert directory_sha256.cache_info().hits >= 1  # computed once per process
    json.dumps(identity)  # the store writes it as JSON


def test_directory_hash_changes_with_any_file(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"weights")
    (tmp_path / ".gitattributes").write_text("ignored")
    before = directory_sha256(str(tmp_path))
    (tmp_path / ".gitattributes").write_text("still ignored")
    directory_sha256.cache_clear()
    assert directory_sha256(str(tmp_path)) == before
    (tmp_path / "a.bin").write_bytes(b"weightz")
    directory_sha256.cache_clear()
    assert directory_sha256(str(tmp_path)) != before


def test_local_path_loads_and_prompts_change_query_vectors(minilm: Encoder) -> None:
    enc = SentenceTransformerEncoder(
        str(minilm_path()), query_prompt="query: ", document_prompt="", device="cpu"
    )
    docs = enc.encode_documents(SENTENCES[:3])
    assert np.array_equal(docs, minilm.encode_documents(SENTENCES[:3]))
    queries = enc.encode_queries(SENTENCES[:3])
    assert not np.allclose(queries, docs, atol=1e-3)
    np.testing.assert_allclose(
        queries, minilm.encode_queries(["query: " + s for s in SENTENCES[:3]]), atol=1e-5
    )
    assert enc.identity != minilm.identity
    assert enc.identity["weights_sha256"] == minilm.identity["weights_sha256"]


def test_hub_name_offline_fails_clearly_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with refused(ModelUnavailableError, names=("HF_HUB_OFFLINE",)) as info:
        get_encoder("regime-core-tests/no-such-model")
    assert isinstance(info.value, FileNotFoundError)  # the CLI prints it as a plain error
    assert "regime-core-tests/no-such-model" in str(info.value)


def test_unknown_names_list_the_known_encoders() -> None:
    from regime_core.encoders.registry import check_encoder_name

    for name in ("minilm", "tfidf", "bge-large", "org/model", str(minilm_path())):
        check_encoder_name(name)  # nothing loaded
    for name, message in (("not-a-model", "nv-embed-v2"), (" ", "' '"), ("bm25", "nv-embed-v2")):
        with refused(ValueError, names=(message,)):
            check_encoder_name(name)
    with refused(ValueError, names=("nv-embed-v2",)) as info:
        get_encoder("not-a-model")
    for name in ("minilm", "tfidf", "bge-large", "e5-mistral"):
        assert name in str(info.value)
    with refused(ValueError, names=("dtype",)):
        SentenceTransformerEncoder(str(minilm_path()), dtype="int8")


def test_presets_carry_the_documented_prompts() -> None:
    assert set(PRESETS) <= set(KNOWN_ENCODERS) and {"minilm", "tfidf"} <= set(KNOWN_ENCODERS)
    assert PRESETS["bge-large"].model == "BAAI/bge-large-en-v1.5"
    assert PRESETS["bge-large"].query_prompt == (
        "Represent this sentence for searching relevant passages: "
    )
    instruction = "Instruct: Given a question, retrieve passages that answer the question\nQuery: "
    assert PRESETS["e5-mistral"].query_prompt == instruction
    assert PRESETS["e5-mistral"].model == "intfloat/e5-mistral-7b-instruct"
    assert PRESETS["nv-embed-v2"].model == "nvidia/NV-Embed-v2"
    assert PRESETS["nv-embed-v2"].query_prompt == instruction
    assert all(p.document_prompt == "" for p in PRESETS.values())
    assert resolve_model_source("bge-large")[:2] == ("preset", "BAAI/bge-large-en-v1.5")
    assert resolve_model_source("org/model")[0] == "hub"
    assert resolve_model_source(str(minilm_path()))[0] == "local"
    # an unknown name lists the registry's names, in its order (written there, not imported)
    with refused(ValueError, names=("'minlm'", ", ".join(KNOWN_ENCODERS))):
        resolve_model_source("minlm")


def test_registry_errors() -> None:
    with refused(ValueError, names=("corpus",)):
        get_encoder("tfidf")


# --- TF-IDF ----------------------------------------------------------------------------------
def test_tfidf_matches_the_formula_by_hand() -> None:
    enc = get_encoder("tfidf", corpus=["apple banana", "apple cherry cherry"])
    assert isinstance(enc, TfidfEncoder)
    # idf(t) = ln((1 + N) / (1 + df)) + 1; apple: df 2 -> 1; banana, cherry: df 1
    idf_rare = math.log(3 / 2) + 1
    q = enc.encode_queries(["banana"])
    d = enc.encode_documents(["apple banana", "apple cherry cherry"])
    assert q.dtype == np.float32
    np.testing.assert_allclose(d @ q[0], [idf_rare / math.hypot(1, idf_rare), 0.0], rtol=1e-6)
    # sublinear tf: cherry twice weighs (1 + ln 2)·idf
    cherry = (1 + math.log(2)) * idf_rare
    np.testing.assert_allclose(
        (enc.encode_queries(["cherry"]) @ d[1]), [cherry / math.hypot(1, cherry)], rtol=1e-6
    )


def test_tfidf_vectors_identity_and_unknown_terms() -> None:
    corpus = [s for s in SENTENCES if len(s) > 20]
    enc = TfidfEncoder(corpus)
    v = enc.encode_documents(corpus)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(enc.encode_queries(corpus), v)  # one vectoriser for both modes
    assert not enc.encode_queries(["zzzz qqqq"]).any()  # no corpus term: zero vector
    assert TfidfEncoder(corpus[::-1]).identity == enc.identity  # order-independent fit
    assert TfidfEncoder(corpus[:-1]).identity["corpus_sha256"] != enc.identity["corpus_sha256"]
    capped = TfidfEncoder(corpus, TfidfParams(max_features=5))
    assert capped.encode_documents(corpus).shape[1] == 5
    assert capped.identity["params"]["max_features"] == 5
    with refused(ValueError, names=("tfidf", "corpus")):
        TfidfEncoder([])
    with refused(ValueError, names=("max_features",)):
        TfidfParams(max_features=0)


# --- vectors ---------------------------------------------------------------------------------
def test_l2_normalize_keeps_zero_rows() -> None:
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-7)


# --- regime embed ----------------------------------------------------------------------------
def test_cli_embed_twice_second_run_is_all_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import regime_core.data
    from regime_core.cli import embed

    examples = [numbered_example(i) for i in range(3)]
    seen: dict[str, object] = {}

    def fake_load(dataset: str, *, split: str | None = None, work: Path | None = None):
        seen.update(dataset=dataset, split=split, work=work)
        return examples

    monkeypatch.setattr(regime_core.data, "load_examples", fake_load)
    parser = argparse.ArgumentParser()
    embed.register(parser.add_subparsers())
    argv = ["embed", "toyworld", "--encoder", "tfidf", "--work", str(tmp_path), "--json"]
    outputs = []
    for _ in range(2):
        args = parser.parse_args(argv)
        assert args.func(args) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    first, second = outputs
    assert seen == {"dataset": "toyworld", "split": None, "work": tmp_path}
    assert first["documents"] == 9  # 3 examples x 3 distinct passages
    # per example: question, relation sentence, whole bridge, entity (3 x 4), plus the bridge
    # sentence "It is old." (also the knockout text) shared by all three
    assert first["queries"] == 3 * 4 + 1
    assert first["texts"] == 22 and first["engine"] == "local"
    assert first["encoded"] == 9 + 13 and first["cached"] == 0
    assert second["encoded"] == 0 and second["cached"] == 22
    assert first["identity_hash"] == second["identity_hash"]
    assert first["digest"] == second["digest"] and len(first["digest"]) == 64
    assert (tmp_path / "embeddings" / first["identity_hash"] / "identity.json").exists()
    assert set(first) == {
        f.name for f in fields(EmbedReport)
    }  # the keys regime embed --json promises


def test_default_encoder_is_known() -> None:
    assert config.ENCODER in KNOWN_ENCODERS
