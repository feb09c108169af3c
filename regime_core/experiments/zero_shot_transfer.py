"""Zero-shot transfer: the frozen router, trained on 2WikiMultiHopQA, applied to other datasets.

Nothing is refitted: the router file (default the packaged model) decides ``q`` or ``union`` for
every two-hop question of MuSiQue and HotpotQA, with ``B_rel`` chosen by the selector and the
union query weighted by the router's own frozen α. Reported per dataset: hit@k of always-q,
always-union, routed and the oracle router, Δ(routed − q) with a paired bootstrap CI and an
exact McNemar p, and the **no-regret check**:

    no_regret  ⇔  not (Δ < 0 and p < 1 − confidence)

i.e. the router is never *significantly worse* than always-q (the paper's HotpotQA claim:
"+1.1 pp, n.s., no regret"). :func:`headline_table` puts the cross-fitted training dataset and
the zero-shot datasets side by side with the paper's numbers (:data:`PAPER_REFERENCE`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.experiments.common import ExperimentConfig
from regime_core.experiments.composed import ROUTING_SHARED, ComposedConfig
from regime_core.experiments.context import Context
from regime_core.experiments.router_train import (
    TRANSFER_DATASETS,
    RouterTrainResult,
    load_routing_data,
)
from regime_core.router import RegimeRouter
from regime_core.router.evaluation import RoutingOutcome
from regime_core.router.model import resolve_router
from regime_core.router.training import (
    RoutingData,
    apply_router,
    breakdown,
    check_bridge_source,
    hop1_numbers,
)

#: The paper's reported ΔR@5 (routed − always-q) and oracle gap, for comparison only; our
#: numbers always come from the records. (arXiv 2604.09019, abstract and summaries.)
PAPER_REFERENCE: dict[str, dict[str, Any]] = {
    "2wikimultihopqa": {"delta": 0.056, "p": "p < 0.001", "setting": "5-fold cross-fitted"},
    "musique": {"delta": 0.053, "p": "p = 0.002", "setting": "zero-shot"},
    "hotpotqa": {"delta": 0.011, "p": "n.s.", "setting": "zero-shot"},
}
PAPER_ORACLE_GAP: float = 0.046  # "an oracle router would add about 4.6 pp more"


def no_regret(diff: float, p_value: float, confidence: float = config.CONFIDENCE) -> bool:
    """The router is not significantly worse than always-q: ``not (diff < 0 and p < 1 − conf)``.

    >>> no_regret(-0.01, 0.4), no_regret(-0.03, 0.01), no_regret(0.05, 0.001)
    (True, False, True)
    """
    return not (diff < 0 and p_value < 1.0 - confidence)


@dataclass(frozen=True, init=False)
class TransferConfig(ComposedConfig):
    """Datasets, encoder and pool the frozen router is applied to.

    ``experiment``: the shared fields (``ExperimentConfig``), flat as ``datasets``, ``encoder``,
    ``pool``, ``k``, ``seed``, ``sample_size``, ``split``, ``bootstrap_resamples``,
    ``confidence``, ``exclude_bridge`` and ``tiny_pools``; its ``alpha`` is not read.
    ``alpha``: the union weight; None uses the router's own frozen α (the paper's setting), a
    number overrides it at evaluation time (an ablation, recorded as such).
    """

    SHARED: ClassVar[Mapping[str, str]] = {
        "datasets": "datasets",
        "encoder": "encoders[0]",
        **{k: v for k, v in ROUTING_SHARED.items() if k != "alpha"},
    }
    FLAT: ClassVar[tuple[str, ...]] = (
        "datasets", "encoder", "pool", "alpha", "k", "seed", "sample_size", "split",
        "bootstrap_resamples", "confidence", "exclude_bridge", "tiny_pools", "bridge_source",
    )  # fmt: skip
    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"alpha"})

    experiment: ExperimentConfig = field(
        default_factory=lambda: ExperimentConfig(
            datasets=TRANSFER_DATASETS, encoders=(config.ENCODER,)
        )
    )
    alpha: float | None = None
    bridge_source: str = config.BRIDGE_SOURCE  # the bridge read: gold hop 1 or retrieved top-1

    def validate(self) -> None:
        super().validate()
        where = type(self).__name__
        check_bridge_source(self.bridge_source, where)
        if len(self.experiment.encoders) != 1:
            raise ValueError(
                f"{where} applies the router with one encoder, got {self.experiment.encoders}"
            )
        if self.experiment.alpha != self.default_experiment().alpha:
            raise ValueError(
                f"{where}: set the union weight with alpha= (None: the router's own); "
                "experiment.alpha is not read"
            )
        if self.alpha is not None and (
            isinstance(self.alpha, bool) or not np.isfinite(self.alpha) or self.alpha < 0
        ):
            raise ValueError(f"{where}.alpha must be None or a finite number >= 0")


@dataclass(frozen=True)
class TransferResult:
    """The frozen router's outcome per dataset."""

    config: TransferConfig
    alpha: float  # the union weight used
    router_alpha: float
    router_training: Mapping[str, Any]
    data: Mapping[str, RoutingData]
    outcomes: Mapping[str, RoutingOutcome]

    def no_regret(self, dataset: str) -> bool:
        c = self.outcomes[dataset].comparison("routed_vs_q")
        return no_regret(c.diff, c.p_value, self.config.confidence)

    def to_numbers(self) -> dict[str, Any]:
        numbers: dict[str, Any] = {
            "alpha": self.alpha,
            "router_alpha": self.router_alpha,
            "router_trained_on": str(self.router_training.get("dataset", "unknown")),
            "router_n_train": int(self.router_training.get("n", 0)),
            "no_regret_rule": "not (diff < 0 and p < 1 - confidence)",
        }
        for dataset, outcome in self.outcomes.items():
            data = self.data[dataset]
            numbers[dataset] = {
                **outcome.to_numbers(),
                "n_available": data.sample.n_available,
                "n_tiny_pool": data.sample.n_tiny_pool,
                "n_parallel": int(data.table["parallel"].sum()),
                "no_regret": self.no_regret(dataset),
                **hop1_numbers(data, outcome, bootstrap=self.config.bootstrap),
                "by_type": {
                    str(r["native_type"]): {"n": int(r["n"]), "share_union": r["share_union"]}
                    for r in breakdown(data, outcome, "native_type").to_dict(orient="records")
                },
            }
        return numbers


def transfer_router(
    model: str | os.PathLike[str] | RegimeRouter | None = None,
    cfg: TransferConfig | None = None,
    context: Context | None = None,
) -> TransferResult:
    """Apply a frozen router (a file, a loaded router, or None for the packaged model) to every
    dataset of ``cfg``, zero-shot."""
    cfg = cfg or TransferConfig()
    router = resolve_router(model)
    alpha = float(router.alpha if cfg.alpha is None else cfg.alpha)
    experiment = dataclasses.replace(cfg.experiment, alpha=alpha)
    data = load_routing_data(experiment, context, bridge_source=cfg.bridge_source)
    outcomes = {
        dataset: apply_router(router, d, bootstrap=cfg.bootstrap) for dataset, d in data.items()
    }
    return TransferResult(
        config=cfg,
        alpha=alpha,
        router_alpha=float(router.alpha),
        router_training=dict(getattr(router, "training_metadata_", {})),
        data=data,
        outcomes=outcomes,
    )


def headline_rows(
    outcomes: Mapping[str, RoutingOutcome], settings: Mapping[str, str]
) -> pd.DataFrame:
    """One row per dataset: Δ hit@k (routed − q) with CI and p, oracle gap, next to the paper."""
    rows = []
    for dataset, outcome in outcomes.items():
        c = outcome.comparison("routed_vs_q")
        gap = outcome.comparison("oracle_vs_routed")
        paper = PAPER_REFERENCE.get(dataset, {})
        rows.append(
            {
                "dataset": dataset,
                "setting": settings.get(dataset, ""),
                "n": outcome.n,
                f"hit@{outcome.k}_q": float(np.mean(outcome.hits["q"])),
                f"hit@{outcome.k}_routed": float(np.mean(outcome.hits["routed"])),
                "delta": c.diff,
                "ci_lo": c.ci_lo,
                "ci_hi": c.ci_hi,
                "p_value": c.p_value,
                "oracle_gap": gap.diff,
                "share_union": float(outcome.routed_union.mean()),
                "paper_delta": paper.get("delta", float("nan")),
                "paper_p": paper.get("p", ""),
                "paper_oracle_gap": PAPER_ORACLE_GAP,
            }
        )
    return pd.DataFrame(rows)


def headline_table(train: RouterTrainResult, transfer: TransferResult) -> pd.DataFrame:
    """The paper's headline: the training dataset cross-fitted, the others zero-shot."""
    outcomes = {train.data.dataset: train.outcome, **transfer.outcomes}
    settings = {train.data.dataset: f"{train.config.n_splits}-fold cross-fitted"}
    settings.update({d: "zero-shot" for d in transfer.outcomes})
    return headline_rows(outcomes, settings)
