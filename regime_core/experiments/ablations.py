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
  as unavailable (never downloaded here). The α sweep runs for every encoder that runs.

Every row of every ablation (setting × dataset) records the five paired comparisons of the
router chapter (:data:`~regime_core.router.evaluation.COMPARISONS`: routed − q, union − q,
routed − union, oracle − routed, oracle − q) under ``comparisons``, each with ``diff``,
``ci_lo``, ``ci_hi``, ``p_value``, ``n``, ``n_a_better`` and ``n_b_better`` (McNemar).
The two claims of the abstract judged on this run are those of
:mod:`~regime_core.experiments.ablation_claims`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.experiments.ablation_claims import (
    ROW_FIELDS,
    alpha_regret,
    flat_columns,
    gain_difference,
    routed_gain,
)
from regime_core.experiments.common import EXPERIMENT_ENCODERS, check_transfer_grid
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.router_train import (
    TRAIN_DATASET,
    TRANSFER_DATASETS,
    RecipeConfig,
    fit_recipe,
    routing_data_of,
)
from regime_core.experiments.sampling import Sample, sample_numbers
from regime_core.inputs import Choice, Items, Text
from regime_core.inputs.configs import ALPHA, NAMES, declared
from regime_core.router import FEATURE_NAMES, TIE_RULES, describe_label_rule
from regime_core.router.evaluation import (
    COMPARISONS,
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

    pool: str = declared(config.POOL_MODE, Choice(config.POOL_MODES))
    """the pool mode of the main setting"""
    alpha: float = declared(config.ALPHA, ALPHA)
    """the α of the main setting: every ablation but the sweep"""
    train_dataset: str = declared(TRAIN_DATASET, Text())
    """the dataset the router of every ablation is trained on"""
    transfer_datasets: tuple[str, ...] = declared(TRANSFER_DATASETS, NAMES)
    """the datasets every ablated router is applied to, zero-shot"""
    encoders: tuple[str, ...] = declared(EXPERIMENT_ENCODERS, NAMES)
    """the encoders compared; the first is the main setting's"""
    paper_encoders: tuple[str, ...] = declared(kind=Items(Text()), factory=_paper_encoders)
    """the paper's encoders, run only when their weights are already in the local Hugging Face cache
    (never downloaded)
    """
    pools: tuple[str, ...] = declared(
        config.POOL_MODES, Items(Choice(config.POOL_MODES), min_items=1)
    )
    """the pool modes compared"""
    alphas: tuple[float, ...] = declared(config.ALPHA_GRID, Items(ALPHA, min_items=1))
    """the α values of the sweep"""

    def validate(self) -> None:
        where = type(self).__name__
        check_transfer_grid(self)
        object.__setattr__(self, "alphas", tuple(sorted(set(self.alphas))))
        super().validate()
        if self.alpha_rule != "fixed":
            raise ValueError(
                f"{where}.alpha_rule is {self.alpha_rule!r}: the ablations sweep α itself (every "
                "point a fixed weight); the calibrated rule is measured by the alpha_transfer run"
            )
        if float(self.alpha) not in self.alphas:
            raise ValueError(
                f"{where}.alphas {self.alphas} must hold alpha ({self.alpha}): the main setting "
                "is a point of the sweep, and the α rule compares it with the best α of the grid"
            )

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
    cfg: RecipeConfig,
    *,
    alpha: float,
    columns: Sequence[int] | None = None,
    soft: bool = False,
    weights: Mapping[str, np.ndarray] | None = None,
) -> RecipeOutcome:
    """Label, cross-fit and refit on ``train`` at ``alpha`` with the feature ``columns``, apply
    the refit to ``others``; optionally the soft variant (B_rel weighted ``alpha·p``).
    ``weights``: per dataset, each question's bridge weight (an α rule's,
    :func:`~regime_core.router.bridge_weight.alpha_weights`) instead of ``alpha`` for all; the
    router then records ``alpha``, the α deployed on ``train``."""
    cols = tuple(range(len(FEATURE_NAMES))) if columns is None else tuple(columns)

    def weight(name: str) -> float | np.ndarray:
        return alpha if weights is None else np.asarray(weights[name], dtype=np.float64)

    rank_q = train.table["rank_q"].to_numpy()
    rank_union = train.geometry.target_ranks(weight(train.dataset))
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
        union_ranks = (
            rank_union if name == train.dataset else data.geometry.target_ranks(weight(name))
        )
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
            hit_soft = data.geometry.target_ranks(weight(name) * probabilities[name]) <= cfg.k
            soft_hits[name] = float(hit_soft.mean())
            soft_cmp[name] = {
                f"soft_vs_{policy}": paired_hits(
                    hit_soft, outcomes[name].hits[policy], ("soft", policy), bootstrap=cfg.bootstrap
                )
                for policy in ("q", "routed")
            }
    return RecipeOutcome(float(alpha), cols, degenerate, outcomes, soft_cmp, soft_hits)


def _outcome_row(outcome: RoutingOutcome, **keys: Any) -> dict[str, Any]:
    """One row of an ablation table: the setting ``keys``, the dataset, hit@k of the four
    policies, the share sent to union and every comparison of
    :data:`~regime_core.router.evaluation.COMPARISONS` as flat columns ``<comparison>_<field>``
    (``routed_vs_q_diff``, ...), which :meth:`AblationResult.to_numbers` nests under
    ``comparisons``."""
    row: dict[str, Any] = {
        **keys,
        "dataset": outcome.dataset,
        "n": outcome.n,
        "hit_q": float(outcome.hits["q"].mean()),
        "hit_union": float(outcome.hits["union"].mean()),
        "hit_routed": float(outcome.hits["routed"].mean()),
        "hit_oracle": float(outcome.hits["oracle"].mean()),
        "share_union": float(outcome.routed_union.mean()),
    }
    for name in COMPARISONS:
        row.update(flat_columns(name, outcome.comparison(name)))
    return row


# --------------------------------------------------------------------------------------------
# The ablation suite
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AblationResult:
    """One table per ablation (rows: setting × dataset); ``to_numbers`` nests them for records.

    ``alpha_sweep`` has one row per encoder × dataset × α; ``alpha_rule`` one per encoder ×
    dataset (:class:`AlphaRegret`); ``pool_invariance`` one per dataset (corpus − question
    pools, :func:`gain_difference`; empty unless both pool modes ran)."""

    config: AblationConfig
    alpha_sweep: pd.DataFrame
    soft: pd.DataFrame
    leave_one_out: pd.DataFrame
    label_rules: pd.DataFrame
    oracle_gap: pd.DataFrame
    pools: pd.DataFrame
    encoders: pd.DataFrame
    alpha_rule: pd.DataFrame
    pool_invariance: pd.DataFrame
    unavailable_encoders: Mapping[str, str]
    samples: Mapping[str, Mapping[str, Any]]

    def to_numbers(self) -> dict[str, Any]:
        def rows(
            frame: pd.DataFrame, *keys: str, nest: Sequence[str] = (), under: str | None = None
        ) -> dict[str, Any]:
            """Rows nested by ``keys``; the flat columns ``<c>_<field>`` of each comparison
            ``c`` of ``nest`` become ``<under>.<c>.<field>`` (``<c>.<field>`` without
            ``under``)."""
            columns = {f"{c}_{f}": (c, f) for c in nest for f in ROW_FIELDS}
            out: dict[str, Any] = {}
            for row in frame.to_dict(orient="records"):
                node = out
                for key in keys:
                    value = row.pop(key)
                    name = number_key(value) if isinstance(value, float) else str(value)
                    node = node.setdefault(name, {})
                for column, value in row.items():
                    if not _finite(value):
                        continue
                    if column in columns:
                        c, f = columns[column]
                        group = node.setdefault(under, {}) if under else node
                        group.setdefault(c, {})[f] = _scalar(value)
                    else:
                        node[column] = _scalar(value)
            return out

        def table(frame: pd.DataFrame, *keys: str) -> dict[str, Any]:
            return rows(frame, *keys, nest=tuple(COMPARISONS), under="comparisons")

        return {
            "samples": dict(self.samples),
            "alpha_sweep": table(self.alpha_sweep, "encoder", "dataset", "alpha"),
            "soft": rows(self.soft, "dataset"),
            "leave_one_out": table(self.leave_one_out, "dataset", "without"),
            "label_rules": table(self.label_rules, "dataset", "label_rule"),
            "oracle_gap": table(self.oracle_gap, "dataset"),
            "pools": table(self.pools, "pool", "dataset"),
            "encoders": table(self.encoders, "encoder", "dataset"),
            "alpha_rule": rows(self.alpha_rule, "encoder", "dataset", nest=("rule_vs_best",)),
            "pool_invariance": rows(self.pool_invariance, "dataset", nest=("corpus_vs_question",)),
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


def _routing_data(
    cfg: AblationConfig,
    samples: Mapping[str, Sample],
    encoder: str,
    pool: str,
    context: Context,
) -> tuple[RoutingData, dict[str, RoutingData]]:
    """The routing data of every dataset's ``samples`` with ``encoder`` and ``pool`` (every
    setting is evaluated on the main setting's questions); the training dataset's first."""
    settings = (cfg if pool == cfg.pool else dataclasses.replace(cfg, pool=pool)).retrieval
    data = routing_data_of(samples, settings, encoder, cfg.bridge_source, context)
    train = data.pop(cfg.train_dataset)
    return train, data


def _runnable_encoders(cfg: AblationConfig) -> tuple[list[str], dict[str, str]]:
    """The encoders that run here (the main one first) and why the others cannot."""
    runnable, unavailable = [cfg.encoders[0]], {}
    for encoder in dict.fromkeys((*cfg.encoders[1:], *cfg.paper_encoders)):
        if encoder == cfg.encoders[0]:
            continue
        reason = encoder_unavailable_reason(encoder)
        if reason is None:
            runnable.append(encoder)
        else:
            unavailable[encoder] = reason
    return runnable, unavailable


def _soft_rows(main: RecipeOutcome) -> list[dict[str, Any]]:
    return [
        {
            "dataset": name,
            "hit_q": cmp["soft_vs_q"].mean_b,
            "hit_routed": cmp["soft_vs_routed"].mean_b,
            "hit_soft": main.soft_hits[name],
            **{f"{key}_{k}": v for key, c in cmp.items() for k, v in comparison_numbers(c).items()},
        }
        for name, cmp in main.soft.items()
    ]


def run_ablations(
    cfg: AblationConfig | None = None, context: Context | None = None
) -> AblationResult:
    """Every ablation of the module docstring. The main encoder is ``cfg.encoders[0]``; every
    setting is evaluated on the same seeded sample of each dataset (drawn once, under the main
    setting), so each row differs from the main one by its one change only."""
    cfg = cfg or AblationConfig()
    context = resolve(context)
    main_encoder = cfg.encoders[0]
    samples = context.samples(cfg, cfg.datasets)
    train, others = _routing_data(cfg, samples, main_encoder, cfg.pool, context)
    sample_rows = {d.dataset: sample_numbers(d.sample) for d in (train, *others.values())}
    encoders, unavailable = _runnable_encoders(cfg)

    # The α sweep, for every encoder: the routing data are built once per encoder; α only
    # reweights B_rel (UnionGeometry.target_ranks), and the recipe is rerun at each α.
    sweep_rows: list[dict[str, Any]] = []
    encoder_rows: list[dict[str, Any]] = []
    rule_rows: list[dict[str, Any]] = []
    at_main_alpha: dict[str, RecipeOutcome] = {}
    for encoder in encoders:
        if encoder == main_encoder:
            e_train, e_others = train, others
        else:
            e_train, e_others = _routing_data(cfg, samples, encoder, cfg.pool, context)
        recipes: dict[float, RecipeOutcome] = {}
        for alpha in cfg.alphas:
            soft = encoder == main_encoder and alpha == cfg.alpha
            recipe = run_recipe(e_train, e_others, cfg, alpha=alpha, soft=soft)
            recipes[alpha] = recipe
            sweep_rows.extend(
                _outcome_row(o, encoder=encoder, alpha=float(alpha), degenerate=recipe.degenerate)
                for o in recipe.outcomes.values()
            )
        at_main = at_main_alpha[encoder] = recipes[float(cfg.alpha)]
        encoder_rows.extend(_outcome_row(o, encoder=encoder) for o in at_main.outcomes.values())
        for dataset in at_main.outcomes:
            regret = alpha_regret(
                {a: r.outcomes[dataset].hits["routed"] for a, r in recipes.items()},
                alpha=cfg.alpha,
                bootstrap=cfg.bootstrap,
            )
            rule_rows.append({"encoder": encoder, "dataset": dataset, **regret.to_row()})
        del e_train, e_others
    main = at_main_alpha[main_encoder]

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

    label_rows: list[dict[str, Any]] = []
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

    # Pools: the main setting's questions under every pool mode, so the modes pair per question.
    by_pool: dict[str, tuple[RecipeOutcome, dict[str, tuple[str, ...]]]] = {
        cfg.pool: (main, _ids(train, others))
    }
    for pool in cfg.pools:
        if pool in by_pool:
            continue
        p_train, p_others = _routing_data(cfg, samples, main_encoder, pool, context)
        by_pool[pool] = (
            run_recipe(p_train, p_others, cfg, alpha=cfg.alpha),
            _ids(p_train, p_others),
        )
        del p_train, p_others
    pool_rows = [
        _outcome_row(o, pool=pool) for pool, (r, _) in by_pool.items() for o in r.outcomes.values()
    ]
    invariance_rows = []
    if {"corpus", "question"} <= set(by_pool):
        (corpus, corpus_ids), (question, question_ids) = by_pool["corpus"], by_pool["question"]
        for dataset, outcome in corpus.outcomes.items():
            c = gain_difference(
                corpus_ids[dataset],
                routed_gain(outcome),
                question_ids[dataset],
                routed_gain(question.outcomes[dataset]),
                labels=("corpus", "question"),
                bootstrap=cfg.bootstrap,
            )
            invariance_rows.append(
                {
                    "dataset": dataset,
                    "gain_corpus": c.mean_a,
                    "gain_question": c.mean_b,
                    "test": c.test,
                    "ci_method": c.ci_method,
                    **flat_columns("corpus_vs_question", c),
                }
            )

    return AblationResult(
        config=cfg,
        alpha_sweep=pd.DataFrame(sweep_rows),
        soft=pd.DataFrame(_soft_rows(main)),
        leave_one_out=pd.DataFrame(lofo_rows),
        label_rules=pd.DataFrame(label_rows),
        oracle_gap=pd.DataFrame(gap_rows),
        pools=pd.DataFrame(pool_rows),
        encoders=pd.DataFrame(encoder_rows),
        alpha_rule=pd.DataFrame(rule_rows),
        pool_invariance=pd.DataFrame(invariance_rows),
        unavailable_encoders=unavailable,
        samples=sample_rows,
    )


def _ids(train: RoutingData, others: Mapping[str, RoutingData]) -> dict[str, tuple[str, ...]]:
    """The question ids of every dataset's routing data, in their row order."""
    return {d.dataset: tuple(d.table["qid"]) for d in (train, *others.values())}
