"""What a profile needs before ``regime reproduce`` can run it, told up front by ``--plan``.

Only the ``paper`` profile needs more than this machine's CPU: GPUs, the encoders' weights from
the Hugging Face hub (or a local copy), the official full dev files and hours of GPU time. The
figures below are the estimates of the book's page on scale (``book/reproducing/scale.md``:
the models' sizes, not a measurement); each line also says what this machine has, where that
can be seen without importing torch or touching the network.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from regime_core import paths
from regime_core.encoders.registry import CUDA_INSTALL

#: the profile that needs GPUs, the hub and the official files
GPU_PROFILE = "paper"
#: the GPU memory the paper's 7B encoders need in float16, with headroom, per GPU (GB)
GPU_MEMORY_GB = 24
#: the estimated A100-hours to embed the three full dev sets with the paper's three encoders
#: (low, high), divided by the number of GPUs with ``regime embed --engine ray``
GPU_HOURS: tuple[int, int] = (2, 4)
#: where the estimates and the whole procedure are explained
SCALE_PAGE = "book/reproducing/scale.md"


def torch_build() -> str | None:
    """The installed torch's version string (``2.13.0+cpu`` for the CPU build), or None when no
    torch is installed; read from its metadata, without importing it."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def _fetched(data_dir: Path) -> list[str]:
    from regime_core.data.fetch import read_checksums

    try:
        return sorted(read_checksums(data_dir))
    except (OSError, ValueError):
        return []


def prerequisites(
    profile: str,
    encoders: Mapping[str, str],
    *,
    environ: Mapping[str, str] | None = None,
    data_dir: Path | None = None,
) -> tuple[str, ...]:
    """The prerequisites of ``profile`` in a reader's words (empty for every profile but
    :data:`GPU_PROFILE`); ``encoders`` maps each encoder whose weights it needs to its model."""
    if profile != GPU_PROFILE:
        return ()
    env = os.environ if environ is None else environ
    build = torch_build()
    if build is None:
        torch_now = "no torch is installed here"
    elif "+cpu" in build:
        torch_now = (
            f"this torch is {build}, a CPU-only build: `{CUDA_INSTALL}` installs the CUDA one"
        )
    else:
        torch_now = f"this torch is {build}"
    offline = str(env.get("HF_HUB_OFFLINE", "")).strip().lower() in {"1", "true", "yes", "on"}
    hub_now = (
        "HF_HUB_OFFLINE is set here, so they must already be in the local cache"
        if offline
        else "the hub is not switched off here"
    )
    models = ", ".join(f"{name} ({model})" for name, model in encoders.items()) or "none named"
    folder = paths.data_dir(data_dir)
    fetched = _fetched(folder)
    data_now = f"fetched in {folder}: {', '.join(fetched)}" if fetched else f"none in {folder}"
    low, high = GPU_HOURS
    return (
        f"GPU: one or more CUDA GPUs with at least {GPU_MEMORY_GB} GB each ({torch_now})",
        f"weights: {models}, from the Hugging Face hub or a local directory ({hub_now})",
        "data: the official full dev files, `regime data fetch` (needs internet), then "
        f"`regime data prepare` ({data_now})",
        f"time: about {low} to {high} A100-hours to embed (an estimate from the models' sizes), "
        "divided by the GPUs of `regime embed --engine ray --device cuda`, which fills the store "
        f"first; the notebooks then run on the CPU ({SCALE_PAGE})",
    )
