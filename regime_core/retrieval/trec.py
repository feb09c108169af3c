"""TREC run files and qrels of a :class:`~regime_core.retrieval.ranking.Ranking`.

They let ``trec_eval``, ``ranx`` or ``ir_measures`` score our rankings independently. The lines
are pure functions of the ranking; only :func:`write_trec_run` and :func:`write_qrels` write
(atomically, through :func:`regime_core.integrity.atomic_write_bytes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from regime_core.integrity import atomic_write_bytes
from regime_core.retrieval.ranking import Ranking


def trec_run_lines(ranking: Ranking, tag: str, *, tie_free: bool = False) -> list[str]:
    """``qid Q0 pid rank score tag`` lines, rank 1-based, best first, depth ``ranking.k``.

    The score is the cosine with 9 significant digits (they round-trip float32), so an
    evaluator that re-sorts by score sees our order except where two scores are exactly equal
    (trec_eval, ir-measures and ranx then break the tie by docno, we by candidate order).
    ``tie_free=True`` writes ``depth - rank + 1`` instead (the idea of
    :func:`regime_core.metrics.run_scores`), which every evaluator reads in exactly our order.

    >>> trec_run_lines(ranking, "regime-q")[0]               # doctest: +SKIP
    'q1 Q0 p3f2a... 1 0.734215081 regime-q'
    """
    if not tag or any(c.isspace() for c in tag):
        raise ValueError(f"run tag {tag!r} must be non-empty without whitespace")
    lines: list[str] = []
    rows = zip(ranking.query_ids, ranking.top_pids, ranking.top_scores, strict=True)
    for qid, pids, scores in rows:
        for rank, (pid, score) in enumerate(zip(pids, scores, strict=True), start=1):
            shown = f"{len(pids) - rank + 1}" if tie_free else f"{float(score):.9g}"
            lines.append(f"{qid} Q0 {pid} {rank} {shown} {tag}")
    return lines


def qrels_lines(ranking: Ranking) -> list[str]:
    """``qid 0 pid 1`` for each query's hop-2 target."""
    pairs = zip(ranking.query_ids, ranking.target_pids, strict=True)
    return [f"{qid} 0 {pid} 1" for qid, pid in pairs]


def _write_lines(path: str | Path, lines: Sequence[str]) -> Path:
    path = Path(path)
    # atomic, and path problems (a directory, a file as parent) as ValueError naming the path
    atomic_write_bytes(path, "".join(line + "\n" for line in lines).encode("utf-8"))
    return path


def write_trec_run(ranking: Ranking, path: str | Path, tag: str, *, tie_free: bool = False) -> Path:
    """Write ``ranking``'s top lists as a TREC run file (see :func:`trec_run_lines`)."""
    return _write_lines(path, trec_run_lines(ranking, tag, tie_free=tie_free))


def write_qrels(ranking: Ranking, path: str | Path) -> Path:
    """Write the hop-2 targets of ``ranking`` as TREC qrels (relevance 1)."""
    return _write_lines(path, qrels_lines(ranking))
