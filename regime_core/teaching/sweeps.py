"""The toy world's knobs: how hit@k of ``q`` and ``union`` moves when the distractors look more
like the target, when the relation sentence is removed, and as its weight α goes from 0 to 1.

Each sweep returns a long DataFrame, one row per (knob value, regime, arm), with columns ``n``,
``hit@1`` and ``hit@5`` (``hit@k`` = the hop-2 target ranks in the top k of its pool, bridge
excluded). They are pure given an encoder and an embedding store; the store is the only side
effect (it caches vectors on disk). Both come from ``context``
(:class:`~regime_core.experiments.context.Context`; None: the work directory's store and the real
encoders).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from regime_core.data.regimes import gold_b_rel
from regime_core.data.toyworld import ToyWorldConfig, generate
from regime_core.experiments.context import Context, resolve
from regime_core.schema import Example
from regime_core.teaching.demo import (
    RELATION_KEPT,
    RELATION_REMOVED,
    SWEEP_ARMS,
    DemoConfig,
    _encoder_for,
    _order_regimes,
    arm_ranks,
    hit_summary,
)


def _arm_summary(
    examples: Sequence[Example], arms: Sequence[str], cfg: DemoConfig, context: Context
) -> pd.DataFrame:
    encoder = _encoder_for(cfg.encoder, examples, context)
    ranks = arm_ranks(examples, arms, cfg.retrieval, encoder=encoder, store=context.embeddings)
    return hit_summary(ranks, ["regime", "arm"])


def similarity_world(cfg: DemoConfig, value: float) -> ToyWorldConfig:
    """``cfg``'s toy world with its distractors at similarity ``value``."""
    return dataclasses.replace(cfg.world(), distractor_similarity=float(value))


def sweep_distractor_similarity(
    values: Sequence[float],
    cfg: DemoConfig,
    *,
    arms: Sequence[str] = SWEEP_ARMS,
    context: Context | None = None,
) -> pd.DataFrame:
    """hit@k per regime and arm for toy worlds (``cfg.world()``) whose distractors look more and
    more like the target (``ToyWorldConfig.distractor_similarity`` = each of ``values``).

    The questions are the same at every value; only the distractor passages change. Columns:
    ``distractor_similarity, regime, arm, n, hit@1, hit@5``.
    """
    context = resolve(context)
    frames = []
    for value in values:
        examples = generate(similarity_world(cfg, value))
        part = _arm_summary(examples, arms, cfg, context)
        part.insert(0, "distractor_similarity", float(value))
        frames.append(part)
    return _order_regimes(pd.concat(frames, ignore_index=True))


def knockout_table(
    examples: Sequence[Example], cfg: DemoConfig, *, context: Context | None = None
) -> pd.DataFrame:
    """What removing the relation sentence does: hit@k per regime for ``q`` and ``union`` with
    ``B_rel`` kept (the union arm) and removed (the union is built from the rest of the bridge:
    the ``knockout`` arm). ``q`` does not read the bridge, so it is the same in both rows.

    Columns: ``relation_sentence`` (``kept``/``removed``), ``regime, arm, n, hit@1, hit@5``.
    """
    context = resolve(context)
    summary = _arm_summary(list(examples), ("q", "union", "knockout"), cfg, context)
    kept = summary[summary["arm"].isin(["q", "union"])].copy()
    kept.insert(0, "relation_sentence", RELATION_KEPT)
    removed = summary[summary["arm"].isin(["q", "knockout"])].copy()
    removed["arm"] = removed["arm"].replace({"knockout": "union"})
    removed.insert(0, "relation_sentence", RELATION_REMOVED)
    return _order_regimes(pd.concat([kept, removed], ignore_index=True))


def sweep_alpha(
    values: Sequence[float],
    examples: Sequence[Example],
    cfg: DemoConfig,
    *,
    context: Context | None = None,
) -> pd.DataFrame:
    """hit@k per regime of ``q`` and of ``union = normalise(f(q) + α·f(B_rel))`` (gold
    ``B_rel``) for each ``α`` in ``values`` (a config's grid, checked when it was built:
    ``LessonConfig.alpha_grid``). Everything is encoded once; each α only re-ranks. At α = 0
    union equals q exactly.

    Columns: ``alpha, regime, arm, n, hit@1, hit@5``. Questions without a gold ``B_rel`` are
    left out (toyworld has none such).
    """
    from regime_core.data.regimes import regime_table
    from regime_core.retrieval.geometry import build_geometry

    context = resolve(context)
    examples = list(examples)
    rels = [gold_b_rel(ex, cfg.regime_rules) for ex in examples]
    kept = [i for i, rel in enumerate(rels) if rel.sentence is not None]
    if not kept:
        raise ValueError("sweep_alpha: no example has a gold B_rel")
    examples = [examples[i] for i in kept]
    geometry = build_geometry(
        examples,
        [rels[i].sentence or "" for i in kept],
        cfg.retrieval,
        encoder=_encoder_for(cfg.encoder, examples, context),
        store=context.embeddings,
    )
    regimes = regime_table(examples, cfg.regime_rules)["regime"].to_numpy()
    rank_q = geometry.target_ranks(0.0)
    frames = []
    for value in values:
        ranks = pd.DataFrame(
            {
                "regime": np.concatenate([regimes, regimes]),
                "arm": ["q"] * len(regimes) + ["union"] * len(regimes),
                "rank": np.concatenate([rank_q, geometry.target_ranks(value)]),
            }
        )
        part = hit_summary(ranks, ["regime", "arm"])
        part.insert(0, "alpha", value)
        frames.append(part)
    return _order_regimes(pd.concat(frames, ignore_index=True))
