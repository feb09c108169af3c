"""prepare / load_examples / corpus_passages / dataset_stats and the `regime data` CLI."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from builders import write_prepared_examples
from helpers import DATA_FIXTURES as FIXTURES
from helpers import FIXTURE_SPLITS as SPLITS
from helpers import refused

from regime_core.cli import main
from regime_core.data import corpus_passages, dataset_stats, load_examples, prepare
from regime_core.data.discovery import resolve_split
from regime_core.data.prepared import PREPARED_DATASETS
from regime_core.schema import Example


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("work")
    prepare(FIXTURES, root / "prepared", splits=SPLITS)
    return root


def _manifest(work: Path) -> dict[str, Any]:
    return json.loads((work / "prepared" / "manifest.json").read_text(encoding="utf-8"))


def test_counts_add_up_and_match_the_fixtures(work: Path) -> None:
    manifest = _manifest(work)
    expected = {  # dataset: (questions dev/train, two-hop dev/train)
        "hotpotqa": ({"dev": 7, "train": 0}, {"dev": 7, "train": 0}),
        "2wikimultihopqa": ({"dev": 5, "train": 0}, {"dev": 3, "train": 0}),
        "musique": ({"dev": 2, "train": 1}, {"dev": 1, "train": 1}),
    }
    for name, (questions, two_hop) in expected.items():
        entry = manifest["datasets"][name]
        assert entry["questions"] == questions
        assert entry["two_hop"] == two_hop
        for split in ("dev", "train"):
            excluded = sum(entry["excluded_by_split"][split].values())
            assert entry["two_hop"][split] + excluded == entry["questions"][split]
        assert sum(entry["hop_order_rules"].values()) == sum(two_hop.values())
        assert sum(entry["relation_sources"].values()) == sum(two_hop.values())
        assert sum(entry["by_type"].values()) == sum(two_hop.values())
    assert manifest["datasets"]["2wikimultihopqa"]["excluded"] == {
        "2wiki_bridge_comparison": 1,
        "no_pool": 1,
    }
    assert manifest["datasets"]["musique"]["excluded"] == {"musique_3hop": 1}
    assert manifest["datasets"]["hotpotqa"]["parallel"] == 3
    assert manifest["ignored_files"] == ["README.md"]


def test_manifest_records_every_input_file(work: Path) -> None:
    files = {f["path"]: f for e in _manifest(work)["datasets"].values() for f in e["files"]}
    assert set(files) == set(SPLITS)
    for rel, info in files.items():
        raw = (FIXTURES / rel).read_bytes()
        assert info["sha256"] == hashlib.sha256(raw).hexdigest()
        assert info["bytes"] == len(raw)
        assert info["split"] == SPLITS[rel]
    assert files["2wikimultihopqa/dev_columns.json"]["records"] == 4
    assert files["hotpotqa/ircot_dev.jsonl"]["format"] == "hotpot_ircot"


def test_examples_file_is_sorted_two_hop_only_and_hashed(work: Path) -> None:
    for name in PREPARED_DATASETS:
        path = work / "prepared" / f"{name}.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
        ids = [json.loads(line)["id"] for line in lines]
        assert ids == sorted(ids)
        entry = _manifest(work)["datasets"][name]
        assert len(ids) == sum(entry["two_hop"].values())
        assert entry["examples_file"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_rerun_is_byte_identical_in_place_and_elsewhere(work: Path, tmp_path: Path) -> None:
    names = ["manifest.json", *(f"{d}.jsonl" for d in PREPARED_DATASETS)]
    before = {n: (work / "prepared" / n).read_bytes() for n in names}
    prepare(FIXTURES, work / "prepared", splits=SPLITS)
    prepare(FIXTURES, tmp_path / "fresh", splits=SPLITS)
    for n in names:
        assert (work / "prepared" / n).read_bytes() == before[n], n
        assert (tmp_path / "fresh" / n).read_bytes() == before[n], n


def test_preparing_one_dataset_keeps_the_other_entries(work: Path, tmp_path: Path) -> None:
    out = tmp_path / "one"
    shutil.copytree(work / "prepared", out)
    manifest = prepare(FIXTURES, out, ("musique",), splits=SPLITS)
    assert set(manifest["datasets"]) == set(PREPARED_DATASETS)
    assert manifest == _manifest(work)


def test_load_examples_round_trips_and_filters_split(work: Path) -> None:
    all_musique = load_examples("musique", work=work)
    assert [e.id for e in all_musique] == ["2hop__1_2", "2hop__5_6"]
    assert [e.id for e in load_examples("musique", split="train", work=work)] == ["2hop__5_6"]
    hotpot = load_examples("hotpotqa", work=work)
    h1 = next(e for e in hotpot if e.id == "h1")
    assert h1.source_files == (
        "hotpotqa/ircot_dev.jsonl",
        "hotpotqa/orig_dev.json",
        "hotpotqa/orig_dev_lines.jsonl",
    )
    assert isinstance(h1, Example) and h1.native_type == "bridge"


def test_corpus_passages_are_distinct_and_sorted(work: Path) -> None:
    examples = load_examples("hotpotqa", work=work) + load_examples("2wikimultihopqa", work=work)
    passages = corpus_passages(examples)
    pids = [p.pid for p in passages]
    assert pids == sorted(set(pids))
    assert set(pids) == {p.pid for e in examples for p in e.pool}
    # "Ann Sel" appears in both datasets with the same text: one passage.
    assert sum(p.title == "Ann Sel" for p in passages) == 1
    assert (
        len(corpus_passages(load_examples("hotpotqa", work=work)))
        == (_manifest(work)["datasets"]["hotpotqa"]["corpus_passages"])
    )


def test_dataset_stats_object(work: Path) -> None:
    stats = dataset_stats(_manifest(work), "2wikimultihopqa")
    assert stats["dataset"] == "2wikimultihopqa"
    assert stats["questions"] == {"dev": 5, "train": 0}
    assert stats["by_type"] == {"comparison": 1, "compositional": 1, "inference": 1}
    assert stats["parallel"] == 1
    assert stats["title_match"] == {"exact": 1, "fuzzy": 1}
    assert stats["corpus_passages"] == 8


def test_error_load_examples_before_prepare(tmp_path: Path) -> None:
    with refused(ValueError, names=("regime data prepare --dataset musique",)):
        load_examples("musique", work=tmp_path)
    # toyworld is generated, never prepared: it needs no prepared file
    assert load_examples("toyworld", split="dev", work=tmp_path)[0].dataset == "toyworld"


def test_error_unknown_dataset_and_split(work: Path) -> None:
    with refused(ValueError, names=("'nq'", "hotpotqa")):
        load_examples("nq", work=work)
    with refused(ValueError, names=("split", "'test'")):
        load_examples("musique", split="test", work=work)
    with refused(ValueError, names=("'musique'",)):
        dataset_stats({**_manifest(work), "datasets": {}}, "musique")
    with refused(ValueError, names=("'toyworld'",)):
        prepare(FIXTURES, work / "x", ("toyworld",))


def test_error_corrupt_prepared_line_names_file_line_and_field(tmp_path: Path) -> None:
    out = tmp_path / "prepared"
    out.mkdir()
    record = {"id": "x1", "dataset": "musique"}
    write_prepared_examples(out, "musique", ("\n" + json.dumps(record) + "\n").encode())
    with refused(ValueError, names=("musique.jsonl", "line 2", "'split'")):
        load_examples("musique", work=tmp_path)


def test_error_unknown_file_without_split(tmp_path: Path) -> None:
    (tmp_path / "musique").mkdir()
    shutil.copy(FIXTURES / "musique/dev.jsonl", tmp_path / "musique" / "mine.jsonl")
    with refused(ValueError, names=("musique/mine.jsonl", "--split")):
        prepare(tmp_path, tmp_path / "out", ("musique",))


def test_official_file_name_gives_the_split_and_compression_is_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "musique" / "official").mkdir(parents=True)
    raw = (FIXTURES / "musique/dev.jsonl").read_bytes()
    target = data / "musique" / "official" / "musique_ans_v1.0_dev.jsonl.gz"
    target.write_bytes(gzip.compress(raw, mtime=0))
    assert resolve_split("musique/official/musique_ans_v1.0_dev.jsonl.gz") == "dev"
    manifest = prepare(data, tmp_path / "out", ("musique",))
    assert manifest["datasets"]["musique"]["questions"] == {"dev": 2, "train": 0}


def test_lenient_mode_counts_broken_references(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "hotpotqa").mkdir(parents=True)
    records = json.loads((FIXTURES / "hotpotqa/orig_dev.json").read_text(encoding="utf-8"))
    records[0]["supporting_facts"][1] = ["Ilse Varnhagen", 9]
    (data / "hotpotqa" / "h.json").write_text(json.dumps(records), encoding="utf-8")
    with refused(ValueError, names=("hotpotqa/h.json", "record #0", "'h1'")):
        prepare(data, tmp_path / "out", ("hotpotqa",), splits={"hotpotqa/h.json": "dev"})
    manifest = prepare(
        data, tmp_path / "out", ("hotpotqa",), splits={"hotpotqa/h.json": "dev"}, strict=False
    )
    entry = manifest["datasets"]["hotpotqa"]
    assert entry["excluded"] == {"supporting_sentence_out_of_range": 1}
    assert entry["two_hop"]["dev"] == 2 and entry["questions"]["dev"] == 3


# --- CLI -------------------------------------------------------------------------------------


def _split_flags() -> list[str]:
    return [arg for rel, split in SPLITS.items() for arg in ("--split", f"{rel}={split}")]


def test_cli_prepare_and_stats_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["data", "prepare", "--data-dir", str(FIXTURES), "--work", str(tmp_path), "--json"]
    assert main(argv + _split_flags()) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert set(manifest["datasets"]) == set(PREPARED_DATASETS)
    assert main(["data", "stats", "musique", "--work", str(tmp_path), "--json"]) == 0
    out = capsys.readouterr().out
    stats = json.loads(out)  # exactly one JSON object
    assert out.count("\n") == 1
    assert stats["two_hop"] == {"dev": 1, "train": 1}
    assert stats["excluded"] == {"musique_3hop": 1}
    for key in ("dataset", "questions", "two_hop", "by_type", "parallel", "excluded"):
        assert key in stats
    assert "corpus_passages" in stats


def test_cli_stats_table_and_errors(
    work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["data", "stats", "hotpotqa", "--work", str(work)]) == 0
    table = capsys.readouterr().out
    assert "questions" in table and "two-hop" in table and "ircot_yes_no_answer 1" in table
    assert main(["data", "stats", "musique", "--work", str(tmp_path)]) == 2
    assert "run `regime data prepare`" in capsys.readouterr().err
    argv = ["data", "prepare", "--data-dir", str(FIXTURES), "--work", str(tmp_path)]
    assert main([*argv, "--split", "no-equals-sign"]) == 2
    assert "--split expects KEY=VALUE" in capsys.readouterr().err


# --- issue 22: every input accounted for -------------------------------------------------------


def _musique_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / "musique", data / "musique")
    return data


MUSIQUE_SPLITS = {"musique/dev.jsonl": "dev", "musique/train.json": "train"}


def _make(kind: str, path: Path) -> None:
    import os

    if kind == "dangling_link":
        path.symlink_to(path.parent / "gone.jsonl")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
        (path / "notes.txt").write_text("a directory named like a data file\n")
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["dangling_link", "fifo", "directory"])
def test_an_unusable_data_file_is_an_error_naming_it_and_nothing_is_written(
    tmp_path: Path, kind: str
) -> None:
    data = _musique_data(tmp_path)
    _make(kind, data / "musique" / "extra.jsonl")
    out = tmp_path / "out"
    with refused(ValueError, names=("musique/extra.jsonl",)):
        prepare(data, out, ("musique",), splits=MUSIQUE_SPLITS)
    assert not (out / "musique.jsonl").exists()


@pytest.mark.parametrize("kind", ["dangling_link", "fifo", "directory"])
def test_with_the_flag_an_unusable_file_is_a_listed_exclusion(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _musique_data(tmp_path)
    baseline = prepare(data, tmp_path / "base", ("musique",), splits=MUSIQUE_SPLITS)
    _make(kind, data / "musique" / "extra.jsonl")
    argv = ["data", "prepare", "--data-dir", str(data), "--work", str(tmp_path / "w")]
    argv += ["--dataset", "musique", "--exclude-unreadable"]
    argv += [f"--split={rel}={split}" for rel, split in MUSIQUE_SPLITS.items()]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "left out (cannot be read): musique/extra.jsonl" in out
    manifest = json.loads((tmp_path / "w" / "prepared" / "manifest.json").read_text())
    (entry,) = manifest["unreadable_files"]
    assert entry["path"] == "musique/extra.jsonl" and entry["reason"]
    counts = manifest["datasets"]["musique"]
    assert counts["questions"] == baseline["datasets"]["musique"]["questions"]
    assert "unreadable_files" not in baseline  # absent when nothing was excluded


def test_an_unreadable_file_is_excluded_with_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from regime_core import integrity

    data = _musique_data(tmp_path)
    real = os.open

    def deny(path: Any, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith("train.json"):  # root reads any mode: simulate the denial
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(integrity.os, "open", deny)
    manifest = prepare(
        data, tmp_path / "out", ("musique",), splits=MUSIQUE_SPLITS, exclude_unreadable=True
    )
    assert manifest["unreadable_files"] == [
        {"path": "musique/train.json", "reason": "permission denied"}
    ]
    assert manifest["datasets"]["musique"]["questions"]["train"] == 0


def test_a_symlinked_directory_is_read_once_even_in_a_loop(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "musique").symlink_to(FIXTURES / "musique", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "back").symlink_to(data, target_is_directory=True)
    (data / "loop").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    manifest = prepare(data, tmp_path / "out", ("musique",), splits=MUSIQUE_SPLITS)
    files = [f["path"] for f in manifest["datasets"]["musique"]["files"]]
    assert files == ["musique/dev.jsonl", "musique/train.json"]


@pytest.mark.parametrize(
    ("option", "names"),
    [
        ("musique/x.json=test", ("--split musique/x.json=test", "'dev'", "'train'")),
        ("x.json=dev", ("--split x.json=dev", "musique/dev")),
        ("musique/README.md=dev", ("--split musique/README.md=dev",)),
        ("musique/dev.jsonl=dev", None),
    ],
)
def test_a_split_option_must_name_a_data_file(
    tmp_path: Path, option: str, names: tuple[str] | None
) -> None:
    data = _musique_data(tmp_path)
    splits = {**MUSIQUE_SPLITS, option.split("=")[0]: option.split("=")[1]}
    if names is None:
        prepare(data, tmp_path / "out", ("musique",), splits=splits)
        return
    with refused(ValueError, names=names):
        prepare(data, tmp_path / "out", ("musique",), splits=splits)
    assert not (tmp_path / "out").exists()


def test_a_split_that_contradicts_the_registry_or_itself_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data" / "musique" / "migres"
    data.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "musique" / "dev.jsonl", data / "musique.json")
    with refused(ValueError, names=("musique/migres/musique.json", "dev")):
        prepare(tmp_path / "data", tmp_path / "out", ("musique",), splits={
            "musique/migres/musique.json": "train"
        })  # fmt: skip
    argv = ["data", "prepare", "--data-dir", str(tmp_path / "data"), "--work", str(tmp_path)]
    argv += ["--split", "a.json=dev", "--split", "a.json=train"]
    assert main(argv) == 2
    assert "--split a.json: given twice, as 'dev' and 'train'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda line: line.replace('"_id": "w1"', '"_id": true'), "'_id'"),
        (lambda line: line.replace('"_id": "w1"', '"_id": ""'), "'_id'"),
        (lambda line: line.replace('"_id": "w1"', '"_id": "w\\u0000"'), "control characters"),
        (lambda line: line.replace('"director"', "NaN", 1), "'evidences[0][1]'"),
        (lambda line: line.replace('"director"', "7", 1), "'evidences[0][1]'"),
        (lambda line: line.replace('{"_id": "w1",', '{"_id": "w1", "_id": "w2",'), "'_id'"),
        (lambda line: line.replace('"type"', '"type": "x", "type"', 1), "'type'"),
    ],
)
def test_wrongly_typed_or_ambiguous_fields_name_file_record_and_field(
    tmp_path: Path, edit: Any, field: str
) -> None:
    from regime_core.data.readers import read_file

    first = (FIXTURES / "2wikimultihopqa" / "dev_rows.jsonl").read_text().splitlines()[0]
    path = tmp_path / "dev.jsonl"
    path.write_text(first + "\n" + edit(first) + "\n")
    with refused(ValueError, names=(str(path), "line 2", field)):
        read_file(path, split="dev")


def test_stats_of_a_hand_written_entry_says_why_it_has_no_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_prepared_examples(tmp_path / "prepared", "musique", b"")  # no counts recorded
    assert main(["data", "stats", "musique", "--work", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "holds no counts" in err and "built by hand" in err
    assert "Traceback" not in err and "KeyError" not in err


def test_a_fifo_as_the_manifest_is_an_error_not_a_hang(
    work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import signal

    copy = tmp_path / "w"
    shutil.copytree(work, copy)
    (copy / "prepared" / "manifest.json").unlink()
    os.mkfifo(copy / "prepared" / "manifest.json")
    signal.alarm(20)  # a blocking open would end the test here instead of hanging the suite
    try:
        assert main(["data", "stats", "musique", "--work", str(copy)]) == 2
        with refused(ValueError, names=("manifest.json", "FIFO")):
            load_examples("musique", work=copy)
    finally:
        signal.alarm(0)
    assert "it is a FIFO (named pipe), not a regular file" in capsys.readouterr().err
