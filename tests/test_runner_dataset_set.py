"""``regime reproduce --dataset NAME`` (issue 44): every notebook that takes a dataset run on
one dataset into a named variant set, and ``regime verdicts --dataset NAME`` beside the default;
preparing a dataset marks stale only the runs that read it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import refused, write_stamped_record

from regime_core import cli
from regime_core.runner.dataset_set import (
    ERROR_FILENAME,
    check_dataset,
    link_shared,
    set_declarations,
    set_dir,
    set_report,
)
from regime_core.runner.declarations import load_declarations, notebook_parameters
from regime_core.runner.keys import datasets_read, manifest_digest, run_keys


def test_the_set_gives_every_run_the_dataset_by_role(tmp_path: Path) -> None:
    decl = load_declarations()
    found = set_declarations(decl, "mine", "2wikimultihopqa")
    assert list(found.runs) == list(decl.runs)  # every run, in the same order
    for run_id, spec in found.runs.items():
        declared = notebook_parameters(spec.notebook)
        for profile in ("quick", "default", "full", "paper"):
            parameters = spec.parameters_for(profile)
            read = datasets_read(parameters)
            assert read is not None and "mine" in read, run_id
            assert "hotpotqa" not in (read or ()) and "musique" not in (read or ()), run_id
        if "dataset" in declared:  # the training set stays the paper's
            assert spec.parameters["dataset"] == "2wikimultihopqa"
    router = found.runs["router_train"].parameters
    assert router["selector_datasets"] == ["2wikimultihopqa", "mine"]
    assert found.runs["zero_shot_transfer"].parameters["router_file"] == "trained"
    assert found.runs["ablations"].parameters["transfer_datasets"] == ["mine"]
    assert found.runs["toyworld"].parameters["real_dataset"] == "mine"


def test_a_dataset_not_prepared_or_the_training_set_itself_is_refused(tmp_path: Path) -> None:
    with refused(ValueError, names=("--dataset 'nope'", "regime data prepare")):
        check_dataset("nope", "2wikimultihopqa", tmp_path)
    with refused(ValueError, names=("toyworld",)):
        check_dataset("toyworld", "toyworld", tmp_path)
    assert cli.main(["reproduce", "--dataset", "nope", "--work", str(tmp_path)]) == 2
    assert cli.main(["reproduce", "--train-dataset", "x", "--work", str(tmp_path)]) == 2


def test_the_set_links_the_prepared_data_and_the_store(tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "prepared").mkdir(parents=True)
    (work / "prepared" / "marker").write_text("x")
    root = set_dir("mine", work)
    link_shared(root, work)
    link_shared(root, work)  # again: the links are kept
    assert (root / "prepared" / "marker").read_text() == "x"
    assert (root / "embeddings").resolve() == (work / "embeddings").resolve()


def test_a_new_dataset_leaves_the_runs_that_do_not_read_it_current(tmp_path: Path) -> None:
    """Issue 44: preparing one dataset of one's own marked all 12 default runs stale (the key
    held the whole manifest's hash). The key holds the entries of the datasets a run reads."""
    prepared = tmp_path / "prepared"
    prepared.mkdir()
    manifest = {"schema": 1, "version": "0.1.0", "strict": True,
                "datasets": {"hotpotqa": {"n": 1}, "musique": {"n": 2}}}  # fmt: skip
    (prepared / "manifest.json").write_text(json.dumps(manifest))
    before = {d: manifest_digest(tmp_path, d) for d in (("hotpotqa",), ("mine",), None)}
    manifest["datasets"]["mine"] = {"n": 3}
    (prepared / "manifest.json").write_text(json.dumps(manifest))
    after = {d: manifest_digest(tmp_path, d) for d in (("hotpotqa",), ("mine",), None)}
    assert after[("hotpotqa",)] == before[("hotpotqa",)]  # not read: still current
    assert after[("mine",)] != before[("mine",)]  # read: stale
    assert after[None] != before[None]  # a run reading every dataset: stale
    assert manifest_digest(tmp_path / "nothing", ("hotpotqa",)) == "absent"


@pytest.mark.parametrize("profile", ["quick", "default"])
def test_preparing_a_dataset_of_ones_own_leaves_every_default_run_current(
    tmp_path: Path, profile: str
) -> None:
    """Walking the researcher's path found alpha_transfer made stale by a new dataset: its
    notebook left ``train_dataset`` as None ("the default"), which the key read as "every
    dataset". Every run of the real declarations must keep its key."""
    prepared = tmp_path / "prepared"
    prepared.mkdir()
    builtin = {"hotpotqa": {"n": 1}, "2wikimultihopqa": {"n": 2}, "musique": {"n": 3}}
    manifest = {"schema": 1, "version": "0.1.0", "strict": True, "datasets": builtin}
    (prepared / "manifest.json").write_text(json.dumps(manifest))
    decl = load_declarations()
    before = {run: entry["key"] for run, entry in run_keys(decl, profile, tmp_path).items()}
    manifest["datasets"] = {**builtin, "mine": {"n": 4}}
    (prepared / "manifest.json").write_text(json.dumps(manifest))
    after = {run: entry["key"] for run, entry in run_keys(decl, profile, tmp_path).items()}
    assert len(before) == 12
    assert [run for run in before if after[run] != before[run]] == []


def test_the_plan_of_a_set_needs_no_jobs_option(tmp_path: Path, capsys: Any) -> None:
    """``--dataset NAME --plan`` was refused for a --jobs option nobody gave."""
    code = cli.main(["reproduce", "--dataset", "nope", "--plan", "--work", str(tmp_path)])
    assert code == 2 and "--jobs" not in capsys.readouterr().err  # refused for the dataset only
    with pytest.raises(SystemExit) as usage_error:  # --plan runs nothing: --jobs is refused
        cli.main(["reproduce", "--dataset", "x", "--plan", "--jobs", "2", "--work", str(tmp_path)])
    assert usage_error.value.code == 2
    assert "--jobs" in (err := capsys.readouterr().err) and "--plan" in err


def _claims(tmp_path: Path) -> Path:
    import yaml

    roles = {"transfer_1": {"what": "first transfer set", "paper": "musique",
                            "fields": {"z": "datasets"}}}  # fmt: skip
    node = "transfer.musique"
    claim = {"id": "c", "label": "c", "claim": "c", "source": "abstract", "data": ["transfer_1"],
             "rule": "estimate", "paper": {"value": 0.05},
             "ours": {"run": "z", "estimate": f"{node}.diff", "ci_lo": f"{node}.ci_lo",
                      "ci_hi": f"{node}.ci_hi"}}  # fmt: skip
    file = tmp_path / "claims.yml"
    file.write_text(yaml.safe_dump({"roles": roles, "claims": [claim]}), encoding="utf-8")
    return file


def test_verdicts_on_a_set_say_why_a_claim_is_not_judged(tmp_path: Path, capsys: Any) -> None:
    claims, work = _claims(tmp_path), tmp_path / "work"
    node = {"diff": 0.05, "ci_lo": 0.03, "ci_hi": 0.07}
    write_stamped_record(work, "z", config={"datasets": ["musique"]},
                         numbers={"transfer": {"musique": node}})  # fmt: skip
    with refused(FileNotFoundError, names=("regime reproduce --dataset mine",)):
        set_report("mine", work, claims)
    root = set_dir("mine", work)
    (root / "results").mkdir(parents=True)
    (root / "runs" / "z").mkdir(parents=True)
    (root / "runs" / "z" / ERROR_FILENAME).write_text("T2 compares the regimes ...\n")
    report = set_report("mine", work, claims)
    (claim,) = report["claims"]
    assert claim["default"]["verdict"] == "reproduced"
    assert claim["variant"] is None
    assert claim["not_judged"] == "run 'z' failed: T2 compares the regimes ..."
    write_stamped_record(root, "z", config={"datasets": ["mine"]},
                         numbers={"transfer": {"mine": node}})  # fmt: skip
    (root / "runs" / "z" / ERROR_FILENAME).unlink()
    (claim,) = set_report("mine", work, claims)["claims"]
    assert claim["variant"]["verdict"] == "reproduced"
    assert claim["variant"]["data"] == {"transfer_1": "mine"}
    args = ["verdicts", "--dataset", "mine", "--work", str(work), "--claims", str(claims)]
    assert cli.main(args) == 0
    assert "1 claims judged, 0 not judged" in capsys.readouterr().out


def test_a_set_holds_the_work_directory_shared_and_its_own_folder_alone() -> None:
    """Two sets (or a reader) may run on one work directory at once: each writes only its own
    folder, which the runner locks; the work directory itself is only read."""
    from regime_core.cli import build_parser, lock_mode

    parsed = build_parser().parse_args(["reproduce", "--dataset", "mine"])
    assert lock_mode(parsed) == "shared"
    # a default reproduce too: its runner takes the runs' lock and commits each run under the
    # records' lock, so it holds the work directory shared (regime_core.runner.reproduce)
    assert lock_mode(build_parser().parse_args(["reproduce"])) == "shared"
