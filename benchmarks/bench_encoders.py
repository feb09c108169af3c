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

With ``--backends onnx,openvino`` it compares the faster CPU backends with torch instead
(``regime_core.encoders.onnx_backend``): the same texts, the same batch size, the same thread
count, runs alternating ``--repeats`` times (minima reported, after one warm-up encode each), and
for each backend its speed-up over torch and the largest cosine disagreement of any vector
(``1 − cos``, vectors L2-normalised). ``default_eligible`` applies the project's rule: at least
1.5× faster and every vector within 1e-5.

Texts: the prepared examples of ``--dataset`` if ``regime data prepare`` has run, else the
MuSiQue paragraphs under ``REGIME_DATA_DIR`` (``musique/migres/musique.json``), else synthetic.
Run: ``.venv/bin/python benchmarks/bench_encoders.py [--n 1000] [--dataset musique]`` or
``... --dataset hotpotqa --backends onnx,openvino``.
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


#: The project's rule for making a backend the default (issue 14).
MIN_SPEEDUP: float = 1.5
MAX_ONE_MINUS_COS: float = 1e-5


def compare_backends(
    texts: list[str], backends: list[str], batch_size: int, repeats: int, export_dir: Path
) -> dict:
    """Seconds (min over repeats), speed-up over torch and max 1 − cos per backend."""
    import torch

    from regime_core.encoders import get_encoder

    encoders = {"torch": get_encoder("minilm", batch_size=batch_size)}
    for name in backends:
        encoders[name] = get_encoder(
            "minilm", backend=name, export_dir=export_dir, batch_size=batch_size
        )
    for encoder in encoders.values():
        encoder.encode_documents(texts[:16])  # load, export or compile, warm up
    times: dict[str, list[float]] = {name: [] for name in encoders}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(repeats):
        for name, encoder in encoders.items():
            start = time.perf_counter()
            vectors[name] = encoder.encode_documents(texts)
            times[name].append(time.perf_counter() - start)
    torch_s = min(times["torch"])
    out: dict = {
        "texts": len(texts),
        "batch_size": batch_size,
        "torch_threads": torch.get_num_threads(),
        "repeats": repeats,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "torch": {"seconds": round(torch_s, 2), "seconds_per_repeat": times["torch"]},
    }
    for name in backends:
        seconds = min(times[name])
        one_minus_cos = 1.0 - (vectors[name] * vectors["torch"]).sum(axis=1)
        speedup = torch_s / seconds
        worst = float(one_minus_cos.max())
        out[name] = {
            "seconds": round(seconds, 2),
            "seconds_per_repeat": [round(t, 2) for t in times[name]],
            "speedup_over_torch": round(speedup, 3),
            "max_one_minus_cos": worst,
            "max_abs_diff": float(np.abs(vectors[name] - vectors["torch"]).max()),
            "bit_identical": bool(np.array_equal(vectors[name], vectors["torch"])),
            "default_eligible": bool(speedup >= MIN_SPEEDUP and worst <= MAX_ONE_MINUS_COS),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--dataset", default="musique")
    parser.add_argument("--batch-size", type=int, default=config.ENCODE_BATCH_SIZE)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--backends",
        default="",
        help="comma-separated non-torch backends to compare with torch (onnx, openvino)",
    )
    args = parser.parse_args()

    if args.backends:
        texts, source = load_texts(args.n, args.dataset)
        with tempfile.TemporaryDirectory() as root:
            result = compare_backends(
                texts,
                [b for b in args.backends.split(",") if b],
                args.batch_size,
                args.repeats,
                Path(root) / "exports",
            )
        result["source"] = source
        result["mean_words"] = round(float(np.mean([len(t.split()) for t in texts])), 1)
        print(json.dumps(result, indent=2))
        return

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
