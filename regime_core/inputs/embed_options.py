"""The options of ``regime embed`` (:func:`regime_core.encoders.embed.embed_dataset`), declared:
how the store is filled (the encoder's own options: :mod:`regime_core.inputs.encoder_options`)."""

from __future__ import annotations

from regime_core.inputs import Choice, Field, Format, Nullable, Number

#: ``local``: this process; ``ray``: Ray Data actors, each loading the model once
ENGINES: tuple[str, ...] = ("local", "ray")

#: Where a dense model runs. ``None`` (not a choice on the command line) lets
#: sentence-transformers pick (CUDA when available).
DEVICES: tuple[str, ...] = ("cpu", "cuda")

EMBED_OPTIONS = Format(
    "embed options",
    (
        Field("engine", Choice(ENGINES), meaning="what encodes the missing texts"),
        Field("num_workers", Nullable(Number(low=1, integer=True)),
              meaning="Ray actors (null: one per CPU, or per GPU with device cuda)"),
        Field("batch_size", Number(low=1, integer=True), meaning="texts per encode batch"),
        Field("device", Nullable(Choice(DEVICES)),
              meaning="where dense models run (null: the library's choice)"),
    ),
)  # fmt: skip
