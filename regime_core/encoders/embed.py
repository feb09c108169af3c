"""The embed stage: fill the embedding store with every text retrieval will ask for.

For one prepared dataset it embeds, into ``paths.embeddings_dir(work)``:

- document mode: the corpus passages, as retrieval encodes them
  (``regime_core.retrieval.document_text``: title, then body);
- query mode: the questions, every bridge sentence (any of them can be the router's selected
  B_rel), the query parts of every arm with the gold B_rel (whole bridge, hop-2 entity
  mention, bridge without B_rel), and the hop-2 entity as each bridge writes it (the entity
  arm's default query, :func:`bridge_mentions`).

A second run encodes nothing. Two engines encode what is missing:

- ``local``: this process, batch after batch
  (:meth:`~regime_core.encoders.store.EmbeddingStore.fill`);
- ``ray``: Ray Data maps the same batches over actor workers that each load the model once
  (:mod:`regime_core.encoders.ray_engine`, extra ``pip install -e .[scale]``); the driver
  writes their vectors into the same content-addressed store.

Both cut the missing texts into the same batches (:func:`~regime_core.encoders.store.plan_batches`),
so their vectors are bit-identical and the report's ``digest`` (sha256 of the float32
vectors, documents then queries, in text order) is the same whichever engine ran.

>>> report = embed_dataset("toyworld", "tfidf", work=tmp)        # doctest: +SKIP
>>> report.to_json()["digest"][:12]                             # doctest: +SKIP
'5f0c...'
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from regime_core import config, paths
from regime_core.encoders.base import Encoder
from regime_core.inputs.embed_options import EMBED_OPTIONS
from regime_core.schema import Example

#: Bytes of dense vectors gathered at a time to compute the digest (TF-IDF rows are
#: vocabulary-wide: 2,048 of them would be ~400 MB).
DIGEST_CHUNK_BYTES: int = 32 << 20


@dataclass(frozen=True)
class EmbedReport:
    """What one :func:`embed_dataset` call did.

    ``texts`` = distinct documents + distinct query texts; ``encoded`` + ``cached`` = ``texts``;
    ``digest`` = sha256 of the float32 little-endian vectors, documents then queries, in the
    order :func:`dataset_texts` gives them; ``workers`` = Ray actors (1 for local).
    """

    dataset: str
    encoder: str
    engine: str
    texts: int
    encoded: int
    cached: int
    seconds: float
    digest: str
    identity_hash: str
    documents: int
    queries: int
    device: str | None
    workers: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def query_texts(examples: Sequence[Example]) -> list[str]:
    """Distinct query-mode texts of ``examples``, in first-seen order (pure)."""
    from regime_core.data.regimes import RegimeRules
    from regime_core.retrieval import MissingArmInput, RetrievalSettings, arm_query_texts

    # Which texts an arm queries with does not depend on α, the pool or k; the knockout rule
    # "title" queries with a one-sentence bridge's title, so it lists every text there is.
    every_text = RetrievalSettings(
        pool="question",
        alpha=1.0,
        k=1,
        exclude_bridge=True,
        knockout_single="title",
        tiny_pools="keep",
        entity_source="example",
        regime_rules=RegimeRules(),
    )
    seen: dict[str, None] = {}
    for ex in examples:
        seen.setdefault(ex.question, None)
        for sentence in ex.bridge.sentences:
            seen.setdefault(sentence, None)
        for arm in config.ARMS:
            try:
                parts = arm_query_texts(ex, arm, ex.relation_sentence, every_text)
            except MissingArmInput:  # counted by retrieval; nothing to pre-compute here
                continue
            for text, _weight in parts:
                seen.setdefault(text, None)
    for mention in bridge_mentions(examples):
        seen.setdefault(mention, None)
    return [text for text in seen if text.strip()]


def bridge_mentions(examples: Sequence[Example]) -> list[str]:
    """The entity arm's query texts under ``entity_source="bridge_mention"`` (the hop-2 entity
    as the bridge writes it, :func:`regime_core.data.regimes.bridge_entity_mention`),
    under every predicate-name rule a run may read, distinct, in first-seen order (pure)."""
    import pandas as pd

    from regime_core.data.regimes import (
        PREDICATE_NAMES,
        RegimeRules,
        bridge_entity_mention,
        regime_table,
    )

    examples = list(examples)
    seen: dict[str, None] = {}
    if not examples:
        return []
    for names in PREDICATE_NAMES:
        rules = RegimeRules(predicate_names=names)
        b_rel = regime_table(examples, rules)["b_rel_index"]
        for ex, rel in zip(examples, b_rel, strict=True):
            mention = bridge_entity_mention(ex, None if pd.isna(rel) else int(rel), rules)
            if mention is not None:
                seen.setdefault(mention, None)
    return list(seen)


def dataset_texts(
    dataset: str, work: str | Path | None = None, split: str | None = None
) -> tuple[list[str], list[str]]:
    """``(documents, queries)``: the distinct texts ``dataset`` needs in each mode, in order
    (of one ``split``, or of every split)."""
    from regime_core.data import corpus_passages, load_examples
    from regime_core.retrieval import document_text

    examples = load_examples(dataset, split=split, work=None if work is None else Path(work))
    documents = list(dict.fromkeys(document_text(p) for p in corpus_passages(examples)))
    return documents, query_texts(examples)


def vectors_digest(chunks: Any) -> str:
    """sha256 over float32 vectors given as an iterable of 2-d chunks, in order (pure).

    Each chunk contributes its C-contiguous little-endian float32 bytes, so the digest is that of
    the concatenated matrix, however it is cut.

    >>> a = np.eye(3, dtype=np.float32)
    >>> vectors_digest([a]) == vectors_digest([a[:1], a[1:]])
    True
    """
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(np.ascontiguousarray(chunk, dtype="<f4").tobytes())
    return digest.hexdigest()


def _stored_chunks(store: Any, encoder: Encoder, texts: Sequence[str], mode: str) -> Any:
    """The stored vectors of ``texts`` in order, a few MB at a time (all must be stored)."""
    start, rows = 0, 1
    while start < len(texts):
        chunk = store.embed(encoder, texts[start : start + rows], mode)
        yield chunk
        start += rows
        rows = max(1, DIGEST_CHUNK_BYTES // max(1, 4 * chunk.shape[1]))


def make_encoder(
    encoder_name: str,
    documents: Sequence[str],
    *,
    device: str | None = None,
) -> Encoder:
    """``get_encoder`` with the embed stage's options (only those given are passed on)."""
    from regime_core.encoders.registry import get_encoder

    options: dict[str, Any] = {}
    if device is not None:
        options["device"] = device
    return get_encoder(encoder_name, corpus=list(documents), **options)


def embed_dataset(
    dataset: str,
    encoder_name: str = config.ENCODER,
    *,
    work: str | Path | None = None,
    engine: str = "local",
    address: str | None = None,
    num_workers: int | None = None,
    device: str | None = None,
    batch_size: int = config.ENCODE_BATCH_SIZE,
    progress: bool = False,
) -> EmbedReport:
    """Embed a prepared dataset's corpus (document mode) and query texts (query mode).

    ``engine`` is ``local`` or ``ray``; ``address`` (ray only) is a running cluster's address
    (``host:port`` or ``auto``), else a local cluster of ``num_workers`` CPUs is started and
    stopped; ``num_workers`` is the number of actors (default: one per CPU, or per GPU with
    ``device="cuda"``). ``device`` is ``cpu``, ``cuda`` or None (the library's choice).

    Raises ``ValueError`` with the fix for: an unknown engine, ``address`` without ray, Ray not
    installed, an unreachable address, ``cuda`` where no CUDA device is, a hub model whose
    weights are absent (``ModelUnavailableError``, a ``FileNotFoundError``).
    """
    from regime_core.encoders.registry import check_device
    from regime_core.encoders.store import EmbeddingStore, Mode
    from regime_core.encoders.vectors import identity_hash

    options = {"engine": engine, "num_workers": num_workers, "batch_size": batch_size,
               "device": device}  # fmt: skip
    EMBED_OPTIONS.read(options, where="regime embed")
    if engine == "local" and (address is not None or num_workers is not None):
        raise ValueError("--address and --num-workers apply to --engine ray only")
    if engine == "ray":
        from regime_core.encoders.ray_engine import import_ray

        import_ray()  # fail fast, before reading anything, when the extra is missing
    if engine == "local" or address is None:
        check_device(device)  # a remote cluster's GPUs are checked on the cluster

    start = time.perf_counter()
    documents, queries = dataset_texts(dataset, work)
    encoder = make_encoder(encoder_name, documents, device=device)
    store = EmbeddingStore(paths.embeddings_dir(work))
    work_items: list[tuple[Mode, list[str]]] = [("document", documents), ("query", queries)]
    workers = 1
    if engine == "local":
        encoded = cached = 0
        for mode, texts in work_items:
            report = store.fill(encoder, texts, mode, batch_size=batch_size, progress=progress)
            encoded += report.n_encoded
            cached += report.n_cached
    else:
        from regime_core.encoders.ray_engine import encode_with_ray

        missing_by_mode = {mode: store.missing(encoder, texts, mode) for mode, texts in work_items}
        encoded = sum(len(m) for m in missing_by_mode.values())
        cached = len(documents) + len(queries) - encoded
        workers = encode_with_ray(
            store,
            encoder,
            missing_by_mode,
            address=address,
            num_workers=num_workers,
            device=device,
            batch_size=batch_size,
            progress=progress,
        )
    digest = vectors_digest(
        chunk for mode, texts in work_items for chunk in _stored_chunks(store, encoder, texts, mode)
    )
    return EmbedReport(
        dataset=dataset,
        encoder=encoder_name,
        engine=engine,
        texts=len(documents) + len(queries),
        encoded=encoded,
        cached=cached,
        seconds=round(time.perf_counter() - start, 3),
        digest=digest,
        identity_hash=identity_hash(encoder.identity),
        documents=len(documents),
        queries=len(queries),
        device=device,
        workers=workers,
    )
