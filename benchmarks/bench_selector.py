"""The ``B_rel`` selectors measured on the prepared datasets, and what the learned one costs.

Runs :func:`regime_core.router.selector_evaluation.measure_selectors` on the router's samples
(every two-hop item of each prepared dataset, the default experiment settings): agreement of
every selector (rule, first, gold and each learned variant) with the gold sentence, cross-fitted
on 2WikiMultiHopQA and zero-shot on MuSiQue and HotpotQA, and union hit@k with each selector's
``B_rel`` against the gold one (paired, McNemar). Timed separately:

- ``vectors``: per dataset, the distinct bridge sentences the learned selector needs in query
  mode, how many the embedding store under ``--work`` already held, and the seconds to fill it;
  with ``--cold``, also the seconds to encode every one of them into a fresh, empty store (the
  upper bound of what a cold book pays: some are embedded by other chapters anyway), in wall
  and in process CPU seconds (all threads: what the wall time is on a machine nothing else
  loads, times the threads' parallel efficiency);
- ``fit_predict``: features of every sentence, the 5-fold cross-fit and the deployment fit on
  2WikiMultiHopQA and the zero-shot selection elsewhere, for the ``learned`` variant alone and
  for every variant (vectors already stored).

Prints one JSON object; never asserted anywhere.

    REGIME_DATA_DIR=... python benchmarks/bench_selector.py --work _build/regime [--cold]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from regime_core import config, paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--encoder", default=config.ENCODER)
    parser.add_argument("--sample-size", type=int, default=None)
    parser.add_argument("--cold", action="store_true", help="also time a fresh, empty store")
    parser.add_argument("--vectors-only", action="store_true", help="stop after the vectors")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from regime_core.encoders import EmbeddingStore
    from regime_core.experiments.common import (
        ExperimentConfig,
        default_encoder_factory,
        load_samples,
    )
    from regime_core.retrieval import document_text
    from regime_core.router import learned_selector as ls
    from regime_core.router import selector_evaluation as se

    train = "2wikimultihopqa"
    cfg = ExperimentConfig(encoders=(args.encoder,), sample_size=args.sample_size)
    samples = load_samples(cfg, work=args.work)
    encoders = {
        d: default_encoder_factory(args.encoder, [document_text(p) for p in s.corpus])
        for d, s in samples.items()
    }
    store = EmbeddingStore(paths.embeddings_dir(args.work))

    vectors: dict[str, Any] = {}
    for dataset, sample in samples.items():
        sentences = sorted({s for ex in sample.examples for s in ex.bridge.sentences})
        start = time.perf_counter()
        _, report = store.embed_with_report(encoders[dataset], sentences, "query")
        vectors[dataset] = {
            "distinct_sentences": len(sentences),
            "already_stored": report.n_cached,
            "encoded": report.n_encoded,
            "seconds": round(time.perf_counter() - start, 2),
        }
        if args.cold:
            with tempfile.TemporaryDirectory() as tmp:
                start, cpu = time.perf_counter(), time.process_time()
                EmbeddingStore(Path(tmp)).embed(encoders[dataset], sentences, "query")
                vectors[dataset]["cold_seconds"] = round(time.perf_counter() - start, 2)
                vectors[dataset]["cold_cpu_seconds"] = round(time.process_time() - cpu, 2)
    if args.vectors_only:
        print(json.dumps({"encoder": args.encoder, "load_average": os.getloadavg(),
                          "vectors": vectors}, indent=1))  # fmt: skip
        return

    # fit + predict, vectors stored: features, cross-fit and deployment fit, zero-shot selection
    start = time.perf_counter()
    inputs = {
        d: se.selector_data(d, s.examples, encoder=encoders[d], store=store)
        for d, s in samples.items()
    }
    features_seconds = time.perf_counter() - start
    t = inputs[train]
    geometry = se.selection_geometry(
        t, encoder=encoders[train], store=store, corpus=samples[train].corpus
    )
    folds = ls.selector_folds(
        geometry.target_ranks(0.0), se.union_ranks(geometry, t, t.rule, cfg.alpha), t.gold == 0
    )
    fit_seconds: dict[str, float] = {}
    for name, feats in ls.SELECTOR_VARIANTS.items():
        start = time.perf_counter()
        est = ls.LearnedSelector(features=feats)
        ls.cross_fit_select(t.rows, t.gold, folds, estimator=est)
        model = ls.fit_selector(t.rows, t.gold, estimator=est)
        for d, data in inputs.items():
            if d != train:
                model.select(data.rows.X, data.rows.sizes)
        fit_seconds[name] = round(time.perf_counter() - start, 3)

    start = time.perf_counter()
    study = se.measure_selectors(samples, encoders=encoders, store=store, train_dataset=train)
    study_seconds = time.perf_counter() - start
    n_tied = int(
        np.sum(geometry.target_ranks(0.0) == se.union_ranks(geometry, t, t.rule, cfg.alpha))
    )
    print(
        json.dumps(
            {
                "encoder": args.encoder,
                "load_average": os.getloadavg(),
                "pool": cfg.pool,
                "alpha": cfg.alpha,
                "k": cfg.k,
                "n": {d: s.n for d, s in samples.items()},
                "train_ties": n_tied,
                "fold_sizes": np.bincount(folds).tolist(),
                "vectors": vectors,
                "seconds": {
                    "features_all_datasets": round(features_seconds, 3),
                    "fit_predict": fit_seconds,
                    "whole_study": round(study_seconds, 2),
                },
                "numbers": study.to_numbers(),
            },
            indent=1,
            default=float,
        )
    )


if __name__ == "__main__":
    main()
