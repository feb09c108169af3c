"""Property-based tests (issue 13): every malformed input and damaged derived file ends in a
clear error (a ``ValueError`` naming the file), a warned rebuild, or the correct result, never a
traceback of another kind and never a silent change.

Seeded (``derandomize=True``, no example database), so every run generates the same cases:
``GENERATED_CASES`` (810) in total, in about ten seconds on one core.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import DATA_FIXTURES as FIXTURES
from helpers import FIXTURE_SPLITS as SPLITS
from helpers import UnitEncoder, refused
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regime_core.cli import main
from regime_core.data import load_examples, prepare
from regime_core.data.prepare import SentenceCache
from regime_core.data.prepared import load_manifest
from regime_core.data.readers import read_file
from regime_core.encoders import EmbeddingStore
from regime_core.router import load_router, save_router
from regime_core.runner.records import load_record, write_record

EXAMPLES = {  # per property; their sum is what one run generates
    "dataset_record": 150,
    "dataset_bytes": 50,
    "router_document": 100,
    "cli": 60,
    "flip": 350,  # 50 per kind of derived file on average
    "parameters": 100,
}
GENERATED_CASES = sum(EXAMPLES.values())
RAW_RECORDS = {
    name: json.loads((FIXTURES / path).read_text().splitlines()[0])
    for name, path in {
        "musique": "musique/dev.jsonl",
        "2wikimultihopqa": "2wikimultihopqa/dev_rows.jsonl",
        "hotpotqa": "hotpotqa/orig_dev_lines.jsonl",
    }.items()
}
QUESTION = "Who is the mother of the director of Titanic?"
BRIDGE = "Titanic is a 1997 film. It was directed by James Cameron."


def _settings(name: str) -> settings:
    return settings(
        max_examples=EXAMPLES[name],
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path into a JSON value (dict keys and list indices)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield (*prefix, i)
            yield from _paths(child, (*prefix, i))


def _mutate(record: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    out = json.loads(json.dumps(record))
    node = out
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return out


@st.composite
def malformed_records(draw: st.DrawFn) -> tuple[str, Any]:
    dataset = draw(st.sampled_from(sorted(RAW_RECORDS)))
    record = RAW_RECORDS[dataset]
    paths = list(_paths(record))
    path = draw(st.sampled_from(paths))
    delete = draw(st.booleans())
    new = None if delete else draw(json_values)
    return dataset, _mutate(record, path, new, delete)


# --- malformed dataset records and files -------------------------------------------------------


@_settings("dataset_record")
@given(case=malformed_records(), strict=st.booleans())
def test_malformed_dataset_record_is_an_error_or_read_and_prepared_in_full(
    case: tuple[str, Any], strict: bool
) -> None:
    dataset, record = case
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data" / dataset
        data.mkdir(parents=True)
        (data / "dev.jsonl").write_text(json.dumps(record) + "\n")
        try:
            read = read_file(data / "dev.jsonl", split="dev", strict=strict)
        except ValueError as err:
            assert "dev.jsonl" in str(err)
            return
        assert len(read.questions) == 1  # one record in, one question out: nothing dropped
        rel = f"{dataset}/dev.jsonl"
        try:
            manifest = prepare(
                Path(tmp) / "data", Path(tmp) / "out", (dataset,), splits={rel: "dev"},
                strict=strict,
            )  # fmt: skip
        except ValueError as err:
            assert "dev.jsonl" in str(err) or "no file of" in str(err)
            return
        entry = manifest["datasets"][dataset]
        excluded = sum(entry["excluded"].values())
        assert entry["two_hop"]["dev"] + excluded == entry["questions"]["dev"] == 1


@_settings("dataset_bytes")
@given(
    raw=st.binary(max_size=300) | st.text(max_size=200).map(str.encode),
    suffix=st.sampled_from(["", ".gz", ".bz2", ".xz"]),
    compress=st.booleans(),
)
def test_arbitrary_dataset_bytes_are_an_error_naming_the_file(
    raw: bytes, suffix: str, compress: bool
) -> None:
    import bz2
    import gzip
    import lzma

    codecs = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}
    if compress and suffix:
        raw = codecs[suffix](raw)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"x.jsonl{suffix}"
        path.write_bytes(raw)
        try:
            read = read_file(path, split="dev")
        except ValueError as err:
            assert str(path) in str(err)
        else:
            assert len(read.questions) >= 1


# --- router files ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def router_document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from regime_core.router.model import default_router

    path = tmp_path_factory.mktemp("router") / "router.json"
    save_router(default_router(), path, dataset="2wikimultihopqa", label_rule="x")
    return json.loads(path.read_text())


@_settings("router_document")
@given(data=st.data())
def test_mutated_router_file_is_an_error_naming_it(
    router_document: dict[str, Any], data: st.DataObject
) -> None:
    path = data.draw(st.sampled_from(list(_paths(router_document))))
    delete = data.draw(st.booleans())
    new = None if delete else data.draw(json_values)
    mutated = _mutate(router_document, path, new, delete)
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "router.json"
        file.write_text(json.dumps(mutated))
        if mutated == router_document:
            assert load_router(file).coef_.tolist() == [router_document["coef"]]
            return
        with refused(ValueError, names=("router.json",)):
            load_router(file)


# --- CLI arguments -----------------------------------------------------------------------------

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.integers(
    5_001, 60_000
).map(lambda n: "why " * n)  # over the router's 10,000-character question limit
numbers_as_text = st.one_of(
    st.floats().map(repr), st.integers(-5, 50).map(str), st.sampled_from(["abc", "", "1e999"])
)


@st.composite
def cli_arguments(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(["route", "retrieve", "stats", "prepare", "embed"]))
    if command == "embed":
        argv = ["embed", draw(st.sampled_from(["musique", "hotpotqa", "x"]))]
        argv += ["--encoder", draw(st.sampled_from(["tfidf", "not-an-encoder"]))]
        return [*argv, "--batch-size", draw(numbers_as_text), "--json"]
    if command == "route":
        argv = ["route", "--question", draw(texts), "--bridge", draw(texts)]
        if draw(st.booleans()):
            argv += ["--bridge-title", draw(texts)]
        return argv
    if command == "retrieve":
        argv = ["retrieve", draw(st.sampled_from(["musique", "hotpotqa", "nope"]))]
        argv += ["--arm", draw(st.sampled_from(["q", "union", "x"]))]
        argv += ["--alpha", draw(numbers_as_text), "--k", draw(numbers_as_text)]
        return [*argv, "--encoder", "tfidf"]
    if command == "stats":
        return ["data", "stats", draw(st.sampled_from(["musique", "toyworld", "x", ""]))]
    return ["data", "prepare", "--split", draw(texts)]


@_settings("cli")
@given(argv=cli_arguments())
def test_cli_arguments_end_in_a_result_or_a_clear_error(
    argv: list[str], derived: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv[:2] == ["data", "prepare"]:  # no data there: an error, and nothing written
        argv = [*argv, "--data-dir", str(tmp_path / "no_data"), "--work", str(tmp_path / "w")]
    elif argv[0] != "route":
        argv = [*argv, "--work", str(derived["root"])]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors: a message, exit 2
        code = exit_.code
    captured = capsys.readouterr()
    assert code in (0, 2), captured.err
    if code == 2:
        assert "error" in captured.err and "Traceback" not in captured.err


# --- byte flips in every kind of derived file --------------------------------------------------


SHARD_TEXTS = ["alpha", "beta gamma", "delta"]


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One of each kind of derived file, and how to read it back."""
    root = tmp_path_factory.mktemp("derived")
    prepare(FIXTURES, root / "prepared", splits=SPLITS)
    store = EmbeddingStore(root / "embeddings")
    encoder = UnitEncoder()
    vectors = store.embed(encoder, SHARD_TEXTS, "document")
    record = write_record(
        root / "results" / "t2", name="t2", config={"a": 1}, numbers={"x": {"y": 0.5}}
    )
    from regime_core.router.model import default_router

    router = save_router(
        default_router(), root / "router.json", dataset="2wikimultihopqa", label_rule="x"
    )
    directory = store.directory(encoder)
    (shard,) = directory.glob("*.emb")
    (cache,) = (root / "prepared" / "cache").glob("*.json")
    return {
        "root": root,
        "files": {
            "prepared": root / "prepared" / "musique.jsonl",
            "manifest": root / "prepared" / "manifest.json",
            "sentence_cache": cache,
            "shard": shard,
            "identity": directory / "identity.json",
            "record": record,
            "router": router,
        },
        "examples": [ex.to_dict() for ex in load_examples("musique", work=root)],
        "cache_entries": SentenceCache(cache).entries,
        "vectors": vectors,
        "record": load_record(record),
        "router_coef": load_router(router).coef_.tolist(),
        "encoder": encoder,
    }


def _check_after_flip(kind: str, d: dict[str, Any]) -> None:
    """Read the damaged file back: a ValueError naming it, a warned rebuild, or the original."""
    root, file = d["root"], d["files"][kind]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if kind in ("prepared", "manifest"):
                result: Any = [ex.to_dict() for ex in load_examples("musique", work=root)]
                if kind == "manifest":
                    load_manifest(root)
                assert result == d["examples"]
            elif kind == "sentence_cache":
                entries = SentenceCache(file).entries
                assert entries == d["cache_entries"] or (entries == {} and caught)
            elif kind in ("shard", "identity"):
                vectors = EmbeddingStore(root / "embeddings").embed(
                    d["encoder"], SHARD_TEXTS, "document"
                )
                assert np.array_equal(vectors, d["vectors"])  # reused or re-encoded
            elif kind == "record":
                assert load_record(file) == d["record"]
            else:
                assert load_router(file).coef_.tolist() == d["router_coef"]
        except ValueError as err:
            assert str(file) in str(err), err
            return
    rebuilt = any(str(file) in str(w.message) for w in caught)
    if not rebuilt:
        assert not caught, [str(w.message) for w in caught]


FLIPPABLE: tuple[str, ...] = (
    "prepared", "manifest", "sentence_cache", "shard", "identity", "record", "router",
)  # fmt: skip


@_settings("flip")
@given(kind=st.sampled_from(FLIPPABLE), data=st.data())
def test_byte_flip_in_any_derived_file_is_detected_or_harmless(
    derived: dict[str, Any], kind: str, data: st.DataObject
) -> None:
    file: Path = derived["files"][kind]
    original = file.read_bytes()
    at = data.draw(st.integers(0, len(original) - 1), label="offset")
    mask = data.draw(st.integers(1, 255), label="xor")
    damaged = original[:at] + bytes([original[at] ^ mask]) + original[at + 1 :]
    backup = _backup_store(derived) if kind in ("shard", "identity") else None
    file.write_bytes(damaged)
    try:
        _check_after_flip(kind, derived)
    finally:
        file.write_bytes(original)
        if backup is not None:
            backup()


def _backup_store(d: dict[str, Any]) -> Callable[[], None]:
    """A restorer of the embedding store (a damaged shard is deleted and re-encoded)."""
    directory = d["files"]["shard"].parent
    saved = {p.name: p.read_bytes() for p in directory.iterdir()}

    def restore() -> None:
        shutil.rmtree(directory)
        directory.mkdir()
        for name, raw in saved.items():
            (directory / name).write_bytes(raw)

    return restore


# --- notebook parameters -----------------------------------------------------------------------


def _config_classes() -> list[type]:
    from regime_core.experiments.ablations import AblationConfig
    from regime_core.experiments.data_regimes import OverviewConfig
    from regime_core.experiments.router_train import RouterConfig
    from regime_core.experiments.t1_auc_margin import T1Config
    from regime_core.experiments.t2_regime_decomposition import T2Config
    from regime_core.experiments.t3_brel_knockout import T3Config
    from regime_core.experiments.zero_shot_transfer import TransferConfig

    return [
        OverviewConfig, T1Config, T2Config, T3Config, RouterConfig, TransferConfig, AblationConfig,
    ]  # fmt: skip


@st.composite
def config_parameters(draw: st.DrawFn) -> tuple[type, dict[str, Any]]:
    import dataclasses

    cls = draw(st.sampled_from(_config_classes()))
    names = [f.name for f in dataclasses.fields(cls)]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    return cls, {name: draw(json_values, label=name) for name in chosen}


@_settings("parameters")
@given(case=config_parameters())
def test_any_notebook_parameter_builds_a_config_or_names_itself(
    case: tuple[type, dict[str, Any]],
) -> None:
    cls, parameters = case
    try:
        cls.from_parameters(**parameters)  # type: ignore[attr-defined]
    except ValueError as err:
        message = str(err)
        assert cls.__name__ in message or any(name in message for name in parameters), message
