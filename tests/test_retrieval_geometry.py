"""The union geometry (ranks under q + a·B_rel for any weights) and the hop-1 bridge, on a
synthetic world with a hashing encoder: no download, no dataset text."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import HashingEncoder, RecordingStore, settings

from regime_core import config
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.retrieval import retrieve_arms
from regime_core.retrieval.geometry import build_geometry, hop1_top_pids, with_retrieved_bridges
from regime_core.schema import Example

ENCODER = HashingEncoder(64)
STORE = RecordingStore()


@pytest.fixture(scope="module")
def toy() -> list[Example]:
    return generate(ToyWorldConfig(n_questions=60, seed=0))


@pytest.mark.parametrize("pool", config.POOL_MODES)
def test_weights_zero_and_alpha_are_the_q_and_union_arms(toy: list[Example], pool: str) -> None:
    examples = toy[:40]
    b_rel = [ex.bridge.sentences[0] for ex in examples]
    geometry = build_geometry(examples, b_rel, settings(pool=pool), encoder=ENCODER, store=STORE)
    rankings = retrieve_arms(
        examples,
        ("q", "union"),
        settings(pool=pool),
        encoder=ENCODER,
        store=STORE,
        b_rel=b_rel,
        depth=None,
    )
    assert geometry.target_ranks(0.0).tolist() == rankings["q"].target_ranks.tolist()
    union = geometry.target_ranks(config.ALPHA)
    assert union.tolist() == rankings["union"].target_ranks.tolist()
    mixed = np.where(np.arange(geometry.n) % 2 == 0, 0.0, config.ALPHA)
    expected = np.where(mixed == 0, geometry.target_ranks(0.0), union)
    assert geometry.target_ranks(mixed).tolist() == expected.tolist()
    # some questions alone rank as they do among all: a question reads its own rows only
    some = np.array([7, 0, 31, 12])
    alone = geometry.rows(some)
    assert alone.query_ids == tuple(geometry.query_ids[i] for i in some)
    assert alone.target_ranks(mixed[some]).tolist() == expected[some].tolist()


def test_with_retrieved_bridges_counts_every_hop1_outcome(toy: list[Example]) -> None:
    a, b, c = toy[:3]
    distractor = next(p.pid for p in b.pool if p.pid not in (b.bridge_pid, b.target_pid))
    kept, outcomes, counts = with_retrieved_bridges(
        [a, b, c], [a.bridge_pid, distractor, c.target_pid]
    )
    assert counts == {"correct": 1, "distractor": 1, "target": 1}
    assert outcomes == ["correct", "distractor"]
    assert kept[0] is a
    assert kept[1].bridge_pid == distractor and kept[1].target_pid == b.target_pid


def test_hop1_top_pids_is_rank_one_of_the_question_over_the_whole_pool(toy: list[Example]) -> None:
    examples = toy[:30]
    top = hop1_top_pids(examples, encoder=ENCODER, store=STORE)
    # the retrieval module's q arm over the whole pool (bridge not excluded), its rank 1
    ranking = retrieve_arms(
        examples, ("q",), settings(exclude_bridge=False), encoder=ENCODER, store=STORE, depth=1
    )["q"]
    assert top == [pids[0] for pids in ranking.top_pids]
    assert len(set(top) & {ex.bridge_pid for ex in examples}) > 0
    assert hop1_top_pids([], encoder=ENCODER, store=STORE) == []
