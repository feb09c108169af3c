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
``ci_lo``, ``ci_hi``, ``p_value``, ``n``, ``n_a_better`` and ``n_b_better`` (exact McNemar).

Two claims of the abstract are judged on this run:

- **the α rule** (``alpha_rule``): "one rule, α = 0.25, transfers across datasets and encoders".
  Per dataset × encoder, routed hit@k at the main α minus routed hit@k at the *best* α of the
  grid for that pair (:func:`alpha_regret`), paired per question (exact McNemar). The best α is
  chosen on the same questions, so it is optimistic for the best α and makes the rule harder to
  pass; ties go to the α closest to the main one (then the smaller α).
- **pool invariance** (``pool_invariance``): "the router's gain does not depend on how the
  candidate pool is built". Per dataset, the per-question difference between routed − q with
  corpus pools and routed − q with question pools (values −2..2; :func:`gain_difference`: a
  permutation test and a percentile-bootstrap interval), on the same questions: every pool mode
  is evaluated on the main setting's sample.
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
)
from regime_core.experiments.sampling import sample_numbers
from regime_core.router import FEATURE_NAMES, TIE_RULES, describe_label_rule
from regime_core.router.evaluation import (
    COMPARISON_FIELDS,
    COMPARISONS,
    DEFAULT_BOOTSTRAP,
    Bootstrap,
    RoutingOutcome,
    comparison_numbers,
    evaluate_routing,
    paired_hits,
)
from regime_core.router.training import RoutingData, build_routing_data
from regime_core.stats import PairedComparison, compare_paired


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


#: The fields of each paired comparison an ablation row records (``n``: the questions compared).
ROW_FIELDS: tuple[str, ...] = (*COMPARISON_FIELDS, "n")


def comparison_fields(c: PairedComparison) -> dict[str, Any]:
    """:data:`ROW_FIELDS` of a paired comparison
    (:func:`~regime_core.router.evaluation.comparison_numbers` and its ``n``)."""
    return {**comparison_numbers(c), "n": c.n}


def _flat(name: str, c: PairedComparison) -> dict[str, Any]:
    """A comparison as the flat columns ``<name>_<field>`` of a frame (records nest them)."""
    return {f"{name}_{key}": value for key, value in comparison_fields(c).items()}


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
        row.update(_flat(name, outcome.comparison(name)))
    return row


# --------------------------------------------------------------------------------------------
# The two claims judged here (pure kernels)
# --------------------------------------------------------------------------------------------


def choose_best_alpha(
    hit_counts: Mapping[float, int], *, reference: float
) -> tuple[float, tuple[float, ...]]:
    """The α of the grid whose routed hit count is highest, and every α reaching that count.

    Counts are compared exactly (integers). Ties go to the α closest to ``reference`` (the main
    α), then to the smaller α; distances are compared rounded to 12 decimals, so two grid points
    equally far from the reference on paper tie in floating point too.

    >>> choose_best_alpha({0.0: 70, 0.25: 75, 0.5: 75, 1.0: 74}, reference=0.25)
    (0.25, (0.25, 0.5))
    >>> choose_best_alpha({0.0: 75, 0.25: 70, 0.5: 75}, reference=0.25)
    (0.0, (0.0, 0.5))
    """
    if not hit_counts:
        raise ValueError("choose_best_alpha: no α to choose from")
    best = max(int(c) for c in hit_counts.values())
    tied = tuple(sorted(float(a) for a, c in hit_counts.items() if int(c) == best))
    chosen = min(tied, key=lambda a: (round(abs(a - float(reference)), 12), a))
    return chosen, tied


@dataclass(frozen=True)
class AlphaRegret:
    """Routed hit@k at the rule's α against routed hit@k at the best α of the grid, on the same
    questions: ``comparison`` is rule − best (never positive: the best is chosen on these
    questions), paired per question with the exact McNemar interval and p."""

    alpha: float
    best_alpha: float
    tied: tuple[float, ...]  # every α of the grid reaching the best routed hit count
    comparison: PairedComparison

    def to_row(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "best_alpha": self.best_alpha,
            "alphas_tied": len(self.tied),
            "hit_routed_rule": self.comparison.mean_a,
            "hit_routed_best": self.comparison.mean_b,
            **_flat("rule_vs_best", self.comparison),
        }


def alpha_regret(
    routed_hits: Mapping[float, Any],
    *,
    alpha: float,
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> AlphaRegret:
    """The regret of the rule ``alpha`` against the best α of the grid (:func:`choose_best_alpha`)
    for one dataset × encoder; ``routed_hits`` maps each α of the grid to the router's hits
    (booleans, one per question, the same questions for every α); pure."""
    hits = {float(a): np.asarray(h, dtype=bool) for a, h in routed_hits.items()}
    if float(alpha) not in hits:
        raise ValueError(f"alpha_regret: the rule's α {alpha} is not among the grid {sorted(hits)}")
    shapes = {h.shape for h in hits.values()}
    if len(shapes) != 1 or next(iter(shapes))[0] == 0 or len(next(iter(shapes))) != 1:
        raise ValueError(
            f"alpha_regret: every α needs the hits of the same non-empty 1-d set of questions, "
            f"got shapes {sorted(shapes)}"
        )
    best, tied = choose_best_alpha(
        {a: int(h.sum()) for a, h in hits.items()}, reference=float(alpha)
    )
    comparison = paired_hits(hits[float(alpha)], hits[best], ("rule", "best"), bootstrap=bootstrap)
    return AlphaRegret(float(alpha), best, tied, comparison)


def gain_difference(
    ids_a: Sequence[str],
    gain_a: Any,
    ids_b: Sequence[str],
    gain_b: Any,
    *,
    labels: tuple[str, str] = ("a", "b"),
    bootstrap: Bootstrap = DEFAULT_BOOTSTRAP,
) -> PairedComparison:
    """Two settings' per-question gains (routed − q hits, each in −1..1) against each other,
    aligned by question id: ``gain_a − gain_b`` per question (values in −2..2), so not a McNemar
    comparison: the sign-flip permutation test
    (:func:`regime_core.stats.compare_paired` ``test="permutation"``) with a percentile
    bootstrap interval of the mean difference. The two settings must hold the same questions.

    >>> c = gain_difference(["x", "y"], [1, 0], ["y", "x"], [0, 1], bootstrap=Bootstrap(100))
    >>> c.diff, c.n
    (0.0, 2)
    """
    a = np.asarray(gain_a, dtype=float)
    b = np.asarray(gain_b, dtype=float)
    if a.shape != (len(ids_a),) or b.shape != (len(ids_b),):
        raise ValueError(
            f"gain_difference: {len(ids_a)} and {len(ids_b)} ids for gains of shapes "
            f"{a.shape} and {b.shape}"
        )
    position = {qid: i for i, qid in enumerate(ids_b)}
    if len(position) != len(ids_b) or set(ids_a) != set(position) or len(ids_a) != len(ids_b):
        only_a = sorted(set(ids_a) - set(position))[:3]
        only_b = sorted(set(position) - set(ids_a))[:3]
        raise ValueError(
            f"gain_difference: {labels[0]} and {labels[1]} must hold the same distinct "
            f"questions (only in {labels[0]}: {only_a}, only in {labels[1]}: {only_b})"
        )
    if np.any(np.abs(a) > 1) or np.any(np.abs(b) > 1):
        raise ValueError("gain_difference: a gain of hits lies in −1..1")
    b_aligned = b[[position[qid] for qid in ids_a]]
    return compare_paired(
        a,
        b_aligned,
        test="permutation",
        resamples=bootstrap.resamples,
        confidence=bootstrap.confidence,
        seed=bootstrap.seed,
        label_a=labels[0],
        label_b=labels[1],
    )


def routed_gain(outcome: RoutingOutcome) -> np.ndarray:
    """Routed − q per question (−1, 0 or 1)."""
    return outcome.hits["routed"].astype(np.int64) - outcome.hits["q"].astype(np.int64)


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
    samples: Mapping[str, Any],
    encoder: str,
    pool: str,
    context: Context,
) -> tuple[RoutingData, dict[str, RoutingData]]:
    """The routing data of every dataset's ``samples`` with ``encoder`` and ``pool`` (every
    setting is evaluated on the main setting's questions); the training dataset's first."""
    settings = (cfg if pool == cfg.pool else dataclasses.replace(cfg, pool=pool)).retrieval
    data = {
        name: build_routing_data(
            sample,
            settings,
            encoder=context.encoder(encoder, sample.corpus),
            store=context.embeddings,
            encoder_name=encoder,
            bridge_source=cfg.bridge_source,
        )
        for name, sample in samples.items()
    }
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
    rows = []
    for name, cmp in main.soft.items():
        rows.append(
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
    return rows


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
                    **_flat("corpus_vs_question", c),
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
