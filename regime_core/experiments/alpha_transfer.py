"""Beyond the paper: a bridge weight that transfers. The score geometry, the union α
curves, every α rule's weight and regret, and the router retrained under the fixed and the
calibrated rule, per dataset × encoder.

The rule ``α(S) = c·R(S)``, its inputs and its fitting protocol are
:mod:`regime_core.retrieval.alpha_rule`'s (``c`` fitted on ``train_dataset`` with the first of
``encoders``). What this run measures, per dataset × encoder:

- **the geometry**: σ_q, σ_B and their ratio, for all questions and per regime, with the
  questions left out of the ratio (a zero spread on either side) counted;
- **the union α curve** on the fine grid (union hit@k at each α) and the best grid α, chosen two
  ways: ``cross_fitted`` (each fold at the α best on the other folds: the best a user could tune
  with that dataset's labels) and ``in_sample`` (the maximum on all the questions: optimistic);
- **every rule** of :data:`~regime_core.retrieval.alpha_rule.RULE_VARIANTS` (``fixed`` 0.25,
  ``calibrated``, ``calibrated_question``, ``tuned_fixed``: all reported), its α and union hit@k,
  and its **regret** against each best (best − rule, paired per question: bootstrap interval,
  McNemar);
- ``calibrated_vs_fixed``: union hit@k under the calibrated rule minus under the fixed one,
  per question (it equals regret(fixed) − regret(calibrated), the best cancelling): the value the
  claim of ``paper_claims.yml`` judged on this run reads on every pair but the fitting one;
  beside it every variant against the fixed rule and the calibrated rule against the tuned
  constant (:data:`VERSUS`);
- **routing under each rule** (``fixed``, ``calibrated``): the router retrained at that rule's
  weights, by the ablations' recipe (:func:`~regime_core.experiments.ablations.run_recipe`:
  labels and cross-fitting on the training dataset, the refit zero-shot elsewhere), and its
  routed − always-q and routed − always-union.

**The other item set** (:mod:`regime_core.data.item_sets`): every pair but the fitting one is
measured again on the items of each item set other than the config's own (the default reads
``all``, so ``strict``), with the rules as fitted above (``c`` unchanged, as the claim's
protocol applies it; the dataset rule's ``R(S)`` is that set's median ratio) and recorded under
``item_sets.<item set>.pairs`` with the same keys, the routers excepted (not retrained there).
The diagnosis of that claim reads it: does the claim's verdict depend on which
questions are kept?

On the fitting pair every calibrated weight is cross-fitted (``c`` from the other folds), as is
``tuned_fixed`` (each fold at the grid α best on the other folds, so its regret against the
cross-fitted best is zero by construction there). On the other encoders' training dataset
nothing is fitted: it is a transfer pair like any other (the router is still trained there).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from regime_core import config
from regime_core.data.item_sets import ITEM_SETS
from regime_core.data.regimes import REGIMES
from regime_core.experiments.ablations import encoder_unavailable_reason, number_key, run_recipe
from regime_core.experiments.common import EXPERIMENT_ENCODERS, check_transfer_grid
from regime_core.experiments.context import Context, resolve
from regime_core.experiments.router_train import (
    TRAIN_DATASET,
    TRANSFER_DATASETS,
    RecipeConfig,
    load_routing_data,
    with_selector,
)
from regime_core.experiments.sampling import sample_numbers
from regime_core.inputs import Text
from regime_core.inputs.configs import NAMES, declared
from regime_core.retrieval.alpha_rule import (
    RULE_VARIANTS,
    AlphaRuleProtocol,
    FittedRule,
    cross_fitted_best,
    fit_rule,
    grid_hits,
    in_sample_best,
    rule_weights,
    union_hits,
)
from regime_core.retrieval.spread import ScoreSpreads, measure_spreads, median_ratio, spread_table
from regime_core.router.bridge_weight import AlphaWeights, alpha_weights, rule_folds
from regime_core.router.evaluation import RoutingOutcome, comparison_numbers, paired_hits
from regime_core.router.training import RoutingData
from regime_core.stats import PairedComparison

#: The rules compared head to head on each pair's questions, ``(a, b)`` recorded as
#: ``a_vs_b`` (a − b): each variant against the paper's fixed α, and the calibrated rule against
#: the tuned constant (does the geometry do the work, or a better constant?).
VERSUS: tuple[tuple[str, str], ...] = (
    ("calibrated", "fixed"),
    ("calibrated_question", "fixed"),
    ("tuned_fixed", "fixed"),
    ("calibrated", "tuned_fixed"),
)
#: The comparisons of the routed policy recorded under each rule.
ROUTING_COMPARISONS: tuple[str, ...] = ("routed_vs_q", "routed_vs_union")


@dataclass(frozen=True)
class AlphaTransferConfig(RecipeConfig):
    """The datasets and encoders the rules are measured on; the router recipe (label rule,
    folds, seed, the bridge read, the selector) is
    :class:`~regime_core.experiments.router_train.RecipeConfig`'s. ``alpha`` is the fixed rule's
    weight; the calibrated rule is fitted on ``train_dataset`` with ``encoders[0]``."""

    train_dataset: str = declared(TRAIN_DATASET, Text())
    """the dataset the calibrated rule's c is fitted on and the router is trained on"""
    transfer_datasets: tuple[str, ...] = declared(TRANSFER_DATASETS, NAMES)
    """the datasets the rules and the router are applied to, unchanged"""
    encoders: tuple[str, ...] = declared(EXPERIMENT_ENCODERS, NAMES)
    """the encoders measured; c is fitted with the first and applied unchanged to the others"""

    def validate(self) -> None:
        where = type(self).__name__
        check_transfer_grid(self)
        super().validate()
        if self.alpha_rule != config.ALPHA_RULE:
            raise ValueError(
                f"{where}.alpha_rule is {self.alpha_rule!r}: this run measures every rule "
                f"({', '.join(RULE_VARIANTS)}) side by side; leave the knob at its default"
            )

    @property
    def datasets(self) -> tuple[str, ...]:
        """The training dataset, then the transfer datasets."""
        return (self.train_dataset, *self.transfer_datasets)

    @property
    def protocol(self) -> AlphaRuleProtocol:
        """The calibrated rule's protocol under this config (its grid, k, folds and seed)."""
        return AlphaRuleProtocol(
            train_dataset=self.train_dataset,
            train_encoder=self.encoders[0],
            k=self.k,
            n_splits=self.n_splits,
            seed=self.seed,
            fixed_alpha=float(self.alpha),
        )


# --------------------------------------------------------------------------------------------
# One dataset under one encoder (pure, given its routing data)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """A dataset's spreads, ratios, the protocol's folds and union hits on the grid."""

    data: RoutingData
    spreads: ScoreSpreads
    ratios: np.ndarray
    folds: np.ndarray
    grid: np.ndarray
    hits: np.ndarray  # (len(grid), n)

    def hits_at(self, weights: float | np.ndarray, k: int) -> np.ndarray:
        """Union hits at one weight (a grid row when it lies on the grid) or per question."""
        if np.ndim(weights) == 0 and float(weights) in self.grid:
            return self.hits[int(np.flatnonzero(self.grid == float(weights))[0])]
        return union_hits(self.data.geometry, weights, k)


def measure(
    data: RoutingData, protocol: AlphaRuleProtocol, whole: Measured | None = None
) -> Measured:
    """:class:`Measured` of ``data`` under ``protocol``, its spreads, ratios and grid hits cut
    from ``whole`` when that holds each question of ``data`` with the same ``B_rel`` (each
    question's read its own vectors and candidates only; the folds are ``data``'s own)."""
    grid = np.asarray(protocol.grid, dtype=np.float64)
    folds = rule_folds(data, protocol)
    at = {key: i for i, key in enumerate(_question_keys(whole.data))} if whole is not None else {}
    found = [at.get(key) for key in _question_keys(data)]
    if whole is not None and None not in found:
        i, s = np.asarray(found, dtype=np.int64), whole.spreads
        columns = (getattr(s, f.name)[i] for f in dataclasses.fields(s) if f.name != "query_ids")
        spreads = ScoreSpreads(tuple(s.query_ids[j] for j in i), *columns)
        return Measured(data, spreads, whole.ratios[i], folds, grid, whole.hits[:, i])
    spreads = measure_spreads(data.geometry)
    ratios = spreads.ratios(protocol.candidates)
    return Measured(data, spreads, ratios, folds, grid, grid_hits(data.geometry, grid, protocol.k))


def _question_keys(d: RoutingData) -> list[tuple[str, object]]:
    return list(zip(d.table["qid"], d.table["b_rel_index"].tolist(), strict=True))


@dataclass(frozen=True)
class Fit:
    """The rules fitted on the fitting pair: ``fitted[scope]`` (``dataset``, ``question``) and
    ``tuned_alpha`` (its in-sample best grid α, the ``tuned_fixed`` control's constant)."""

    measured: Measured
    fitted: Mapping[str, FittedRule]
    tuned_alpha: float

    def to_numbers(self) -> dict[str, Any]:
        d = self.fitted["dataset"]
        return {
            "dataset": self.measured.data.dataset,
            "encoder": self.measured.data.encoder,
            "n": self.measured.data.n,
            "ratio": median_ratio(self.measured.ratios),
            "c": d.c,
            "c_question": self.fitted["question"].c,
            "fold_c": {f"fold{i}": c for i, c in enumerate(d.fold_c)},
            "tuned_fixed_alpha": self.tuned_alpha,
            "deployed_alpha": d.c * median_ratio(self.measured.ratios),
        }


def fit_rules(m: Measured, protocol: AlphaRuleProtocol) -> Fit:
    """Both scopes of the calibrated rule fitted (and cross-fitted) on ``m``, and its best α."""
    fitted = {
        scope: fit_rule(
            m.data.geometry,
            m.ratios,
            m.folds,
            scope=scope,
            grid=m.grid,
            k=protocol.k,
            hits=m.hits if scope == "dataset" else None,
        )
        for scope in ("dataset", "question")
    }
    return Fit(m, fitted, in_sample_best(m.hits, m.grid)[0])


def rule_outcome(
    name: str, m: Measured, fit: Fit, *, fitting: bool, protocol: AlphaRuleProtocol
) -> tuple[float, np.ndarray]:
    """(the rule's α, its union hits) on ``m``; on the fitting pair the cross-fitted ones. The α
    of a per-question rule is the median of its weights."""
    k = protocol.k
    if name == "fixed":
        return protocol.fixed_alpha, m.hits_at(protocol.fixed_alpha, k)
    if name == "tuned_fixed":
        if fitting:
            alphas, hits = cross_fitted_best(m.hits, m.grid, m.folds)
            return float(np.median(alphas)), hits
        return fit.tuned_alpha, m.hits_at(fit.tuned_alpha, k)
    scope = "dataset" if name == "calibrated" else "question"
    fitted = fit.fitted[scope]
    if fitting:
        return fitted.alpha, fitted.hits
    weights = rule_weights(scope, fitted.c, m.ratios)
    alpha = float(np.median(weights))
    return alpha, m.hits_at(alpha if scope == "dataset" else weights, k)


@dataclass(frozen=True)
class PairResult:
    """One dataset under one encoder: its measurements, each rule's α and hits, the best grid
    α both ways, the regrets and the routers under each routed rule."""

    measured: Measured
    fitting: bool  # the fitting pair (excluded from the claim's judgement)
    rules: Mapping[str, tuple[float, np.ndarray]]
    best: Mapping[str, tuple[np.ndarray, np.ndarray]]  # choice -> (α: one, or one per fold; hits)
    regrets: Mapping[str, Mapping[str, PairedComparison]]  # rule -> best choice -> best − rule
    versus: Mapping[str, PairedComparison]  # VERSUS: a_vs_b, a − b per question
    routing: Mapping[str, RoutingOutcome]  # routed rule -> outcome
    routing_alpha: Mapping[str, float]  # routed rule -> α applied (the dataset's)

    def to_numbers(self) -> dict[str, Any]:
        m = self.measured
        grid = m.grid
        edge = (float(grid[0]), float(grid[-1]))
        out: dict[str, Any] = {"n": m.data.n, "fitting_pair": self.fitting}
        out["spreads"] = _spread_numbers(m)
        curve = m.hits.mean(axis=1)
        out["curve"] = {number_key(float(a)): float(h) for a, h in zip(grid, curve, strict=True)}
        regime = m.data.table["regime"].astype(str).to_numpy()
        for name in REGIMES:
            mask = regime == name
            if mask.any():
                out[f"curve_{name}"] = {
                    number_key(float(a)): float(h)
                    for a, h in zip(grid, m.hits[:, mask].mean(axis=1), strict=True)
                }
        in_alpha = float(self.best["in_sample"][0][0])
        fold_alpha = self.best["cross_fitted"][0]
        out["best"] = {
            "in_sample": in_alpha,
            "in_sample_hit": float(self.best["in_sample"][1].mean()),
            "in_sample_at_grid_edge": in_alpha in edge,
            "cross_fitted_median": float(np.median(fold_alpha)),
            "cross_fitted_hit": float(self.best["cross_fitted"][1].mean()),
            "cross_fitted": {f"fold{i}": float(a) for i, a in enumerate(fold_alpha)},
        }
        out["rules"] = {
            name: {
                "alpha": float(a),
                "hit": float(h.mean()),
                "at_grid_edge": bool(a <= edge[0] or a >= edge[1]),
            }
            for name, (a, h) in self.rules.items()
        }
        out["regret"] = {
            rule: {choice: _comparison(c) for choice, c in by.items()}
            for rule, by in self.regrets.items()
        }
        for name, c in self.versus.items():
            out[name] = _comparison(c)
        out["routing"] = {
            rule: {
                "alpha": float(self.routing_alpha[rule]),
                "hit_routed": float(o.hits["routed"].mean()),
                "share_union": float(o.routed_union.mean()),
                **{name: _comparison(o.comparison(name)) for name in ROUTING_COMPARISONS},
            }
            for rule, o in self.routing.items()
        }
        return out


def _comparison(c: PairedComparison) -> dict[str, Any]:
    return {"n": c.n, "mean_a": c.mean_a, "mean_b": c.mean_b, **comparison_numbers(c)}


def _spread_numbers(m: Measured) -> dict[str, Any]:
    """Per group (``all`` and each regime) and candidate set, the spread summary; a statistic
    without a value (no question with a ratio) is left out, the counts always kept."""
    regime = m.data.table["regime"].astype(str).to_numpy()
    tables = [
        spread_table(m.spreads).assign(regime="all"),
        spread_table(m.spreads, {"regime": regime}),
    ]
    out: dict[str, Any] = {}
    for row in pd.concat(tables, ignore_index=True).to_dict("records"):
        cell = {
            k: (int(v) if k.startswith("n") else float(v))
            for k, v in row.items()
            if k not in ("regime", "candidates") and (k.startswith("n") or np.isfinite(v))
        }
        key = "all" if row["candidates"] == "ranked" else "distractors"
        out.setdefault(str(row["regime"]), {})[key] = cell
    return out


def measure_pair(
    m: Measured,
    fit: Fit,
    *,
    fitting: bool,
    protocol: AlphaRuleProtocol,
    routing: Mapping[str, RoutingOutcome],
    routing_alpha: Mapping[str, float],
    cfg: RecipeConfig,
) -> PairResult:
    """Every rule, both bests and the regrets on one measured pair; pure."""
    rules = {
        name: rule_outcome(name, m, fit, fitting=fitting, protocol=protocol)
        for name in RULE_VARIANTS
    }
    in_alpha, in_hits = in_sample_best(m.hits, m.grid)
    fold_alphas, fold_hits = cross_fitted_best(m.hits, m.grid, m.folds)
    best = {"cross_fitted": (fold_alphas, fold_hits), "in_sample": (np.array([in_alpha]), in_hits)}
    regrets = {
        rule: {
            choice: paired_hits(
                hits_best, hits, (f"best ({choice})", rule), bootstrap=cfg.bootstrap
            )
            for choice, (_, hits_best) in best.items()
        }
        for rule, (_, hits) in rules.items()
    }
    versus = {
        f"{a}_vs_{b}": paired_hits(rules[a][1], rules[b][1], (a, b), bootstrap=cfg.bootstrap)
        for a, b in VERSUS
    }
    return PairResult(m, fitting, rules, best, regrets, versus, routing, routing_alpha)


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlphaTransferResult:
    """The fit on the fitting pair and every pair's :class:`PairResult` (``pairs[encoder]
    [dataset]``), the routers' weights per encoder and rule, and the seconds spent."""

    config: AlphaTransferConfig
    fit: Fit
    pairs: Mapping[str, Mapping[str, PairResult]]
    weights: Mapping[str, Mapping[str, AlphaWeights]]
    unavailable: Mapping[str, str]
    load_seconds: float
    compute_seconds: float
    #: ``item_set_pairs[item set][encoder][dataset]``: the pairs but the fitting one measured on
    #: each other item set's items, the routers left out (the module docstring)
    item_set_pairs: Mapping[str, Mapping[str, Mapping[str, PairResult]]] = field(
        default_factory=dict
    )
    #: ``item_set_samples[item set][encoder][dataset]``: what that item set kept and removed
    item_set_samples: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def to_numbers(self) -> dict[str, Any]:
        protocol = self.config.protocol
        return {
            "protocol": {
                "train_dataset": protocol.train_dataset,
                "train_encoder": protocol.train_encoder,
                "k": protocol.k,
                "n_splits": protocol.n_splits,
                "seed": protocol.seed,
                "fixed_alpha": protocol.fixed_alpha,
                "grid_min": float(protocol.grid[0]),
                "grid_max": float(protocol.grid[-1]),
                "grid_points": len(protocol.grid),
                "hash": protocol.config_hash(),
            },
            "fit": self.fit.to_numbers(),
            "pairs": {
                encoder: {dataset: p.to_numbers() for dataset, p in by.items()}
                for encoder, by in self.pairs.items()
            },
            "item_sets": {
                item_set: {
                    "pairs": {
                        encoder: {dataset: p.to_numbers() for dataset, p in by.items()}
                        for encoder, by in pairs.items()
                    },
                    "samples": {
                        encoder: {d: dict(n) for d, n in by.items()}
                        for encoder, by in self.item_set_samples.get(item_set, {}).items()
                    },
                }
                for item_set, pairs in self.item_set_pairs.items()
            },
            "unavailable_encoders": dict(self.unavailable),
            "load_seconds": self.load_seconds,
            "compute_seconds": self.compute_seconds,
        }


def _routing(
    data: Mapping[str, RoutingData],
    cfg: AlphaTransferConfig,
    *,
    scale: float | None,
    hits: np.ndarray | None = None,
    ratios: Mapping[str, np.ndarray] | None = None,
) -> tuple[dict[str, AlphaWeights], dict[str, dict[str, RoutingOutcome]]]:
    """The router retrained under each routed rule (the ablations' recipe at that rule's
    weights): per rule its weights, and per dataset per rule the routed outcome; ``hits`` and
    ``ratios`` as :func:`~regime_core.router.bridge_weight.alpha_weights` takes them."""
    train = data[cfg.train_dataset]
    others = {d: x for d, x in data.items() if d != cfg.train_dataset}
    weights: dict[str, AlphaWeights] = {}
    outcomes: dict[str, dict[str, RoutingOutcome]] = {d: {} for d in data}
    for rule in config.ALPHA_RULES:  # every value of the alpha_rule knob
        w = alpha_weights(
            data,
            rule,
            alpha=float(cfg.alpha),
            train_dataset=cfg.train_dataset,
            protocol=cfg.protocol,
            scale=scale if rule == "calibrated" else None,
            hits=hits,
            ratios=ratios,
        )
        recipe = run_recipe(
            train,
            others,
            cfg,
            alpha=float(w.alpha[cfg.train_dataset]),
            weights=None if rule == "fixed" else w.weights,
        )
        weights[rule] = w
        for dataset, outcome in recipe.outcomes.items():
            outcomes[dataset][rule] = outcome
    return weights, outcomes


def run_alpha_transfer(
    cfg: AlphaTransferConfig | None = None, context: Context | None = None
) -> AlphaTransferResult:
    """Everything of the module docstring, on every dataset of ``cfg`` under every encoder
    that runs here (the others are reported unavailable, never downloaded)."""
    cfg = cfg or AlphaTransferConfig()
    # each encoder and item set samples the same prepared examples: parsed once
    context = resolve(context).with_examples_read(cfg.datasets, cfg.split)
    protocol = cfg.protocol
    load = compute = 0.0
    unavailable: dict[str, str] = {}
    pairs: dict[str, dict[str, PairResult]] = {}
    all_weights: dict[str, dict[str, AlphaWeights]] = {}
    fit: Fit | None = None
    other_pairs: dict[str, dict[str, dict[str, PairResult]]] = {}
    other_samples: dict[str, dict[str, dict[str, Any]]] = {}
    for encoder in cfg.encoders:
        reason = encoder_unavailable_reason(encoder)
        if reason is not None:
            if encoder == protocol.train_encoder:
                raise ValueError(
                    f"AlphaTransferConfig.encoders[0] ({encoder!r}) fits the rule, but: {reason}"
                )
            unavailable[encoder] = reason
            continue
        t0 = time.perf_counter()
        loaded = load_routing_data(cfg, cfg.datasets, encoder, cfg.bridge_source, context)
        data = with_selector(loaded, cfg, context, train_dataset=cfg.train_dataset)
        t1 = time.perf_counter()
        measured = {dataset: measure(d, protocol) for dataset, d in data.items()}
        # encoders[0], the protocol's, runs first (or the run stops above): it fits the rule
        fit = fit or fit_rules(measured[cfg.train_dataset], protocol)
        scale = None if encoder == protocol.train_encoder else fit.fitted["dataset"].c
        weights, routed = _routing(
            data,
            cfg,
            scale=scale,
            hits=measured[cfg.train_dataset].hits,
            ratios={dataset: m.ratios for dataset, m in measured.items()},
        )
        all_weights[encoder] = weights
        pairs[encoder] = {
            dataset: measure_pair(
                m,
                fit,
                fitting=encoder == protocol.train_encoder and dataset == cfg.train_dataset,
                protocol=protocol,
                routing=routed[dataset],
                routing_alpha={rule: w.alpha[dataset] for rule, w in weights.items()},
                cfg=cfg,
            )
            for dataset, m in measured.items()
        }
        load += t1 - t0
        compute += time.perf_counter() - t1
        for item_set in ITEM_SETS:
            if item_set == cfg.item_set:
                continue
            measured_pairs, samples = _other_item_set(cfg, item_set, measured, fit, context)
            other_pairs.setdefault(item_set, {})[encoder] = measured_pairs
            other_samples.setdefault(item_set, {})[encoder] = samples
    return AlphaTransferResult(
        config=cfg,
        fit=cast(Fit, fit),  # set by encoders[0], which runs first or stops the run above
        pairs=pairs,
        weights=all_weights,
        unavailable=unavailable,
        load_seconds=round(load, 3),
        compute_seconds=round(compute, 3),
        item_set_pairs=other_pairs,
        item_set_samples=other_samples,
    )


def _other_item_set(
    cfg: AlphaTransferConfig, item_set: str, whole: dict[str, Measured], fit: Fit, context: Context
) -> tuple[dict[str, PairResult], dict[str, Any]]:
    """Every pair of one encoder but the fitting one, measured on ``item_set``'s items (cut from
    ``whole``, the config's item set's) with the rules as ``fit`` fitted them (no router
    retrained), and each dataset's sample numbers."""
    other = dataclasses.replace(cfg, item_set=item_set)
    protocol = cfg.protocol
    encoder = next(iter(whole.values())).data.encoder
    loaded = load_routing_data(other, cfg.datasets, encoder, cfg.bridge_source, context)
    data = with_selector(loaded, other, context, train_dataset=cfg.train_dataset)
    pairs: dict[str, PairResult] = {}
    for dataset, d in data.items():
        if encoder == protocol.train_encoder and dataset == cfg.train_dataset:
            continue  # the fitting pair: c is fitted there, on the config's own item set
        pairs[dataset] = measure_pair(
            measure(d, protocol, whole[dataset]),
            fit,
            fitting=False,
            protocol=protocol,
            routing={},
            routing_alpha={},
            cfg=cfg,
        )
    samples = {dataset: sample_numbers(d.sample) for dataset, d in data.items()}
    return pairs, samples
