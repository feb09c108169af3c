"""The options of a sentence-transformers encoder
(:class:`~regime_core.encoders.sentence_transformer.SentenceTransformerEncoder`), declared:
what its constructor reads from a caller (``get_encoder``'s options, ``regime embed``)."""

from __future__ import annotations

from regime_core.inputs import Choice, Field, Format, Number

DTYPES: tuple[str, ...] = ("float32", "float16", "bfloat16")

ENCODER_OPTIONS = Format(
    "sentence-transformers encoder options",
    (
        Field("dtype", Choice(DTYPES), meaning="the precision the model runs in"),
        Field("batch_size", Number(low=1, integer=True), meaning="texts per forward pass"),
    ),
)
