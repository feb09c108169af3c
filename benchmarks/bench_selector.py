"""The ``B_rel`` selectors measured on the prepared datasets, and what the learned one costs.

Runs :func:`regime_core.experiments.router_train.compare_selectors` on the router's routing data
(every two-hop item of each prepared dataset, the router-training run's default settings): every
selector (rule, first, gold and each learned variant) at the three levels, cross-fitted on
2WikiMultiHopQA and zero-shot on MuSiQue and HotpotQA. Timed separately:

- ``vectors``: per dataset, the distinct bridge sentences the learned selector needs in query
  mode, how many the embedding store under ``--work`` already held, and the seconds to fill it;
  with ``--cold``, also the seconds to encode every one of them into a fresh, empty store (the
  upper bound of what a cold book pays: some are embedded by other chapters anyway), in wall
  and in process CPU seconds (all threads: what the wall time is on a machine nothing else
  loads, times the threads' parallel efficiency);
- ``seconds``: the routing data of the three datasets; the features of every sentence; per
  learned variant, the 5-fold cross-fit and the deployment fit on 2WikiMultiHopQA with the
  zero-shot selection elsewhere; and the whole study (every knob value's router trained and
  applied, vectors already stored).

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
    from regime_core.experiments import router_train as rt
    from regime_core.experiments.context import Context
    from regime_core.router import learned_selector as ls
    from regime_core.router import selector_choices as se

    train = rt.TRAIN_DATASET
    cfg = rt.RouterConfig(encoder=args.encoder, sample_size=args.sample_size)
    context = Context(work=args.work)
    datasets = (train, *rt.TRANSFER_DATASETS)
    start = time.perf_counter()
    data = rt.load_routing_data(cfg, datasets, cfg.encoder, cfg.bridge_source, context)
    routing_seconds = time.perf_counter() - start
    store = EmbeddingStore(paths.embeddings_dir(args.work))

    vectors: dict[str, Any] = {}
    for dataset, d in data.items():
        encoder = context.encoder(cfg.encoder, d.sample.corpus)
        sentences = sorted({s for ex in d.examples for s in ex.bridge.sentences})
        start = time.perf_counter()
        _, report = store.embed_with_report(encoder, sentences, "query")
        vectors[dataset] = {
            "distinct_sentences": len(sentences),
            "already_stored": report.n_cached,
            "encoded": report.n_encoded,
            "seconds": round(time.perf_counter() - start, 2),
        }
        if args.cold:
            with tempfile.TemporaryDirectory() as tmp:
                start, cpu = time.perf_counter(), time.process_time()
                EmbeddingStore(Path(tmp)).embed(encoder, sentences, "query")
                vectors[dataset]["cold_seconds"] = round(time.perf_counter() - start, 2)
                vectors[dataset]["cold_cpu_seconds"] = round(time.process_time() - cpu, 2)
    if args.vectors_only:
        print(json.dumps({"encoder": args.encoder, "load_average": os.getloadavg(),
                          "vectors": vectors}, indent=1))  # fmt: skip
        return

    # vectors stored: features, the cross-fit and deployment fit, the zero-shot selection
    start = time.perf_counter()
    inputs = rt.selector_inputs(data, context)
    features_seconds = time.perf_counter() - start
    folds = rt.recipe_folds(data[train], inputs[train], cfg)
    rule = {d: x.table["b_rel_index"].to_numpy() for d, x in data.items()}
    fit_seconds: dict[str, float] = {}
    for name in ls.SELECTOR_VARIANTS:
        start = time.perf_counter()
        se.choose(inputs, rule, train_dataset=train, folds=folds, variants=(name,))
        fit_seconds[name] = round(time.perf_counter() - start, 3)

    start = time.perf_counter()
    comparison = rt.compare_selectors(data, cfg, context, train_dataset=train)
    study_seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "encoder": args.encoder,
                "load_average": os.getloadavg(),
                "pool": cfg.pool,
                "alpha": cfg.alpha,
                "k": cfg.k,
                "n": {d: x.n for d, x in data.items()},
                "fold_sizes": np.bincount(folds).tolist(),
                "vectors": vectors,
                "seconds": {
                    "routing_data_all_datasets": round(routing_seconds, 2),
                    "features_all_datasets": round(features_seconds, 3),
                    "fit_predict": fit_seconds,
                    "whole_study": round(study_seconds, 2),
                },
                "numbers": comparison.study.to_numbers(),
            },
            indent=1,
            default=float,
        )
    )


if __name__ == "__main__":
    main()
