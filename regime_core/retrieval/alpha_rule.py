"""A bridge weight calibrated on the geometry of the scores, its fitting protocol, and its regret
against the best weight of a grid ("Beyond the paper" in the book).

The paper deploys one fixed weight, ``α = 0.25``, "across datasets and encoders". Under the
union query ``normalise(f(q) + α·f(B_rel))`` a candidate's order is that of
``s_q(d) + α·s_B(d)``, so what a given ``α`` does depends on how widely the two score columns
spread (:mod:`~regime_core.retrieval.spread`), and the spreads differ by encoder and dataset.
This module defines a weight that scales with them. Everything below was fixed and committed
before any number was computed on MuSiQue, HotpotQA or with TF-IDF (git history: this module's
first commit precedes the benchmark's first transfer run).

**The rule** (``calibrated``, scope ``dataset``, the primary one)::

    α(S) = c · R(S),      R(S) = median over the questions i of S of σ_q,i / σ_B,i

- ``S``: the questions the weight is applied to, under one encoder and pool mode (a dataset's
  sample; in cross-fitting, a held-out fold).
- ``σ_q,i``, ``σ_B,i``: the population standard deviations of ``⟨f(q_i), d⟩`` and
  ``⟨f(B_rel,i), d⟩`` over question ``i``'s ranked candidates (its hop-2 candidates, the bridge
  excluded as retrieval excludes it, the target included as nobody can tell it apart where the
  rule is deployed). ``B_rel`` is the selector's sentence, the one the union arm queries with.
  Questions with a zero spread on either side are left out of the median and counted
  (:mod:`~regime_core.retrieval.spread` says why).
- No gold passage, label or outcome enters ``α(S)``: only the questions, their bridges' selected
  sentences and the candidates, so the rule applies unchanged to any dataset and to any encoder,
  TF-IDF or a sentence-transformers model a user names.

Why one weight per dataset and not per question: the paper's rule is one weight per deployment,
so the comparison is like for like; a question's ratio rests on 8 to 19 candidates and is noisy;
and a per-question weight would do part of the router's job (the router already decides per
question whether the bridge joins the query). The per-question form is reported as a variant.

**The fitting protocol** (:class:`AlphaRuleProtocol`): ``c`` is fitted once, on
2WikiMultiHopQA with MiniLM (default question pools, gold bridge, ``k = 5``), and never again.

- Objective: union hit@5 (the share of questions whose hop-2 target is in the top 5 under the
  union query) on the fitting questions ``T``.
- Search: ``α`` over :data:`FINE_ALPHA_GRID` (0 to 2 in steps of 0.05: from the ``q`` arm to a
  bridge weighing twice the question, past which union becomes the ``B_rel``-alone query);
  ``α*(T)`` is the grid point of highest hit@5 on ``T`` (a tie between grid points: the lower
  median of the tied points, :func:`best_grid_index`), and ``c(T) = α*(T) / R(T)``.
- Cross-fitting, for the training dataset's own numbers:
  :func:`~regime_core.router.estimator.cross_fit_folds` (``CV_FOLDS = 5`` folds, the router's
  ``SEED``), stratified by the ``q`` arm's hit@5 (it does not depend on ``α``, exists for every
  dataset and encoder, and balances the folds' difficulty). Each held-out fold ``H`` gets
  ``α_H = c(T)·R(H)`` with ``c(T)`` fitted on the other four folds; ``c`` is never fitted on the
  questions it is applied to (tested).
- Deployment: ``c`` fitted on all of 2WikiMultiHopQA (as the router is refitted on every labelled
  item after cross-fitting) and applied unchanged to every other dataset and encoder.

**Variants**, declared with the rule and all reported (:data:`RULE_VARIANTS`):

- ``fixed``: ``α = 0.25``, the paper's rule;
- ``calibrated``: the rule above;
- ``calibrated_question``: ``α_i = c·r_i`` per question, ``c`` fitted by the same protocol over
  the candidates ``a/R(T)`` for ``a`` on the grid; a question without a ratio takes ``c·R(S)``;
- ``tuned_fixed``: ``α = α*`` of 2WikiMultiHopQA with MiniLM, no geometry: a control that says
  whether the spreads do the work or merely a better constant than 0.25.

**Regret** (:func:`regret`): per dataset and encoder, hit@5 at the best grid ``α`` minus hit@5 at
the rule's ``α``, as a paired comparison question by question
(:func:`regime_core.stats.compare_paired`: the mean difference, and its score interval and
p).
Choosing the best ``α`` on the very questions it is scored on flatters it, so two bests are
reported: ``cross_fitted`` (the primary: each fold scored at the grid ``α`` best on the other four
folds, the best a user could tune with labels of that dataset) and ``in_sample`` (the grid
maximum on all the questions, optimistic for the best, hence an upper bound on the regret).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from regime_core import config
from regime_core.config import ConfigMixin
from regime_core.inputs import Choice, Items, Text
from regime_core.inputs.configs import ALPHA, declared, integer
from regime_core.retrieval.geometry import UnionGeometry
from regime_core.retrieval.spread import SPREAD_CANDIDATES, median_ratio
from regime_core.stats import PairedComparison, compare_paired

#: The fine α grid of the calibration and of the α curves: 0 to 2 in steps of 0.05 (it contains
#: every point of ``config.ALPHA_GRID``).
FINE_ALPHA_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(41))
#: Where a rule's weight applies: one per set of questions, or one per question.
RULE_SCOPES: tuple[str, ...] = ("dataset", "question")
#: Every rule the transfer measurement reports (module docstring).
RULE_VARIANTS: tuple[str, ...] = ("fixed", "calibrated", "calibrated_question", "tuned_fixed")


@dataclass(frozen=True)
class AlphaRuleProtocol(ConfigMixin):
    """The rule's definition and its fitting protocol, fixed before any transfer number."""

    train_dataset: str = declared("2wikimultihopqa", Text(blank=True))  # "": c fitted elsewhere
    train_encoder: str = declared("minilm", Text())
    scope: str = declared("dataset", Choice(RULE_SCOPES))
    candidates: str = declared("ranked", Choice(SPREAD_CANDIDATES))
    grid: tuple[float, ...] = declared(FINE_ALPHA_GRID, Items(ALPHA, min_items=1))
    k: int = declared(config.HEADLINE_K, integer(1))
    n_splits: int = declared(config.CV_FOLDS, integer(2))
    seed: int = declared(config.SEED, integer())
    fixed_alpha: float = declared(config.ALPHA, ALPHA)

    def validate(self) -> None:
        # the field's kind checks each α; the order is what a kind cannot say
        if any(later <= earlier for earlier, later in pairwise(self.grid)):
            raise ValueError(
                f"{type(self).__name__}.grid: the α values must be strictly increasing, "
                f"got {list(self.grid)}"
            )


# --------------------------------------------------------------------------------------------
# Pure kernels: hits on a grid (g, n) in, indices, weights and hits out
# --------------------------------------------------------------------------------------------


def _items(n: int, items: np.ndarray | None) -> np.ndarray:
    if items is None:
        return np.arange(n)
    items = np.asarray(items)
    return np.flatnonzero(items) if items.dtype == bool else items


def best_grid_index(hits: np.ndarray, items: np.ndarray | None = None) -> int:
    """The grid point (row of ``hits``, ``(g, n)`` booleans) with the most hits over ``items``
    (indices or a mask; default all). Hits are counted, so ties are exact; a tie between grid
    points goes to the lower median of the tied points (a maximiser itself, and central).

    >>> best_grid_index(np.array([[1, 0], [1, 1], [0, 1], [1, 1], [1, 1]], dtype=bool))
    3
    """
    h = np.asarray(hits, dtype=bool)
    counts = h[:, _items(h.shape[1], items)].sum(axis=1)
    tied = np.flatnonzero(counts == counts.max())
    return int(tied[(tied.size - 1) // 2])


def in_sample_best(hits: np.ndarray, grid: np.ndarray) -> tuple[float, np.ndarray]:
    """The grid α of most hits on all questions and those questions' hits at it (optimistic:
    chosen on the questions it is scored on)."""
    j = best_grid_index(hits)
    return float(np.asarray(grid, dtype=np.float64)[j]), np.asarray(hits, dtype=bool)[j].copy()


def cross_fitted_best(
    hits: np.ndarray, grid: np.ndarray, folds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each fold's questions scored at the grid α best on the *other* folds.

    Returns ``(α per fold, in fold order 0..F-1; hits per question)``."""
    g = np.asarray(grid, dtype=np.float64)
    h = np.asarray(hits, dtype=bool)
    f = np.asarray(folds)
    out = np.zeros(h.shape[1], dtype=bool)
    alphas = []
    for fold in np.unique(f):
        held = f == fold
        j = best_grid_index(h, ~held)
        alphas.append(float(g[j]))
        out[held] = h[j, held]
    return np.asarray(alphas), out


def scale_for(alpha: float, ratio: float) -> float:
    """``c = α / R``: the scale that turns the ratio ``R`` of a set of questions into ``α``
    (``R`` from :func:`~regime_core.retrieval.spread.median_ratio`: finite and > 0)."""
    return float(alpha) / float(ratio)


def fit_scale(
    hits: np.ndarray, grid: np.ndarray, ratios: np.ndarray, items: np.ndarray | None = None
) -> float:
    """The dataset rule's ``c`` on ``items``: ``α*(T) / R(T)`` with ``α*`` the best grid point on
    ``items`` (:func:`best_grid_index`) and ``R`` their median ratio."""
    g = np.asarray(grid, dtype=np.float64)
    r = np.asarray(ratios, dtype=np.float64)
    h = np.asarray(hits, dtype=bool)
    chosen = _items(r.size, items)
    return scale_for(float(g[best_grid_index(h, chosen)]), median_ratio(r[chosen]))


def cross_fit_scales(
    hits: np.ndarray, grid: np.ndarray, ratios: np.ndarray, folds: np.ndarray
) -> np.ndarray:
    """``c`` per fold (fold order 0..F-1), each fitted on the other folds only."""
    f = np.asarray(folds)
    return np.asarray([fit_scale(hits, grid, ratios, f != fold) for fold in np.unique(f)])


def rule_weights(scope: str, c: float, ratios: np.ndarray) -> np.ndarray:
    """The rule's weight per question of one set ``S``: ``c·R(S)`` for all (``dataset``), or
    ``c·r_i`` (``question``; a question without a ratio takes ``c·R(S)``)."""
    r = np.asarray(ratios, dtype=np.float64)
    dataset_alpha = c * median_ratio(r)
    if scope == "dataset":
        return np.full(r.size, dataset_alpha)
    return np.where(np.isfinite(r), c * np.nan_to_num(r, nan=0.0), dataset_alpha)


# --------------------------------------------------------------------------------------------
# Thin functions over a geometry (vectors embedded once; ranking is cheap)
# --------------------------------------------------------------------------------------------


def union_hits(geometry: UnionGeometry, weights: float | np.ndarray, k: int) -> np.ndarray:
    """Whether each question's hop-2 target is in the top ``k`` with ``B_rel`` weighted
    ``weights`` (a scalar or one per question)."""
    return geometry.target_ranks(weights) <= k


def grid_hits(geometry: UnionGeometry, grid: Sequence[float] | np.ndarray, k: int) -> np.ndarray:
    """``(g, n)`` hits at each α of ``grid`` (the union α curve is its row means)."""
    g = np.asarray(grid, dtype=np.float64)
    return geometry.target_ranks_many(np.repeat(g[:, None], geometry.n, axis=1)) <= k


@dataclass(frozen=True)
class FittedRule:
    """A rule's ``c`` and what it gives the questions it was fitted or cross-fitted on."""

    scope: str
    c: float  # fitted on every question (the deployed c when these are the training questions)
    fold_c: tuple[float, ...]  # cross-fitted: each fitted on the other folds
    weights: np.ndarray  # (n,) cross-fitted weight of each question
    hits: np.ndarray  # (n,) cross-fitted hits

    @property
    def alpha(self) -> float:
        """The median weight over the questions (the weight itself for the dataset scope)."""
        return float(np.median(self.weights))


def _question_scope_hits(
    geometry: UnionGeometry, grid: np.ndarray, ratios: np.ndarray, items: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Hits of the per-question rule for the candidate scales ``a/R(items)``, ``a`` on the grid.

    Only ``items`` get a weight (the rest 0, and their hits are not to be read): a question
    without a ratio falls back on ``c·R(items)``, so nothing outside ``items`` enters."""
    scales = grid / median_ratio(ratios[items])
    weights = np.zeros((scales.size, geometry.n))
    for row, s in zip(weights, scales, strict=True):
        row[items] = rule_weights("question", float(s), ratios[items])
    return scales, geometry.target_ranks_many(weights) <= k


def fit_rule(
    geometry: UnionGeometry,
    ratios: np.ndarray,
    folds: np.ndarray,
    *,
    scope: str = "dataset",
    grid: Sequence[float] | np.ndarray = FINE_ALPHA_GRID,
    k: int = config.HEADLINE_K,
    hits: np.ndarray | None = None,
) -> FittedRule:
    """Fit ``c`` on all of ``geometry``'s questions and cross-fit it over ``folds`` (each fold's
    weights from a ``c`` fitted on the other folds and that fold's own ratios). ``hits``: the
    geometry's :func:`grid_hits` on ``grid`` at ``k`` when the caller has them already."""
    g = np.asarray(grid, dtype=np.float64)
    r = np.asarray(ratios, dtype=np.float64)
    f = np.asarray(folds)
    if scope == "dataset":
        hits = grid_hits(geometry, g, k) if hits is None else np.asarray(hits, dtype=bool)
        c_all = fit_scale(hits, g, r)
        fold_c = cross_fit_scales(hits, g, r, f)
    else:  # "question" (AlphaRuleProtocol checked the scope)
        everyone = np.arange(geometry.n)
        scales, hits = _question_scope_hits(geometry, g, r, everyone, k)
        c_all = float(scales[best_grid_index(hits)])
        fold_c_list = []
        for fold in np.unique(f):
            train = np.flatnonzero(f != fold)
            scales, hits = _question_scope_hits(geometry, g, r, train, k)
            fold_c_list.append(float(scales[best_grid_index(hits, train)]))
        fold_c = np.asarray(fold_c_list)
    weights = np.empty(geometry.n)
    for c, fold in zip(fold_c, np.unique(f), strict=True):
        held = f == fold
        weights[held] = rule_weights(scope, float(c), r[held])
    return FittedRule(
        scope=scope,
        c=float(c_all),
        fold_c=tuple(float(c) for c in fold_c),
        weights=weights,
        hits=union_hits(geometry, weights, k),
    )


# --------------------------------------------------------------------------------------------
# Regret
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Regret:
    """Hit@k at the best grid α minus hit@k at a rule's α, question by question."""

    rule: str
    best: str  # "cross_fitted" or "in_sample" (module docstring)
    alpha_rule: float  # the rule's α (a per-question rule: the median weight)
    alpha_best: tuple[float, ...]  # in_sample: one α; cross_fitted: one per fold
    comparison: PairedComparison  # best − rule: diff, bootstrap CI, McNemar p

    @property
    def regret(self) -> float:
        return self.comparison.diff


def regret(
    hits_best: np.ndarray,
    hits_rule: np.ndarray,
    *,
    rule: str,
    best: str,
    alpha_rule: float,
    alpha_best: Sequence[float],
    resamples: int = config.BOOTSTRAP_RESAMPLES,
    confidence: float = config.CONFIDENCE,
    seed: int = config.SEED,
) -> Regret:
    """The :class:`Regret` of ``rule``: best − rule on the same questions' hits (booleans), with
    :func:`~regime_core.stats.compare_paired` (bootstrap interval, McNemar)."""
    a = np.asarray(hits_best)
    b = np.asarray(hits_rule)
    comparison = compare_paired(
        a.astype(float),
        b.astype(float),
        test="mcnemar",
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        label_a=f"best ({best})",
        label_b=rule,
    )
    return Regret(
        rule=rule,
        best=best,
        alpha_rule=float(alpha_rule),
        alpha_best=tuple(float(x) for x in alpha_best),
        comparison=comparison,
    )
