"""How far the question side and the bridge side spread a question's candidates.

The union query is ``normalise(f(q) + α·f(B_rel))``, so a candidate ``d`` is ranked by
``s_q(d) + α·s_B(d)`` with ``s_q(d) = ⟨f(q), d⟩`` and ``s_B(d) = ⟨f(B_rel), d⟩`` (the encoder's
vectors as :func:`~regime_core.retrieval.combine_query_vectors` sums them: cosines for the unit
vectors MiniLM and TF-IDF return). Whether ``α`` lets the bridge reorder the candidates depends
on ``α·σ_B`` against ``σ_q``, the spreads of the two score columns over the same candidates. This
module measures them; :mod:`~regime_core.retrieval.alpha_rule` turns them into a weight.

Decided before anything was measured, with the reasons:

- **Candidates: the ones retrieval ranks** (``"ranked"``): the question's hop-2 candidates with
  the bridge excluded as retrieval excludes it (``config.EXCLUDE_BRIDGE``), the hop-2 target
  included. A rule built on the spread must be computable where it is deployed, where nobody knows
  which candidate is the target; and the bridge is not a candidate, so it must not widen the
  spread either. The spread of the distractors alone (``"distractors"``: the ranked candidates
  without the target, the negatives whose population standard deviation T1's standardised margin
  divides by) is measured beside it as a diagnostic only: if the two disagree, the target itself
  drives the spread.
- **Statistic: the population standard deviation** (``ddof = 0``, as T1's ``std_margin``). It is
  the scale in which the two columns add: ``Var(s_q + α·s_B) = σ_q² + α²σ_B² + 2α·ρ·σ_q·σ_B``,
  so ``α·σ_B/σ_q`` is the bridge's share of the combined spread. It is defined for any pool of at
  least two candidates, whereas an IQR over a question pool of 8 to 19 candidates would hinge on
  how quantiles are interpolated between two or three of them.
- **Per question, then the median.** The ratio ``r_i = σ_q,i / σ_B,i`` is taken question by
  question (each question's own candidates and their own score offsets), and a group of questions
  (a dataset, a regime, a fold) is summarised by the median of ``r_i``: robust to the questions
  whose bridge side barely spreads (``σ_B → 0`` makes ``r_i`` explode), unlike a mean or a ratio of
  means. A question with a spread of exactly zero on either side has no finite positive ratio (a
  zero ``σ_B``: no ``α`` can reorder its candidates; a zero ``σ_q``: any ``α > 0`` decides alone,
  e.g. a TF-IDF question sharing no term with any candidate); it is left out of the median and
  counted (``n_zero_q`` and ``n_zero_b`` of :class:`SpreadSummary`), never dropped
  silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from regime_core.retrieval.geometry import UnionGeometry
from regime_core.retrieval.scoring import QUERY_BLOCK, numpy_score_block, score_candidates
from regime_core.retrieval.vectors import Vectors, dense, dense_rows

#: Which candidates a spread is taken over (the module docstring says why ``ranked`` is the rule's).
SPREAD_CANDIDATES: tuple[str, ...] = ("ranked", "distractors")


def row_spread(scores: np.ndarray, include: np.ndarray) -> np.ndarray:
    """Population standard deviation of each row's ``scores`` where ``include`` is True.

    ``(n, w)`` arrays in, ``(n,)`` float64 out: 0 for a row with one included entry, NaN for a row
    with none. Scores are accumulated in float64.

    >>> row_spread(np.array([[1.0, 3.0, 9.0]]), np.array([[True, True, False]]))
    array([1.])
    """
    scores = np.asarray(scores, dtype=np.float64)
    include = np.asarray(include, dtype=bool)
    count = include.sum(axis=1)
    values = np.where(include, scores, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = values.sum(axis=1) / count
        centred = np.where(include, scores - mean[:, None], 0.0)
        spread = np.sqrt((centred**2).sum(axis=1) / count)
    return np.where(count > 0, spread, np.nan)


def spread_ratio(sigma_q: np.ndarray, sigma_b: np.ndarray) -> np.ndarray:
    """``σ_q / σ_B`` per question where both spreads are positive, NaN elsewhere (a zero or
    undefined spread on either side has no finite positive ratio; callers count those).

    >>> spread_ratio(np.array([0.2, 0.1, 0.0]), np.array([0.1, 0.0, 0.3])).tolist()
    [2.0, nan, nan]
    """
    sq = np.asarray(sigma_q, dtype=np.float64)
    sb = np.asarray(sigma_b, dtype=np.float64)
    ok = (sq > 0) & (sb > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, sq / np.where(ok, sb, 1.0), np.nan)


@dataclass(frozen=True)
class SpreadSummary:
    """A group of questions' spreads: medians over the group, the median ratio over the questions
    with both spreads positive (``n_ratio`` of them), and the questions without a ratio."""

    n: int
    n_ratio: int
    n_zero_q: int  # σ_q = 0 (or undefined): left out of the ratio's median
    n_zero_b: int  # σ_B = 0 (or undefined): left out of the ratio's median
    median_sigma_q: float
    median_sigma_b: float
    median_ratio: float  # NaN when no question has a ratio
    ratio_q1: float  # quartiles of the ratio, for the table's spread
    ratio_q3: float


def summarise_spreads(sigma_q: np.ndarray, sigma_b: np.ndarray) -> SpreadSummary:
    """The :class:`SpreadSummary` of one group's per-question spreads (arrays in)."""
    sq = np.asarray(sigma_q, dtype=np.float64)
    sb = np.asarray(sigma_b, dtype=np.float64)
    ratio = spread_ratio(sq, sb)
    finite = ratio[np.isfinite(ratio)]

    def median(x: np.ndarray) -> float:
        x = x[np.isfinite(x)]
        return float(np.median(x)) if x.size else float("nan")

    q1, q3 = np.quantile(finite, [0.25, 0.75]) if finite.size else (np.nan, np.nan)
    return SpreadSummary(
        n=int(sq.size),
        n_ratio=int(finite.size),
        n_zero_q=int(np.sum(~(sq > 0))),
        n_zero_b=int(np.sum(~(sb > 0))),
        median_sigma_q=median(sq),
        median_sigma_b=median(sb),
        median_ratio=median(finite),
        ratio_q1=float(q1),
        ratio_q3=float(q3),
    )


def median_ratio(ratios: np.ndarray) -> float:
    """The median of the finite ratios (NaN entries, questions without a ratio, left out);
    a ValueError when none is finite, since no spread-based weight exists then."""
    r = np.asarray(ratios, dtype=np.float64)
    finite = r[np.isfinite(r)]
    if finite.size == 0:
        raise ValueError(
            f"median_ratio: none of the {r.size} questions has both spreads positive, so no "
            "spread-based α exists for them; check that the encoder's B_rel vectors are not zero"
        )
    return float(np.median(finite))


@dataclass(frozen=True)
class ScoreSpreads:
    """Per question: the spreads of ``s_q`` and ``s_B`` over the ranked candidates and over the
    distractors (module docstring), and how many candidates were ranked."""

    query_ids: tuple[str, ...]
    sigma_q: np.ndarray
    sigma_b: np.ndarray
    sigma_q_distractors: np.ndarray
    sigma_b_distractors: np.ndarray
    n_candidates: np.ndarray

    @property
    def n(self) -> int:
        return len(self.query_ids)

    def columns(self, candidates: str = "ranked") -> tuple[np.ndarray, np.ndarray]:
        """``(σ_q, σ_B)`` over ``candidates`` (one of :data:`SPREAD_CANDIDATES`, checked by the
        protocol that names it)."""
        if candidates == "ranked":
            return self.sigma_q, self.sigma_b
        return self.sigma_q_distractors, self.sigma_b_distractors

    def ratios(self, candidates: str = "ranked") -> np.ndarray:
        """``σ_q/σ_B`` per question (NaN without a ratio)."""
        return spread_ratio(*self.columns(candidates))


def _pool_spreads(
    queries: np.ndarray,
    documents: Vectors,
    candidates: np.ndarray,
    targets: np.ndarray,
    which: Sequence[str],
) -> dict[str, np.ndarray]:
    """The spreads over each candidate set of ``which`` in question pools (``-1`` padding)."""
    ranked = candidates >= 0
    scores = np.where(ranked, score_candidates(queries, documents, candidates), 0.0)
    include = {"ranked": ranked}
    if "distractors" in which:
        include["distractors"] = ranked.copy()
        include["distractors"][np.arange(len(targets)), targets] = False
    return {name: row_spread(scores, include[name]) for name in which}


def _corpus_spreads(
    queries: Vectors,
    documents: Vectors,
    excluded: np.ndarray,
    targets: np.ndarray,
    which: Sequence[str],
) -> dict[str, np.ndarray]:
    """The spreads over each candidate set of ``which``: every passage but the excluded row
    (and, for the distractors, the target), by query blocks (no queries × passages matrix is
    kept)."""
    n, m = queries.shape[0], documents.shape[0]
    score = numpy_score_block(documents)
    out = {name: np.empty(n) for name in which}
    for start in range(0, n, QUERY_BLOCK):
        stop = min(n, start + QUERY_BLOCK)
        scores = score(dense_rows(queries, np.arange(start, stop)))
        rows = np.arange(stop - start)
        ranked = np.ones((stop - start, m), dtype=bool)
        ex = excluded[start:stop]
        ranked[rows[ex >= 0], ex[ex >= 0]] = False
        include = {"ranked": ranked}
        if "distractors" in which:
            # target positions count the candidates, i.e. skip the excluded row
            t = targets[start:stop]
            t_rows = np.where((ex >= 0) & (t >= ex), t + 1, t)
            include["distractors"] = ranked.copy()
            include["distractors"][rows, t_rows] = False
        for name in which:
            out[name][start:stop] = row_spread(scores, include[name])
    return out


def _side_spreads(
    geometry: UnionGeometry, vectors: Vectors, which: Sequence[str]
) -> dict[str, np.ndarray]:
    """One side's spreads (``vectors``: the questions' or the ``B_rel``'s) over ``which``."""
    if geometry.candidates is not None:
        return _pool_spreads(
            dense(vectors),
            geometry.document_vectors,
            geometry.candidates,
            geometry.target_positions,
            which,
        )
    return _corpus_spreads(  # a geometry without candidates has excluded rows (corpus mode)
        vectors,
        geometry.document_vectors,
        np.asarray(geometry.excluded_rows),
        geometry.target_positions,
        which,
    )


def measure_spreads(geometry: UnionGeometry) -> ScoreSpreads:
    """Every question's spreads under ``geometry`` (its candidates, bridge excluded as the
    geometry was built, its encoder's vectors), question pools or corpus mode."""
    q = _side_spreads(geometry, geometry.question_vectors, SPREAD_CANDIDATES)
    b = _side_spreads(geometry, geometry.b_rel_vectors, SPREAD_CANDIDATES)
    if geometry.candidates is not None:
        n_candidates = (geometry.candidates >= 0).sum(axis=1)
    else:
        excluded = np.asarray(geometry.excluded_rows)
        n_candidates = geometry.document_vectors.shape[0] - (excluded >= 0)
    return ScoreSpreads(
        query_ids=geometry.query_ids,
        sigma_q=q["ranked"],
        sigma_b=b["ranked"],
        sigma_q_distractors=q["distractors"],
        sigma_b_distractors=b["distractors"],
        n_candidates=np.asarray(n_candidates, dtype=np.int64),
    )


def spread_ratios(geometry: UnionGeometry, candidates: str = "ranked") -> np.ndarray:
    """``σ_q/σ_B`` per question over ``candidates`` (NaN without a ratio): the values of
    ``measure_spreads(geometry).ratios(candidates)``, without the other candidate set's spreads
    that a weight never reads."""
    q = _side_spreads(geometry, geometry.question_vectors, (candidates,))
    b = _side_spreads(geometry, geometry.b_rel_vectors, (candidates,))
    return spread_ratio(q[candidates], b[candidates])


def spread_table(
    spreads: ScoreSpreads,
    groups: Mapping[str, Sequence[object] | np.ndarray] | None = None,
    *,
    candidates: Sequence[str] = SPREAD_CANDIDATES,
) -> pd.DataFrame:
    """One row per group (``groups``: column name -> one label per question; none: one row for
    all) and candidate set: the :class:`SpreadSummary` fields."""
    labels = pd.DataFrame({name: list(values) for name, values in (groups or {}).items()})
    keys = list(labels.columns)
    index = (
        labels.groupby(keys, sort=True, dropna=False).indices.items()
        if keys
        else [((), np.arange(spreads.n))]
    )
    rows = []
    for key, positions in index:
        key = key if isinstance(key, tuple) else (key,)
        for which in candidates:
            sq, sb = spreads.columns(which)
            summary = summarise_spreads(sq[positions], sb[positions])
            rows.append(
                {**dict(zip(keys, key, strict=True)), "candidates": which, **summary.__dict__}
            )
    return pd.DataFrame(rows)
