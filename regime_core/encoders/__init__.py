"""Encoders (one :class:`Encoder` protocol), their registry, the embed stage and the
content-addressed embedding store.

- :mod:`~regime_core.encoders.registry`: the known names, :func:`get_encoder` and the
  ``EncoderFactory`` type the experiments take;
- :mod:`~regime_core.encoders.embed`: :func:`embed_dataset` (``regime embed``), local or on Ray;
- :mod:`~regime_core.encoders.store`: :class:`EmbeddingStore`, writing shards in the format of
  :mod:`~regime_core.encoders.shards`.

>>> from regime_core.encoders import get_encoder, EmbeddingStore
>>> enc = get_encoder("minilm")                                   # doctest: +SKIP
>>> EmbeddingStore(paths.embeddings_dir()).embed(enc, ["q?"], "query").shape  # doctest: +SKIP
(1, 384)
"""

from __future__ import annotations

from regime_core.encoders.base import Encoder
from regime_core.encoders.embed import EmbedReport, embed_dataset
from regime_core.encoders.registry import (
    DEVICES,
    KNOWN_ENCODERS,
    EncoderFactory,
    check_device,
    get_encoder,
)
from regime_core.encoders.sentence_transformer import (
    PRESETS,
    EncoderPreset,
    ModelUnavailableError,
    SentenceTransformerEncoder,
    minilm_encoder,
    minilm_path,
)
from regime_core.encoders.store import EmbeddingStore, StoreReport
from regime_core.encoders.tfidf import TfidfEncoder, TfidfParams
from regime_core.encoders.vectors import identity_hash, l2_normalize
from regime_core.inputs.embed_options import ENGINES

__all__ = [
    "DEVICES",
    "ENGINES",
    "KNOWN_ENCODERS",
    "PRESETS",
    "EmbedReport",
    "EmbeddingStore",
    "Encoder",
    "EncoderFactory",
    "EncoderPreset",
    "ModelUnavailableError",
    "SentenceTransformerEncoder",
    "StoreReport",
    "TfidfEncoder",
    "TfidfParams",
    "check_device",
    "embed_dataset",
    "get_encoder",
    "identity_hash",
    "l2_normalize",
    "minilm_encoder",
    "minilm_path",
]
