"""Unit tests of regime_core.experiments.common on a synthetic world with a fake encoder."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from builders import two_hop_example
from helpers import refused, settings

from regime_core.data.regimes import DEFAULT_REGIME_RULES, bridge_entity_mention, regime_table
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.encoders import KNOWN_ENCODERS, EmbeddingStore
from regime_core.experiments.ablations import AblationConfig
from regime_core.experiments.common import ExperimentConfig, compare_arms, table_numbers
from regime_core.experiments.context import Context
from regime_core.experiments.outcomes import (
    collect_outcomes,
    mention_is_title,
    outcome_columns,
    outcome_table,
)
from regime_core.experiments.robustness_grid import RobustnessConfig
from regime_core.experiments.router_train import RouterConfig
from regime_core.experiments.sampling import ids_hash, sample_examples, sample_ids
from regime_core.experiments.zero_shot_transfer import TransferConfig
from regime_core.retrieval.settings import hop2_candidates
from regime_core.schema import Example, Passage


class HashingEncoder:
    """A deterministic bag-of-words encoder: each lower-cased word hashes to one of ``dim``
    buckets; rows are L2-normalised. Enough to make lexical overlap matter."""

    name = "fake-bow"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.calls = 0

    @property
    def identity(self) -> dict[str, Any]:
        return {"kind": "fake-bow", "dim": self.dim}

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace("?", " ").split():
                bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim
                out[i, bucket] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)


@pytest.fixture(scope="module")
def world() -> list[Example]:
    return generate(ToyWorldConfig(n_questions=40, b_dominant_share=0.5))


def _example(bridge_sentences: list[str], target_title: str, entity: str) -> Example:
    bridge = Passage.make("Bridge Page", bridge_sentences)
    target = Passage.make(target_title, [f"{target_title} is a thing."])
    other = Passage.make("Other", ["Nothing here."])
    return two_hop_example(
        "Who made the thing the page talks about?",
        bridge,
        target,
        other,
        native_type="compositional",
        answer="someone",
        hop2_entity=entity,
        hop2_aliases=(target_title,),
        example_id="x1",
    )


# --- sampling ---------------------------------------------------------------------------------


def test_sample_ids_is_seeded_sorted_and_order_free() -> None:
    ids = [f"q{i:03d}" for i in range(100)]
    a = sample_ids(ids, 10, seed=3, stream="hotpotqa")
    b = sample_ids(list(reversed(ids)), 10, seed=3, stream="hotpotqa")
    assert a == b
    assert a == sorted(a) and len(set(a)) == 10
    assert sample_ids(ids, 10, seed=4, stream="hotpotqa") != a
    assert sample_ids(ids, 10, seed=3, stream="musique") != a
    assert sample_ids(ids, None, seed=3) == ids
    assert sample_ids(ids, 500, seed=3) == ids


def test_sample_ids_rejects_duplicates() -> None:
    with pytest.raises(ValueError, match="not unique"):
        sample_ids(["a", "a", "b"], 1, seed=0)


def test_ids_hash_depends_on_the_set_only() -> None:
    assert ids_hash(["b", "a"]) == ids_hash(["a", "b"])
    assert ids_hash(["a", "b"]) != ids_hash(["a", "c"])
    assert len(ids_hash(["a"])) == 16


# --- config -----------------------------------------------------------------------------------


def test_config_accepts_lists_and_hashes_stably() -> None:
    a = ExperimentConfig(datasets=["musique"], encoders=["minilm"])
    b = ExperimentConfig(datasets=("musique",), encoders=("minilm",))
    assert a.datasets == ("musique",) and a == b
    assert a.config_hash() == b.config_hash()
    assert a.config_hash() != ExperimentConfig(datasets=("musique",), sample_size=5).config_hash()


@pytest.mark.parametrize("datasets", [("nope",), ("musique", "musique")])
def test_config_refuses_unknown_or_repeated_datasets(datasets: tuple[str, ...]) -> None:
    # what a declared kind cannot say (each kind's refusals: tests/test_inputs_configs.py)
    with refused(ValueError, names=["ExperimentConfig", "datasets", datasets[-1]]):
        ExperimentConfig(datasets=datasets)


def test_from_parameters_drops_runner_parameters_and_none() -> None:
    cfg = ExperimentConfig.from_parameters(
        datasets=["musique"], alpha=None, sample_size=None, output_dir="/x", work_dir=None
    )
    assert cfg.alpha == ExperimentConfig().alpha
    assert cfg.sample_size is None and cfg.datasets == ("musique",)


# --- the entity arm's mention -------------------------------------------------------------------


def test_bridge_mention_is_the_bridges_words_not_the_title() -> None:
    ex = _example(["It was written by the Foo team.", "Foo Bar won."], "Foo Bar (novel)", "Foo Bar")
    mention = bridge_entity_mention(ex, None, DEFAULT_REGIME_RULES)
    assert mention == "Foo Bar"
    assert mention_is_title(mention, "Foo Bar (novel)", DEFAULT_REGIME_RULES)
    ex2 = _example(["Its sequel is Quux Land."], "Quux Land (game)", "Quux Land")
    assert bridge_entity_mention(ex2, 0, DEFAULT_REGIME_RULES) == "Quux Land"
    ex3 = _example(["Nothing relevant."], "Zed", "Zed")
    assert bridge_entity_mention(ex3, None, DEFAULT_REGIME_RULES) is None
    assert not mention_is_title(None, "Zed", DEFAULT_REGIME_RULES)


def test_bridge_mention_prefers_b_rel() -> None:
    ex = _example(["Alpha Corp bought it.", "Alpha made films."], "Alpha Corp", "Alpha Corp")
    # A mention-free b_rel falls back to the first sentence that names the entity.
    assert bridge_entity_mention(ex, 1, DEFAULT_REGIME_RULES) == "Alpha Corp"


# --- outcome tables -------------------------------------------------------------------------------


def test_outcome_table_rows_columns_and_ranges(world: list[Example], tmp_path) -> None:
    store = EmbeddingStore(tmp_path / "emb")
    table = outcome_table(world, settings(k=5), encoder=HashingEncoder(), store=store)
    assert tuple(table.columns) == outcome_columns(5)
    missing = table.attrs["missing"]
    for arm, group in table.groupby("arm"):
        assert len(group) + sum(missing[arm].values()) == len(world), arm
        assert group["qid"].is_unique
    assert set(table["arm"]) == {"q", "bridge", "union", "knockout", "entity"}
    assert table["hit@5"].isin([0.0, 1.0]).all()
    assert (table["rank"] >= 1).all()
    assert table["auc"].between(0, 1).all()
    assert np.allclose(table["hit@5"], (table["rank"] <= 5).astype(float))
    regimes = regime_table(world).set_index("id")
    q_rows = table[table["arm"] == "q"].set_index("qid")
    assert (q_rows["regime"] == regimes.loc[q_rows.index, "regime"]).all()
    # entity queries exist exactly where the bridge names the hop-2 entity
    entity_ids = set(table.loc[table["arm"] == "entity", "qid"])
    assert entity_ids == set(q_rows.index[q_rows["entity_mention"].notna()])


def test_outcome_table_entity_source_changes_only_entity(world: list[Example], tmp_path) -> None:
    store = EmbeddingStore(tmp_path / "emb")
    enc = HashingEncoder()
    bridge = outcome_table(world, settings(), encoder=enc, store=store, arms=("q", "entity"))
    plain = outcome_table(
        world, settings(entity_source="example"), encoder=enc, store=store, arms=("q", "entity")
    )
    pd.testing.assert_frame_equal(
        bridge[bridge["arm"] == "q"].reset_index(drop=True),
        plain[plain["arm"] == "q"].reset_index(drop=True),
    )
    assert len(plain[plain["arm"] == "entity"]) == len(world)  # every example has hop2_entity


def test_collect_outcomes_warm_rerun_encodes_nothing(world: list[Example], tmp_path) -> None:
    cfg = ExperimentConfig(datasets=("toyworld",), encoders=("test/fake",), sample_size=25, seed=1)
    calls: list[int] = []

    def factory(name: str, corpus: Sequence[str]) -> HashingEncoder:
        calls.append(len(corpus))
        return HashingEncoder()

    context = Context(work=tmp_path, examples={"toyworld": world}, encoder_factory=factory)
    first = collect_outcomes(cfg, ("q", "union"), context)
    second = collect_outcomes(cfg, ("q", "union"), context)
    assert first.n_encoded > 0 and second.n_encoded == 0
    assert second.n_cached == first.n_encoded + first.n_cached
    pd.testing.assert_frame_equal(first.table, second.table)
    assert set(first.table["encoder"]) == {"test/fake"}
    assert first.samples["toyworld"].n == 25
    assert first.sample_numbers()["toyworld"]["ids_hash"] == ids_hash(
        sorted(set(first.table["qid"]))
    )
    # TF-IDF-style encoders are fitted on the whole split's corpus, not the sample's
    assert calls[0] == len({p.pid for ex in world for p in ex.pool})


def test_an_encoder_name_is_resolved_when_the_config_is_built(tmp_path) -> None:
    # a misspelled name fails before any encoder has run, naming the field and the known names
    for build, where in (
        (lambda n: ExperimentConfig(encoders=("tfidf", n)), ["ExperimentConfig", "encoders"]),
        (lambda n: RouterConfig(encoder=n), ["RouterConfig", "encoder"]),
        (lambda n: TransferConfig(encoder=n), ["TransferConfig", "encoder"]),
        (lambda n: AblationConfig(paper_encoders=(n,)), ["AblationConfig", "paper_encoders"]),
        (lambda n: RobustnessConfig(primary_encoder=n), ["RobustnessConfig", "primary_encoder"]),
    ):
        with refused(ValueError, names=[*where, "'minlm'", *KNOWN_ENCODERS]):
            build("minlm")
        for name in ("", "bm25"):
            with refused(ValueError, names=where):
                build(name)
    # a hub id or a local model directory is accepted as it is (nothing is loaded)
    for name in ("org/model", str(tmp_path)):
        assert RouterConfig(encoder=name).encoder == name
        assert ExperimentConfig(encoders=(name,)).encoders == (name,)


def test_queries_without_negatives_get_nan_auc_not_an_error(world: list[Example], tmp_path) -> None:
    import dataclasses

    tiny = dataclasses.replace(
        world[0], id="tiny", pool=(world[0].bridge, world[0].target)
    )  # bridge excluded -> the target is the only candidate
    store = EmbeddingStore(tmp_path / "emb")
    table = outcome_table(
        [tiny, *world[1:6]], settings(), encoder=HashingEncoder(), store=store, arms=("q",)
    )
    row = table.set_index("qid").loc["tiny"]
    assert row["rank"] == 1 and row["hit@5"] == 1.0 and row["mrr"] == 1.0
    assert np.isnan(row["auc"]) and np.isnan(row["margin"])
    others = table[table["qid"] != "tiny"]
    assert others["auc"].notna().all()
    # where defined, the values are those of Ranking.per_query_metrics
    from regime_core.retrieval import retrieve

    ranking = retrieve(world[1:6], "q", settings(), encoder=HashingEncoder(), store=store, depth=10)
    expected = ranking.per_query_metrics(k_values=(5,), metrics=["auc", "margin"])
    got = others.set_index("qid").loc[expected.index, ["auc", "margin"]]
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy())


def _with_pool_size(example: Example, n_candidates: int) -> Example:
    """``example`` with its pool cut to the bridge, the target and ``n_candidates - 1`` others."""
    others = [p for p in example.pool if p.pid not in (example.bridge_pid, example.target_pid)]
    pool = (example.bridge, example.target, *others[: n_candidates - 1])
    return dataclasses.replace(example, pool=pool)


def test_tiny_pools_are_excluded_before_sampling_and_counted(world: list[Example]) -> None:
    examples = [
        _with_pool_size(ex, 5) if i % 4 == 0 else _with_pool_size(ex, 6)
        for i, ex in enumerate(world[:40])
    ]
    assert hop2_candidates(examples[0], True) == 5 and hop2_candidates(examples[1], True) == 6
    assert hop2_candidates(examples[0], exclude_bridge=False) == 6
    at_k5 = settings(k=5, tiny_pools="exclude")
    assert at_k5.is_tiny_pool(examples[0]) and not at_k5.is_tiny_pool(examples[1])
    assert not settings(k=5, pool="corpus").is_tiny_pool(examples[0])  # never tiny
    dataset = examples[0].dataset
    kept = sample_examples(examples, None, seed=0, dataset=dataset, split="dev")
    assert kept.n == 40 and kept.n_tiny_pool == 0  # without settings every item is eligible
    keep = sample_examples(
        examples, None, seed=0, dataset=dataset, split="dev", settings=settings(tiny_pools="keep")
    )
    assert keep.n == 40 and keep.n_tiny_pool == 0
    excluded = sample_examples(examples, None, seed=0, dataset=dataset, split="dev", settings=at_k5)
    assert excluded.n_tiny_pool == 10 and excluded.n == 30
    assert {ex.id for ex in excluded.examples} == {ex.id for ex in examples[1::4]} | {
        ex.id for ex in examples if not at_k5.is_tiny_pool(ex)
    }
    assert len(excluded.corpus) == len(kept.corpus)  # the corpus stays the whole split's
    at_k4 = sample_examples(
        examples, None, seed=0, dataset=dataset, split="dev",
        settings=settings(k=4, tiny_pools="exclude"),
    )  # fmt: skip
    assert at_k4.n_tiny_pool == 0  # 5 candidates are not tiny for hit@4
    with pytest.raises(ValueError, match="tiny_pools"):
        settings(tiny_pools="drop")


# --- one config, its settings passed whole ----------------------------------------------------


def test_the_config_derives_its_retrieval_settings_once_and_checks_them() -> None:
    cfg = ExperimentConfig(k=3, alpha=0.5, pool="corpus")
    assert cfg.retrieval is cfg.retrieval  # built once
    assert (cfg.retrieval.k, cfg.retrieval.alpha, cfg.retrieval.pool) == (3, 0.5, "corpus")
    retrieval_fields = {f.name for f in dataclasses.fields(cfg.retrieval)}
    assert retrieval_fields <= {f.name for f in dataclasses.fields(ExperimentConfig)}
    for bad in (-0.1, float("nan")):
        with refused(ValueError, names=["ExperimentConfig", "'alpha'"]):
            ExperimentConfig(alpha=bad)
    with refused(ValueError, names=["ExperimentConfig", "knockout_single", "'never'"]):
        ExperimentConfig(knockout_single="never")
    # nothing on the way to the kernels restates a default: the settings are required
    for function in (outcome_table, *_RETRIEVAL_STEPS):
        parameter = inspect.signature(function).parameters["settings"]
        assert parameter.default is inspect.Parameter.empty, function.__name__


def _retrieval_steps() -> tuple[Any, ...]:
    from regime_core.retrieval import plan_arm, retrieve, retrieve_arms
    from regime_core.retrieval.geometry import build_geometry
    from regime_core.retrieval.queries import arm_query_texts
    from regime_core.router.training import build_routing_data

    return (retrieve_arms, retrieve, plan_arm, arm_query_texts, build_geometry, build_routing_data)


_RETRIEVAL_STEPS = _retrieval_steps()


def test_compare_arms_uses_the_config_s_statistics() -> None:
    wide = pd.DataFrame({"union": [1, 1, 0, 1, 1, 0], "q": [0, 1, 0, 0, 1, 0]})
    cfg = ExperimentConfig(bootstrap_resamples=50, seed=3)
    got = compare_arms(wide, "union", "q", cfg)
    assert (got.label_a, got.label_b, got.n_a_better, got.n_b_better) == ("union", "q", 2, 0)
    assert got.diff == pytest.approx(2 / 6)


def test_table_numbers_nests_rows_under_their_keys_with_their_types() -> None:
    table = pd.DataFrame(
        {"enc": ["m", "m", "t"], "ds": ["a", "b", "a"], "n": [3, 4, 5], "ok": [1, 0, 1]}
    )
    got = table_numbers(table, ("enc", "ds"), {"n": int, "ok": bool})
    assert got == {"m": {"a": {"n": 3, "ok": True}, "b": {"n": 4, "ok": False}},
                   "t": {"a": {"n": 5, "ok": True}}}  # fmt: skip
    assert type(got["m"]["a"]["n"]) is int


def test_a_list_given_to_papermill_s_p_names_y() -> None:
    """papermill's -p passes '[minilm]' as text; the error says to use -y (issue 33)."""
    from regime_core.experiments.t3_brel_knockout import T3Config

    with pytest.raises(
        ValueError,
        match=r"parameter 'encoders' is the text '\[minilm\]'.*-y \"encoders: \[minilm\]\"",
    ):
        T3Config.from_parameters(encoders="[minilm]")
    assert T3Config.from_parameters(encoders="minilm").encoders == ("minilm",)  # one name is fine


def test_a_context_holds_its_store_and_factory_or_the_defaults(tmp_path) -> None:
    from regime_core.experiments.context import default_encoder_factory

    mine = EmbeddingStore(tmp_path / "mine")
    given = Context(
        work=tmp_path, store=mine, encoder_factory=lambda name, corpus: HashingEncoder()
    )
    assert given.embeddings is mine and isinstance(given.encoder("x", []), HashingEncoder)
    default = Context(work=tmp_path)
    assert default.factory is default_encoder_factory and default.store is None
    assert isinstance(default.embeddings, EmbeddingStore)


def test_examples_read_once_give_the_same_samples(tmp_path) -> None:
    cfg = ExperimentConfig(datasets=("toyworld",), encoders=("minilm",), sample_size=40)
    reading = Context(work=tmp_path)
    kept = reading.with_examples_read(("toyworld", "toyworld"), cfg.split)
    assert kept.examples is not None and list(kept.examples) == ["toyworld"]
    assert kept.with_examples_read(("toyworld",), cfg.split) is kept  # nothing read twice
    for tiny in ("keep", "exclude"):
        c = dataclasses.replace(cfg, tiny_pools=tiny)
        assert kept.samples(c, cfg.datasets) == reading.samples(c, cfg.datasets)


def test_tfidf_is_fitted_once_per_corpus() -> None:
    from regime_core.encoders import get_encoder
    from regime_core.experiments.context import default_encoder_factory

    corpus = ["apple banana", "apple cherry cherry", "banana date"]
    first = default_encoder_factory("tfidf", corpus)
    assert default_encoder_factory("tfidf", list(corpus)) is first
    other = default_encoder_factory("tfidf", corpus[:2])
    assert other is not first and other.identity != first.identity
    texts = ["apple date", "cherry"]
    np.testing.assert_array_equal(
        first.encode_queries(texts), get_encoder("tfidf", corpus=corpus).encode_queries(texts)
    )
