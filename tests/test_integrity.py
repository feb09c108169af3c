"""Issue 13: derived files are verified on read, writers are atomic and locked, no tracebacks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import DATA_FIXTURES as FIXTURES
from helpers import FIXTURE_SPLITS as SPLITS
from helpers import UnitEncoder, refused, warned

from regime_core import integrity, locks, strict_json
from regime_core.cli import main
from regime_core.data import load_examples, prepare
from regime_core.data.prepare import SentenceCache
from regime_core.data.prepared import load_manifest
from regime_core.strict_json import DamagedFileError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prepared work directory (copy it before damaging anything)."""
    work = tmp_path_factory.mktemp("prepared_work")
    prepare(FIXTURES, work / "prepared", splits=SPLITS)
    return work


def _copy(prepared: Path, tmp_path: Path) -> Path:
    work = tmp_path / "work"
    shutil.copytree(prepared, work)
    return work


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != locks.LOCK_NAME
    }


# --- prepare -----------------------------------------------------------------------------------


def test_prepare_without_any_known_file_is_an_error_and_keeps_earlier_data(
    prepared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = _copy(prepared, tmp_path)
    before = _snapshot(work / "prepared")
    empty = tmp_path / "empty_data"
    (empty / "notes").mkdir(parents=True)
    (empty / "notes" / "README.md").write_text("nothing here\n")
    code = main(["data", "prepare", "--data-dir", str(empty), "--work", str(work)])
    err = capsys.readouterr().err
    assert code == 2
    assert "no known dataset file" in err and str(empty) in err and "nothing was written" in err
    assert _snapshot(work / "prepared") == before


def test_prepare_of_a_dataset_with_no_file_names_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / "musique", data / "musique")
    musique = {rel: split for rel, split in SPLITS.items() if rel.startswith("musique/")}
    with refused(ValueError, names=("['hotpotqa']", "['musique']")):
        prepare(data, tmp_path / "out", ("hotpotqa", "musique"), splits=musique)
    assert not (tmp_path / "out" / "hotpotqa.jsonl").exists()


def test_prepared_file_cut_at_a_line_boundary_is_an_error_naming_file_and_command(
    prepared: Path, tmp_path: Path
) -> None:
    work = _copy(prepared, tmp_path)
    path = work / "prepared" / "hotpotqa.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) > 2
    path.write_bytes(b"".join(lines[:2]))  # still valid JSON Lines, two items only
    with refused(
        DamagedFileError, names=("hotpotqa.jsonl", "regime data prepare --dataset hotpotqa")
    ):
        load_examples("hotpotqa", work=work)


def test_prepared_file_without_manifest_entry_is_an_error(prepared: Path, tmp_path: Path) -> None:
    work = _copy(prepared, tmp_path)
    (work / "prepared" / "manifest.json").unlink()
    with refused(ValueError, names=("manifest", "regime data prepare")):
        load_examples("musique", work=work)


def test_edited_manifest_is_detected(prepared: Path, tmp_path: Path) -> None:
    work = _copy(prepared, tmp_path)
    path = work / "prepared" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["datasets"]["musique"]["two_hop"]["dev"] += 1  # still valid JSON
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    with refused(DamagedFileError, names=("manifest.json",)):
        load_manifest(work)
    # rerunning prepare (what the message says) repairs it, and says what it dropped
    with warned(UserWarning, names=("manifest.json",)):
        prepare(FIXTURES, work / "prepared", ("musique",), splits=SPLITS)
    assert load_examples("musique", work=work)
    with refused(DamagedFileError, names=("regime data prepare --dataset hotpotqa",)):
        load_examples("hotpotqa", work=work)


def _cache_file(work: Path) -> Path:
    (cache,) = (work / "prepared" / "cache").glob("sentences-*.json")
    return cache


@pytest.mark.parametrize("damage", ["bit_flip_valid_json", "byte_ff", "truncated", "old_format"])
def test_damaged_sentence_cache_is_rebuilt_with_a_warning_and_output_is_unchanged(
    prepared: Path, tmp_path: Path, damage: str
) -> None:
    work = _copy(prepared, tmp_path)
    before = _snapshot(work / "prepared")
    cache = _cache_file(work)
    raw = cache.read_bytes()
    if damage == "bit_flip_valid_json":
        body = json.loads(raw)
        key = next(iter(body["payload"]))
        sentence = body["payload"][key][0]
        body["payload"][key][0] = chr(ord(sentence[0]) ^ 1) + sentence[1:]
        cache.write_text(json.dumps(body, sort_keys=True, ensure_ascii=False) + "\n")
    elif damage == "byte_ff":
        cache.write_bytes(raw[:40] + b"\xff" + raw[41:])
    elif damage == "truncated":
        cache.write_bytes(raw[: len(raw) // 2])
    else:
        cache.write_text(json.dumps(json.loads(raw)["payload"]))  # format 1: no seal
    with warned(UserWarning, names=(str(cache),)):
        prepare(FIXTURES, work / "prepared", splits=SPLITS)
    assert _snapshot(work / "prepared") == before  # rebuilt cache, identical outputs


def test_sentence_cache_round_trip_is_silent(tmp_path: Path) -> None:
    cache = SentenceCache(tmp_path / "c.json")
    assert cache("One. Two.") == ("One.", "Two.")
    cache.save()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = SentenceCache(tmp_path / "c.json")
    assert again.entries == cache.entries


def test_unreadable_dataset_file_is_reported_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / "musique", data / "musique")
    real = os.open

    def deny(path: Any, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith("dev.jsonl"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    # root ignores file modes, so the denial is simulated where the file is opened
    monkeypatch.setattr(integrity.os, "open", deny)
    code = main(
        [
            *("data", "prepare", "--data-dir", str(data), "--work", str(tmp_path / "w")),
            *("--dataset", "musique", "--split", "musique/dev.jsonl=dev"),
            *("--split", "musique/train.json=train"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "cannot read" in err and "dev.jsonl: permission denied" in err


def test_huge_paragraph_names_file_record_and_field(tmp_path: Path) -> None:
    from regime_core.limits import MAX_TEXT_CHARS

    data = tmp_path / "data" / "musique"
    data.mkdir(parents=True)
    record = json.loads((FIXTURES / "musique" / "dev.jsonl").read_text().splitlines()[0])
    record["paragraphs"][0]["paragraph_text"] = "word " * (MAX_TEXT_CHARS // 5 + 1)
    (data / "big.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError) as info:
        splits = {"musique/big.jsonl": "dev"}
        prepare(tmp_path / "data", tmp_path / "out", ("musique",), splits=splits)
    message = str(info.value)
    assert "musique/big.jsonl, line 1" in message and record["id"] in message
    assert "paragraphs[0].paragraph_text" in message and str(MAX_TEXT_CHARS) in message


_CONCURRENT = """
import sys
from pathlib import Path
from regime_core.data import prepare
splits = dict(arg.split("=") for arg in sys.argv[3:])
prepare(Path(sys.argv[1]), Path(sys.argv[2]), splits=splits)
"""


def test_two_concurrent_prepares_on_one_work_directory_both_succeed(
    prepared: Path, tmp_path: Path
) -> None:
    out = tmp_path / "prepared"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-c", _CONCURRENT, str(FIXTURES), str(out)]
    args += [f"{k}={v}" for k, v in SPLITS.items()]
    for _ in range(2):
        procs = [subprocess.Popen(args, env=env, stderr=subprocess.PIPE) for _ in range(2)]
        errors = [p.communicate()[1].decode() for p in procs]
        assert [p.returncode for p in procs] == [0, 0], errors
    assert _snapshot(out) == _snapshot(prepared / "prepared")
    assert not [p for p in out.rglob("*.tmp")]


# --- integrity helpers -------------------------------------------------------------------------


def test_atomic_write_is_0644_and_reports_path_problems(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    integrity.atomic_write_bytes(target, b"{}")
    assert target.stat().st_mode & 0o777 == 0o644
    (tmp_path / "dir").mkdir()
    with refused(ValueError, names=(str(tmp_path / "dir"), "directory")):
        integrity.atomic_write_bytes(tmp_path / "dir", b"x")
    with refused(ValueError, names=(str(target / "x"), "parent")):
        integrity.atomic_write_bytes(target / "x", b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "f.json"]


def test_remove_file_removes_a_file_or_a_link_and_refuses_what_is_not_a_file(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    (tmp_path / "stamp").write_text("x")
    (tmp_path / "link").symlink_to(kept)
    for name in ("stamp", "link", "absent"):
        integrity.remove_file(tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]  # the link's target stays
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for name, kind in (("fifo", "FIFO"), ("folder", "directory")):
        with refused(ValueError, names=(str(tmp_path / name), kind)):
            integrity.remove_file(tmp_path / name)
    assert (tmp_path / "fifo").is_fifo() and (tmp_path / "folder").is_dir()


def test_stale_temporaries_of_dead_writers_are_removed_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    stale = tmp_path / f".shard.emb.{int(dead.stdout)}.abc123.tmp"
    legacy = tmp_path / ".tmp-k2j3h4.part"
    live = tmp_path / f".record.json.{os.getpid()}.xyz.tmp"
    keep = tmp_path / "record.json"
    for p in (stale, legacy, live, keep):
        p.write_bytes(b"x")
    removed = integrity.remove_stale_temporaries(tmp_path)
    assert sorted(removed) == sorted([stale, legacy])
    assert live.exists() and keep.exists()


def test_sealed_json_detects_any_change(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(strict_json.seal_json({"a": [1, 2]}))
    assert strict_json.open_sealed_json(path, "rebuild") == {"a": [1, 2]}
    path.write_text(path.read_text().replace("2", "3"))
    with refused(DamagedFileError, names=(str(path), "rebuild")):
        strict_json.open_sealed_json(path, "rebuild")


# --- router ------------------------------------------------------------------------------------

QUESTION = "Who is the mother of the director of Titanic?"
BRIDGE = "Titanic is a 1997 film. It was directed by James Cameron."


def _saved_router(tmp_path: Path, intercept: float | None = None) -> Path:
    from regime_core.router import save_router
    from regime_core.router.model import default_router

    model = default_router()
    if intercept is not None:
        model.intercept_ = model.intercept_ * 0 + intercept
    return save_router(model, tmp_path / "router.json", dataset="2wikimultihopqa", label_rule="x")


@pytest.mark.parametrize("intercept", [-1000.0, 1000.0])
def test_extreme_intercept_routes_without_overflow(tmp_path: Path, intercept: float) -> None:
    from regime_core.router import load_router

    model = load_router(_saved_router(tmp_path, intercept))
    decision = model.route(QUESTION, [BRIDGE], "Titanic")
    assert decision.probability == (0.0 if intercept < 0 else 1.0)
    assert decision.action == ("q" if intercept < 0 else "union")
    proba = model.predict_proba([list(decision.features.values())])
    assert proba.tolist() == ([[1.0, 0.0]] if intercept < 0 else [[0.0, 1.0]])


def test_stable_logistic_matches_the_plain_formula() -> None:
    from regime_core.router.model import default_router

    model = default_router()
    X = np.random.default_rng(0).normal(size=(200, 5))
    plain = 1.0 / (1.0 + np.exp(-model._logits(X)))
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], plain, rtol=0, atol=1e-15)


def test_huge_question_says_the_limit(capsys: pytest.CaptureFixture[str]) -> None:
    from regime_core.router.estimator import MAX_QUESTION_CHARS

    code = main(["route", "--question", "why " * 25_000, "--bridge", BRIDGE])
    err = capsys.readouterr().err
    assert code == 2
    assert f"over the limit of {MAX_QUESTION_CHARS:,}" in err and "question" in err


def test_router_digit_flip_is_detected(tmp_path: Path) -> None:
    from regime_core.router import load_router

    path = _saved_router(tmp_path)
    text = path.read_text()
    start = text.index('"intercept": ') + len('"intercept": ') + 3
    digit = text[start]
    assert digit.isdigit()
    path.write_text(text[:start] + str((int(digit) + 1) % 10) + text[start + 1 :])
    with refused(DamagedFileError, names=("router.json", "route train")):
        load_router(path)


def test_packaged_router_carries_its_hash() -> None:
    from regime_core.router.io import HASH_KEY, document_hash
    from regime_core.router.model import default_router_path

    document = json.loads(default_router_path().read_text())
    assert document[HASH_KEY] == document_hash(document)


# --- records -----------------------------------------------------------------------------------


def _record(tmp_path: Path) -> Path:
    from regime_core.runner.records import write_record

    return write_record(
        tmp_path / "results" / "t2_minilm", name="t2", config={"alpha": 0.25},
        numbers={"cells": {"B": {"hit@5": 0.5}}},
    )  # fmt: skip


def test_record_is_written_0644_without_temporaries(tmp_path: Path) -> None:
    path = _record(tmp_path)
    assert path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["record.json"]


@pytest.mark.parametrize("damage", ["byte_ff", "created_digit", "truncated"])
def test_damaged_record_names_itself_and_the_rebuild_command(tmp_path: Path, damage: str) -> None:
    from regime_core.runner.records import load_record

    path = _record(tmp_path)
    raw = path.read_bytes()
    if damage == "byte_ff":
        raw = raw[:10] + b"\xff" + raw[11:]
    elif damage == "created_digit":  # 2026 -> 2027: still valid JSON, same record_hash
        at = raw.index(b'"created": "') + len(b'"created": "') + 3
        raw = raw[:at] + bytes([raw[at] ^ 1]) + raw[at + 1 :]
    else:
        raw = raw[: len(raw) // 2]
    path.write_bytes(raw)
    with pytest.raises(DamagedFileError) as info:
        load_record(path)
    message = str(info.value)
    assert str(path) in message and "regime reproduce --only t2_minilm --force" in message


# --- reproduce: interruption -------------------------------------------------------------------


def _sleep_notebook(path: Path) -> None:
    cell = {"cell_type": "code", "execution_count": None, "outputs": []}
    notebook = {
        "cells": [
            {**cell, "id": "p", "metadata": {"tags": ["parameters"]}, "source": 'output_dir = "o"'},
            {**cell, "id": "s", "metadata": {}, "source": "import time\ntime.sleep(120)"},
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    path.write_text(json.dumps(notebook))


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "\nState:\tZ" in state  # a zombie has exited; only its entry waits to be reaped


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_sigkill_of_reproduce_leaves_no_papermill_running(tmp_path: Path) -> None:
    import signal
    import time

    import yaml

    _sleep_notebook(tmp_path / "sleep.ipynb")
    decl = tmp_path / "reproduce.yml"
    decl.write_text(yaml.safe_dump({"runs": {"nap": {"notebook": "sleep.ipynb"}}}))
    work = tmp_path / "work"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "regime_core", "reproduce", "--declarations", str(decl)]
    runner = subprocess.Popen([*command, "--work", str(work)], env=env, stderr=subprocess.PIPE)
    pid_file = work / "runs" / "nap" / "child.pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    child = int(pid_file.read_text())
    time.sleep(1.0)  # papermill is up and starting its kernel
    assert not _gone(child)
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _gone(child), "papermill outlived its killed runner"
    # The next start finds the stale pid file and the temporaries and removes them.
    (work / "runs" / "nap" / f".stamp.json.{child}.abc.tmp").write_text("x")
    from regime_core.runner.declarations import load_declarations
    from regime_core.runner.execution import clean_interrupted

    said: list[str] = []
    clean_interrupted(load_declarations(decl), work.resolve(), said.append)
    assert not pid_file.exists()
    assert not list((work / "runs" / "nap").glob("*.tmp"))
    assert any("removed" in line for line in said)


# --- embedding store ---------------------------------------------------------------------------


def test_garbage_identity_and_stray_temporaries_are_repaired(tmp_path: Path) -> None:
    from regime_core.encoders import EmbeddingStore

    encoder = UnitEncoder()
    texts = ["alpha", "beta gamma"]
    first = EmbeddingStore(tmp_path).embed(encoder, texts, "document")
    directory = EmbeddingStore(tmp_path).directory(encoder)
    (directory / "identity.json").write_bytes(b"\x00garbage")
    stray = directory / ".tmp-abc123.part"  # left by a writer killed before this module
    stray.write_bytes(b"half a shard")
    with warned(UserWarning, names=("identity.json",)):
        again = EmbeddingStore(tmp_path).embed(encoder, texts, "document")
    assert np.array_equal(first, again) and encoder.encoded == 2  # shards reused
    assert json.loads((directory / "identity.json").read_text()) == UnitEncoder.identity
    assert not stray.exists()
    assert {p.stat().st_mode & 0o777 for p in directory.iterdir()} == {0o644}


# --- CLI: no tracebacks ------------------------------------------------------------------------


def test_router_file_that_is_a_directory_is_reported(tmp_path: Path) -> None:
    from regime_core.router import load_router

    with refused(ValueError, names=(str(tmp_path), "directory")):
        load_router(tmp_path)


def test_unanticipated_os_errors_and_ctrl_c_print_no_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from regime_core.cli import data as cli_data

    def denied(args: object) -> int:
        raise PermissionError(13, "Permission denied", "/srv/locked/file.json")

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_data, "_stats", denied)
    assert main(["data", "stats", "musique"]) == 2
    err = capsys.readouterr().err
    assert "cannot access /srv/locked/file.json: permission denied" in err
    monkeypatch.setattr(cli_data, "_stats", interrupted)
    assert main(["data", "stats", "musique"]) == 130
    assert "interrupted" in capsys.readouterr().err


# --- notebook parameters -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "parameters",
    [
        {"alpha": "abc"},
        {"k": 2.5},
        {"k": True},
        {"exclude_bridge": "yes"},
        {"datasets": [1]},
        {"sample_size": "all"},
    ],
)
def test_bad_papermill_parameter_names_itself(parameters: dict[str, Any]) -> None:
    from regime_core.experiments.t2_regime_decomposition import T2Config

    (name,) = parameters
    with refused(ValueError, names=("T2Config", f"'{name}")):
        T2Config.from_parameters(**parameters)


def test_good_papermill_parameters_still_build_the_same_config() -> None:
    from regime_core.experiments.t2_regime_decomposition import T2Config

    built = T2Config.from_parameters(alpha=0, datasets="musique", sample_size=None, profile="q")
    assert built == T2Config(alpha=0, datasets=("musique",))
    assert built.config_hash() == T2Config(alpha=0, datasets=["musique"]).config_hash()


def test_unlistable_data_subdirectory_is_an_error_not_a_silent_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    prepare_module = importlib.import_module("regime_core.data.discovery")
    locked = tmp_path / "data" / "musique" / "locked"
    locked.mkdir(parents=True)
    real_walk = os.walk

    def walk(top: Any, onerror: Any = None, **kwargs: Any) -> Any:
        # root lists any directory, so the denial is simulated where os.walk reports it
        onerror(PermissionError(13, "Permission denied", str(locked)))
        return real_walk(top, onerror=onerror, **kwargs)

    monkeypatch.setattr(prepare_module.os, "walk", walk)
    with refused(ValueError, names=(str(locked), "permission denied")):
        prepare(tmp_path / "data", tmp_path / "out", ("musique",))


@pytest.mark.slow
def test_reproduce_reruns_a_run_whose_record_was_damaged(tmp_path: Path) -> None:
    import yaml

    from regime_core.runner.reproduce import reproduce

    demo = Path(__file__).parent / "fixtures" / "notebooks" / "demo_record.ipynb"
    shutil.copyfile(demo, tmp_path / demo.name)
    decl = tmp_path / "reproduce.yml"
    run = {"notebook": demo.name, "parameters": {"n_points": 5, "make_figure": False}}
    decl.write_text(yaml.safe_dump({"runs": {"a": run}}))
    work = tmp_path / "work"
    assert reproduce(decl, work=work, progress=None).results[0].status == "ran"
    record = work / "results" / "a" / "record.json"
    numbers = json.loads(record.read_text())["numbers"]
    record.write_bytes(record.read_bytes().replace(b'"created": "2', b'"created": "3'))
    said: list[str] = []
    again = reproduce(decl, work=work, progress=said.append)
    assert again.results[0].status == "ran"
    assert any("record changed since it was written" in line for line in said), said
    assert json.loads(record.read_text())["numbers"] == numbers
    assert reproduce(decl, work=work, progress=None).results[0].status == "skipped"


def test_reader_waits_for_a_prepare_in_progress_instead_of_failing(
    prepared: Path, tmp_path: Path
) -> None:
    import threading
    import time

    from regime_core.data.prepared import MANIFEST_HASH_KEY

    work = _copy(prepared, tmp_path)
    out = work / "prepared"
    path = out / "hotpotqa.jsonl"
    new = b"".join(path.read_bytes().splitlines(keepends=True)[:2])
    results: list[Any] = []
    with locks.directory_lock(out, what="a test writer"):
        path.write_bytes(new)  # the writer replaced the file; its manifest is not written yet
        reader = threading.Thread(
            target=lambda: results.append(len(load_examples("hotpotqa", work=work)))
        )
        reader.start()
        time.sleep(0.5)
        assert results == []  # the reader is waiting for the writer
        manifest = json.loads((out / "manifest.json").read_text())
        manifest.pop(MANIFEST_HASH_KEY)
        manifest["datasets"]["hotpotqa"]["examples_file"]["sha256"] = integrity.sha256_hex(new)
        manifest[MANIFEST_HASH_KEY] = integrity.sha256_hex(integrity.canonical_bytes(manifest))
        (out / "manifest.json").write_text(json.dumps(manifest))
    reader.join(timeout=10)
    assert results == [2]


def test_next_start_ends_a_papermill_group_left_running(tmp_path: Path) -> None:
    import time

    import yaml

    from regime_core.runner.declarations import load_declarations
    from regime_core.runner.execution import clean_interrupted

    work = (tmp_path / "work").resolve()
    (work / "runs" / "nap").mkdir(parents=True)
    decl = tmp_path / "reproduce.yml"
    decl.write_text(yaml.safe_dump({"runs": {}}))
    # stands in for an orphaned papermill: its command line names papermill and the work dir
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "papermill", str(work / "x")],
        start_new_session=True,
    )
    innocent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (work / "runs" / "nap" / "child.pid").write_text(f"{sleeper.pid}\n")
        (work / "runs" / "other.pid").write_text(f"{innocent.pid}\n")  # not a child.pid file
        said: list[str] = []
        clean_interrupted(load_declarations(decl), work, said.append)
        deadline = time.monotonic() + 5
        while sleeper.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleeper.returncode == -9
        assert innocent.poll() is None
        assert any(f"pid {sleeper.pid}" in line for line in said)
        assert not (work / "runs" / "nap" / "child.pid").exists()
    finally:
        for proc in (sleeper, innocent):
            proc.kill()
            proc.wait()


def test_a_reused_pid_is_not_killed(tmp_path: Path) -> None:
    import yaml

    from regime_core.runner.declarations import load_declarations
    from regime_core.runner.execution import clean_interrupted

    work = (tmp_path / "work").resolve()
    (work / "runs" / "nap").mkdir(parents=True)
    decl = tmp_path / "reproduce.yml"
    decl.write_text(yaml.safe_dump({"runs": {}}))
    unrelated = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (work / "runs" / "nap" / "child.pid").write_text(f"{unrelated.pid}\n")
        clean_interrupted(load_declarations(decl), work, lambda _line: None)
        assert unrelated.poll() is None  # its command line is not our papermill's
    finally:
        unrelated.kill()
        unrelated.wait()
