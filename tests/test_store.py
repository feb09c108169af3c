"""The content-addressed embedding store: caching, input order, modes, corruption, processes."""

from __future__ import annotations

import hashlib
import inspect
import json
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import refused, warned

from regime_core.encoders import EmbeddingStore, identity_hash
from regime_core.encoders import store as store_module
from regime_core.encoders.shards import (
    CorruptShardError,
    ForeignShardError,
    decode_shard,
    encode_shard,
    shard_name,
    text_key,
)


class CountingEncoder:
    """A deterministic fake: each (mode, text) maps to a fixed unit vector; calls are counted."""

    name = "counting"

    def __init__(self, dim: int = 8, tag: str = "v1") -> None:
        self.dim = dim
        self.tag = tag
        self.calls: list[tuple[str, list[str]]] = []

    @property
    def identity(self) -> dict[str, Any]:
        return {"kind": "fake", "dim": self.dim, "tag": self.tag}

    def _vectors(self, mode: str, texts: Sequence[str]) -> np.ndarray:
        self.calls.append((mode, list(texts)))
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(f"{mode}|{text}".encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors("query", texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors("document", texts)

    @property
    def n_encoded(self) -> int:
        return sum(len(texts) for _, texts in self.calls)


TEXTS = [f"passage number {i} about topic {i % 3}" for i in range(10)]


def shard_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.emb"))


def test_rows_follow_input_order_and_match_the_encoder(tmp_path: Path) -> None:
    enc = CountingEncoder()
    texts = [TEXTS[3], TEXTS[1], TEXTS[3], TEXTS[0]]
    out = EmbeddingStore(tmp_path).embed(enc, texts, "document")
    expected = CountingEncoder().encode_documents(texts)
    assert out.dtype == np.float32 and out.shape == (4, 8)
    np.testing.assert_array_equal(out, expected)
    # duplicates are encoded once
    assert enc.n_encoded == 3


def test_a_dangling_link_in_place_of_the_store_is_named(tmp_path: Path) -> None:
    """A store copied with its folder left as a link to a store that is gone: the message names
    the link and its target (mkdir said only "File exists")."""
    (tmp_path / "embeddings").symlink_to(tmp_path / "gone")
    with pytest.raises(ValueError) as err:
        EmbeddingStore(tmp_path / "embeddings").embed(CountingEncoder(), TEXTS, "query")
    assert "symbolic link" in str(err.value) and str(tmp_path / "gone") in str(err.value)


def test_second_call_encodes_nothing_and_new_texts_only_are_encoded(tmp_path: Path) -> None:
    enc = CountingEncoder()
    store = EmbeddingStore(tmp_path)
    first = store.embed(enc, TEXTS[:6], "document")
    assert enc.n_encoded == 6
    again, report = store.embed_with_report(enc, TEXTS[:6], "document")
    assert enc.n_encoded == 6
    assert (report.n_encoded, report.n_cached) == (0, 6)
    np.testing.assert_array_equal(first, again)
    mixed, report = store.embed_with_report(enc, TEXTS[4:], "document")
    assert enc.calls[-1] == ("document", TEXTS[6:])
    assert (report.n_encoded, report.n_cached, report.n_texts) == (4, 2, 6)
    np.testing.assert_array_equal(mixed[:2], first[4:6])


def test_a_fresh_store_reads_the_files_without_encoding(tmp_path: Path) -> None:
    first = EmbeddingStore(tmp_path).embed(CountingEncoder(), TEXTS, "query")
    enc = CountingEncoder()
    second = EmbeddingStore(tmp_path).embed(enc, TEXTS[::-1], "query")
    assert enc.n_encoded == 0
    np.testing.assert_array_equal(second, first[::-1])


def test_a_store_sees_shards_written_by_another_store_instance(tmp_path: Path) -> None:
    reader, writer = EmbeddingStore(tmp_path), EmbeddingStore(tmp_path)
    enc = CountingEncoder()
    reader.embed(enc, TEXTS[:2], "query")
    writer.embed(enc, TEXTS[2:5], "query")
    calls = enc.n_encoded
    reader.embed(enc, TEXTS[:5], "query")
    assert enc.n_encoded == calls


def test_query_and_document_modes_are_separate_entries(tmp_path: Path) -> None:
    enc = CountingEncoder()
    store = EmbeddingStore(tmp_path)
    q = store.embed(enc, TEXTS[:3], "query")
    d = store.embed(enc, TEXTS[:3], "document")
    assert enc.n_encoded == 6
    assert not np.array_equal(q, d)
    assert text_key("query", "x") != text_key("document", "x")


def test_directory_is_named_by_identity_hash_and_holds_the_identity(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path)
    a, b = CountingEncoder(tag="a"), CountingEncoder(tag="b")
    store.embed(a, TEXTS[:2], "query")
    store.embed(b, TEXTS[:2], "query")
    assert b.n_encoded == 2  # another identity shares nothing
    directory = store.directory(a)
    assert directory == tmp_path / identity_hash(a.identity)
    assert json.loads((directory / "identity.json").read_text()) == a.identity
    assert len(shard_files(directory)) == 1
    assert sorted(p.name for p in directory.iterdir() if p.name.startswith(".")) == []


def test_batches_and_checkpoint_shards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CHECKPOINT_TEXTS", 4)
    enc = CountingEncoder()
    store = EmbeddingStore(tmp_path)
    out = store.embed(enc, TEXTS, "document", batch_size=3, progress=True)
    assert [len(t) for _, t in enc.calls] == [3, 3, 3, 1]
    assert len(shard_files(store.directory(enc))) == 2  # 6 texts, then 4
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(TEXTS))


def _corrupt_truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-7])


def _corrupt_flip(path: Path) -> None:
    blob = bytearray(path.read_bytes())
    blob[-3] ^= 0xFF
    path.write_bytes(bytes(blob))


def _corrupt_garbage(path: Path) -> None:
    path.write_bytes(b"not a shard at all")


@pytest.mark.parametrize("corrupt", [_corrupt_truncate, _corrupt_flip, _corrupt_garbage])
def test_corrupt_shard_is_reported_deleted_and_recomputed(tmp_path: Path, corrupt: Any) -> None:
    enc = CountingEncoder()
    good = EmbeddingStore(tmp_path).embed(enc, TEXTS[:5], "document")
    (shard,) = shard_files(EmbeddingStore(tmp_path).directory(enc))
    corrupt(shard)
    enc2 = CountingEncoder()
    with warned(UserWarning, names=(shard.name,)):
        again = EmbeddingStore(tmp_path).embed(enc2, TEXTS[:5], "document")
    assert enc2.n_encoded == 5
    np.testing.assert_array_equal(again, good)
    assert not shard.exists() or shard.read_bytes() != b"not a shard at all"
    # the recomputed shard is valid
    for path in shard_files(EmbeddingStore(tmp_path).directory(enc)):
        decode_shard(path.read_bytes())


def test_shard_round_trip_is_bit_exact_dense_and_sparse() -> None:
    rng = np.random.default_rng(0)
    keys = [text_key("query", str(i)) for i in range(5)]
    dense = rng.standard_normal((5, 7)).astype(np.float32)
    sparse = np.zeros((5, 40), dtype=np.float32)
    sparse[[0, 0, 3, 4], [1, 39, 5, 0]] = [0.5, -1.25, 3.0, 1e-8]
    for matrix, layout in ((dense, "dense"), (sparse, "csr")):
        blob = encode_shard(keys, matrix, "test")
        assert f'"layout": "{layout}"'.encode() in blob
        got_keys, got = decode_shard(blob)
        assert got_keys == keys
        np.testing.assert_array_equal(got, matrix)
    assert len(encode_shard(keys, sparse, "test")) < sparse.nbytes


def test_decode_rejects_a_length_mismatch() -> None:
    blob = encode_shard([text_key("query", "a")], np.ones((1, 4), dtype=np.float32) / 2, "t")
    with refused(CorruptShardError, names=("payload",)):
        decode_shard(blob + b"\0")


@pytest.mark.parametrize(
    ("original", "edited", "field"),
    [(b'"n": 1', b'"n":-1', "n"), (b'"layout": "dense"', b'"layout": "dence"', "layout")],
)
def test_decode_refuses_a_header_the_declaration_refuses(
    original: bytes, edited: bytes, field: str
) -> None:
    blob = encode_shard([text_key("query", "a")], np.ones((1, 4), dtype=np.float32) / 2, "t")
    with refused(CorruptShardError, names=("shard header", f"'{field}'")):
        decode_shard(blob.replace(original, edited))  # same length: the header still parses


class BadEncoder(CountingEncoder):
    def __init__(self, result: np.ndarray) -> None:
        super().__init__()
        self.result = result

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.result


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (np.ones((2, 4), dtype=np.float32), "not L2-normalised"),
        (np.ones((3, 4), dtype=np.float32) / 2, "shape"),
        (np.full((2, 4), np.nan, dtype=np.float32), "NaN"),
    ],
)
def test_encoder_output_is_checked(tmp_path: Path, result: np.ndarray, message: str) -> None:
    with refused(ValueError, names=(message,)):
        EmbeddingStore(tmp_path).embed(BadEncoder(result), ["a", "b"], "query")
    assert not shard_files(EmbeddingStore(tmp_path).directory(BadEncoder(result)))


def test_vectors_of_another_dimension_than_the_directory_holds_are_refused(
    tmp_path: Path,
) -> None:
    store, enc = EmbeddingStore(tmp_path), CountingEncoder(dim=8)
    store.embed(enc, TEXTS[:2], "query")
    wide = CountingEncoder(dim=16).encode_queries(TEXTS[2:3])
    with refused(ValueError, names=("'counting'", str(store.directory(enc)), "16", "8")):
        store.add(enc, [text_key("query", TEXTS[2])], wide)
    assert len(shard_files(store.directory(enc))) == 1


def test_bad_arguments(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path)
    with refused(ValueError, names=("mode",)):
        store.embed(CountingEncoder(), ["a"], "passage")  # type: ignore[arg-type]
    with refused(ValueError, names=("texts[1]",)):
        store.embed(CountingEncoder(), ["a", 3], "query")  # type: ignore[list-item]
    with refused(ValueError, names=("batch_size",)):
        store.embed(CountingEncoder(), ["a"], "query", batch_size=0)


def test_empty_input(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path)
    enc = CountingEncoder()
    assert store.embed(enc, [], "query").shape == (0, 0)
    store.embed(enc, ["a"], "query")
    assert store.embed(enc, [], "query").shape == (0, 8)


def test_a_second_process_reuses_the_vectors(tmp_path: Path) -> None:
    # The child defines the same fake encoder (same identity), writes, and exits.
    script = "\n".join(
        [
            "import hashlib",
            "from collections.abc import Sequence",
            "from typing import Any",
            "import numpy as np",
            "from regime_core.encoders import EmbeddingStore",
            inspect.getsource(CountingEncoder),
            f"EmbeddingStore({str(tmp_path)!r}).embed(CountingEncoder(), {TEXTS!r}, 'document')",
        ]
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    enc = CountingEncoder()
    out = EmbeddingStore(tmp_path).embed(enc, TEXTS, "document")
    assert enc.n_encoded == 0
    np.testing.assert_array_equal(out, CountingEncoder().encode_documents(TEXTS))


# --- issue 22: shards tied to their encoder ----------------------------------------------------


def _store_of(tmp_path: Path, enc: CountingEncoder, texts: Sequence[str]) -> tuple[Path, Any]:
    vectors = EmbeddingStore(tmp_path).embed(enc, texts, "document")
    return EmbeddingStore(tmp_path).directory(enc), vectors


def test_every_shard_names_its_encoder_and_dimension(tmp_path: Path) -> None:
    enc = CountingEncoder()
    directory, _ = _store_of(tmp_path, enc, TEXTS)
    (shard,) = shard_files(directory)
    blob = shard.read_bytes()
    assert blob.startswith(b"REGIME-EMB 2\n")
    assert f'"identity": "{identity_hash(enc.identity)}"'.encode() in blob
    assert b'"dim": 8' in blob
    assert shard.name == shard_name(blob)


def test_shards_of_another_encoder_copied_in_are_refused_named_and_kept(tmp_path: Path) -> None:
    import shutil

    mine, other = CountingEncoder(tag="mine"), CountingEncoder(tag="other")  # both 8-d
    directory, expected = _store_of(tmp_path, mine, TEXTS[:5])
    other_dir, _ = _store_of(tmp_path / "elsewhere", other, TEXTS[:5])
    for shard in shard_files(directory):
        shard.unlink()
    for shard in shard_files(other_dir):  # the same keys, another model's vectors
        shutil.copy(shard, directory / shard.name)
    foreign = shard_files(directory)
    fresh = CountingEncoder(tag="mine")
    with warned(UserWarning, names=(foreign[0].name,)):
        got = EmbeddingStore(tmp_path).embed(fresh, TEXTS[:5], "document")
    np.testing.assert_array_equal(got, expected)  # never the other encoder's vectors
    assert fresh.n_encoded == 5
    assert all(f.exists() for f in foreign)  # refused, not deleted


def test_a_foreign_shard_of_another_dimension_sorting_first_harms_no_genuine_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "CHECKPOINT_TEXTS", 2)
    enc = CountingEncoder()
    expected = EmbeddingStore(tmp_path).embed(enc, TEXTS, "document", batch_size=2)
    directory = EmbeddingStore(tmp_path).directory(enc)
    genuine = shard_files(directory)
    assert len(genuine) == 5
    wide = CountingEncoder(dim=16)
    for n in range(1, 200):  # another 16-d encoder's shard whose name sorts first
        texts = [f"{t} {n}" for t in TEXTS]
        keys = [text_key("document", t) for t in TEXTS]
        blob = encode_shard(keys, wide.encode_documents(texts), "f" * 16)
        if shard_name(blob) < genuine[0].name:
            break
    first = directory / shard_name(blob)
    assert sorted([*shard_files(directory), first])[0] == first
    first.write_bytes(blob)
    fresh = CountingEncoder()
    with warned(UserWarning, names=(first.name,)):
        got = EmbeddingStore(tmp_path).embed(fresh, TEXTS, "document")
    np.testing.assert_array_equal(got, expected)
    assert fresh.n_encoded == 0  # the genuine shards were read
    assert all(s.exists() for s in genuine) and first.exists()


def test_shards_of_one_identity_that_disagree_on_dimension_ask_the_encoder(
    tmp_path: Path,
) -> None:
    enc = CountingEncoder()
    directory, expected = _store_of(tmp_path, enc, TEXTS)
    forged = encode_shard(
        [text_key("document", t) for t in TEXTS],
        CountingEncoder(dim=4).encode_documents(TEXTS),
        directory.name,  # this directory's identity, but 4-d vectors
    )
    path = directory / shard_name(forged)
    path.write_bytes(forged)
    fresh = CountingEncoder()
    with warned(UserWarning, names=("dimension 4", "8")):
        got = EmbeddingStore(tmp_path).embed(fresh, TEXTS, "document")
    np.testing.assert_array_equal(got, expected)
    assert fresh.calls == [("query", ["dimension"])]  # one probe, nothing re-encoded
    assert path.exists()


def test_a_fifo_or_directory_among_the_shards_is_refused_without_blocking(
    tmp_path: Path,
) -> None:
    import os
    import signal

    enc = CountingEncoder()
    directory, expected = _store_of(tmp_path, enc, TEXTS[:3])
    os.mkfifo(directory / "shard-fifo.emb")
    (directory / "shard-dir.emb").mkdir()
    signal.alarm(20)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = EmbeddingStore(tmp_path).embed(CountingEncoder(), TEXTS[:3], "document")
    finally:
        signal.alarm(0)
    np.testing.assert_array_equal(got, expected)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert "shard-dir.emb: it is a directory" in messages[0]
    assert "shard-fifo.emb: it is a FIFO" in messages[1]
    assert (directory / "shard-fifo.emb").is_fifo() and (directory / "shard-dir.emb").is_dir()


def test_a_header_edit_is_caught_by_the_name_hash(tmp_path: Path) -> None:
    enc = CountingEncoder()
    directory, _ = _store_of(tmp_path, enc, TEXTS[:3])
    (shard,) = shard_files(directory)
    blob = shard.read_bytes()
    shard.write_bytes(blob.replace(b'"layout": "dense"', b'"layout": "dense" '))
    fresh = CountingEncoder()
    with warned(UserWarning, names=("hash",)):
        EmbeddingStore(tmp_path).embed(fresh, TEXTS[:3], "document")
    assert fresh.n_encoded == 3  # deleted and encoded again: the same bytes, the same name
    assert shard.read_bytes() == blob


def test_decode_shard_refuses_another_identity() -> None:
    keys = [text_key("query", "a")]
    blob = encode_shard(keys, np.ones((1, 4), dtype=np.float32) / 2, "abc")
    assert decode_shard(blob, identity="abc")[0] == keys
    with refused(ForeignShardError, names=("abc", "xyz")):
        decode_shard(blob, identity="xyz")


@pytest.fixture
def logged_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[EmbeddingStore, CountingEncoder, Path]:
    """A store, its encoder and the encode log its calls append to (named in
    REGIME_ENCODE_LOG)."""
    log = tmp_path / "encodes.jsonl"
    monkeypatch.setenv(store_module.ENCODE_LOG_VARIABLE, str(log))
    enc = CountingEncoder()
    return EmbeddingStore(tmp_path / "store"), enc, log


def test_each_store_call_appends_its_counts_to_the_encode_log(
    logged_store: tuple[EmbeddingStore, CountingEncoder, Path],
) -> None:
    """The runner names a per-run file in REGIME_ENCODE_LOG; benchmarks/bench_build.py reads it."""
    store, enc, log = logged_store
    store.embed(enc, TEXTS[:6], "document")
    store.embed(enc, [*TEXTS[4:], TEXTS[9]], "document")
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["encoder"] == "counting"
    assert first["identity_hash"] == identity_hash(enc.identity)
    assert (first["n_texts"], first["n_unique"], first["n_cached"], first["n_encoded"]) == (
        6,
        6,
        0,
        6,
    )
    assert (second["n_texts"], second["n_unique"], second["n_cached"], second["n_encoded"]) == (
        7, 6, 2, 4,
    )  # fmt: skip
    assert enc.n_encoded == first["n_encoded"] + second["n_encoded"]
    short = store_module.ENCODED_KEY_DIGITS
    assert second["encoded_keys"] == [
        text_key("document", t).hex()[:short] for t in TEXTS[6:]
    ]  # the distinct texts not stored yet, in first-seen order


def test_an_engines_missing_texts_are_logged_as_encoded(
    logged_store: tuple[EmbeddingStore, CountingEncoder, Path],
) -> None:
    store, enc, log = logged_store
    store.embed(enc, TEXTS[:3], "query")
    missing = store.missing(enc, TEXTS[:5], "query")
    logged = json.loads(log.read_text().splitlines()[-1])
    assert (logged["n_texts"], logged["n_cached"], logged["n_encoded"]) == (5, 3, len(missing))
    assert logged["encoded_keys"] == [
        key.hex()[: store_module.ENCODED_KEY_DIGITS] for key in missing
    ]


def test_no_encode_log_is_written_unless_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(store_module.ENCODE_LOG_VARIABLE, raising=False)
    EmbeddingStore(tmp_path / "store").embed(CountingEncoder(), TEXTS[:2], "query")
    assert not list(tmp_path.glob("*.jsonl"))
