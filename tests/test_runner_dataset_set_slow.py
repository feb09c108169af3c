"""Issue 44's researcher path, end to end: the toy world exported, prepared under new names (once
with ``--fill-b-rel``), ``regime reproduce --dataset NAME`` run on each, and every claim judged
or "not judged: <reason>", with no traceback and the default records untouched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import share_embedding_store, write_stamped_record

from regime_core import cli
from regime_core.paper import load_claims
from regime_core.runner.dataset_set import set_dir

pytestmark = pytest.mark.slow


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.rglob("*"))
        if f.is_file()
    }


@pytest.mark.parametrize("fill", [False, True], ids=["sentences", "fill-b-rel"])
def test_reproduce_dataset_on_the_exported_toy_world(
    tmp_path: Path, fill: bool, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    work, exported = tmp_path / "work", tmp_path / "toy.jsonl"
    name = "mytoyfill" if fill else "mytoy"
    assert cli.main(["data", "export", "toyworld", "--jsonl", str(exported),
                     "--work", str(work)]) == 0  # fmt: skip
    prepare = ["data", "prepare", "--jsonl", str(exported), "--name", name, "--work", str(work)]
    assert cli.main([*prepare, *(["--fill-b-rel"] if fill else [])]) == 0
    share_embedding_store(work)  # the toy world's texts, encoded once for both parameters
    # a default record stands in for the default run: the set must leave it as it is
    write_stamped_record(work, "t1_auc_margin", config={"datasets": ["hotpotqa"]},
                         numbers={"summary": {"cells_fitted": 1}})  # fmt: skip
    before = _digests(work / "results")
    capsys.readouterr()

    args = ["reproduce", "--profile", "quick", "--dataset", name, "--train-dataset", "toyworld"]
    code = cli.main([*args, "--work", str(work), "--json"])
    ran = capsys.readouterr()
    report = json.loads(ran.out)
    assert "Traceback" not in ran.err
    by_run = {r["run"]: r for r in report["runs"]}
    assert by_run["data_regimes"]["status"] == "ran"
    t2 = by_run["t2_regime_decomposition"]
    if t2["status"] == "failed":  # data where no regime is separated: it says what they lack
        assert "--fill-b-rel" in t2["error"]
    # a run that stops says why, in words, never with a bare traceback
    for run in report["runs"]:
        assert run["status"] in ("ran", "skipped") or run["error"], run["run"]
    assert code == (0 if report["ok"] else 1)
    assert _digests(work / "results") == before  # the default records untouched
    assert (set_dir(name, work) / "results" / "data_regimes" / "record.json").is_file()

    assert cli.main(["verdicts", "--dataset", name, "--work", str(work), "--json"]) == 0
    judged = json.loads(capsys.readouterr().out)
    ids = [c.id for c in load_claims()]
    assert [c["id"] for c in judged["claims"]] == ids
    for claim in judged["claims"]:
        if claim["variant"] is None:
            assert claim["not_judged"], claim["id"]  # a reason, never an empty one
        else:
            assert claim["variant"]["verdict"], claim["id"]
    variant = {c["id"]: c["variant"] for c in judged["claims"]}
    # the first transfer set is the dataset of one's own; the second is not filled
    if variant["router_musique"] is not None:
        assert variant["router_musique"]["data"] == {"transfer_1": name}
    assert variant["router_hotpotqa"] is None
    assert cli.main(["verdicts", "--dataset", name, "--work", str(work)]) == 0
    assert "Traceback" not in capsys.readouterr().err
