"""The Ray engine against the local engine, on the same cores and the same texts.

Encodes the first ``--n`` passages of a prepared dataset (document mode) into a fresh store
three ways and prints one JSON object:

- ``local``: ``EmbeddingStore.fill`` in this process (torch's default thread count);
- ``ray_<w>w`` for each ``--workers`` value ``w``: a private local Ray cluster with as many CPUs
  as this machine, ``w`` actors (``encode_with_ray``); ``seconds`` includes starting and
  stopping the cluster, ``cluster_start_seconds`` is that part alone.

Each run reports its seconds, passages/s and digest (sha256 of the vectors in text order); the
digests must all be equal (the engines cut the same batches and use the same thread count, see
``regime_core.encoders.ray_engine``). Timings are never asserted in tests.

Run: ``.venv/bin/python benchmarks/bench_embed_engines.py --dataset hotpotqa --n 500
[--encoder minilm] [--workers 1,2]`` (needs ``pip install -e .[scale]``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from regime_core import config


def _texts(dataset: str, n: int) -> list[str]:
    from regime_core.encoders.embed import dataset_texts

    documents, _ = dataset_texts(dataset)
    if len(documents) < n:
        raise SystemExit(f"{dataset} has {len(documents)} passages, fewer than --n {n}")
    return documents[:n]


def _digest(store, encoder, texts: list[str]) -> str:
    from regime_core.encoders.embed import vectors_digest

    return vectors_digest([store.embed(encoder, texts, "document")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="hotpotqa")
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--encoder", default=config.ENCODER)
    parser.add_argument("--workers", default="1,2", help="comma-separated actor counts")
    parser.add_argument("--batch-size", type=int, default=config.ENCODE_BATCH_SIZE)
    args = parser.parse_args()

    import ray
    import torch

    from regime_core.encoders.embed import make_encoder
    from regime_core.encoders.ray_engine import encode_with_ray
    from regime_core.encoders.store import EmbeddingStore

    texts = _texts(args.dataset, args.n)
    encoder = make_encoder(args.encoder, texts)
    cpus = os.cpu_count() or 1
    result: dict = {
        "dataset": args.dataset,
        "encoder": args.encoder,
        "passages": len(texts),
        "batch_size": args.batch_size,
        "cpus": cpus,
        "torch_threads": torch.get_num_threads(),
        "load_average_1min_before": round(os.getloadavg()[0], 2),
        "runs": {},
    }
    with tempfile.TemporaryDirectory() as root:
        store = EmbeddingStore(Path(root) / "local")
        start = time.perf_counter()
        store.fill(encoder, texts, "document", batch_size=args.batch_size)
        seconds = time.perf_counter() - start
        result["runs"]["local"] = {
            "seconds": round(seconds, 2),
            "passages_per_s": round(len(texts) / seconds, 1),
            "digest": _digest(store, encoder, texts),
        }
        for workers in [int(w) for w in args.workers.split(",") if w]:
            store = EmbeddingStore(Path(root) / f"ray{workers}")
            missing = {"document": store.missing(encoder, texts, "document")}
            start = time.perf_counter()
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
            started = time.perf_counter() - start
            try:
                encode_with_ray(
                    store, encoder, missing, num_workers=workers, batch_size=args.batch_size
                )
            finally:
                ray.shutdown()
            seconds = time.perf_counter() - start
            result["runs"][f"ray_{workers}w"] = {
                "seconds": round(seconds, 2),
                "cluster_start_seconds": round(started, 2),
                "passages_per_s": round(len(texts) / seconds, 1),
                "digest": _digest(store, encoder, texts),
            }
    digests = {run["digest"] for run in result["runs"].values()}
    result["digests_equal"] = len(digests) == 1
    result["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
