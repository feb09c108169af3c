"""Ablations of the router: α sweep, a soft variant, leave-one-feature-out, oracle gap, pool mode
and encoder replication.

Every ablation reruns the *whole* recipe under one change — labels from retrieval outcomes on the
training dataset, 5-fold cross-fitting there, a refit on every labelled item applied zero-shot to
the other datasets — so each row answers "what if the paper had made this choice instead":

- **α sweep**: the union weight α in ``f_q(q) + α·f_q(B_rel)``; labels, router and evaluation all
  use that α. ``α = 0`` makes union identical to q: no label can favour union, the router is
  constant (``degenerate``) and routed = q.
- **soft**: no hard decision: every question queries ``f_q(q) + α·p·f_q(B_rel)`` with ``p`` the
  router's probability of union (out of fold on the training dataset).
- **leave one feature out**: the router without one of the five features.
- **label rule**: ties labelled q, union or excluded; labels by rank or by hit@k.
- **oracle gap**: oracle − routed at the main α (what a perfect q/union choice would add).
- **pool mode**: the question's own distractor pool vs the dataset corpus as candidates.
- **encoders**: MiniLM and TF-IDF; the paper's encoders (NV-Embed-v2, BGE-large, e5-mistral) run
  only when their weights are already in the local Hugging Face cache, else they are reported
  as unavailable (never downloaded here).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.experiments.common import EXPERIMENT_ENCODERS, as_tuple, check_datasets
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.router_train import (
    TRAIN_DATASET,
    TRANSFER_DATASETS,
    RecipeConfig,
    fit_recipe,
    load_routing_data,
)
from regime_core.experiments.sampling import sample_numbers
from regime_core.router import FEATURE_NAMES, TIE_RULES, describe_label_rule
from regime_core.router.evaluation import (
    RoutingOutcome,
    comparison_numbers,
    evaluate_routing,
    paired_hits,
)
from regime_core.router.training import RoutingData
from regime_core.stats import PairedComparison


def _paper_encoders() -> tuple[str, ...]:
    from regime_core.encoders import PRESETS

    return tuple(PRESETS)


def number_key(value: float) -> str:
    """A record key for a number (records forbid ``.`` in keys).

    >>> number_key(0.25), number_key(1.0)
    ('0p25', '1p00')
    """
    return f"{value:.2f}".replace(".", "p").replace("-", "m")


def encoder_unavailable_reason(name: str) -> str | None:
    """None when encoder ``name`` can run here without a download, else why it cannot.

    ``minilm`` and ``tfidf`` always can; a preset or hub id can only when its files are already
    in the local Hugging Face cache (checked without touching the network).
    """
    if name in ("minilm", "tfidf"):
        return None
    from huggingface_hub import try_to_load_from_cache

    from regime_core.encoders import PRESETS

    repo = PRESETS[name].model if name in PRESETS else name
    if Path(repo).expanduser().is_dir():
        return None
    for filename in ("modules.json", "config.json"):
        if isinstance(try_to_load_from_cache(repo, filename), str):
            return None
    return (
        f"{repo} is not in the local Hugging Face cache and this machine cannot download it "
        "(no internet); run the notebook where the model is cached, ideally with a GPU"
    )


@dataclass(frozen=True)
class AblationConfig(RecipeConfig):
    """The grid of every ablation; the main setting is (``alpha``, ``pool``, ``encoders[0]``),
    the recipe (label rule, folds, the bridge read) that of
    :class:`~regime_core.experiments.router_train.RecipeConfig`. The router is trained on
    ``train_dataset`` and applied to ``transfer_datasets``; ``encoders`` (the main one first),
    ``paper_encoders``, ``pools`` and ``alphas`` are the grids."""

    pool: str = config.POOL_MODE
    """the pool mode of the main setting"""
    alpha: float = config.ALPHA
    """the α of the main setting: every ablation but the sweep"""
    train_dataset: str = TRAIN_DATASET
    """the dataset the router of every ablation is trained on"""
    transfer_datasets: tuple[str, ...] = TRANSFER_DATASETS
    """the datasets every ablated router is applied to, zero-shot"""
    encoders: tuple[str, ...] = EXPERIMENT_ENCODERS
    """the encoders compared; the first is the main setting's"""
    paper_encoders: tuple[str, ...] = field(default_factory=_paper_encoders)
    """the paper's encoders, run only when their weights are already in the local Hugging Face cache
    (never downloaded)
    """
    pools: tuple[str, ...] = config.POOL_MODES
    """the pool modes compared"""
    alphas: tuple[float, ...] = config.ALPHA_GRID
    """the α values of the sweep"""

    def validate(self) -> None:
        where = type(self).__name__
        for name in ("transfer_datasets", "encoders", "paper_encoders", "pools", "alphas"):
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        check_datasets(self.datasets, f"{where}: train_dataset and transfer_datasets")
        if not self.encoders or len(set(self.encoders)) != len(self.encoders):
            raise ValueError(f"{where}.encoders must be distinct names, got {self.encoders}")
        bad = [p for p in self.pools if p not in config.POOL_MODES]
        if bad:
            raise ValueError(f"{where}.pools: {bad} not among {config.POOL_MODES}")
        alphas = [float(a) for a in self.alphas]
        if not alphas or any(not np.isfinite(a) or a < 0 for a in alphas):
            raise ValueError(f"{where}.alphas must be finite numbers >= 0, got {self.alphas}")
        object.__setattr__(self, "alphas", tuple(sorted(set(alphas))))
        super().validate()

    @property
    def datasets(self) -> tuple[str, ...]:
        """The training dataset, then the transfer datasets."""
        return (self.train_dataset, *self.transfer_datasets)


# --------------------------------------------------------------------------------------------
# The recipe under one change (pure, given the routing data)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecipeOutcome:
    """Training (cross-fitted) and zero-shot outcomes of the recipe under one setting."""

    alpha: float
    columns: tuple[int, ...]
    degenerate: bool  # the labels held one class: the router is constant
    outcomes: Mapping[str, RoutingOutcome]
    soft: Mapping[str, Mapping[str, PairedComparison]]  # dataset -> soft_vs_q, soft_vs_routed
    soft_hits: Mapping[str, float]


def run_recipe(
    train: RoutingData,
    others: Mapping[str, RoutingData],
    cfg: AblationConfig,
    *,
    alpha: float,
    columns: Sequence[int] | None = None,
    soft: bool = False,
) -> RecipeOutcome:
    """Label, cross-fit and refit on ``train`` at ``alpha`` with the feature ``columns``, apply
    the refit to ``others``; optionally the soft variant (B_rel weighted ``alpha·p``)."""
    cols = tuple(range(len(FEATURE_NAMES))) if columns is None else tuple(columns)
    rank_q = train.table["rank_q"].to_numpy()
    rank_union = train.geometry.target_ranks(alpha)
    degenerate = False
    try:
        fitted = fit_recipe(train.X, rank_q, rank_union, cfg, alpha=alpha, columns=cols)
    except ValueError:
        # One label class (e.g. alpha = 0: union is q): the router is the constant q policy.
        degenerate = True
        fitted = None

    outcomes: dict[str, RoutingOutcome] = {}
    probabilities: dict[str, np.ndarray] = {}
    datasets = {train.dataset: train, **others}
    for name, data in datasets.items():
        union_ranks = rank_union if name == train.dataset else data.geometry.target_ranks(alpha)
        if fitted is None:
            p = np.zeros(data.n)
            routed = np.zeros(data.n, dtype=bool)
        elif name == train.dataset:
            p = fitted.probability
            routed = p > fitted.router.threshold
        else:
            Xc = data.X[:, list(cols)]
            p = fitted.router.predict_proba(Xc)[:, 1]
            routed = fitted.router.predict_action(Xc) == "union"
        probabilities[name] = p
        outcomes[name] = evaluate_routing(
            data.hit_q,
            union_ranks <= cfg.k,
            routed,
            p,
            dataset=name,
            k=cfg.k,
            bootstrap=cfg.bootstrap,
        )

    soft_cmp: dict[str, dict[str, PairedComparison]] = {}
    soft_hits: dict[str, float] = {}
    if soft:
        for name, data in datasets.items():
            hit_soft = data.geometry.target_ranks(alpha * probabilities[name]) <= cfg.k
            soft_hits[name] = float(hit_soft.mean())
            soft_cmp[name] = {
                f"soft_vs_{policy}": paired_hits(
                    hit_soft, outcomes[name].hits[policy], ("soft", policy), bootstrap=cfg.bootstrap
                )
                for policy in ("q", "routed")
            }
    return RecipeOutcome(float(alpha), cols, degenerate, outcomes, soft_cmp, soft_hits)


def _outcome_row(outcome: RoutingOutcome, **keys: Any) -> dict[str, Any]:
    c = outcome.comparison("routed_vs_q")
    gap = outcome.comparison("oracle_vs_routed")
    u = outcome.comparison("union_vs_q")
    versus_union = outcome.comparison("routed_vs_union")
    return {
        **keys,
        "dataset": outcome.dataset,
        "n": outcome.n,
        "hit_q": float(outcome.hits["q"].mean()),
        "hit_union": float(outcome.hits["union"].mean()),
        "hit_routed": float(outcome.hits["routed"].mean()),
        "hit_oracle": float(outcome.hits["oracle"].mean()),
        "share_union": float(outcome.routed_union.mean()),
        "delta_union": u.diff,
        "p_union": u.p_value,
        "delta": c.diff,
        "ci_lo": c.ci_lo,
        "ci_hi": c.ci_hi,
        "p_value": c.p_value,
        "oracle_gap": gap.diff,
        "oracle_gap_ci_lo": gap.ci_lo,
        "oracle_gap_ci_hi": gap.ci_hi,
        # what the router adds over always-union, the policy that needs no router
        "delta_vs_union": versus_union.diff,
        "vs_union_ci_lo": versus_union.ci_lo,
        "vs_union_ci_hi": versus_union.ci_hi,
        "p_vs_union": versus_union.p_value,
    }


# --------------------------------------------------------------------------------------------
# The ablation suite
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AblationResult:
    """One table per ablation (rows: setting × dataset); ``to_numbers`` nests them for records."""

    config: AblationConfig
    alpha_sweep: pd.DataFrame
    soft: pd.DataFrame
    leave_one_out: pd.DataFrame
    label_rules: pd.DataFrame
    oracle_gap: pd.DataFrame
    pools: pd.DataFrame
    encoders: pd.DataFrame
    unavailable_encoders: Mapping[str, str]
    samples: Mapping[str, Mapping[str, Any]]

    def to_numbers(self) -> dict[str, Any]:
        def rows(frame: pd.DataFrame, *keys: str) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for row in frame.to_dict(orient="records"):
                node = out
                for key in keys:
                    value = row.pop(key)
                    name = number_key(value) if isinstance(value, float) else str(value)
                    node = node.setdefault(name, {})
                node.update({k: _scalar(v) for k, v in row.items() if _finite(v)})
            return out

        return {
            "samples": dict(self.samples),
            "alpha_sweep": rows(self.alpha_sweep, "dataset", "alpha"),
            "soft": rows(self.soft, "dataset"),
            "leave_one_out": rows(self.leave_one_out, "dataset", "without"),
            "label_rules": rows(self.label_rules, "dataset", "label_rule"),
            "oracle_gap": rows(self.oracle_gap, "dataset"),
            "pools": rows(self.pools, "pool", "dataset"),
            "encoders": rows(self.encoders, "encoder", "dataset"),
            "unavailable_encoders": {k: "unavailable" for k in self.unavailable_encoders},
        }


def _finite(value: Any) -> bool:
    return not (isinstance(value, float | np.floating) and not np.isfinite(value))


def _scalar(value: Any) -> Any:
    if isinstance(value, str | bool | np.bool_):
        return bool(value) if isinstance(value, np.bool_) else value
    if isinstance(value, int | np.integer):
        return int(value)
    return float(value)


def _load(
    cfg: AblationConfig, encoder: str, pool: str, context: Context
) -> tuple[RoutingData, dict[str, RoutingData]]:
    setting = cfg if pool == cfg.pool else dataclasses.replace(cfg, pool=pool)
    data = load_routing_data(setting, cfg.datasets, encoder, cfg.bridge_source, context)
    train = data.pop(cfg.train_dataset)
    return train, data


def run_ablations(
    cfg: AblationConfig | None = None, context: Context | None = None
) -> AblationResult:
    """Every ablation of the module docstring. The main encoder is ``cfg.encoders[0]``."""
    cfg = cfg or AblationConfig()
    context = resolve(context)
    main_encoder = cfg.encoders[0]
    train, others = _load(cfg, main_encoder, cfg.pool, context)
    samples = {d.dataset: sample_numbers(d.sample) for d in (train, *others.values())}

    sweep_rows = []
    for alpha in cfg.alphas:
        recipe = run_recipe(train, others, cfg, alpha=alpha)
        for outcome in recipe.outcomes.values():
            sweep_rows.append(
                _outcome_row(outcome, alpha=float(alpha), degenerate=recipe.degenerate)
            )

    main = run_recipe(train, others, cfg, alpha=cfg.alpha, soft=True)
    soft_rows = []
    for name, cmp in main.soft.items():
        soft_rows.append(
            {
                "dataset": name,
                "hit_q": cmp["soft_vs_q"].mean_b,
                "hit_routed": cmp["soft_vs_routed"].mean_b,
                "hit_soft": main.soft_hits[name],
                **{
                    f"{key}_{k}": v
                    for key, c in cmp.items()
                    for k, v in comparison_numbers(c).items()
                },
            }
        )
    gap_rows = [_outcome_row(o) for o in main.outcomes.values()]

    lofo_rows = [
        _outcome_row(o, without="none", degenerate=main.degenerate) for o in main.outcomes.values()
    ]
    for j, feature in enumerate(FEATURE_NAMES):
        columns = [c for c in range(len(FEATURE_NAMES)) if c != j]
        recipe = run_recipe(train, others, cfg, alpha=cfg.alpha, columns=columns)
        lofo_rows.extend(
            _outcome_row(o, without=feature, degenerate=recipe.degenerate)
            for o in recipe.outcomes.values()
        )

    label_rows = []
    for tie_rule in TIE_RULES:
        for label_k in (None, cfg.k):
            variant = dataclasses.replace(cfg, tie_rule=tie_rule, label_k=label_k)
            recipe = run_recipe(train, others, variant, alpha=cfg.alpha)
            key = f"ties_{tie_rule}_by_" + ("rank" if label_k is None else f"hit{label_k}")
            rule = describe_label_rule(tie_rule=tie_rule, k=label_k)
            label_rows.extend(
                _outcome_row(o, label_rule=key, rule=rule, degenerate=recipe.degenerate)
                for o in recipe.outcomes.values()
            )

    pool_rows = [_outcome_row(o, pool=cfg.pool) for o in main.outcomes.values()]
    for pool in cfg.pools:
        if pool == cfg.pool:
            continue
        p_train, p_others = _load(cfg, main_encoder, pool, context)
        recipe = run_recipe(p_train, p_others, cfg, alpha=cfg.alpha)
        pool_rows.extend(_outcome_row(o, pool=pool) for o in recipe.outcomes.values())
        del p_train, p_others

    unavailable: dict[str, str] = {}
    encoder_rows = [_outcome_row(o, encoder=main_encoder) for o in main.outcomes.values()]
    extra = [e for e in (*cfg.encoders[1:], *cfg.paper_encoders) if e != main_encoder]
    for encoder in dict.fromkeys(extra):
        reason = encoder_unavailable_reason(encoder)
        if reason is not None:
            unavailable[encoder] = reason
            continue
        e_train, e_others = _load(cfg, encoder, cfg.pool, context)
        recipe = run_recipe(e_train, e_others, cfg, alpha=cfg.alpha)
        encoder_rows.extend(_outcome_row(o, encoder=encoder) for o in recipe.outcomes.values())
        del e_train, e_others

    return AblationResult(
        config=cfg,
        alpha_sweep=pd.DataFrame(sweep_rows),
        soft=pd.DataFrame(soft_rows),
        leave_one_out=pd.DataFrame(lofo_rows),
        label_rules=pd.DataFrame(label_rows),
        oracle_gap=pd.DataFrame(gap_rows),
        pools=pd.DataFrame(pool_rows),
        encoders=pd.DataFrame(encoder_rows),
        unavailable_encoders=unavailable,
        samples=samples,
    )
