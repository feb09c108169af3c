"""Time and peak memory of corpus-mode retrieval at scale, on synthetic unit vectors.

Scores ``--queries`` seeded random unit query vectors against ``--passages`` seeded random unit
passage vectors (dimension ``--dim``) the way corpus mode does: every passage but one excluded
row (the bridge) per query, the top ``--k``, the exact rank of each query's target and the
negatives' statistics for AUC and margins, by :func:`regime_core.retrieval.corpus_scan.scan_corpus`
(blocks of ``--block`` queries; default: as many as fit 2**25 score cells).

``--dense`` runs the path corpus mode took before instead, for contrast: the padded
queries × candidates index matrix, :func:`regime_core.retrieval.score_candidates`,
:func:`~regime_core.retrieval.rank_candidates` and :mod:`regime_core.metrics` over the full
score rows. Its memory grows as queries × passages (about 40 bytes per cell).

The measurement runs in a fresh child interpreter, so nothing the caller allocated counts;
``peak_rss_mb`` is the child's ``ru_maxrss`` (imports and the vectors included: they are part
of what a run needs), ``setup_peak_rss_mb`` its peak before retrieval starts (interpreter,
imports, vectors), ``vectors_mb`` what the vectors alone take, and ``seconds`` the retrieval
step alone (vector generation excluded). Prints one JSON object; never asserted.

    python benchmarks/bench_scale.py --passages 200000 --queries 2000 --json
    python benchmarks/bench_scale.py --passages 50000 --queries 2000 --dense --json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

SEED = 14
_CHUNK = 16_384  # rows generated at a time (25 MiB at d = 384): small temporaries


def unit_vectors(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """``(n, dim)`` float32 unit vectors, generated in chunks (bounded temporaries)."""
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, _CHUNK):
        chunk = rng.standard_normal((min(_CHUNK, n - start), dim), dtype=np.float32)
        chunk /= np.linalg.norm(chunk, axis=1, keepdims=True)
        out[start : start + len(chunk)] = chunk
    return out


def _data(args: argparse.Namespace) -> tuple[np.ndarray, ...]:
    """The seeded documents, queries, excluded rows and targets (the same in every child)."""
    rng = np.random.default_rng(SEED)
    documents = unit_vectors(rng, args.passages, args.dim)
    queries = unit_vectors(rng, args.queries, args.dim)
    # one excluded row (the "bridge") and a different target per query, as in corpus mode
    excluded = rng.integers(0, args.passages, args.queries)
    targets = (excluded + 1 + rng.integers(0, args.passages - 1, args.queries)) % args.passages
    return documents, queries, excluded, targets


def _workload(args: argparse.Namespace) -> dict[str, Any]:
    documents, queries, excluded, targets = _data(args)
    # peak so far: interpreter, imports, vectors (their generation included)
    setup_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    if args.dense:
        summary = _dense(queries, documents, excluded, targets, args.k)
    else:
        from regime_core.retrieval.corpus_scan import default_block, scan_corpus

        scan = scan_corpus(
            queries,
            documents,
            excluded=excluded,
            targets=targets,
            golds=targets[:, None],
            k=args.k,
            scorer=args.scorer,
            block=args.block,
        )
        assert scan.negatives is not None
        summary = {
            "block": args.block or default_block(args.passages, args.scorer),
            "mean_target_rank": float(scan.target_ranks.mean()),
            "mean_auc": float(
                ((scan.negatives.below + 0.5 * scan.negatives.tied) / scan.negatives.count).mean()
            ),
        }
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 3), "setup_peak_rss_mb": round(setup_peak, 1), **summary}


def _run_child(argv: list[str]) -> dict[str, Any]:
    """Run this script as a child; a failing child's stderr, then its exit status."""
    child = subprocess.run(
        [sys.executable, __file__, *argv, "--child"],
        check=False,
        capture_output=True,
        text=True,
    )
    if child.returncode:
        sys.stderr.write(child.stderr)
        raise SystemExit(child.returncode)
    result: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    return result


def _dense(
    queries: np.ndarray, documents: np.ndarray, excluded: np.ndarray, targets: np.ndarray, k: int
) -> dict[str, Any]:
    """Corpus mode before bounded memory: full candidate, score and order matrices."""
    from regime_core.metrics import evaluate_per_query
    from regime_core.retrieval import rank_candidates, score_candidates

    n_passages = len(documents)
    everything = np.arange(n_passages, dtype=np.int64)
    padded = np.stack([everything[everything != e] for e in excluded])
    scores = score_candidates(queries, documents, padded, scorer="numpy")
    order = rank_candidates(scores)
    _top = order[:, :k]
    positions = targets - (targets > excluded)
    table = evaluate_per_query(list(scores), positions, ["rank", "auc", "margin", "std_margin"])
    return {
        "mean_target_rank": float(table["rank"].mean()),
        "mean_auc": float(table["auc"].mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, required=True)
    parser.add_argument("--queries", type=int, required=True)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--block", type=int, default=None, help="queries per block")
    parser.add_argument("--k", type=int, default=10, help="top candidates kept per query")
    parser.add_argument("--scorer", default="numpy", choices=("numpy", "faiss"))
    parser.add_argument("--dense", action="store_true", help="the pre-bounded dense path")
    parser.add_argument("--json", action="store_true", help="(always JSON; kept for symmetry)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.passages < 2 or args.queries < 1 or args.dim < 1 or args.k < 0:
        parser.error("need --passages >= 2, --queries >= 1, --dim >= 1, --k >= 0")
    if args.block is not None and args.block < 1:
        parser.error("--block must be >= 1")

    if args.child:
        result = _workload(args)
        # Linux: ru_maxrss in KiB
        result.setdefault(
            "peak_rss_mb", round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        )
        print(json.dumps(result))
        return

    measured = _run_child(sys.argv[1:])
    vectors_mb = (args.passages + args.queries) * args.dim * 4 / 2**20
    print(
        json.dumps(
            {
                "passages": args.passages,
                "queries": args.queries,
                "dim": args.dim,
                "seconds": measured.pop("seconds"),
                "peak_rss_mb": measured.pop("peak_rss_mb"),
                "vectors_mb": round(vectors_mb, 1),
                "path": "dense" if args.dense else "bounded",
                "scorer": "numpy" if args.dense else args.scorer,
                "k": args.k,
                **measured,
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "numpy": np.__version__,
                },
            }
        )
    )


if __name__ == "__main__":
    main()
