"""Candidate pools: each query's hop-2 candidates as rows of one passage matrix.

``question`` mode: the example's own distractor pool; ``corpus`` mode: every passage of the
examples passed. The bridge (hop 1) is removed from the candidates unless ``exclude_bridge`` is
False: hop 2 is retrieved *after* hop 1, so ranking the bridge would only push the target down
by one place for arms that query with the bridge text. The matrix's rows are the distinct
passages of the examples (:func:`regime_core.data.corpus_passages`), each encoded from
:func:`document_text`. Pure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from regime_core import config
from regime_core.data.canonical import corpus_passages
from regime_core.schema import Example, Passage


def document_text(passage: Passage) -> str:
    """The text a passage is encoded from: its title, then its body (``"Title. Body"``).

    Wikipedia-style retrieval corpora (DPR, MDR, IRCoT's BM25) index the title with the text;
    without it a passage whose body never repeats its title cannot be found by name.
    """
    return f"{passage.title}. {passage.text}" if passage.title else passage.text


class CorpusCandidates(Sequence[np.ndarray]):
    """Corpus-mode candidate rows, built on access: every row ``0..n_passages-1`` but
    ``excluded[i]`` (``-1``: none). Storing them would cost ``queries × passages`` integers."""

    def __init__(self, n_passages: int, excluded: np.ndarray) -> None:
        self.n_passages = int(n_passages)
        self.excluded = np.asarray(excluded, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.excluded)

    @overload
    def __getitem__(self, i: int) -> np.ndarray: ...

    @overload
    def __getitem__(self, i: slice) -> list[np.ndarray]: ...

    def __getitem__(self, i: int | slice) -> np.ndarray | list[np.ndarray]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        rows = np.arange(self.n_passages, dtype=np.int64)
        ex = int(self.excluded[i])
        return rows[rows != ex] if ex >= 0 else rows

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[i] for i in range(len(self)))

    def widths(self) -> np.ndarray:
        """Number of candidates per query, without building the rows."""
        return self.n_passages - (self.excluded >= 0).astype(np.int64)


@dataclass(frozen=True)
class CandidatePools:
    """Each query's hop-2 candidates as indices into one passage matrix.

    ``passages`` are the rows of the matrix (shared by both pool modes, so one set of document
    embeddings serves both); ``candidates[i]`` holds the row indices of example ``i``'s
    candidates in *candidate order* (the order of its pool, or of the corpus), which is the
    tie-breaking order of the ranking. In ``corpus`` mode ``candidates`` is a
    :class:`CorpusCandidates` (rows built on access) and ``excluded_rows[i]`` is the one row
    left out of example ``i``'s candidates (its bridge; ``-1``: none).
    """

    mode: str
    exclude_bridge: bool
    passages: tuple[Passage, ...]
    candidates: Sequence[np.ndarray]
    excluded_rows: np.ndarray | None = None

    def widths(self) -> np.ndarray:
        """Number of candidates per query."""
        if isinstance(self.candidates, CorpusCandidates):
            return self.candidates.widths()
        return np.array([len(c) for c in self.candidates], dtype=np.int64)

    @property
    def passage_pids(self) -> tuple[str, ...]:
        return tuple(p.pid for p in self.passages)

    def row_of(self) -> dict[str, int]:
        """``{pid: row}`` of the passage matrix."""
        return {pid: row for row, pid in enumerate(self.passage_pids)}

    def padded(self) -> np.ndarray:
        """``(n_queries, max_candidates)`` int64 matrix of candidate rows, ``-1`` as padding."""
        width = int(self.widths().max(initial=0))
        out = np.full((len(self.candidates), width), -1, dtype=np.int64)
        for i, cand in enumerate(self.candidates):
            out[i, : len(cand)] = cand
        return out


def candidate_pools(
    examples: Sequence[Example],
    mode: str = config.POOL_MODE,
    *,
    exclude_bridge: bool = config.EXCLUDE_BRIDGE,
    passages: Sequence[Passage] | None = None,
) -> CandidatePools:
    """The candidate indices of every example, in ``question`` or ``corpus`` mode.

    ``passages`` defaults to :func:`regime_core.data.corpus_passages` of ``examples`` (the
    distinct passages of all their pools); pass it to reuse a matrix you already embedded (a
    KeyError names a pool passage it lacks).

    >>> pools = candidate_pools(examples, "question")            # doctest: +SKIP
    >>> [pools.passages[j].pid for j in pools.candidates[0]]     # doctest: +SKIP
    ['p…', …]   # example 0's pool in pool order, without its bridge
    """
    passages = tuple(corpus_passages(examples) if passages is None else passages)
    row_of: dict[str, int] = {}
    for row, passage in enumerate(passages):
        if passage.pid in row_of:
            raise ValueError(
                f"passage matrix: pid {passage.pid} appears twice (rows {row_of[passage.pid]} "
                f"and {row}); pass distinct passages"
            )
        row_of[passage.pid] = row
    candidates: list[np.ndarray] = []
    excluded: list[int] = []
    for ex in examples:
        if mode == "corpus":
            # every passage but (maybe) the bridge: one excluded row, not a row list per example
            excluded.append(row_of[ex.bridge_pid] if exclude_bridge else -1)
            continue
        # dict.fromkeys keeps pool order and drops a passage listed twice in one pool.
        rows = np.fromiter(
            (row_of[pid] for pid in dict.fromkeys(p.pid for p in ex.pool)), dtype=np.int64
        )
        if exclude_bridge:
            rows = rows[rows != row_of[ex.bridge_pid]]
        candidates.append(rows)
    if mode == "corpus":
        excluded_rows = np.array(excluded, dtype=np.int64)
        return CandidatePools(
            mode=mode,
            exclude_bridge=exclude_bridge,
            passages=passages,
            candidates=CorpusCandidates(len(passages), excluded_rows),
            excluded_rows=excluded_rows,
        )
    return CandidatePools(
        mode=mode, exclude_bridge=exclude_bridge, passages=passages, candidates=tuple(candidates)
    )
