"""Datasets of one's own (regime_core.data.custom): ``regime data prepare --jsonl FILE --name
NAME``, ``regime data export``, the name rules, and the round trip through the toy world."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import DATA_FIXTURES, FIXTURE_SPLITS, comparable, refused
from helpers import TWOHOP_FIXTURE as FIXTURE

from regime_core.cli import main
from regime_core.data import (
    dataset_stats,
    export_jsonl,
    known_datasets,
    load_examples,
    load_manifest,
    prepare,
    prepare_jsonl,
)
from regime_core.data.custom import check_name, twohop_jsonl
from regime_core.data.twohop import read_twohop
from regime_core.experiments.common import ExperimentConfig
from regime_core.schema import DATASETS
from regime_core.teaching.lesson import LessonConfig

NAME = "mine"


def _prepared(work: Path, name: str = NAME, source: Path = FIXTURE, **kw: Any) -> dict[str, Any]:
    return prepare_jsonl(source, work / "prepared", name, **kw)


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- prepare --jsonl -------------------------------------------------------------------------


def test_the_manifest_records_the_file_the_counts_and_the_name(tmp_path: Path) -> None:
    manifest = _prepared(tmp_path)
    entry = manifest["datasets"][NAME]
    (file,) = entry["files"]
    raw = FIXTURE.read_bytes()
    assert file["path"] == FIXTURE.name and file["source"] == str(FIXTURE)
    assert (file["sha256"], file["bytes"]) == (hashlib.sha256(raw).hexdigest(), len(raw))
    assert (file["records"], file["format"], file["splits"]) == (
        4,
        "regime-twohop/1",
        ["dev", "train"],
    )
    assert entry["questions"] == entry["two_hop"] == {"dev": 3, "train": 1}
    assert entry["excluded"] == {} and entry["excluded_lines"] == []
    assert entry["by_type"] == {"bridge": 1, "comparison": 1, "compositional": 2}
    assert entry["hop_order_rules"] == {"given": 3, "parallel": 1}
    assert entry["relation_sources"] == {"given": 2, "none": 2}
    assert (entry["records_read"], entry["blank_lines"], entry["parallel"]) == (4, 1, 1)
    assert entry["corpus_passages"] == 5
    payload = (tmp_path / "prepared" / f"{NAME}.jsonl").read_bytes()
    assert entry["examples_file"]["sha256"] == hashlib.sha256(payload).hexdigest()
    stats = dataset_stats(load_manifest(tmp_path), NAME)
    assert stats["questions"] == entry["questions"] and stats["files"] == [FIXTURE.name]


def test_every_command_finds_the_name_once_prepared(tmp_path: Path) -> None:
    assert known_datasets(tmp_path) == DATASETS
    with refused(ValueError, names=("'mine'", "--jsonl FILE --name NAME")):
        load_examples(NAME, work=tmp_path)
    _prepared(tmp_path)
    assert known_datasets(tmp_path) == (*DATASETS, NAME)
    examples = load_examples(NAME, work=tmp_path)
    assert [ex.id for ex in examples] == ["own-1", "own-2", "own-3", "own-4"]
    assert [ex.id for ex in load_examples(NAME, split="train", work=tmp_path)] == ["own-4"]
    expected = read_twohop(FIXTURE.read_bytes(), FIXTURE.name, NAME).examples
    assert sorted(expected, key=lambda ex: ex.id) == examples


def test_a_manifest_is_parsed_once_per_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from regime_core.data import prepared

    _prepared(tmp_path)
    parsed: list[Path] = []
    real = prepared._read_verified_manifest
    monkeypatch.setattr(
        prepared, "_read_verified_manifest", lambda path: parsed.append(path) or real(path)
    )
    monkeypatch.setattr(prepared, "_KNOWN_BY_MANIFEST", {})
    assert known_datasets(tmp_path) == known_datasets(tmp_path) == (*DATASETS, NAME)
    assert len(parsed) == 1
    manifest = tmp_path / "prepared" / "manifest.json"
    manifest.write_text(manifest.read_text() + "\n")  # other bytes: read again
    assert known_datasets(tmp_path) == (*DATASETS, NAME) and len(parsed) == 2


def test_a_rerun_is_byte_identical_and_the_raw_datasets_keep_the_entry(tmp_path: Path) -> None:
    _prepared(tmp_path)
    before = _files(tmp_path / "prepared")
    _prepared(tmp_path)
    assert _files(tmp_path / "prepared") == before
    manifest = prepare(DATA_FIXTURES, tmp_path / "prepared", splits=FIXTURE_SPLITS)
    assert NAME in manifest["datasets"] and "hotpotqa" in manifest["datasets"]
    assert len(load_examples(NAME, work=tmp_path)) == 4
    assert len(load_examples("hotpotqa", work=tmp_path)) == 7
    # and the other way round: preparing a file keeps the raw datasets' entries
    other = tmp_path / "other"
    prepare(DATA_FIXTURES, other / "prepared", splits=FIXTURE_SPLITS)
    manifest = _prepared(other)
    assert set(manifest["datasets"]) == {"hotpotqa", "2wikimultihopqa", "musique", NAME}
    assert manifest["ignored_files"] == ["README.md"]


def _left_to_the_rules(example_line: dict[str, Any]) -> dict[str, Any]:
    """A line as a converter may write it: every passage as ``text``, no ``b_rel``."""
    line = copy.deepcopy(example_line)
    del line["b_rel"]
    for passage in line["pool"]:
        passage["text"] = " ".join(passage.pop("sentences"))
    return line


def test_prepare_fills_sentences_and_b_rel_as_the_built_in_rules_do(tmp_path: Path) -> None:
    # MuSiQue gives paragraphs as text and no sentence labels: its converter splits them and
    # finds B_rel by mention, the two rules --fill-b-rel and a passage's "text" apply
    prepare(DATA_FIXTURES, tmp_path / "prepared", ("musique",), splits=FIXTURE_SPLITS)
    built = load_examples("musique", work=tmp_path)
    lines = [json.loads(line) for line in twohop_jsonl(built).decode().splitlines()]
    source = tmp_path / "converted.jsonl"
    source.write_text("".join(json.dumps(_left_to_the_rules(li)) + "\n" for li in lines))
    manifest = _prepared(tmp_path, source=source, fill_b_rel=True)
    mine = load_examples(NAME, work=tmp_path)
    assert [comparable(ex) for ex in mine] == [comparable(ex) for ex in built]
    assert any(ex.relation_source == "entity_mention" for ex in mine)
    assert manifest["datasets"][NAME]["filled"] == {
        "passages_split": sum(len(ex.pool) for ex in built),
        "b_rel_filled": sum(ex.relation_sentence is not None for ex in built),
        "b_rel_not_found": sum(ex.relation_sentence is None for ex in built),
    }


def test_a_line_that_names_b_rel_keeps_it_and_nothing_is_filled_unasked(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    given = [li for li in lines if li.get("b_rel") is not None]
    left_out = [li for li in lines if "b_rel" not in li]
    assert given and left_out  # the fixture has both kinds
    manifest = _prepared(tmp_path, fill_b_rel=True)
    by_id = {ex.id: ex for ex in load_examples(NAME, work=tmp_path)}
    for li in given:
        assert by_id[li["id"]].relation_sentence == li["b_rel"]["sentence"]
        assert by_id[li["id"]].relation_source == li["b_rel"].get("source", "given")
    filled = manifest["datasets"][NAME]["filled"]
    assert filled["b_rel_filled"] + filled["b_rel_not_found"] == len(left_out)
    assert filled["passages_split"] == 0
    # without the option a line without b_rel has none, and the count says nothing was filled
    manifest = _prepared(tmp_path)
    assert set(manifest["datasets"][NAME]["filled"].values()) == {0}
    unfilled = {ex.id: ex for ex in load_examples(NAME, work=tmp_path)}
    assert all(unfilled[li["id"]].relation_sentence is None for li in left_out)


def test_the_command_reports_what_it_filled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "text.jsonl"
    first = json.loads(FIXTURE.read_text().splitlines()[0])
    source.write_text(json.dumps(_left_to_the_rules(first)) + "\n")
    monkeypatch.setenv("REGIME_WORK_DIR", str(tmp_path / "work"))
    argv = ("data", "prepare", "--jsonl", str(source), "--name", NAME, "--fill-b-rel")
    code, out, _ = _cli(capsys, *argv)
    assert code == 0
    assert f"filled: passages_split: {len(first['pool'])}" in out
    assert "filled: b_rel_filled: 1" in out
    code, out, _ = _cli(capsys, "data", "stats", NAME)
    assert code == 0 and "filled by the rules" in out and "b_rel_filled 1" in out
    code, _, err = _cli(capsys, "data", "prepare", "--fill-b-rel")
    assert code == 2 and "--fill-b-rel" in err


def test_a_bad_file_writes_nothing(tmp_path: Path) -> None:
    _prepared(tmp_path)
    before = _files(tmp_path / "prepared")
    bad = tmp_path / "bad.jsonl"
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"bridge_id": "lantern-bridge"', '"bridge_id": "nowhere"')
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in (NAME, "fresh"):
        with refused(ValueError, names=("bad.jsonl", "line 4", "'own-3'", "'bridge_id'")):
            _prepared(tmp_path, name, bad)
    assert _files(tmp_path / "prepared") == before


def test_lenient_preparation_counts_and_lists_every_exclusion(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"bridge_id": "lantern-bridge"', '"bridge_id": "nowhere"')
    lines.append(lines[4])  # own-4 again: a duplicate id (train)
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    entry = _prepared(tmp_path, "partial", bad, strict=False)["datasets"]["partial"]
    assert entry["excluded"] == {"duplicate_id": 1, "not_in_pool": 1}
    assert entry["excluded_by_split"] == {"dev": {"not_in_pool": 1}, "train": {"duplicate_id": 1}}
    assert [(e["line"], e["id"], e["reason"]) for e in entry["excluded_lines"]] == [
        (4, "own-3", "not_in_pool"),
        (6, "own-4", "duplicate_id"),
    ]
    assert entry["questions"] == {"dev": 3, "train": 2}
    assert entry["two_hop"] == {"dev": 2, "train": 1}
    assert entry["strict"] is False
    assert [ex.id for ex in load_examples("partial", work=tmp_path)] == ["own-1", "own-2", "own-4"]


# --- the name --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["", "  ", "toyworld", "all", "Mine", "my data", "../mine", "-mine", "mine.v2", "m" * 65,
     "hotpotqa", "musique"],
)  # fmt: skip
def test_names_that_are_refused(tmp_path: Path, name: str) -> None:
    hint = ("--replace",) if name in ("hotpotqa", "musique") else ()
    with refused(ValueError, names=("--name", name.strip(), *hint)):
        _prepared(tmp_path, name)
    assert not (tmp_path / "prepared").exists()


def test_names_that_are_accepted() -> None:
    for name in ("mine", "my-data_2", "2hop", "m" * 64):
        assert check_name(name) == name
    assert check_name("hotpotqa", replace=True) == "hotpotqa"
    with refused(ValueError, names=("--name toyworld",)):
        check_name("toyworld", replace=True)


def test_replace_puts_the_file_in_a_built_in_datasets_place(tmp_path: Path) -> None:
    prepare(DATA_FIXTURES, tmp_path / "prepared", splits=FIXTURE_SPLITS)
    manifest = _prepared(tmp_path, "hotpotqa", replace=True)
    assert manifest["datasets"]["hotpotqa"]["origin"] == "jsonl"
    examples = load_examples("hotpotqa", work=tmp_path)
    assert [ex.id for ex in examples] == ["own-1", "own-2", "own-3", "own-4"]
    assert {ex.dataset for ex in examples} == {"hotpotqa"}
    assert known_datasets(tmp_path) == DATASETS
    prepare(DATA_FIXTURES, tmp_path / "prepared", ("hotpotqa",), splits=FIXTURE_SPLITS)
    assert len(load_examples("hotpotqa", work=tmp_path)) == 7


def test_a_damaged_prepared_file_names_the_command_that_rebuilds_it(tmp_path: Path) -> None:
    _prepared(tmp_path)
    path = tmp_path / "prepared" / f"{NAME}.jsonl"
    path.write_bytes(path.read_bytes().replace(b"Orrowick", b"Orrowich", 1))
    with refused(ValueError, names=(f"--jsonl {FIXTURE} --name {NAME}",)):
        load_examples(NAME, work=tmp_path)


# --- the experiments and the lesson accept the name ------------------------------------------


def test_the_experiment_configs_accept_a_prepared_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REGIME_WORK_DIR", str(tmp_path))
    with refused(ValueError, names=("datasets", "'mine'")):
        ExperimentConfig(datasets=(NAME,))
    with refused(ValueError, names=("real_dataset", "'mine'")):
        LessonConfig(real_dataset=NAME)
    _prepared(tmp_path)
    assert ExperimentConfig(datasets=(NAME, "musique")).datasets == (NAME, "musique")
    assert LessonConfig(real_dataset=NAME).real_dataset == NAME
    with refused(ValueError, names=("real_dataset", "'toyworld'")):
        LessonConfig(real_dataset="toyworld")


def test_the_work_directory_named_explicitly_finds_the_name_without_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One rule (regime_core.paths.work_dir): a notebook's work_dir, a command's --work, then
    REGIME_WORK_DIR, then the default; the explicit one reaches the config's dataset check."""
    from regime_core import paths
    from regime_core.registry import start

    monkeypatch.delenv("REGIME_WORK_DIR", raising=False)
    monkeypatch.chdir(tmp_path)  # the default _build/regime here holds nothing
    work = tmp_path / "w"
    _prepared(work)
    namespace = {"datasets": [NAME], "work_dir": str(work), "output_dir": str(tmp_path / "o")}
    nb = start("data_regimes", namespace)
    assert nb.config.datasets == (NAME,) and nb.work == work == paths.work_dir()
    # the explicit directory wins over the environment, which wins over the default
    monkeypatch.setenv("REGIME_WORK_DIR", str(tmp_path / "env"))
    assert paths.work_dir() == work and paths.work_dir(tmp_path / "x") == tmp_path / "x"
    paths._chosen_work = None
    assert paths.work_dir() == tmp_path / "env"
    monkeypatch.delenv("REGIME_WORK_DIR")
    assert paths.work_dir() == Path("_build") / "regime"
    # a command's --work, for the length of the command only
    with paths.use_work_dir(work) as chosen:
        assert chosen == work and ExperimentConfig(datasets=(NAME,)).datasets == (NAME,)
    with refused(ValueError, names=("datasets", "'mine'")):
        ExperimentConfig(datasets=(NAME,))
    code, out, _ = _cli(capsys, "data", "stats", NAME, "--work", str(work), "--json")
    assert code == 0 and json.loads(out)["dataset"] == NAME
    assert paths.work_dir() == Path("_build") / "regime"


# --- export ----------------------------------------------------------------------------------


def test_export_writes_what_prepare_reads_back(tmp_path: Path) -> None:
    _prepared(tmp_path)
    out = tmp_path / "out" / "mine.jsonl"
    result = export_jsonl(NAME, out, work=tmp_path)
    raw = out.read_bytes()
    assert result["examples"] == {"dev": 3, "train": 1}
    assert (result["bytes"], result["sha256"]) == (len(raw), hashlib.sha256(raw).hexdigest())
    assert raw == twohop_jsonl(load_examples(NAME, work=tmp_path))
    _prepared(tmp_path, "again", out)
    again = load_examples("again", work=tmp_path)
    assert [comparable(ex) for ex in again] == [
        comparable(ex) for ex in load_examples(NAME, work=tmp_path)
    ]


def test_export_refuses_the_prepared_store_and_special_files(tmp_path: Path) -> None:
    _prepared(tmp_path)
    before = _files(tmp_path / "prepared")
    for target in (tmp_path / "prepared" / "mine.jsonl", tmp_path / "prepared" / "x.jsonl"):
        with refused(ValueError, names=(str(target),)):
            export_jsonl(NAME, target, work=tmp_path)
    (tmp_path / "dir.jsonl").mkdir()
    with refused(ValueError, names=("dir.jsonl", "directory")):
        export_jsonl(NAME, tmp_path / "dir.jsonl", work=tmp_path)
    assert _files(tmp_path / "prepared") == before
    with refused(ValueError, names=("'nothing'",)):
        export_jsonl("nothing", tmp_path / "n.jsonl", work=tmp_path)
    assert not (tmp_path / "n.jsonl").exists()


def test_a_file_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "dir.jsonl").mkdir()
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "absent.jsonl")
    for source, message in (
        (fifo, "a FIFO"),
        (tmp_path / "dir.jsonl", "a directory"),
        (tmp_path / "gone.jsonl", "which does not exist"),
    ):
        with refused((ValueError, FileNotFoundError), names=(source.name, message)):
            _prepared(tmp_path, NAME, source)
    assert not (tmp_path / "prepared").exists()


# --- the command line ------------------------------------------------------------------------


def test_the_commands_take_the_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = str(tmp_path)
    code, out, _ = _cli(
        capsys, "data", "prepare", "--jsonl", str(FIXTURE), "--name", NAME, "--work", work, "--json"
    )
    assert code == 0 and json.loads(out)["datasets"][NAME]["two_hop"] == {"dev": 3, "train": 1}
    code, out, _ = _cli(capsys, "data", "stats", NAME, "--work", work)
    assert code == 0 and out.startswith("mine ")
    code, out, _ = _cli(
        capsys, "retrieve", NAME, "--arm", "q", "--encoder", "tfidf", "--work", work, "--json"
    )
    assert code == 0 and json.loads(out)["n"] == 3
    code, out, _ = _cli(capsys, "embed", NAME, "--encoder", "tfidf", "--work", work, "--json")
    assert code == 0 and json.loads(out)["dataset"] == NAME
    sheet = tmp_path / "sheet.csv"
    code, _, _ = _cli(
        capsys, "annotate", "sample", NAME, "--n", "2", "--out", str(sheet), "--work", work
    )
    assert code == 0 and "mine-dev-seed0-n2-" in sheet.read_text(encoding="utf-8")
    out_file = tmp_path / "export.jsonl"
    code, out, _ = _cli(
        capsys, "data", "export", NAME, "--jsonl", str(out_file), "--work", work, "--json"
    )
    assert (
        code == 0 and json.loads(out)["sha256"] == hashlib.sha256(out_file.read_bytes()).hexdigest()
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["data", "prepare", "--jsonl", str(FIXTURE)], "--name NAME is missing"),
        (["data", "prepare", "--name", NAME], "--jsonl FILE is missing"),
        (
            ["data", "prepare", "--jsonl", str(FIXTURE), "--name", NAME, "--dataset", "musique"],
            "--dataset: options of the raw datasets",
        ),
        (["data", "prepare", "--jsonl", str(FIXTURE), "--name", "hotpotqa"], "pass --replace"),
        (["data", "prepare", "--jsonl", "/nonexistent/x.jsonl", "--name", NAME], "no such file"),
        (["retrieve", "elsewhere", "--arm", "q"], "unknown dataset 'elsewhere'"),
        (["data", "stats", "elsewhere"], "unknown dataset 'elsewhere'"),
    ],
)
def test_bad_command_lines_are_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    if argv[:2] == ["data", "stats"]:
        _prepared(tmp_path)  # a manifest, without 'elsewhere'
    code, out, err = _cli(capsys, *argv, "--work", str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith("regime: error:") and message in err, err
    assert len(err.strip().splitlines()) == 1


def test_a_dataset_argument_that_cannot_be_a_name_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, argv in (
        ("My Data", ["retrieve", "My Data", "--arm", "q"]),
        ("a/b", ["data", "export", "a/b", "--jsonl", "x"]),
    ):
        with pytest.raises(SystemExit) as caught:
            main(argv)
        assert caught.value.code == 2
        err = capsys.readouterr().err
        assert "DATASET" in err and "dataset name" in err and repr(name) in err


# --- the round trip: the toy world exported and prepared under another name -----------------


@pytest.fixture(scope="module")
def toy_round_trip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("roundtrip")
    assert (
        main(
            ["data", "export", "toyworld", "--jsonl", str(work / "toy.jsonl"), "--work", str(work)]
        )
        == 0
    )
    assert (
        main(
            [
                "data",
                "prepare",
                "--jsonl",
                str(work / "toy.jsonl"),
                "--name",
                "toycopy",
                "--work",
                str(work),
            ]
        )
        == 0
    )
    return work


def test_the_round_trip_keeps_every_field(toy_round_trip: Path) -> None:
    original = load_examples("toyworld")
    copied = load_examples("toycopy", work=toy_round_trip)
    by_id = {ex.id: ex for ex in copied}
    assert len(by_id) == len(original) == len(copied)
    for ex in original:
        assert comparable(by_id[ex.id]) == comparable(ex), ex.id
    assert {ex.dataset for ex in copied} == {"toycopy"}
    entry = load_manifest(toy_round_trip)["datasets"]["toycopy"]
    stats = dataset_stats({}, "toyworld")
    for key in ("questions", "two_hop", "by_type", "parallel", "excluded", "hop_order_rules"):
        assert entry[key] == stats[key], key
    assert entry["relation_sources"] == stats["relation_sources"]
    assert entry["corpus_passages"] == stats["corpus_passages"]


def test_an_experiment_reads_the_copy_as_it_reads_the_toy_world(
    toy_round_trip: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from regime_core.experiments.context import Context
    from regime_core.experiments.data_regimes import OverviewConfig, run_overview

    monkeypatch.setenv("REGIME_WORK_DIR", str(toy_round_trip))
    cfg = OverviewConfig(datasets=("toycopy",))
    copied = run_overview(cfg)
    # the generated questions themselves, under the copy's name
    made = [
        dataclasses.replace(ex, dataset="toycopy") for ex in load_examples("toyworld", split="dev")
    ]
    generated = {"toycopy": made}
    direct = run_overview(
        cfg,
        Context(work=toy_round_trip, examples=generated),
        manifest=load_manifest(toy_round_trip),
    )
    assert copied.prepared.to_dict("records") == [
        {"dataset": "toycopy", "questions": 200, "two_hop": 200, "excluded": 0}
    ]
    for name in ("shares", "predicates", "native_types", "hop_order", "relation_sources"):
        assert getattr(copied, name).equals(getattr(direct, name)), name
    assert copied.samples == direct.samples


def _run_columns(path: Path) -> list[tuple[str, str, int]]:
    """(query id, passage id, rank) of every line of a TREC run file."""
    rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
    return [(r[0], r[2], int(r[3])) for r in rows]


def _scores(path: Path) -> list[float]:
    return [float(line.split()[4]) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    ("arm", "pool"),
    [
        ("q", "question"),
        ("bridge", "question"),
        ("union", "question"),
        ("knockout", "question"),
        ("entity", "question"),
        ("union", "corpus"),
    ],
)
def test_the_round_trip_gives_the_same_retrieval(
    toy_round_trip: Path, capsys: pytest.CaptureFixture[str], arm: str, pool: str
) -> None:
    results = {}
    for name in ("toyworld", "toycopy"):
        run = toy_round_trip / f"{name}-{arm}-{pool}.run"
        argv = ["retrieve", name, "--arm", arm, "--pool", pool, "--encoder", "tfidf"]
        argv += ["--work", str(toy_round_trip), "--run-file", str(run), "--json"]
        code, out, _ = _cli(capsys, *argv)
        assert code == 0
        results[name] = (json.loads(out), run)
    (ours, our_run), (theirs, their_run) = results["toyworld"], results["toycopy"]
    assert ours["n"] > 0
    for key in ("n", "n_examples", "n_missing", "hit@1", "hit@2", "hit@5", "hit@10", "mrr"):
        assert ours[key] == theirs[key], key  # functions of the ranks: exact
    assert _run_columns(our_run) == _run_columns(their_run)
    assert _scores(our_run) == pytest.approx(_scores(their_run), abs=1e-6)
    qrels = Path(f"{our_run}.qrels").read_bytes()
    assert qrels == Path(f"{their_run}.qrels").read_bytes()


# --- the built-in datasets' prepared subsets, exported and read back -------------------------


@pytest.mark.realdata
def test_every_built_in_dataset_reads_back_equal(prepared_real_work: Path, tmp_path: Path) -> None:
    shutil.copytree(prepared_real_work / "prepared", tmp_path / "prepared")  # the session's
    for name in ("hotpotqa", "2wikimultihopqa", "musique"):
        out = tmp_path / f"{name}.jsonl"
        export_jsonl(name, out, work=tmp_path)
        copy = f"{name}-copy"
        entry = _prepared(tmp_path, copy, out)["datasets"][copy]
        original = load_examples(name, work=tmp_path)
        copied = load_examples(copy, work=tmp_path)
        assert len(copied) == len(original) > 0
        assert [comparable(ex) for ex in copied] == [comparable(ex) for ex in original], name
        built_in = load_manifest(tmp_path)["datasets"][name]
        for key in ("two_hop", "by_type", "parallel", "hop_order_rules", "relation_sources"):
            assert entry[key] == built_in[key], (name, key)
        assert entry["corpus_passages"] == built_in["corpus_passages"]
        assert entry["excluded"] == {}


@pytest.mark.realdata
def test_musique_left_to_the_built_in_rules_reads_back_equal(
    real_data_dir: Path, tmp_path: Path
) -> None:
    """A converter that writes MuSiQue's paragraphs as they are (``text``) and no ``b_rel``
    gets, with --fill-b-rel, the examples the built-in converter makes."""
    from regime_core.data.canonical import convert, merge_questions, spacy_sentences
    from regime_core.data.custom import example_line
    from regime_core.data.discovery import read_data_dir
    from regime_core.schema import Passage

    reads = read_data_dir(real_data_dir, ("musique",)).reads
    raws = merge_questions(q for r in reads if r.dataset == "musique" for q in r.questions)
    built, lines = [], []
    for raw in raws:
        example = convert(raw).example
        if example is None:
            continue
        text_of = {
            Passage.make(p.title, list(spacy_sentences(p.text or ""))).pid: p.text or ""
            for p in raw.paragraphs or ()
        }
        line = example_line(example)
        del line["b_rel"]
        for passage in line["pool"]:
            del passage["sentences"]
            passage["text"] = text_of[passage["id"]]
        built.append(example)
        lines.append(line)
    source = tmp_path / "converted.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    entry = _prepared(tmp_path, source=source, fill_b_rel=True)["datasets"][NAME]
    mine = load_examples(NAME, work=tmp_path)
    assert len(mine) == len(built) > 0
    by_id = {ex.id: comparable(ex) for ex in built}  # the store orders by split
    assert [comparable(ex) for ex in mine] == [by_id[ex.id] for ex in mine]
    assert entry["filled"] == {
        "passages_split": sum(len(ex.pool) for ex in built),
        "b_rel_filled": sum(ex.relation_sentence is not None for ex in built),
        "b_rel_not_found": sum(ex.relation_sentence is None for ex in built),
    }
