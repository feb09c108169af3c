"""TREC run files and qrels of a :class:`~regime_core.retrieval.ranking.Ranking`.

They let ``trec_eval``, ``ranx`` or ``ir_measures`` score our rankings independently. The lines
are pure functions of the ranking; only :func:`write_run_and_qrels` writes
(atomically, through :func:`regime_core.integrity.atomic_write_bytes`).

A run file holds the ranking to its depth (``Ranking.k``). ``regime retrieve --run-file`` writes
every candidate by default (``--depth all``): the MRR reads the full ranking, so only the whole
list lets an outside evaluator's MRR equal ours (at depth 10 it did not: 0.3328 against 0.3483).

Both formats are whitespace-separated columns, one line per entry, so an id holding whitespace,
a NUL or another control character (or an empty id) would shift or split the columns: every id
is checked (:func:`check_trec_id`) before any line is made, and so before anything is written.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from regime_core.integrity import atomic_write_bytes
from regime_core.retrieval.ranking import Ranking


def check_trec_id(value: object, what: str) -> str:
    """``value`` if it can be a column of a TREC run or qrels line, else ``ValueError`` naming
    ``what`` (``"query id"``, ``"passage id"``): a non-empty string without whitespace or
    control characters (NUL included).

    >>> check_trec_id("2hop__5_6", "query id")
    '2hop__5_6'
    """
    text = str(value)
    bad = [c for c in text if c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]
    if not text or bad:
        problem = "is empty" if not text else f"holds {bad[0]!r}"
        raise ValueError(
            f"{what} {text!r} {problem}: TREC run and qrels files are whitespace-separated "
            "columns, so ids must be non-empty without whitespace or control characters"
        )
    return text


def check_trec_ids(ids: Iterable[object], what: str) -> None:
    """:func:`check_trec_id` of every id of ``ids``."""
    for value in ids:
        check_trec_id(value, what)


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
    check_trec_id(tag, "run tag")
    check_trec_ids(ranking.query_ids, "query id")
    lines: list[str] = []
    rows = zip(ranking.query_ids, ranking.top_pids, ranking.top_scores, strict=True)
    for qid, pids, scores in rows:
        for rank, (pid, score) in enumerate(zip(pids, scores, strict=True), start=1):
            check_trec_id(pid, "passage id")
            shown = f"{len(pids) - rank + 1}" if tie_free else f"{float(score):.9g}"
            lines.append(f"{qid} Q0 {pid} {rank} {shown} {tag}")
    return lines


def qrels_lines(ranking: Ranking) -> list[str]:
    """``qid 0 pid 1`` for each query's hop-2 target."""
    pairs = zip(ranking.query_ids, ranking.target_pids, strict=True)
    return [
        f"{check_trec_id(qid, 'query id')} 0 {check_trec_id(pid, 'passage id')} 1"
        for qid, pid in pairs
    ]


def _write_lines(path: str | Path, lines: Sequence[str]) -> Path:
    path = Path(path)
    # atomic, and path problems (a directory, a file as parent) as ValueError naming the path
    atomic_write_bytes(path, "".join(line + "\n" for line in lines).encode("utf-8"))
    return path


def write_run_and_qrels(
    ranking: Ranking, path: str | Path, tag: str, *, tie_free: bool = False
) -> tuple[Path, Path]:
    """Write the run to ``path`` and the qrels to ``path.qrels``; both sets of lines are made
    (every id checked) before either file is written."""
    run_lines = trec_run_lines(ranking, tag, tie_free=tie_free)
    qrels = qrels_lines(ranking)
    return _write_lines(path, run_lines), _write_lines(f"{path}.qrels", qrels)
