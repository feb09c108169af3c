"""Scoring throughput of hop-2 retrieval: numpy against faiss, in both pool modes.

For each prepared dataset, build the candidate pools of its questions (``question`` and
``corpus`` mode), take the query vectors of one arm and the passage vectors, and time
:func:`regime_core.retrieval.score_candidates` + :func:`regime_core.retrieval.rank_candidates`
(the whole scoring step, all questions at once) with each backend; best of ``--repeats``.
Also reports whether both backends give the same rankings on these vectors.

    REGIME_WORK_DIR=... python benchmarks/bench_retrieval.py --json
    python benchmarks/bench_retrieval.py --random-dim 384     # synthetic unit vectors, same shapes

Prints one JSON object. Vectors come from the embedding store (cached; the first run encodes
the corpus) unless ``--random-dim`` asks for seeded random unit vectors, which time the same.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from regime_core import config, paths
from regime_core.retrieval.pools import candidate_pools, document_text
from regime_core.retrieval.queries import plan_arm
from regime_core.retrieval.ranking import rank_candidates
from regime_core.retrieval.scoring import SCORERS, default_scorer, score_candidates
from regime_core.schema import SPLITS, Example, Passage


def _vectors(
    examples: list[Example], passages: list[Passage], arm: str, args: argparse.Namespace
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Query vectors of ``arm`` (examples without its inputs skipped), passage vectors, and the
    indices of the examples that have a query."""
    from regime_core.experiments.common import RunConfig

    settings = RunConfig().retrieval  # the default settings
    plan = plan_arm(examples, arm, [ex.relation_sentence for ex in examples], settings)
    texts = plan.texts()
    if args.random_dim:
        rng = np.random.default_rng(config.SEED)

        def unit(n: int) -> np.ndarray:
            x = rng.standard_normal((n, args.random_dim)).astype(np.float32)
            return x / np.linalg.norm(x, axis=1, keepdims=True)

        text_vectors, doc_vectors = unit(len(texts)), unit(len(passages))
    else:
        from regime_core.encoders import EmbeddingStore, get_encoder

        doc_texts = [document_text(p) for p in passages]
        encoder = get_encoder(args.encoder, corpus=doc_texts)
        store = EmbeddingStore(paths.embeddings_dir(args.work))
        text_vectors = store.embed(encoder, texts, "query")
        doc_vectors = store.embed(encoder, doc_texts, "document")
    queries = plan.query_vectors(text_vectors, {t: i for i, t in enumerate(texts)})
    return queries, doc_vectors, list(plan.kept)


def _best_time(fn: Any, repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _agreement(
    scores: dict[str, np.ndarray],
    orders: dict[str, np.ndarray],
    cands: np.ndarray,
    target_rows: np.ndarray,
) -> dict[str, float]:
    """How far numpy and faiss agree: scores, hop-2 target ranks, full orders, top-10 lists."""
    valid = cands >= 0
    a, b = scores["numpy"], scores["faiss"]
    top = max(config.K_VALUES)
    target_pos = np.argmax(cands == target_rows[:, None], axis=1)
    target_rank = {
        name: np.argmax(order == target_pos[:, None], axis=1) for name, order in orders.items()
    }
    return {
        "same_target_rank_fraction": float(np.mean(target_rank["numpy"] == target_rank["faiss"])),
        "max_abs_score_diff": float(np.abs(a[valid] - b[valid]).max()),
        "same_full_order_fraction": float(
            np.all((orders["numpy"] == orders["faiss"]) | ~valid, axis=1).mean()
        ),
        f"same_top{top}_fraction": float(
            np.all(orders["numpy"][:, :top] == orders["faiss"][:, :top], axis=1).mean()
        ),
    }


def bench_dataset(dataset: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    from regime_core.data import corpus_passages, load_examples

    examples = load_examples(dataset, split=args.split, work=args.work)
    if not examples:
        return []
    passages = corpus_passages(examples)
    queries, docs, kept = _vectors(examples, passages, args.arm, args)
    rows = []
    for mode in config.POOL_MODES:
        pools = candidate_pools(examples, mode, passages=passages)
        cands = pools.padded()[kept]
        scores, orders = {}, {}
        for scorer in SCORERS:

            def step(scorer: str = scorer, cands: np.ndarray = cands) -> np.ndarray:
                return score_candidates(queries, docs, cands, scorer=scorer)

            step()  # warm-up: imports, BLAS threads
            seconds, scores[scorer] = _best_time(step, args.repeats)
            # ranking is the same kernel for both backends: timed once per backend all the same
            rank_seconds, orders[scorer] = _best_time(
                lambda s=scores[scorer]: rank_candidates(s), args.repeats
            )
            rows.append(
                {
                    "dataset": dataset,
                    "split": args.split,
                    "pool": mode,
                    "scorer": scorer,
                    "default": scorer == default_scorer(cands, len(passages)),
                    "queries": len(kept),
                    "passages": len(passages),
                    "mean_candidates": float(np.mean([len(c) for c in pools.candidates])),
                    "dim": int(docs.shape[1]),
                    "score_seconds": round(seconds, 6),
                    "rank_seconds": round(rank_seconds, 6),
                    "queries_per_s": round(len(kept) / (seconds + rank_seconds), 1),
                }
            )
        row_of = {p.pid: r for r, p in enumerate(passages)}
        targets = np.array([row_of[examples[i].target_pid] for i in kept])
        agreement = _agreement(scores, orders, cands, targets)
        rows[-len(SCORERS) :] = [{**row, **agreement} for row in rows[-len(SCORERS) :]]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="*", default=["hotpotqa", "2wikimultihopqa", "musique"])
    parser.add_argument("--split", default=SPLITS[0], choices=SPLITS)
    parser.add_argument("--arm", default="q", choices=config.ARMS)
    parser.add_argument("--encoder", default=config.ENCODER)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--random-dim", type=int, default=0, help="use random unit vectors")
    parser.add_argument("--json", action="store_true", help="(always JSON; kept for symmetry)")
    args = parser.parse_args()

    import faiss

    rows = [row for dataset in args.datasets for row in bench_dataset(dataset, args)]
    faster = {}
    for mode in config.POOL_MODES:
        speed = {s: 0.0 for s in SCORERS}
        for row in rows:
            if row["pool"] == mode:
                speed[row["scorer"]] += row["score_seconds"] + row["rank_seconds"]
        faster[mode] = min(speed, key=speed.get) if any(speed.values()) else None
    print(
        json.dumps(
            {
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "numpy": np.__version__,
                    "faiss": faiss.__version__,
                    "faiss_threads": faiss.omp_get_max_threads(),
                },
                "vectors": f"random dim {args.random_dim}" if args.random_dim else args.encoder,
                "arm": args.arm,
                "repeats": args.repeats,
                "results": rows,
                "faster_total_time": faster,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
