"""The teaching kit's demo: the two regimes shown on the synthetic ``toyworld`` in a minute.

:func:`run_demo` (``regime demo``) generates a small toy world, retrieves the hop-2 passage of
every question with the arms ``q``, ``union``, ``knockout`` and ``bridge`` (gold ``B_rel``) and
with the RegimeRouter, and tabulates hit@1 and hit@5 per arm and regime. The lesson it shows: the
``union`` arm (question + α·relation sentence) helps where the hop-2 entity is named only in the
bridge (B-dominant) and does not help where the question already names it (Q-dominant).

The knob sweeps live in :mod:`regime_core.teaching.sweeps`, the notebooks' helpers in
:mod:`regime_core.teaching.lesson` and the plots in :mod:`regime_core.book.figures`.

>>> from regime_core.teaching.demo import DemoConfig, run_demo            # doctest: +SKIP
>>> print(run_demo(DemoConfig(encoder="tfidf")).to_text())            # doctest: +SKIP
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.data.toyworld import B_DOMINANT, Q_DOMINANT, ToyWorldConfig, generate
from regime_core.data.toyworld.generator import MAX_QUESTIONS
from regime_core.encoders.base import Encoder
from regime_core.experiments.common import RunConfig
from regime_core.experiments.context import Context
from regime_core.experiments.outcomes import CountingStore
from regime_core.experiments.sampling import sample_examples
from regime_core.inputs import Choice, Items
from regime_core.inputs.configs import declared, integer
from regime_core.retrieval import EmbeddingSource, RetrievalSettings
from regime_core.schema import Example

#: The regimes the demo reports, in display order (toyworld has no "neither" question).
DEMO_REGIMES: tuple[str, ...] = (B_DOMINANT, Q_DOMINANT)
#: The arms the demo runs, with gold B_rel.
DEMO_ARMS: tuple[str, ...] = ("q", "union", "knockout", "bridge")
#: The arms the knob sweeps compare.
SWEEP_ARMS: tuple[str, ...] = ("q", "union")
#: hit@k cutoffs reported everywhere in the kit (the top passage, and the paper's R@5).
HIT_CUTOFFS: tuple[int, ...] = (1, config.HEADLINE_K)
#: Questions in the demo world, with about 550 passages and 250 query texts, which the bundled
#: MiniLM encodes in well under a minute on 2 CPU cores (measured: see the teaching page).
DEMO_QUESTIONS: int = 60
#: Encoders the demo accepts (both ship with the package, no download).
DEMO_ENCODERS: tuple[str, ...] = ("minilm", "tfidf")
SIMILARITY_GRID: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
ROUTER_POLICY = "router"
#: Which router the demo uses. ``auto`` = the packaged default router when it exists, else one
#: cross-fitted on the toy world; ``packaged`` and ``toy`` force one of the two.
ROUTER_CHOICES: tuple[str, ...] = ("auto", "packaged", "toy")
RELATION_KEPT = "kept"
RELATION_REMOVED = "removed"


def hit_columns() -> tuple[str, ...]:
    return tuple(f"hit@{k}" for k in HIT_CUTOFFS)


# --- kernels ---------------------------------------------------------------------------------


def hit_summary(ranks: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Mean hit@k (k in :data:`HIT_CUTOFFS`) of a per-query table with a ``rank`` column
    (1-based rank of the hop-2 target), grouped by ``by``; pure.

    ``hit@k = mean(rank <= k)``.

    >>> t = pd.DataFrame({"arm": ["q", "q", "union"], "rank": [1, 7, 2]})
    >>> hit_summary(t, ["arm"]).to_dict("records")  # doctest: +NORMALIZE_WHITESPACE
    [{'arm': 'q', 'n': 2, 'hit@1': 0.5, 'hit@5': 0.5},
     {'arm': 'union', 'n': 1, 'hit@1': 0.0, 'hit@5': 1.0}]
    """
    frame = ranks.loc[:, [*by]].copy()
    rank = ranks["rank"].to_numpy()
    for k in HIT_CUTOFFS:
        frame[f"hit@{k}"] = (rank <= k).astype(float)
    grouped = frame.groupby(list(by), sort=False)
    out = grouped.size().rename("n").to_frame().join(grouped.mean())
    return out.reset_index()


def _order_regimes(table: pd.DataFrame) -> pd.DataFrame:
    """Keep the demo regimes and sort them (B-dominant first) stably."""
    kept = table[table["regime"].isin(DEMO_REGIMES)].copy()
    kept["_order"] = kept["regime"].map({r: i for i, r in enumerate(DEMO_REGIMES)})
    return kept.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)


def union_effect(
    summary: pd.DataFrame, *, policy_column: str = "arm"
) -> dict[str, dict[str, float]]:
    """``{regime: {"hit@k": union − q}}`` from a summary with ``regime``, ``policy_column`` and
    the hit columns; pure."""
    out: dict[str, dict[str, float]] = {}
    for regime in DEMO_REGIMES:
        rows = summary[summary["regime"] == regime].set_index(policy_column)
        if "union" not in rows.index or "q" not in rows.index:
            continue
        out[regime] = {
            col: float(rows.loc["union", col] - rows.loc["q", col]) for col in hit_columns()
        }
    return out


# --- encoders and stores at the edge ---------------------------------------------------------


def _encoder_for(name: str, examples: Sequence[Example], context: Context) -> Encoder:
    """Encoder ``name`` from ``context``'s factory, given the texts of the examples' corpus (every
    passage once, as :func:`regime_core.data.corpus_passages` lists them)."""
    from regime_core.data import corpus_passages

    return context.encoder(name, corpus_passages(examples))


def arm_ranks(
    examples: Sequence[Example],
    arms: Sequence[str],
    settings: RetrievalSettings,
    *,
    encoder: Encoder,
    store: EmbeddingSource,
) -> pd.DataFrame:
    """One row per (question, arm): ``qid, arm, regime, rank`` (1-based rank of the hop-2 target
    among the candidates of ``settings``), with the gold ``B_rel`` of
    :func:`regime_core.data.regimes.regime_table` (as ``experiments.outcomes.outcome_table``
    uses).

    Only the rank is computed: metrics such as AUC are undefined on pools without a negative,
    which real data has, and the kit needs none of them. Arms are compared on the same
    questions: a question some arm cannot build a query for (no ``B_rel``) is left out of every
    arm, and counted in ``table.attrs["n_unpaired"]``.
    """
    from regime_core.data.regimes import regime_table
    from regime_core.retrieval import retrieve_arms

    examples = list(examples)
    table = regime_table(examples, settings.regime_rules)
    b_rel = [None if pd.isna(v) else int(v) for v in table["b_rel_index"]]
    regime_of = dict(zip(table["id"], table["regime"], strict=True))
    rankings = retrieve_arms(
        examples,
        tuple(arms),
        settings,
        encoder=encoder,
        store=store,
        depth=settings.k,
        b_rel=b_rel,
    )
    frames = [
        pd.DataFrame(
            {
                "qid": list(ranking.query_ids),
                "arm": arm,
                "regime": [regime_of[q] for q in ranking.query_ids],
                "rank": np.asarray(ranking.target_ranks, dtype=np.int64),
            }
        )
        for arm, ranking in rankings.items()
    ]
    ranks = pd.concat(frames, ignore_index=True)
    common = set.intersection(*(set(r.query_ids) for r in rankings.values()))
    out = ranks[ranks["qid"].isin(common)].reset_index(drop=True)
    out.attrs["n_unpaired"] = len(examples) - len(common)
    return out


# --- the demo --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoConfig(RunConfig):
    """What ``regime demo`` runs: a toy world of ``n_questions`` (half B-dominant) drawn from
    ``seed``, retrieved with ``encoder`` (``minilm`` or ``tfidf``) under the run's retrieval
    settings (the union weight ``alpha``, ...), the router's cross-fitting folds."""

    seed: int = config.SEED
    """seed of the demo's toy world and of its router's folds"""
    n_questions: int = declared(DEMO_QUESTIONS, integer(1, MAX_QUESTIONS))
    """questions in the demo's toy world, half B-dominant"""
    encoder: str = declared(config.ENCODER, Choice(DEMO_ENCODERS))
    """the encoder the demo retrieves with: minilm or tfidf"""
    arms: tuple[str, ...] = declared(DEMO_ARMS, Items(Choice(config.ARMS)))
    """the query arms the demo compares; q and union are required"""
    n_splits: int = declared(config.CV_FOLDS, integer(2))
    router: str = declared("auto", Choice(ROUTER_CHOICES))
    """the router: auto (the packaged one when present, else one cross-fitted on the toy world),
    packaged, or toy
    """

    def validate(self) -> None:
        if "q" not in self.arms or "union" not in self.arms:
            raise ValueError(f"DemoConfig.arms is {self.arms}: name arms including q and union")
        super().validate()

    def world(self) -> ToyWorldConfig:
        return ToyWorldConfig(seed=self.seed, n_questions=self.n_questions)


@dataclass(frozen=True)
class DemoResult:
    """The demo's table and how it was made.

    ``table``: one row per (regime, policy) with ``n``, ``hit@1``, ``hit@5``; policies are the
    arms (gold ``B_rel``) and ``router`` (union where the router says so, with the ``B_rel`` its
    selector picked; absent when no router could be had, see ``router_source``).
    ``share_union``: per regime, the share of questions the router sent to union.
    """

    config: DemoConfig
    table: pd.DataFrame
    router_source: str
    share_union: Mapping[str, float]
    n_passages: int
    n_encoded: int
    n_cached: int
    seconds: float
    store_dir: str

    @property
    def effect(self) -> dict[str, dict[str, float]]:
        return union_effect(self.table, policy_column="policy")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object ``regime demo --json`` prints."""
        return {
            "config": self.config.to_dict(),
            "table": self.table.to_dict("records"),  # pandas gives Python scalars
            "union_minus_q": self.effect,
            "router": self.router_source,
            "router_share_union": dict(self.share_union),
            "n_passages": self.n_passages,
            "n_encoded": self.n_encoded,
            "n_cached": self.n_cached,
            "seconds": round(self.seconds, 2),
            "store": self.store_dir,
        }

    def wide(self) -> pd.DataFrame:
        """One row per policy, columns ``(regime, hit@k)``."""
        wide = self.table.pivot(index="policy", columns="regime", values=list(hit_columns()))
        wide = wide.swaplevel(axis=1)
        regimes = [r for r in DEMO_REGIMES if r in self.table["regime"].unique()]
        wide = wide.reindex(columns=pd.MultiIndex.from_product([regimes, list(hit_columns())]))
        policies = [p for p in dict.fromkeys(self.table["policy"]) if p in wide.index]
        return wide.loc[policies]

    def to_text(self) -> str:
        """The table ``regime demo`` prints, with the lesson in one line per regime."""
        wide = self.wide()
        counts = self.table.drop_duplicates("regime").set_index("regime")["n"]
        head = f"{'':12}" + "".join(
            f"{f'{r} (n={counts[r]})':>22}" for r in wide.columns.get_level_values(0).unique()
        )
        sub = f"{'policy':12}" + "".join(f"{c:>11}" for _r, c in wide.columns)
        lines = [head, sub]
        for policy, row in wide.iterrows():
            cells = "".join(f"{'-' if pd.isna(v) else f'{v:.2f}':>11}" for v in row)
            lines.append(f"{policy:12}{cells}")
        lines.append("")
        for regime, deltas in self.effect.items():
            shown = ", ".join(f"{k} {v * 100:+.1f} pp" for k, v in deltas.items())
            lines.append(f"union - q, {regime}: {shown}")
        lines.append(f"router: {self.router_source}")
        if self.share_union:
            shares = ", ".join(f"{r} {v:.0%}" for r, v in self.share_union.items())
            lines.append(f"router sends to union: {shares}")
        lines.append(
            f"{self.config.n_questions} questions, {self.n_passages} passages, encoder "
            f"{self.config.encoder}; {self.n_encoded} texts encoded, {self.n_cached} cached; "
            f"{self.seconds:.1f} s"
        )
        return "\n".join(lines)


def _router_policy(
    examples: Sequence[Example],
    *,
    encoder: Encoder,
    store: EmbeddingSource,
    cfg: DemoConfig,
) -> tuple[pd.DataFrame | None, str]:
    """Per-question rank under the router's decision, and which router made it.

    The packaged default router is used when it exists; otherwise a router is fitted on this
    toy world with cross-fitting (each question is decided by a model that never saw it).
    """
    from regime_core.router.model import default_router, default_router_path
    from regime_core.router.training import build_routing_data, fit_routing, threshold_decisions

    sample = sample_examples(
        examples, None, seed=cfg.seed, dataset="toyworld", split=examples[0].split
    )
    data = build_routing_data(
        sample,
        cfg.retrieval,
        encoder=encoder,
        store=store,
        bridge_source=config.BRIDGE_SOURCE,
        encoder_name=cfg.encoder,
    )
    rank_q = data.table["rank_q"].to_numpy()
    rank_union = data.table["rank_union"].to_numpy()
    packaged = default_router_path().is_file()
    if cfg.router == "packaged" and not packaged:
        raise ValueError(
            f"router 'packaged': {default_router_path()} is missing; rebuild it with "
            "`regime route train` or use --router toy"
        )
    if packaged and cfg.router != "toy":
        router = default_router()
        routed = router.predict_action(data.X) == "union"
        source = f"the packaged default router ({default_router_path().name})"
    else:
        try:
            # Ties are labelled q (config.LABEL_TIE_RULE), not excluded as in the real training
            # run: in the toy world q never beats union strictly, so excluding ties would leave
            # one class and nothing to learn.
            fitted = fit_routing(
                data.X,
                rank_q,
                rank_union,
                alpha=cfg.alpha,
                tie_rule=config.LABEL_TIE_RULE,
                label_k=None,
                n_splits=cfg.n_splits,
                seed=cfg.seed,
            )
        except ValueError as err:
            return None, f"none: cross-fitting a router on the toy world failed ({err})"
        routed = threshold_decisions(fitted.probability, fitted.router)
        why = (
            "requested" if cfg.router == "toy" else f"no packaged router at {default_router_path()}"
        )
        source = (
            f"cross-fitted on this toy world ({cfg.n_splits} folds, ties labelled "
            f"{config.LABEL_TIE_RULE}; {why})"
        )
    ranks = pd.DataFrame(
        {
            "qid": data.table["qid"].to_numpy(),
            "arm": ROUTER_POLICY,
            "routed_union": routed,
            "rank": np.where(routed, rank_union, rank_q),
        }
    )
    return ranks, source


def run_demo(
    cfg: DemoConfig | None = None,
    *,
    context: Context | None = None,
    with_router: bool = True,
) -> DemoResult:
    """Generate the demo world, retrieve with every arm and the router, and tabulate.

    ``context`` (:class:`~regime_core.experiments.context.Context`): where the vectors are kept
    and what encodes them; ``Context(work=w)`` keeps the embedding store in ``w/embeddings`` (a
    second run encodes nothing). None: a temporary directory, removed afterwards (nothing is
    cached), and the real encoders.
    """
    cfg = cfg or DemoConfig()
    started = time.perf_counter()
    examples = generate(cfg.world())
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if context is None:  # no location given: a temporary store
        tmp = tempfile.TemporaryDirectory(prefix="regime-demo-")
        context = Context(work=Path(tmp.name))
    try:
        counting = CountingStore(context.embeddings)
        encoder = _encoder_for(cfg.encoder, examples, context)
        ranks = arm_ranks(examples, cfg.arms, cfg.retrieval, encoder=encoder, store=counting)
        share_union: dict[str, float] = {}
        router_source = "not run"
        if with_router:
            routed, router_source = _router_policy(
                examples, encoder=encoder, store=counting, cfg=cfg
            )
            if routed is not None:
                regimes = ranks.drop_duplicates("qid").set_index("qid")["regime"]
                routed["regime"] = routed["qid"].map(regimes)
                shares = routed.groupby("regime", sort=False)["routed_union"].mean()
                share_union = {r: float(shares[r]) for r in DEMO_REGIMES if r in shares.index}
                ranks = pd.concat([ranks, routed.loc[:, list(ranks.columns)]], ignore_index=True)
        summary = hit_summary(ranks, ["regime", "arm"]).rename(columns={"arm": "policy"})
        summary = _order_regimes(summary)
        store_dir = (
            "temporary (removed)"
            if tmp is not None
            else str(getattr(counting.store, "root", context.work))
        )
        from regime_core.data import corpus_passages

        return DemoResult(
            config=cfg,
            table=summary,
            router_source=router_source,
            share_union=share_union,
            n_passages=len(corpus_passages(examples)),
            n_encoded=counting.n_encoded,
            n_cached=counting.n_cached,
            seconds=time.perf_counter() - started,
            store_dir=store_dir,
        )
    finally:
        if tmp is not None:
            tmp.cleanup()
