"""Zero-shot transfer: the frozen router, trained on 2WikiMultiHopQA, applied to other datasets.

Nothing is refitted: the router file (default the packaged model) decides ``q`` or ``union`` for
every two-hop question of MuSiQue and HotpotQA, with ``B_rel`` chosen by the selector and the
union query weighted by the router's own frozen α. Reported per dataset: hit@k of always-q,
always-union, routed and the oracle router, Δ(routed − q) with a paired bootstrap CI and an
McNemar p, and the **no-regret check**:

    no_regret  ⇔  not (Δ < 0 and p < 1 − confidence)

i.e. the router is never *significantly worse* than always-q (the rule ``no_loss`` of a claim
of ``paper_claims.yml``). :func:`headline_table` puts the cross-fitted training dataset and
the zero-shot datasets side by side with the paper's numbers (:data:`PAPER_REFERENCE`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from regime_core import config, paths
from regime_core.experiments.common import RunConfig, check_datasets
from regime_core.experiments.context import Context
from regime_core.experiments.router_train import (
    TRAINED_ROUTER_FILE,
    TRANSFER_DATASETS,
    RecipeConfig,
    RouterTrainResult,
    load_routing_data,
    with_selector,
)
from regime_core.inputs import Choice, Nullable, Text
from regime_core.inputs.configs import ALPHA, NAMES, declared
from regime_core.paper import claim_where, load_roles
from regime_core.router import RegimeRouter
from regime_core.router.bridge_weight import alpha_weights
from regime_core.router.evaluation import RoutingOutcome
from regime_core.router.model import default_router_path, resolve_router
from regime_core.router.selector_evaluation import check_selector
from regime_core.router.training import (
    RoutingData,
    apply_router,
    breakdown,
    hop1_numbers,
)
from regime_core.runner.records import Record, get_number

#: The paper's reported ΔR@5 (routed − always-q) and oracle gap, for comparison only; our
#: numbers always come from the records. (paper_claims.yml: arXiv 2604.09019, abstract.)
PAPER_REFERENCE: dict[str, dict[str, Any]] = {
    str(load_roles()[role].paper): {
        "delta": c.number("value"),
        "p": c.p_text(),
        "setting": c.paper["setting"],
    }
    for role in ("training", "transfer_1", "transfer_2")
    for c in [claim_where(comparison="routed_vs_q", data=[role])]
}
PAPER_ORACLE_GAP: float = claim_where(comparison="oracle_vs_routed").number("value")  # "≈ 4.6 pp"
#: The fields a transfer run shares with the router recipe (the router's selector is its own).
_RUN_FIELDS = dataclasses.fields(RunConfig)


def no_regret(diff: float, p_value: float, confidence: float = config.CONFIDENCE) -> bool:
    """The router is not significantly worse than always-q: ``not (diff < 0 and p < 1 − conf)``.

    >>> no_regret(-0.01, 0.4), no_regret(-0.03, 0.01), no_regret(0.05, 0.001)
    (True, False, True)
    """
    return not (diff < 0 and p_value < 1.0 - confidence)


@dataclass(frozen=True)
class TransferConfig(RunConfig):
    """The ``datasets`` and the ``encoder`` the frozen router is applied to, and the union
    weight ``alpha``: None uses the router's own frozen α (the paper's setting), a number
    overrides it at evaluation time (an ablation, recorded as such)."""

    NONE_IS_VALUE: ClassVar[frozenset[str]] = frozenset({"sample_size", "alpha"})

    alpha: float | None = declared(None, Nullable(ALPHA))  # type: ignore[assignment]  # None: the router's own α
    """None keeps the router's own frozen α (the paper's setting); a number replaces the union
    weight at evaluation, as an ablation
    """
    datasets: tuple[str, ...] = declared(TRANSFER_DATASETS, NAMES)
    """the datasets the frozen router is applied to, zero-shot"""
    encoder: str = declared(config.ENCODER, Text())
    # the bridge read: gold hop 1 or retrieved top-1
    bridge_source: str = declared(config.BRIDGE_SOURCE, Choice(config.BRIDGE_SOURCES))

    def validate(self) -> None:
        check_datasets(self.datasets, f"{type(self).__name__}.datasets")
        super().validate()


@dataclass(frozen=True)
class TransferResult:
    """The frozen router's outcome per dataset."""

    config: TransferConfig
    alpha: float  # the union weight used
    router_alpha: float
    router_training: Mapping[str, Any]
    data: Mapping[str, RoutingData]
    outcomes: Mapping[str, RoutingOutcome]
    #: the α rule applied: the router file's (``fixed`` when the config overrides α)
    alpha_rule: str = "fixed"

    def no_regret(self, dataset: str) -> bool:
        c = self.outcomes[dataset].comparison("routed_vs_q")
        return no_regret(c.diff, c.p_value, self.config.confidence)

    def to_numbers(self) -> dict[str, Any]:
        numbers: dict[str, Any] = {
            "alpha": self.alpha,
            "router_alpha": self.router_alpha,
            "alpha_rule": self.alpha_rule,
            "router_trained_on": str(self.router_training.get("dataset", "unknown")),
            "router_n_train": int(self.router_training.get("n", 0)),
            "no_regret_rule": "not (diff < 0 and p < 1 - confidence)",
        }
        for dataset, outcome in self.outcomes.items():
            data = self.data[dataset]
            numbers[dataset] = {
                **outcome.to_numbers(),
                "alpha": float(data.settings.alpha),  # the α applied here (the rule's)
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
    cfg: TransferConfig | None = None,
    context: Context | None = None,
    *,
    model: str | os.PathLike[str] | RegimeRouter | None = None,
) -> TransferResult:
    """Apply a frozen router (a file, a loaded router, or None for the packaged model) to every
    dataset of ``cfg``, zero-shot."""
    cfg = cfg or TransferConfig()
    router = resolve_router(model)
    alpha = float(router.alpha if cfg.alpha is None else cfg.alpha)
    # the union weight applied: the router's own unless the config sets one
    applied = dataclasses.replace(cfg, alpha=alpha)
    data = load_routing_data(applied, applied.datasets, cfg.encoder, cfg.bridge_source, context)
    selector = router_selector(router)
    if selector != "rule":  # the B_rel the router was trained with (gold or first)
        recipe = RecipeConfig(
            **{f.name: getattr(applied, f.name) for f in _RUN_FIELDS}, selector=selector
        )
        data = with_selector(data, recipe, context, train_dataset="")
    rule = router_alpha_rule(router)
    if cfg.alpha is None and rule["rule"] == "calibrated":
        # the rule the router was trained under: its deployment c times each dataset's own
        # spread ratio (label-free), on the B_rel it reads
        weights = alpha_weights(
            data, "calibrated", alpha=alpha, train_dataset="", scale=float(rule["scale"])
        )
        data = weights.apply(data)
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
        alpha_rule=rule["rule"] if cfg.alpha is None else "fixed",
    )


def router_alpha_rule(router: RegimeRouter) -> dict[str, Any]:
    """The α rule a router file records (:mod:`regime_core.router.io`; a router fitted here or
    a file without the field: fixed)."""
    return dict(getattr(router, "alpha_rule_", {"rule": "fixed"}))


def router_selector(router: RegimeRouter) -> str:
    """The ``B_rel`` selector a router file says it was trained with (``training.extra.selector``;
    files written before the knob existed: the rule). Raises ValueError for ``learned``, whose
    fitted selector a router file does not hold: its zero-shot numbers are the router-training
    run's (``selection`` in its record)."""
    extra = dict(getattr(router, "training_metadata_", {})).get("extra", {})
    selector = str(extra.get("selector", "rule")) if isinstance(extra, Mapping) else "rule"
    check_selector(selector, "the router file's training.extra")
    if selector not in ("rule", "gold", "first"):
        raise ValueError(
            f"the router file was trained with selector {selector!r}, whose fitted model a "
            "router file does not keep, so zero-shot transfer cannot choose its B_rel; apply a "
            "router trained with the rule (the packaged one), or read the zero-shot numbers of "
            "every selector in the router_train record's 'selection' node"
        )
    return selector


def selection_numbers(train_record: Record, datasets: Sequence[str]) -> dict[str, Any]:
    """The router-training record's ``selection`` node for ``datasets`` (each zero-shot there:
    the router trained on the training set with each selector, applied with it), with the
    protocol's keys; ``{}`` when that record has none.

    A dataset the router-training run did not measure (its ``selector_datasets`` did not name
    it: a dataset of one's own, say) is not dropped: it is listed under ``not_measured`` with
    the reason, which the table and the page show.

    >>> record = Record({"numbers": {"selection": {"k": 5, "musique": {"routed": {}}}}})
    >>> selection_numbers(record, ["musique", "mine"])["not_measured"]["mine"]
    'the router-training run measured selection on musique only; run it with mine among its \
selector_datasets'
    """
    try:
        selection = train_record.node("selection")
    except KeyError:
        return {}
    measured = [k for k, v in selection.items() if isinstance(v, Mapping) and "routed" in v]
    kept = {k: v for k, v in selection.items() if not isinstance(v, Mapping) or k == "coefficients"}
    found = {d: selection[d] for d in datasets if d in measured}
    missing = {
        d: (
            f"the router-training run measured selection on {', '.join(measured) or 'nothing'} "
            f"only; run it with {d} among its selector_datasets"
        )
        for d in datasets
        if d not in measured
    }
    return {**kept, **found, **({"not_measured": missing} if missing else {})}


def router_file_path(choice: str, work: Path | None) -> Path:
    """Where the router ``choice`` is (whether or not it exists): ``"packaged"`` (the package's
    default router), ``"trained"`` (the one the router-training run wrote under ``work``) or a
    path. A variant's identity hashes the file (:mod:`regime_core.runner.identity`)."""
    if choice == "packaged":
        return default_router_path()
    if choice == "trained":
        return paths.results_dir(work) / "router_train" / TRAINED_ROUTER_FILE
    return Path(choice)


def train_record_path(choice: str | None, work: Path | None) -> Path:
    """The router-training record a transfer run repeats: ``choice``, else (None) the default
    record ``<work>/results/router_train/record.json``."""
    if choice is None:
        return paths.results_dir(work) / "router_train" / "record.json"
    return Path(choice)


def router_path(choice: str, work: Path | None) -> Path:
    """The router file a transfer run applies (:func:`router_file_path`), which must exist."""
    path = router_file_path(choice, work)
    if not path.is_file():
        raise FileNotFoundError(f"router file {path} not found (router_file={choice!r})")
    return path


def training_numbers(train_record: Mapping[str, Any]) -> dict[str, Any]:
    """What the transfer record repeats of the router-training record, for the headline table:
    the training dataset, its n, routed − q and the oracle gap, routed − union."""

    def comparison(name: str) -> dict[str, Any]:
        keys = ("diff", "ci_lo", "ci_hi", "p_value")
        return {key: get_number(train_record, f"train.outcome.{name}.{key}") for key in keys}

    return {
        "dataset": get_number(train_record, "train.dataset"),
        "n": get_number(train_record, "train.n"),
        **comparison("routed_vs_q"),
        "oracle_gap": get_number(train_record, "train.outcome.oracle_vs_routed.diff"),
        "vs_union": comparison("routed_vs_union"),
    }


def paper_numbers() -> dict[str, Any]:
    """The paper's ΔR@5 and p per dataset and its oracle gap, for the headline table."""
    numbers: dict[str, Any] = {
        name: {"delta": ref["delta"], "p": ref["p"]} for name, ref in PAPER_REFERENCE.items()
    }
    numbers["oracle_gap"] = PAPER_ORACLE_GAP
    return numbers


def headline_table(train: RouterTrainResult, transfer: TransferResult) -> pd.DataFrame:
    """The paper's headline, one row per dataset: the training dataset cross-fitted, the others
    zero-shot; Δ hit@k (routed − q) with CI and p, and the oracle gap, next to the paper."""
    outcomes = {train.data.dataset: train.outcome, **transfer.outcomes}
    rows = []
    for dataset, outcome in outcomes.items():
        c = outcome.comparison("routed_vs_q")
        paper = PAPER_REFERENCE.get(dataset, {})
        rows.append(
            {
                "dataset": dataset,
                "setting": "zero-shot"
                if dataset in transfer.outcomes
                else f"{train.config.n_splits}-fold cross-fitted",
                "n": outcome.n,
                f"hit@{outcome.k}_q": float(np.mean(outcome.hits["q"])),
                f"hit@{outcome.k}_routed": float(np.mean(outcome.hits["routed"])),
                "delta": c.diff,
                "ci_lo": c.ci_lo,
                "ci_hi": c.ci_hi,
                "p_value": c.p_value,
                "oracle_gap": outcome.comparison("oracle_vs_routed").diff,
                "share_union": float(outcome.routed_union.mean()),
                "paper_delta": paper.get("delta", float("nan")),
                "paper_p": paper.get("p", ""),
                "paper_oracle_gap": PAPER_ORACLE_GAP,
            }
        )
    return pd.DataFrame(rows)
