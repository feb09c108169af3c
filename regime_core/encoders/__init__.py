"""Encoders (one :class:`Encoder` protocol) and the content-addressed embedding store.

>>> from regime_core.encoders import get_encoder, EmbeddingStore
>>> enc = get_encoder("minilm")                                   # doctest: +SKIP
>>> EmbeddingStore(paths.embeddings_dir()).embed(enc, ["q?"], "query").shape  # doctest: +SKIP
(1, 384)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from regime_core.encoders.base import Encoder
from regime_core.encoders.bm25 import BM25_ARMS, BM25Params, BM25Scorer
from regime_core.encoders.sentence_transformer import (
    PRESETS,
    EncoderPreset,
    ModelUnavailableError,
    SentenceTransformerEncoder,
    minilm_encoder,
    minilm_path,
)
from regime_core.encoders.store import EmbeddingStore, EmbedReport
from regime_core.encoders.tfidf import TfidfEncoder, TfidfParams
from regime_core.encoders.vectors import identity_hash, l2_normalize

KNOWN_ENCODERS: dict[str, str] = {
    "minilm": "all-MiniLM-L6-v2 from the bundled weights, fp32 on CPU, no prompt (default)",
    "tfidf": "TF-IDF cosine fitted on the dataset's corpus (scikit-learn; lexical)",
    **{name: preset.description for name, preset in PRESETS.items()},
}

__all__ = [
    "BM25_ARMS",
    "KNOWN_ENCODERS",
    "PRESETS",
    "BM25Params",
    "BM25Scorer",
    "EmbedReport",
    "EmbeddingStore",
    "Encoder",
    "EncoderPreset",
    "ModelUnavailableError",
    "SentenceTransformerEncoder",
    "TfidfEncoder",
    "TfidfParams",
    "get_encoder",
    "identity_hash",
    "l2_normalize",
    "minilm_encoder",
    "minilm_path",
]


def get_encoder(name: str, *, corpus: Sequence[str] | None = None, **options: Any) -> Encoder:
    """The encoder called ``name``: a key of :data:`KNOWN_ENCODERS`, a local model directory or
    a hub id ``org/name``. ``corpus`` (the passage texts) is required by ``tfidf`` and ignored
    by the dense models; ``options`` go to the encoder's constructor (``device``, ``dtype``,
    prompts, ``params`` for tfidf).
    """
    if name == "minilm":
        return minilm_encoder(**options)
    if name == "tfidf":
        if corpus is None:
            raise ValueError(
                "encoder 'tfidf' is fitted on the dataset's corpus: pass corpus=<passage texts>"
            )
        return TfidfEncoder(corpus, **options)
    if name == "bm25":
        raise ValueError(
            "bm25 scores text queries and has no vectors, so it is not an encoder: use "
            "regime_core.encoders.BM25Scorer (arms 'q' and 'bridge' only)"
        )
    return SentenceTransformerEncoder(name, **options)
