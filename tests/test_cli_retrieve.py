"""``regime retrieve`` on a tiny prepared fixture with the TF-IDF encoder (fast, no model)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from builders import two_hop_example, write_prepared_examples
from helpers import settings, warned

from regime_core import cli, config, paths
from regime_core.data import corpus_passages
from regime_core.encoders import EmbeddingStore, get_encoder
from regime_core.retrieval import document_text, retrieve
from regime_core.schema import Example, Passage

# A prepared dataset name (toyworld is generated, not read); the questions are invented here.
DATASET = "musique"


def _passages() -> dict[str, Passage]:
    return {
        "mill": Passage.make(
            "Harrow Mill", ["Harrow Mill grinds oats.", "It was built by Ilsa Fenn.", "It is tall."]
        ),
        "fenn": Passage.make("Ilsa Fenn", ["Ilsa Fenn was a mason born in Corrib."]),
        "corrib": Passage.make("Corrib", ["Corrib is a lake town known for boats."]),
        "oats": Passage.make("Oat", ["Oats are a cereal grain."]),
        "boat": Passage.make("Corrib boat", ["The Corrib boat has a flat hull."]),
        "bell": Passage.make("Tolland Bell", ["Tolland Bell was cast by Rook Amsel."]),
        "amsel": Passage.make("Rook Amsel", ["Rook Amsel was a founder from Varn."]),
        "varn": Passage.make("Varn", ["Varn lies on the river Ode."]),
    }


def _example(qid: str, split: str, question: str, pool: list[Passage], **kw: Any) -> Example:
    """Bridge ``pool[1]``, target ``pool[-1]``, B_rel the bridge's first sentence unless ``kw``
    says otherwise; the pool in the order given."""
    bridge, target = pool[1], pool[-1]
    fields = {"relation_sentence": 0, "relation_source": "synthetic", **kw}
    example = two_hop_example(
        question,
        bridge,
        target,
        hop2_entity=target.title,
        dataset=DATASET,
        example_id=qid,
        **fields,
    )
    return dataclasses.replace(example, pool=tuple(pool), split=split)


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    """A work directory holding a hand-made prepared ``musique.jsonl`` (3 dev, 1 train)."""
    p = _passages()
    examples = [
        _example(
            "d1",
            "dev",
            "Where was the builder of Harrow Mill born?",
            [p["oats"], p["mill"], p["corrib"], p["fenn"]],
            relation_sentence=1,
        ),
        _example(
            "d2",
            "dev",
            "What hull does the boat of the town where Ilsa Fenn was born have?",
            [p["corrib"], p["fenn"], p["oats"], p["boat"]],
            relation_sentence=None,  # no gold B_rel
            relation_source="none",
        ),
        _example(
            "d3",
            "dev",
            "Where was the caster of Tolland Bell from?",
            [p["varn"], p["bell"], p["boat"], p["amsel"]],
        ),
        _example("t1", "train", "Which river flows by Varn?", [p["oats"], p["amsel"], p["varn"]]),
    ]
    prepared = paths.prepared_dir(tmp_path)
    prepared.mkdir(parents=True)
    lines = [json.dumps(ex.to_dict()) for ex in examples]
    write_prepared_examples(prepared, DATASET, ("\n".join(lines) + "\n").encode("utf-8"))
    return tmp_path


@pytest.fixture(autouse=True)
def _only_retrieve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register only this command, so the test does not depend on the other commands' modules."""
    monkeypatch.setattr(cli, "SUBCOMMAND_MODULES", ("retrieve",))


def _run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, object]:
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # exactly one JSON object
    return json.loads(out)


def test_retrieve_prints_one_json_object_matching_the_api(work, capsys):
    argv = ["retrieve", DATASET, "--arm", "union", "--encoder", "tfidf", "--work", str(work)]
    result = _run_json(capsys, [*argv, "--json"])
    expected_keys = {"n", "dataset", "arm", "encoder", "pool", "alpha", "split", "n_missing_b_rel"}
    assert expected_keys | {f"hit@{k}" for k in config.K_VALUES} | {"mrr"} <= set(result)
    assert result["dataset"] == DATASET and result["split"] == "dev"
    assert result["arm"] == "union" and result["encoder"] == "tfidf"
    assert result["pool"] == config.POOL_MODE and result["alpha"] == config.ALPHA
    # three dev questions, one without gold B_rel: counted, excluded from n
    assert result["n"] == 2 and result["n_missing_b_rel"] == 1 and result["n_examples"] == 3

    from regime_core.data import load_examples

    examples = load_examples(DATASET, split="dev", work=work)
    encoder = get_encoder("tfidf", corpus=[document_text(p) for p in corpus_passages(examples)])
    ranking = retrieve(
        examples,
        "union",
        settings(),
        encoder=encoder,
        store=EmbeddingStore(paths.embeddings_dir(work)),
        depth=10,
    )
    ranks = ranking.target_ranks
    for k in config.K_VALUES:
        assert result[f"hit@{k}"] == pytest.approx(float(np.mean(ranks <= k)))
    assert result["mrr"] == pytest.approx(float(np.mean(1.0 / ranks)))
    # hit@k never decreases with k and is a fraction
    hits = [result[f"hit@{k}"] for k in config.K_VALUES]
    assert hits == sorted(hits) and hits[0] >= 0 and hits[-1] <= 1


def test_retrieve_options_and_run_file(work, capsys, tmp_path):
    run_file = tmp_path / "runs" / "q.run"
    result = _run_json(
        capsys,
        [
            "retrieve",
            DATASET,
            "--arm",
            "q",
            "--encoder",
            "tfidf",
            "--pool",
            "corpus",
            "--k",
            "2",
            "--split",
            "train",
            "--work",
            str(work),
            "--run-file",
            str(run_file),
            "--json",
        ],
    )
    assert result["n"] == 1 and result["split"] == "train" and result["pool"] == "corpus"
    assert result["n_missing_b_rel"] == 0
    lines = run_file.read_text().splitlines()
    assert len(lines) == 2  # depth --k
    assert [line.split()[3] for line in lines] == ["1", "2"]
    qrels = Path(f"{run_file}.qrels").read_text().split()
    assert qrels[0] == "t1" and qrels[3] == "1"
    first_hit = float(lines[0].split()[2] == qrels[2])
    assert result["hit@1"] == first_hit


def _outside_mrr(run_file: Path) -> float:
    """The MRR an outside evaluator reads from a run file and its qrels (trec_eval's
    recip_rank: 1 / the rank of the first relevant line, 0 when none is in the file)."""
    qrels = Path(f"{run_file}.qrels").read_text().splitlines()
    target = {q: pid for q, _, pid, _ in (line.split() for line in qrels)}
    first: dict[str, int] = {}
    for line in run_file.read_text().splitlines():
        qid, _, pid, rank, *_ = line.split()
        if pid == target[qid]:
            first.setdefault(qid, int(rank))
    return sum(1 / first[q] if q in first else 0.0 for q in target) / len(target)


def test_the_run_file_holds_every_candidate_so_an_outside_mrr_equals_ours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33: a run file cut at depth 10 made an outside evaluator's MRR disagree with ours;
    by default it holds the whole candidate list (MRR reads the full ranking)."""
    filler = [
        Passage.make(f"Filler {i}", [f"Harrow Mill grinds oats number {i} every day."])
        for i in range(12)
    ]
    target = Passage.make("Corrib", ["Corrib is a lake town known for boats."])
    bridge = Passage.make("Ilsa Fenn", ["Ilsa Fenn was a mason born in Corrib."])
    example = _example(
        "d1", "dev", "Where does Harrow Mill grind its oats?", [filler[0], bridge, *filler[1:],
        target],
    )  # fmt: skip
    prepared = paths.prepared_dir(tmp_path)
    prepared.mkdir(parents=True)
    write_prepared_examples(prepared, DATASET, (json.dumps(example.to_dict()) + "\n").encode())
    run_file = tmp_path / "q.run"
    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", str(tmp_path)]
    result = _run_json(capsys, [*argv, "--run-file", str(run_file), "--json"])
    assert result["mrr"] < 1 / 10  # the target ranks below 10: a depth-10 file would miss it
    assert len(run_file.read_text().splitlines()) == 13 and result["run_depth"] == "all"
    assert _outside_mrr(run_file) == pytest.approx(result["mrr"])
    # a depth asked for cuts the file, never our metrics
    cut = _run_json(capsys, [*argv, "--run-file", str(run_file), "--depth", "10", "--json"])
    assert cut["mrr"] == result["mrr"] and _outside_mrr(run_file) == 0.0


def test_retrieve_human_output(work, capsys):
    argv = ["retrieve", DATASET, "--arm", "knockout", "--encoder", "tfidf"]
    assert cli.main([*argv, "--work", str(work)]) == 0
    assert "questions ranked: 2 of 3" in capsys.readouterr().out  # d2 has no B_rel
    argv = [*argv, "--knockout-single", "exclude"]
    assert cli.main([*argv, "--work", str(work)]) == 0
    out = capsys.readouterr().out
    assert "questions ranked: 1 of 3" in out  # and d3's bridge is B_rel alone
    assert "hit@5" in out


def test_retrieve_reports_user_errors(work, capsys, tmp_path):
    empty = str(tmp_path / "empty")  # no prepared data there
    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", empty]
    assert cli.main(argv) == 2
    assert "regime data prepare" in capsys.readouterr().err
    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", str(work)]
    with pytest.raises(SystemExit) as exit_:  # a usage error: the depth of the run file
        cli.main([*argv, "--k", "0"])
    assert exit_.value.code == 2 and "--depth/--k" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # a usage error: argparse's choices
        cli.main([*argv, "--scorer", "gpu"])
    assert exit_.value.code == 2 and "--scorer" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["retrieve", DATASET, "--arm", "both"])


@pytest.mark.parametrize("alpha", ["-1", "nan", "inf", "1e39", "1e19", "abc"])
def test_retrieve_refuses_alpha_at_parsing_naming_it(work, capsys, alpha):
    # 1e39 overflows float32; 1e19 fits, but |q + α·b|² does not (regime_core.limits)
    argv = ["retrieve", DATASET, "--arm", "union", "--encoder", "tfidf", "--work", str(work)]
    with pytest.raises(SystemExit) as exit_:
        cli.main([*argv, "--alpha", alpha])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "argument --alpha" in err
    assert "[0, 1e+18]" in err or "not a number" in err


def test_retrieve_accepts_the_largest_alpha_and_ranks_by_the_bridge_side(work, capsys):
    argv = ["retrieve", DATASET, "--arm", "union", "--encoder", "tfidf", "--work", str(work)]
    assert cli.main([*argv, "--alpha", "1e18", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["alpha"] == 1e18 and 0 <= result["hit@5"] <= 1


@pytest.mark.parametrize("where", ["directory", "under_a_file"])
def test_retrieve_bad_run_file_is_an_error_before_any_work(
    work, capsys, tmp_path, monkeypatch, where
):
    from regime_core import retrieval

    def never(*args, **kwargs):
        raise AssertionError("retrieval ran although the run file cannot be written")

    monkeypatch.setattr(retrieval, "retrieve_arms", never)
    (tmp_path / "a_file").write_text("x")
    target = tmp_path if where == "directory" else tmp_path / "a_file" / "q.run"
    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", str(work)]
    assert cli.main([*argv, "--run-file", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"--run-file: cannot write {target}" in err
    assert ("is a directory" if where == "directory" else "is not a directory") in err


# --- issue 22: outputs only where they should go -----------------------------------------------


def _work_with_id(tmp_path: Path, qid: str) -> Path:
    p = _passages()
    pool = [p["oats"], p["mill"], p["corrib"], p["fenn"]]
    example = _example(qid, "dev", "Who built Harrow Mill?", pool, relation_sentence=1)
    prepared = paths.prepared_dir(tmp_path / "w")
    prepared.mkdir(parents=True)
    write_prepared_examples(prepared, DATASET, (json.dumps(example.to_dict()) + "\n").encode())
    return tmp_path / "w"


@pytest.mark.parametrize("qid", ["d 1", "d\t1", "d\x001", "d\n1", "d\u20281", "d\x1f"])
def test_ids_that_break_the_trec_columns_are_refused_before_anything_is_written(
    tmp_path, capsys, monkeypatch, qid
):
    from regime_core import retrieval

    work = _work_with_id(tmp_path, qid)

    def never(*args, **kwargs):
        raise AssertionError("retrieval ran although the run file cannot hold the ids")

    monkeypatch.setattr(retrieval, "retrieve_arms", never)
    run = tmp_path / "out" / "q.run"
    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", str(work)]
    assert cli.main([*argv, "--run-file", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"query id {qid!r}" in err and "whitespace or control characters" in err
    assert not (tmp_path / "out").exists()


def test_a_run_file_that_is_a_fifo_or_a_dangling_link_is_refused_before_any_work(
    work, tmp_path, capsys, monkeypatch
):
    import os

    from regime_core import retrieval

    def never(*args, **kwargs):
        raise AssertionError("retrieval ran although the run file cannot be written")

    monkeypatch.setattr(retrieval, "retrieve_arms", never)
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    dangling = tmp_path / "run.link"
    dangling.symlink_to(tmp_path / "nowhere" / "run.trec")
    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", str(work)]
    for target, said in ((fifo, "it is a FIFO"), (dangling, "which does not exist")):
        assert cli.main([*argv, "--run-file", str(target)]) == 2
        assert said in capsys.readouterr().err
    assert fifo.is_fifo() and dangling.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_symlinked_run_file_has_its_target_written_and_stays_a_link(work, tmp_path, capsys):
    real = tmp_path / "runs" / "q.trec"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "q.run"
    link.symlink_to(real)
    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", str(work)]
    result = _run_json(capsys, [*argv, "--run-file", str(link), "--json"])
    assert link.is_symlink() and real.read_text().startswith("d1 Q0 ")
    assert Path(result["qrels_file"]).read_text().startswith("d1 0 ")


@pytest.mark.parametrize("option", ["--work", "--run-file", "--encoder"])
def test_empty_values_are_errors_at_parsing(work, capsys, option):
    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", str(work)]
    with pytest.raises(SystemExit) as exit_:
        cli.main([*argv, option, ""])
    assert exit_.value.code == 2
    assert f"argument {option}: an empty" in capsys.readouterr().err


def test_a_fifo_among_the_shards_does_not_hang_retrieve(work, capsys):
    import os
    import signal

    argv = ["retrieve", DATASET, "--arm", "q", "--encoder", "tfidf", "--work", str(work), "--json"]
    first = _run_json(capsys, argv)
    (store,) = paths.embeddings_dir(work).iterdir()
    os.mkfifo(store / "shard-fifo.emb")
    signal.alarm(30)  # a blocking open would end the test here
    try:
        with warned(UserWarning, names=("shard-fifo.emb",)):
            again = _run_json(capsys, argv)
    finally:
        signal.alarm(0)
    assert again == first and (store / "shard-fifo.emb").is_fifo()
