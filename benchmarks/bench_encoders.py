"""Encoding throughput: the embedding store against a bare ``SentenceTransformer.encode``.

Encodes the same passages (default 1,000) with MiniLM three ways and prints one JSON object
(bare and cold-store runs alternate ``--repeats`` times; the minima are reported):

- ``bare``: ``SentenceTransformer(path, device="cpu").encode(texts, batch_size, normalized)``;
- ``store_cold``: ``EmbeddingStore.embed`` into an empty store (hashing, dedup, batching, shard
  write included); ``ratio`` = store_cold / bare seconds, which should be close to 1;
- ``store_overhead``: the store around an encoder that only looks vectors up (its own cost:
  keys, dedup, checks, shard write), which machine load cannot blur as it blurs ``ratio``;
- ``store_warm``: the same call again (nothing encoded), and ``store_reload``: a fresh store
  instance on the same directory (reads and validates the shards).

Texts: the prepared examples of ``--dataset`` if ``regime data prepare`` has run, else the
MuSiQue paragraphs under ``REGIME_DATA_DIR`` (``musique/migres/musique.json``), else synthetic.
Run: ``.venv/bin/python benchmarks/bench_encoders.py [--n 1000] [--dataset musique]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from regime_core import config, paths


def _prepared_texts(dataset: str) -> list[str] | None:
    try:
        from regime_core.data import corpus_passages, load_examples
        from regime_core.retrieval import document_text

        examples = load_examples(dataset, split=None)
    except (ImportError, FileNotFoundError, ValueError):
        return None
    return [document_text(p) for p in corpus_passages(examples)]


def _raw_musique_texts() -> list[str] | None:
    if not os.environ.get("REGIME_DATA_DIR"):
        return None
    path = paths.data_dir() / "musique" / "migres" / "musique.json"
    if not path.exists():
        return None
    texts: dict[str, None] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                for par in json.loads(line)["paragraphs"]:
                    texts.setdefault(f"{par['title']}. {' '.join(par['paragraph_text'].split())}")
    return list(texts)


def _synthetic_texts(n: int, seed: int = config.SEED) -> list[str]:
    rng = random.Random(seed)
    words = [f"word{i}" for i in range(2000)]
    return [" ".join(rng.choices(words, k=rng.randint(40, 140))) + "." for _ in range(n)]


class LookupEncoder:
    """Returns precomputed vectors: isolates the store's overhead from encoding time."""

    name = "bench-lookup"

    def __init__(self, texts: list[str], vectors: np.ndarray) -> None:
        self._rows = {text: row for row, text in enumerate(texts)}
        self._vectors = vectors
        self.identity = {"kind": "bench-lookup", "n": len(texts)}

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors[[self._rows[t] for t in texts]]

    encode_documents = encode_queries


def load_texts(n: int, dataset: str) -> tuple[list[str], str]:
    for source, texts in (
        (f"prepared:{dataset}", _prepared_texts(dataset)),
        ("raw:musique/migres", _raw_musique_texts()),
    ):
        if texts and len(texts) >= n:
            return texts[:n], source
    return _synthetic_texts(n), "synthetic"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--dataset", default="musique")
    parser.add_argument("--batch-size", type=int, default=config.ENCODE_BATCH_SIZE)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    from regime_core.encoders import EmbeddingStore, get_encoder, minilm_path

    texts, source = load_texts(args.n, args.dataset)
    warmup = texts[:16]

    bare_model = SentenceTransformer(str(minilm_path()), device="cpu")
    bare_model.encode(warmup, batch_size=args.batch_size)
    encoder = get_encoder("minilm")
    encoder.encode_documents(warmup)  # load and warm up, as for the bare model

    # Bare and store runs alternate, and the minimum of each is compared: on a shared machine
    # the load drifts, and alternating exposes both to the same drift.
    bare_times: list[float] = []
    cold_times: list[float] = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        bare = bare_model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True)
        bare_times.append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as root:
            store = EmbeddingStore(Path(root))
            start = time.perf_counter()
            vectors = store.embed(encoder, texts, "document", batch_size=args.batch_size)
            cold_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            warm = store.embed(encoder, texts, "document", batch_size=args.batch_size)
            warm_s = time.perf_counter() - start
            start = time.perf_counter()
            reloaded = EmbeddingStore(Path(root)).embed(encoder, texts, "document")
            reload_s = time.perf_counter() - start
            disk_bytes = sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file())
    bare_s, cold_s = min(bare_times), min(cold_times)

    # The store's own cost (keys, dedup, sorting, validation, shard write), measured with an
    # encoder that only looks vectors up: robust to machine load, unlike the ratio above.
    lookup = LookupEncoder(texts, bare)
    with tempfile.TemporaryDirectory() as root:
        start = time.perf_counter()
        EmbeddingStore(Path(root)).embed(lookup, texts, "document", batch_size=args.batch_size)
        overhead_s = time.perf_counter() - start

    words = [len(t.split()) for t in texts]
    summary = {
        "texts": len(texts),
        "source": source,
        "mean_words": round(float(np.mean(words)), 1),
        "batch_size": args.batch_size,
        "torch_threads": torch.get_num_threads(),
        "bare_seconds": round(bare_s, 2),
        "store_cold_seconds": round(cold_s, 2),
        "ratio_store_over_bare": round(cold_s / bare_s, 3),
        "ratios_per_repeat": [round(c / b, 3) for b, c in zip(bare_times, cold_times, strict=True)],
        "store_overhead_seconds": round(overhead_s, 4),
        "store_overhead_fraction_of_bare": round(overhead_s / bare_s, 5),
        "store_warm_seconds": round(warm_s, 4),
        "store_reload_seconds": round(reload_s, 4),
        "bare_passages_per_s": round(len(texts) / bare_s, 1),
        "store_passages_per_s": round(len(texts) / cold_s, 1),
        "max_abs_diff_store_vs_bare": float(np.abs(vectors - bare).max()),
        "warm_bit_identical": bool(
            np.array_equal(warm, vectors) and np.array_equal(reloaded, vectors)
        ),
        "store_disk_bytes": disk_bytes,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
