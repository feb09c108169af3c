"""``regime reproduce --set RUN.PARAM=VALUE``: parsing, every refusal (exit 2, the JSON error
object with --json), and a real variant of the toy world (TF-IDF, 20 questions: seconds) landing
in the folder a hand-run papermill execution with the same parameters lands in, with the
default results, stamps and book/executed untouched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import refused

from regime_core import cli, paths
from regime_core.experiments.zero_shot_transfer import TRAINED_ROUTER_FILE
from regime_core.registry import start
from regime_core.runner import variants
from regime_core.runner.declarations import load_declarations, notebook_defaults
from regime_core.runner.reproduce import plan
from regime_core.runner.runs import RUNS
from regime_core.runner.variants import group_settings, parse_setting, resolve_variants

REPO = Path(__file__).resolve().parent.parent


def _json_error(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    """Run ``regime reproduce WORDS --json``, expect exit 2, return the JSON error's message."""
    assert cli.main(["reproduce", *words, "--json"]) == 2
    out, err = capsys.readouterr()
    payload = json.loads(out)  # one object, nothing else on stdout
    assert payload["kind"] == "ValueError" and payload["command"] == "reproduce", payload
    assert "regime: error:" in err
    return str(payload["error"])


# --- parsing -------------------------------------------------------------------------------------


def test_a_value_is_read_as_yaml() -> None:
    assert parse_setting("t3_brel_knockout.alpha=0.5").value == 0.5
    assert parse_setting("t3_brel_knockout.encoders=[minilm]").value == ["minilm"]
    assert parse_setting("t3_brel_knockout.encoders=[minilm, tfidf]").value == ["minilm", "tfidf"]
    assert parse_setting("toyworld.real_dataset=null").value is None
    assert parse_setting("t3_brel_knockout.pool=corpus").value == "corpus"
    assert parse_setting("t3_brel_knockout.sample_size=40").value == 40
    setting = parse_setting(" my-run.k = 5 ")
    assert (setting.run_id, setting.parameter, setting.value) == ("my-run", "k", 5)
    assert parse_setting("x.note=a=b").value == "a=b"  # the first '=' splits


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("t3_brel_knockout.alpha", "expected RUN.PARAM=VALUE"),
        ("alpha=0.5", "expected RUN.PARAM=VALUE"),
        ("t3_brel_knockout.=0.5", "expected RUN.PARAM=VALUE"),
        (".alpha=0.5", "expected RUN.PARAM=VALUE"),
        ("t3_brel_knockout.al-pha=0.5", "expected RUN.PARAM=VALUE"),
        ("t3_brel_knockout.alpha=", "no value after '='"),
        ("t3_brel_knockout.encoders=[minilm", "is not plain YAML data (not valid YAML"),
        ("t3_brel_knockout.alpha=.nan", "not a finite number"),
        ("t3_brel_knockout.seed=2020-01-01", "is not plain YAML data"),
        ("t3_brel_knockout.pool=*x", "alias"),
    ],
)
def test_a_malformed_item_is_named(item: str, message: str) -> None:
    with refused(ValueError, names=(f"--set {item!r}", message)):
        parse_setting(item)


def test_a_parameter_set_twice_is_refused_and_items_group_by_run() -> None:
    grouped = group_settings(["a.x=1", "b.x=2", "a.y=3"])
    assert {run: [s.parameter for s in found] for run, found in grouped.items()} == {
        "a": ["x", "y"],
        "b": ["x"],
    }
    with refused(ValueError, names=("--set 'a.x=2'", "--set 'a.x=1'")):
        group_settings(["a.x=1", "a.x=2"])


# --- refusals, through the command ---------------------------------------------------------------


def test_an_unknown_run_or_parameter_is_named_with_what_there_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = ["--work", str(tmp_path)]
    message = _json_error(capsys, "--set", "nope.alpha=1", *work)
    assert message.startswith("--set 'nope.alpha=1': reproduce.yml declares no run 'nope'")
    assert "t3_brel_knockout" in message
    message = _json_error(capsys, "--set", "t3_brel_knockout.colour=red", *work)
    assert "04_t3_brel_knockout.ipynb (run t3_brel_knockout) has no parameter 'colour'" in message
    assert "its parameters are datasets, encoders, pool, alpha" in message
    assert "output_dir" not in message and "work_dir" not in message
    message = _json_error(capsys, "--set", "t3_brel_knockout.output_dir=x", *work)
    assert "output_dir is not set here" in message and "<work>/variants" in message
    assert "--work" in _json_error(capsys, "--set", "t3_brel_knockout.work_dir=x", *work)
    assert "expected RUN.PARAM=VALUE" in _json_error(capsys, "--set", "alpha=0.5", *work)
    # nothing was written but the locks (the work directory's, the runs')
    assert sorted(p.name for p in tmp_path.iterdir()) == [".regime-runs.lock", ".regime.lock"]


def test_a_value_the_config_rejects_names_its_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    message = _json_error(
        capsys,
        "--set", "t3_brel_knockout.k=5",
        "--set", "t3_brel_knockout.alpha=abc",
        "--work", str(tmp_path),
    )  # fmt: skip
    assert message.startswith("--set 't3_brel_knockout.alpha=abc' (run t3_brel_knockout")
    assert all(name in message for name in ("T3Config", "'alpha'", "'abc'"))
    message = _json_error(capsys, "--set", "toyworld.encoder=nope", "--work", str(tmp_path))
    assert message.startswith("--set 'toyworld.encoder=nope' (run toyworld, profile default)")


def test_options_that_do_not_go_with_set_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    item = ["--set", "toyworld.seed=1", "--work", str(tmp_path)]
    assert "--only does not go with --set" in _json_error(capsys, *item, "--only", "toyworld")
    assert "--force does not go with --set" in _json_error(capsys, *item, "--force")
    assert "--jobs does not go with --set" in _json_error(capsys, *item, "--jobs", "2")


def test_an_unknown_profile_is_refused_before_any_variant_is_resolved(tmp_path: Path) -> None:
    """Where a variant starts is where its profile is checked (parameters_for trusts it)."""
    decl = load_declarations()
    with refused(ValueError, names=("'huge'", "quick")):
        variants.plan_variants(decl, ["toyworld.seed=1"], profile="huge", work=tmp_path)
    with refused(ValueError, names=("'huge'",)):
        plan(profile="huge", work=tmp_path)


def test_an_upstream_run_that_is_not_current_is_named_with_its_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    item = "zero_shot_transfer.alpha=0.3"
    message = _json_error(capsys, "--set", item, "--profile", "quick", "--work", str(tmp_path))
    assert message.startswith(f"--set {item!r}: run zero_shot_transfer reads the record of")
    assert "upstream run router_train, which is not current" in message
    assert message.endswith(
        f"regime reproduce --only router_train --profile quick --work {tmp_path}"
    )
    # a variant of a run and of its upstream run at once would read the default, not the variant
    message = _json_error(
        capsys, "--set", item, "--set", "router_train.alpha=0.3", "--work", str(tmp_path)
    )
    assert "reads the default record of router_train" in message and "separate" in message
    # with the upstream run current, the plan names the folder
    monkeypatch.setattr(variants, "stale_reasons", lambda *_args: [])
    assert cli.main(["reproduce", "--plan", "--set", item, "--work", str(tmp_path), "--json"]) == 0
    (planned,) = json.loads(capsys.readouterr().out)["variants"]
    assert planned["run"] == "zero_shot_transfer" and planned["set"] == {"alpha": 0.3}
    assert (
        planned["verdicts"] == f"regime verdicts --variant {planned['variant']} --work {tmp_path}"
    )
    assert not (tmp_path / "variants").exists()  # --plan runs nothing


def test_the_folder_is_the_one_the_notebook_itself_chooses(tmp_path: Path) -> None:
    """The hash --set computes is the one ``start`` computes in the notebook run by hand
    (output_dir None) from its parameters cell and the parameters passed."""
    decl = load_declarations()
    items = ["t3_brel_knockout.alpha=0.5", "t3_brel_knockout.encoders=[minilm]"]
    (variant,) = resolve_variants(decl, items, "quick", tmp_path)
    notebook = RUNS["t3_brel_knockout"].notebook
    by_hand = {**notebook_defaults(notebook), "sample_size": 40, "bootstrap_resamples": 500}
    opened = start(
        "t3_brel_knockout",
        {**by_hand, "alpha": 0.5, "encoders": ["minilm"], "work_dir": str(tmp_path)},
    )
    assert variant.folder == opened.output_dir
    assert variant.parameters == {**decl.runs["t3_brel_knockout"].parameters_for("quick"),
                                  "alpha": 0.5, "encoders": ["minilm"]}  # fmt: skip
    (default,) = resolve_variants(decl, ["t3_brel_knockout.alpha=0.25"], "quick", tmp_path)
    assert any("equal the default run's" in note for note in default.notes)


def _router(path: Path, weight: float) -> Path:
    path.write_text(json.dumps({"weights": [weight]}), encoding="utf-8")
    return path


def test_a_router_file_is_part_of_the_variant_s_identity(tmp_path: Path) -> None:
    """Issue 44: ``--set zero_shot_transfer.router_file=<another router>`` changes no config
    field, yet the variant gets its own folder, named by the file's content, and a label
    naming the router by its hash and origin; another router (or the same path rewritten)
    another folder; the notebook run by hand lands in the same folder and writes the label."""
    decl = load_declarations()
    work = tmp_path / "work"
    (work / "results" / "router_train").mkdir(parents=True)
    (work / "results" / "router_train" / TRAINED_ROUTER_FILE).write_text("{}")
    first = _router(tmp_path / "first.json", 0.5)
    (default,) = resolve_variants(decl, ["zero_shot_transfer.router_file=trained"], "quick", work)
    assert any("repeats the default" in note for note in default.notes)
    assert default.differences() == {}
    (mine,) = resolve_variants(decl, [f"zero_shot_transfer.router_file={first}"], "quick", work)
    assert mine.config_hash == default.config_hash  # the config is the same...
    assert mine.folder != default.folder  # ...the identity is not
    assert mine.notes == ()
    change = mine.differences()["router_file"]
    assert change["variant"].startswith(f"{first} (sha256 ")
    assert change["default"].startswith("trained (sha256 ")
    assert f"<work>/results/router_train/{TRAINED_ROUTER_FILE})" in change["default"]
    second = _router(tmp_path / "second.json", 0.7)
    (other,) = resolve_variants(decl, [f"zero_shot_transfer.router_file={second}"], "quick", work)
    assert other.folder not in (mine.folder, default.folder)
    _router(first, 0.9)  # the same path, other content: another identity
    (rewritten,) = resolve_variants(
        decl, [f"zero_shot_transfer.router_file={first}"], "quick", work
    )
    assert rewritten.folder != mine.folder
    (again,) = resolve_variants(decl, [f"zero_shot_transfer.router_file={first}"], "quick", work)
    assert again.folder == rewritten.folder  # the same inputs, the same folder
    # the notebook run by hand with the same parameters: the same folder, labelled
    quick = decl.runs["zero_shot_transfer"].parameters_for("quick")
    namespace = {**notebook_defaults(RUNS["zero_shot_transfer"].notebook), **quick,
                 "router_file": str(first), "work_dir": str(work)}  # fmt: skip
    opened = start("zero_shot_transfer", namespace)
    assert opened.output_dir == again.folder
    from regime_core.runner.verdicts import identity_differences

    label = identity_differences(opened.output_dir)
    assert set(label) == {"router_file"} and str(first) in label["router_file"]["variant"]


def test_an_upstream_record_and_a_train_record_are_part_of_the_identity(tmp_path: Path) -> None:
    """The record a variant reads upstream, and the train_record it names, count by content."""
    decl = load_declarations()
    items = ["zero_shot_transfer.train_record=x.json"]
    (before,) = resolve_variants(decl, items, "quick", tmp_path)
    (tmp_path / "x.json").write_text("{}")
    (named,) = resolve_variants(decl, [f"zero_shot_transfer.train_record={tmp_path / 'x.json'}"],
                                "quick", tmp_path)  # fmt: skip
    assert named.folder != before.folder and "train_record" in named.differences()
    (plain,) = resolve_variants(decl, ["ablations.sample_size=50"], "quick", tmp_path)
    upstream = tmp_path / "results" / "router_train" / "record.json"  # ablations reads it
    upstream.parent.mkdir(parents=True)
    upstream.write_text('{"name": "router_train"}')
    (after,) = resolve_variants(decl, ["ablations.sample_size=50"], "quick", tmp_path)
    assert after.config_hash == plain.config_hash and after.folder != plain.folder


@pytest.mark.parametrize("run_id", sorted(RUNS))
def test_every_run_s_variant_folder_is_the_one_its_notebook_chooses(
    run_id: str, tmp_path: Path
) -> None:
    """For every registered run, a variant under the quick profile lands where ``start`` (the
    notebook's first call, run by hand: output_dir None) puts the same parameters."""
    decl = load_declarations()
    quick = decl.runs[run_id].parameters_for("quick")
    name, value = next(iter(quick.items()))
    (variant,) = resolve_variants(decl, [f"{run_id}.{name}={json.dumps(value)}"], "quick", tmp_path)
    namespace = {**notebook_defaults(RUNS[run_id].notebook), **quick, "work_dir": str(tmp_path)}
    assert variant.folder == start(run_id, namespace).output_dir


# --- a real variant ------------------------------------------------------------------------------


def _declarations(tmp_path: Path) -> Path:
    """The toy world's declaration, beside which nothing may be written."""
    spec = yaml.safe_load((REPO / "reproduce.yml").read_text())["runs"]["toyworld"]
    body = {
        "runs": {"toyworld": {**spec, "notebook": str(REPO / spec["notebook"])}},
    }
    path = tmp_path / "reproduce.yml"
    path.write_text(yaml.safe_dump(body))
    return path


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_a_variant_runs_into_its_folder_and_leaves_the_default_run_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    default = work / "results" / "toyworld"  # a default run's files, which must stay as they are
    default.mkdir(parents=True)
    (default / "record.json").write_text('{"name": "toyworld"}\n')
    (work / "runs" / "toyworld").mkdir(parents=True)
    (work / "runs" / "toyworld" / "stamp.json").write_text("{}\n")
    before = _tree(work)
    declarations = _declarations(tmp_path)
    argv = ["reproduce", "--declarations", str(declarations), "--work", str(work)]
    sets = ["--set", "toyworld.n_questions=20", "--set", "toyworld.real_dataset=null"]
    assert cli.main([*argv, "--profile", "quick", *sets, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (ran,) = report["variants"]
    assert ran["status"] == "ran" and report["ok"], ran
    folder = Path(ran["folder"])
    assert folder == paths.variant_dir("toyworld", ran["variant_hash"], work.resolve())
    record = json.loads((folder / "record.json").read_text())
    assert (record["name"], record["config_hash"]) == ("toyworld", ran["config_hash"])
    assert record["config"]["n_questions"] == 20 and record["config"]["encoder"] == "tfidf"
    assert {"regimes_toy.svg", "knockout.svg"} <= {p.name for p in folder.iterdir()}
    assert Path(ran["executed"]) == folder / "toyworld.ipynb" and Path(ran["executed"]).is_file()
    assert ran["verdicts"] is None  # the toy world has no claim to judge
    # the default run's results and stamp untouched; nothing in executed/ or book/executed
    assert {k: v for k, v in _tree(work).items() if not k.startswith(("variants/", "embeddings/"))
            and not k.endswith(".lock")} == before  # fmt: skip
    assert not (work / "executed").exists() and not (tmp_path / "book").exists()

    # the text output says where it went
    assert cli.main([*argv, "--profile", "quick", *sets, "--plan"]) == 0
    text = capsys.readouterr().out
    assert f"variant toyworld/{ran['variant_hash']} (would run; profile quick;" in text
    assert str(folder) in text and "has no claim" in text


def test_a_notebook_run_by_hand_lands_in_the_folder_set_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same parameters by hand, as the README says (papermill, no -p output_dir: the quick
    profile's encoder and real_sample_size, then the two values set): the folder --set names,
    with the config hash --set computed."""
    by_hand = tmp_path / "by-hand"
    notebook = RUNS["toyworld"].notebook
    hand = [
        sys.executable, "-m", "papermill", str(notebook), str(tmp_path / "hand.ipynb"),
        "-p", "encoder", "tfidf", "-p", "real_sample_size", "40", "-p", "n_questions", "20",
        "-y", "real_dataset: null", "-k", "python3", "--cwd", str(notebook.parent),
        "--no-progress-bar", "--log-level", "WARNING",
    ]  # fmt: skip
    env = {**os.environ, "REGIME_WORK_DIR": str(by_hand), "MPLBACKEND": "Agg"}
    subprocess.run(hand, check=True, env=env, capture_output=True)
    (hand_record,) = (by_hand / "variants").glob("*/*/record.json")
    work = tmp_path / "work"
    argv = ["reproduce", "--declarations", str(_declarations(tmp_path)), "--work", str(work)]
    sets = ["--set", "toyworld.n_questions=20", "--set", "toyworld.real_dataset=null"]
    assert cli.main([*argv, "--profile", "quick", *sets, "--plan", "--json"]) == 0
    (planned,) = json.loads(capsys.readouterr().out)["variants"]
    folder = Path(planned["folder"])
    assert hand_record.parent.relative_to(by_hand) == folder.relative_to(work.resolve())
    assert json.loads(hand_record.read_text())["config_hash"] == planned["config_hash"]


def test_the_text_report_ends_with_the_verdicts_command(tmp_path: Path) -> None:
    decl = load_declarations()
    found: list[Any] = resolve_variants(decl, ["t3_brel_knockout.alpha=0.5"], "default", tmp_path)
    report = variants.VariantReport("default", tmp_path, tmp_path, found, [], planned=True)
    text = report.table()
    assert f"judge it beside the default: regime verdicts --variant {found[0].name}" in text
    assert text.rstrip().endswith(f"--work {tmp_path}")
    assert found[0].name == f"t3_brel_knockout/{found[0].variant_hash}"


def test_what_an_interrupted_variant_left_is_cleaned_up_at_the_next_start(tmp_path: Path) -> None:
    from regime_core.runner.execution import clean_interrupted

    folder = paths.variant_dir("toyworld", "0123456789ab", tmp_path)
    folder.mkdir(parents=True)
    dead = 2**22 + 12345  # above the kernel's default pid_max: no process has it
    (folder / "child.pid").write_text(f"{dead}\n")
    (folder / f".parameters.yml.{dead}.abc.tmp").write_text("x")
    (folder / "record.json").write_text("{}\n")
    said: list[str] = []
    clean_interrupted(load_declarations(_declarations(tmp_path)), tmp_path, said.append)
    assert sorted(p.name for p in folder.iterdir()) == ["record.json"]
    assert any("removed" in line for line in said)


def test_doctests_pass() -> None:
    import doctest

    assert doctest.testmod(variants).failed == 0


def test_a_notebook_default_that_is_no_literal_is_named(tmp_path: Path) -> None:
    notebook = json.loads(RUNS["toyworld"].notebook.read_text(encoding="utf-8"))
    (cell,) = [c for c in notebook["cells"] if "parameters" in c["metadata"].get("tags", [])]
    file = tmp_path / "nb.ipynb"
    cell["source"] = "output_dir = None\nseed = 0\nseed: int = 1\nn = len([1, 2])\n"
    file.write_text(json.dumps(notebook))
    with refused(ValueError, names=("'n'",)):
        notebook_defaults(file)
    cell["source"] = "output_dir = None\nseed = 0\nseed: int = 1\n"
    file.write_text(json.dumps(notebook))
    assert notebook_defaults(file) == {"output_dir": None, "seed": 1}  # the last assignment


def test_the_verdicts_label_names_the_router_by_hash_and_origin() -> None:
    """``regime verdicts --variant`` prints each difference, an input's as its value, hash and
    origin (what :mod:`regime_core.runner.identity` wrote beside the record)."""
    from regime_core.cli.verdicts import variant_text
    from regime_core.runner.identity import input_differences

    default = {"router_file": {"value": "trained", "sha256": "a" * 64, "origin": "<work>/r.json"}}
    mine = {"router_file": {"value": "/x/r2.json", "sha256": "b" * 64, "origin": "/x/r2.json"}}
    report = {
        "variant": {"run": "zero_shot_transfer", "path": "/w/variants/zero_shot_transfer/abc",
                    "differs": input_differences(default, mine)},
        "claims": [],
    }  # fmt: skip
    text = variant_text(report)
    assert text.splitlines()[0].startswith("variant zero_shot_transfer/abc ")
    assert (
        "differs from the default: router_file 'trained (sha256 aaaaaaaaaaaa, <work>/r.json)' "
        "-> '/x/r2.json (sha256 bbbbbbbbbbbb, /x/r2.json)'"
    ) in text
