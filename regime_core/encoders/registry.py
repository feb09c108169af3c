"""The encoder registry: the names ``regime`` knows, how a name becomes an encoder, and the
one type every experiment's ``encoder_factory`` argument has.

>>> sorted(KNOWN_ENCODERS)[:3]
['bge-large', 'e5-mistral', 'minilm']
>>> get_encoder("tfidf", corpus=["Paris is in France."]).name
'tfidf'

``DEVICES`` are the choices of ``regime embed --device``; :func:`check_device` turns an
impossible device into an error that says why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from regime_core.encoders.base import Encoder
from regime_core.encoders.sentence_transformer import (
    PRESETS,
    minilm_encoder,
    resolve_model_source,
)
from regime_core.encoders.tfidf import TfidfEncoder
from regime_core.inputs.embed_options import DEVICES

#: the command installing torch's CUDA build into the checkout's ``.venv`` (the Makefile's TORCH)
CUDA_INSTALL = "make install TORCH=cuda"

#: ``factory(name, corpus_texts) -> Encoder``: what the experiments call to get an encoder.
#: ``corpus_texts`` are the passages of the dataset at hand (TF-IDF is fitted on them).
EncoderFactory = Callable[[str, Sequence[str]], Encoder]

KNOWN_ENCODERS: dict[str, str] = {
    "minilm": "all-MiniLM-L6-v2 from the bundled weights, fp32 on CPU, no prompt (default)",
    "tfidf": "TF-IDF cosine fitted on the dataset's corpus (scikit-learn; lexical)",
    **{name: preset.description for name, preset in PRESETS.items()},
}

__all__ = [
    "DEVICES",
    "KNOWN_ENCODERS",
    "EncoderFactory",
    "check_device",
    "check_encoder_name",
    "get_encoder",
]


def get_encoder(name: str, *, corpus: Sequence[str] | None = None, **options: Any) -> Encoder:
    """The encoder called ``name``: a key of :data:`KNOWN_ENCODERS`, a local model directory or
    a hub id ``org/name``. ``corpus`` (the passage texts) is required by ``tfidf`` and ignored
    by the dense models; ``options`` go to the encoder's constructor (``device``, ``dtype``,
    prompts, ``params`` for tfidf). A ``device`` given to ``tfidf`` must be ``cpu`` or ``None``:
    it has no GPU path.
    A name that is none of these is refused (:func:`check_encoder_name`).
    """
    check_encoder_name(name)
    if name == "minilm":
        return minilm_encoder(**options)
    if name == "tfidf":
        if corpus is None:
            raise ValueError(
                "encoder 'tfidf' is fitted on the dataset's corpus: pass corpus=<passage texts>"
            )
        if options.pop("device", None) not in (None, "cpu"):
            raise ValueError(
                "encoder 'tfidf' runs on the CPU with scikit-learn: it takes no --device cuda"
            )
        return TfidfEncoder(corpus, **options)
    from regime_core.encoders.sentence_transformer import SentenceTransformerEncoder

    return SentenceTransformerEncoder(name, **options)


def check_encoder_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` is an encoder :func:`get_encoder` can make: a key of
    :data:`KNOWN_ENCODERS`, an existing model directory or a hub id ``org/name``; nothing is
    loaded. A blank name is none of these (:func:`resolve_model_source`)."""
    if name not in ("minilm", "tfidf"):
        resolve_model_source(name)


def check_device(device: str | None) -> None:
    """Raise ``ValueError`` if ``device`` (one of :data:`DEVICES` or None, read with the embed
    options) cannot be used in this process.

    ``cuda`` needs a CUDA build of torch and a visible GPU; the message says which is missing.
    """
    if device is None or device == "cpu":
        return
    import torch

    if torch.version.cuda is None:
        raise ValueError(
            f"--device cuda: this torch ({torch.__version__}) is a CPU-only build, so no CUDA "
            f"device can be used. Install the CUDA build with `{CUDA_INSTALL}` (from the "
            "checkout; it rebuilds .venv), or use --device cpu"
        )
    if not torch.cuda.is_available():
        raise ValueError(
            "--device cuda: torch sees no CUDA device (torch.cuda.is_available() is False; "
            "check the driver and CUDA_VISIBLE_DEVICES), or use --device cpu"
        )
