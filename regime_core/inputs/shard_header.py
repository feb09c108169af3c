"""The JSON header of an embedding-store shard (:mod:`regime_core.encoders.shards`), declared:
what :func:`~regime_core.encoders.shards.decode_shard` reads before it trusts the payload."""

from __future__ import annotations

from regime_core.inputs import Choice, Field, Format, Number, Pattern, Text

COUNT = Number(low=0, integer=True)

SHARD_HEADER = Format(
    "shard header",
    (
        Field("identity", Text(), meaning="the identity hash of the encoder that wrote the shard"),
        Field("n", COUNT, meaning="rows (texts) in the shard"),
        Field("dim", COUNT, meaning="the dimension of its vectors"),
        Field("layout", Choice(("dense", "csr")), meaning="how the vectors are laid out"),
        Field("nnz", COUNT, meaning="non-zero entries of the vectors"),
        Field("payload_bytes", COUNT, meaning="the length of the payload after the header"),
        Field("payload_sha256", Pattern("[0-9a-f]{64}", "a sha256 hex digest"),
              meaning="the sha256 of the payload, checked before it is read"),
    ),
)  # fmt: skip
