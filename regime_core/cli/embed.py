"""``regime embed DATASET --encoder NAME``: fill the embedding store for one prepared dataset.

Embeds, into ``paths.embeddings_dir(work)``, every text retrieval will ask for:

- document mode: the corpus passages, as retrieval encodes them
  (``regime_core.retrieval.document_text``: title, then body);
- query mode: the questions, every bridge sentence (any of them can be the router's selected
  B_rel), and the query parts of every arm with the gold B_rel (whole bridge, hop-2 entity
  mention, bridge without B_rel).

A second run encodes nothing. With ``--json`` one JSON object is printed on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from regime_core import config, paths
from regime_core.schema import DATASETS, Example


@dataclass(frozen=True)
class EmbedSummary:
    dataset: str
    encoder: str
    identity_hash: str
    n_documents: int
    n_queries: int
    encoded: int
    cached: int
    seconds: float


def query_texts(examples: Sequence[Example]) -> list[str]:
    """Distinct query-mode texts of ``examples``, in first-seen order (pure)."""
    from regime_core.retrieval import MissingArmInput, arm_query_texts

    seen: dict[str, None] = {}
    for ex in examples:
        seen.setdefault(ex.question, None)
        for sentence in ex.bridge.sentences:
            seen.setdefault(sentence, None)
        for arm in config.ARMS:
            try:
                parts = arm_query_texts(ex, arm, ex.relation_sentence)
            except MissingArmInput:  # counted by retrieval; nothing to pre-compute here
                continue
            for text, _weight in parts:
                seen.setdefault(text, None)
    return [text for text in seen if text.strip()]


def embed_dataset(
    dataset: str,
    encoder_name: str = config.ENCODER,
    *,
    work: str | None = None,
    batch_size: int = config.ENCODE_BATCH_SIZE,
    progress: bool = False,
) -> EmbedSummary:
    """Embed a prepared dataset's corpus (document mode) and query texts (query mode)."""
    from regime_core.data import corpus_passages, load_examples
    from regime_core.encoders import EmbeddingStore, get_encoder
    from regime_core.retrieval import document_text

    start = time.perf_counter()
    examples = load_examples(dataset, split=None, work=None if work is None else Path(work))
    documents = list(dict.fromkeys(document_text(p) for p in corpus_passages(examples)))
    queries = query_texts(examples)
    encoder = get_encoder(encoder_name, corpus=documents)
    store = EmbeddingStore(paths.embeddings_dir(work))
    _, doc_report = store.embed_with_report(
        encoder, documents, "document", batch_size=batch_size, progress=progress
    )
    _, query_report = store.embed_with_report(
        encoder, queries, "query", batch_size=batch_size, progress=progress
    )
    return EmbedSummary(
        dataset=dataset,
        encoder=encoder_name,
        identity_hash=doc_report.identity_hash,
        n_documents=len(documents),
        n_queries=len(queries),
        encoded=doc_report.n_encoded + query_report.n_encoded,
        cached=doc_report.n_cached + query_report.n_cached,
        seconds=round(time.perf_counter() - start, 3),
    )


def register(subparsers: Any) -> None:
    from regime_core.encoders import KNOWN_ENCODERS

    parser = subparsers.add_parser(
        "embed",
        help="encode a prepared dataset's passages and queries into the embedding store",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", choices=DATASETS)
    parser.add_argument(
        "--encoder",
        default=config.ENCODER,
        metavar="NAME",
        help=f"one of {', '.join(KNOWN_ENCODERS)}, a local model directory or a hub id "
        f"'org/name' (default: {config.ENCODER})",
    )
    parser.add_argument("--work", default=None, help="work directory (default: REGIME_WORK_DIR)")
    parser.add_argument("--batch-size", type=int, default=config.ENCODE_BATCH_SIZE)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    summary = embed_dataset(
        args.dataset,
        args.encoder,
        work=args.work,
        batch_size=args.batch_size,
        progress=not args.json,
    )
    if args.json:
        print(json.dumps(asdict(summary), sort_keys=True))
    else:
        print(
            f"{summary.dataset} / {summary.encoder} ({summary.identity_hash}): "
            f"{summary.n_documents} passages, {summary.n_queries} query texts; "
            f"{summary.encoded} encoded, {summary.cached} cached, {summary.seconds:.1f} s"
        )
    return 0
