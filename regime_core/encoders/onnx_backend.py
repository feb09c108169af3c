"""A faster CPU path for sentence-transformers models: the transformer exported to ONNX, locally.

The export is made from the weights already on disk (``torch.onnx.export``, TorchScript
exporter, opset :data:`OPSET`, dynamic batch and sequence axes), never fetched from the hub,
and cached under ``<export_dir>/<backend-independent key>/model.onnx`` where the key holds the
weights' hash (or hub revision), the torch version and the opset: a second process loads it in a
second. Two runtimes run it:

- ``onnx``: onnxruntime's CPU provider (extra ``pip install -e .[onnx]``);
- ``openvino``: OpenVINO reading the same ONNX file, float32 inference precision
  (extra ``pip install -e .[openvino]``).

Tokenisation is the sentence-transformers model's own (``SentenceTransformer.preprocess``,
prompt included), so the token ids are exactly torch's; the pooling here is the model's mean
pooling over the attention mask, written out in numpy. Only that shape of pipeline is
supported (Transformer → mean Pooling → optional Normalize, as MiniLM, BGE and e5 have it);
anything else is refused with a ``ValueError``.

Measured against torch on the bundled MiniLM (``benchmarks/bench_encoders.py``, batch 64, 2
threads, runs alternating): every vector within 1.8e-7 in cosine (1 − cos), not bit-identical.
Speed over torch: on 1,000 HotpotQA passages onnxruntime 0.64× and OpenVINO 1.19× (load 3.7);
on 300 passages of each dataset OpenVINO 1.02× (HotpotQA), 1.51× (2Wiki) and 1.34×
(MuSiQue), at load 13 to 19 on 2 cores, where single repeats ranged from 1.0× to 1.6×. Torch
stays the default and these are options (``regime embed --backend``, ``regime reproduce
--backend``): a default must be 1.5× faster everywhere *and* leave every rank, hit and count of
the default profile's records as they are, and the key-by-key comparison of an OpenVINO build
(``benchmarks/compare_records.py``) has not been completed yet.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from pathlib import Path
from typing import Any

import numpy as np

from regime_core import paths

OPSET: int = 17
#: The pip extra that installs each runtime (named in the error when it is missing).
EXTRAS: dict[str, tuple[str, str]] = {
    "onnx": ("onnxruntime", "onnx"),
    "openvino": ("openvino", "openvino"),
}
_INPUT_NAMES: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids")


def default_export_dir() -> Path:
    """Where exports are cached when no directory is given: beside the embedding store."""
    return paths.embeddings_dir() / "_exports"


def _runtime_version(backend: str) -> str:
    module, extra = EXTRAS[backend]
    try:
        return _version(module)
    except PackageNotFoundError as err:
        raise ValueError(
            f"backend {backend!r} needs {module}, which is not installed: pip install -e .[{extra}]"
        ) from err


def backend_identity(backend: str) -> dict[str, Any]:
    """What a non-torch backend adds to an encoder's identity (runtime and its version)."""
    import torch

    return {
        "backend": backend,
        "runtime_version": _runtime_version(backend),
        "export": f"torch.onnx {torch.__version__.split('+')[0]} opset {OPSET}",
    }


def _check_pipeline(model: Any) -> tuple[str, ...]:
    """The transformer's input names, if ``model`` is Transformer → mean Pooling → Normalize."""
    names = [type(module).__name__ for module in model]
    pooling: Any = model[1] if len(model) > 1 else None
    config = pooling.get_config_dict() if hasattr(pooling, "get_config_dict") else {}
    supported = (
        len(names) in (2, 3)
        and names[0] == "Transformer"
        and names[1] == "Pooling"
        and config.get("pooling_mode") == "mean"
        and config.get("include_prompt", True)
        and (len(names) == 2 or names[2] == "Normalize")
    )
    if not supported:
        raise ValueError(
            f"the ONNX/OpenVINO backends support Transformer → mean Pooling → Normalize "
            f"pipelines only; this model is {' → '.join(names)} ({config}). Use backend 'torch'"
        )
    features = model.preprocess(["x"])
    return tuple(name for name in _INPUT_NAMES if name in features)


def export_onnx(model: Any, target: Path) -> Path:
    """Export ``model``'s transformer to ``target/model.onnx`` (atomically; reused if there)."""
    import tempfile

    import torch

    final = target / "model.onnx"
    if final.is_file():
        return final
    input_names = _check_pipeline(model)
    target.mkdir(parents=True, exist_ok=True)
    transformer = model[0].auto_model

    class _LastHidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args: Any) -> Any:
            return self.inner(**dict(zip(input_names, args, strict=True))).last_hidden_state

    sample = model.preprocess(["an example sentence", "two"])
    args = tuple(sample[name].to("cpu") for name in input_names)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*input_names, "last_hidden_state")}
    with tempfile.TemporaryDirectory(dir=target, prefix=".export-") as scratch:
        path = Path(scratch) / "model.onnx"
        # The tracer warns about Python conditions on shapes (padding, causal masks); for an
        # encoder they take one value at every shape, and the tests compare against torch.
        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _LastHidden(transformer).eval(),
                args,
                str(path),
                input_names=list(input_names),
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
                do_constant_folding=True,
            )
        os.chmod(path, 0o644)
        os.replace(path, final)
    return final


def _threads() -> int:
    import torch

    return max(1, torch.get_num_threads())


class BackendRunner:
    """Runs one exported model with onnxruntime or OpenVINO; ``encode`` returns mean-pooled,
    *unnormalised* float32 vectors (the caller normalises, as for torch)."""

    def __init__(
        self,
        model: Any,
        backend: str,
        *,
        export_dir: Path,
        weights_id: str,
        batch_size: int,
    ) -> None:
        import torch

        _runtime_version(backend)  # a clear error before any export work
        self.model = model
        self.backend = backend
        self.batch_size = batch_size
        self.input_names = _check_pipeline(model)
        key = f"{weights_id[:16]}-torch{torch.__version__.split('+')[0]}-opset{OPSET}"
        self.onnx_path = export_onnx(model, Path(export_dir) / key)
        self._run = self._compile()

    def _compile(self) -> Any:
        threads = _threads()
        if self.backend == "onnx":
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            session = ort.InferenceSession(
                str(self.onnx_path), options, providers=["CPUExecutionProvider"]
            )
            return lambda feeds: session.run(None, feeds)[0]
        import openvino as ov

        core = ov.Core()
        compiled = core.compile_model(
            core.read_model(str(self.onnx_path)),
            "CPU",
            {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"},
        )
        return lambda feeds: compiled(feeds)[0]

    def encode(self, texts: Sequence[str], prompt: str | None) -> np.ndarray:
        """Mean-pooled vectors of ``texts`` (batches of ``batch_size``, longest first)."""
        # Transformer → mean Pooling (→ Normalize) only (_check_pipeline): the pooled width is
        # the model's sentence dimension, known before any batch (an empty input included)
        width = int(self.model.get_embedding_dimension())
        out = np.empty((len(texts), width), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            rows = order[start : start + self.batch_size]
            features = self.model.preprocess([texts[i] for i in rows], prompt=prompt)
            feeds = {name: features[name].numpy().astype(np.int64) for name in self.input_names}
            hidden = np.asarray(self._run(feeds), dtype=np.float32)
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            out[rows] = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        return out
