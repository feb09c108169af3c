"""What several test modules share: the raw-data fixtures, a hashing encoder, a unit-vector
encoder and a recording store (no model, no network), two claims judged on one run and their
claims file, an alarm for calls that may block, ``refused``/``warned`` (a refusal or warning
naming what the user must find), a benchmark script loaded as a module, and the book helpers
(copying the sources, reading links out of rendered pages). Hand-made examples:
``tests/builders.py``.

Import it as ``from helpers import ...`` (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Self
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest

# --- the raw-data fixtures ---------------------------------------------------------------------

DATA_FIXTURES = Path(__file__).parent / "fixtures" / "data"
# The split of each fixture file (none of them is a known subset or an official file name).
FIXTURE_SPLITS: dict[str, str] = {
    "hotpotqa/orig_dev.json": "dev",
    "hotpotqa/orig_dev_lines.jsonl": "dev",
    "hotpotqa/ircot_dev.jsonl": "dev",
    "2wikimultihopqa/dev_columns.json": "dev",
    "2wikimultihopqa/dev_rows.jsonl": "dev",
    "musique/dev.jsonl": "dev",
    "musique/train.json": "train",
}

#: A small regime-twohop/1 file of invented text (four questions, one blank line).
TWOHOP_FIXTURE = Path(__file__).parent / "fixtures" / "twohop" / "small.jsonl"


def comparable(example: Any) -> dict[str, Any]:
    """Every field of a canonical example but its dataset and the files it was read from: what
    a round trip through the regime-twohop/1 format keeps."""
    d = dict(example.to_dict())
    del d["dataset"], d["source_files"]
    return d


# --- claims judged on a run -------------------------------------------------------------------

#: A claim of run ``r`` judged as an estimate on its comparison ``c`` (whose discordant counts
#: give the verdict its power), against the paper's 5 pp at p < 0.001.
GAIN_CLAIM: dict[str, Any] = {
    "id": "gain",
    "label": "a gain",
    "claim": "a gain",
    "source": "abstract",
    "chapter": "book/claims/router_train",
    "rule": "estimate",
    "paper": {"value": 0.05, "p_below": 0.001},
    "ours": {
        "run": "r",
        "estimate": "c.diff",
        "ci_lo": "c.ci_lo",
        "ci_hi": "c.ci_hi",
        "p": "c.p_value",
        "n": "n",
        "n_a_better": "c.n_a_better",
        "n_b_better": "c.n_b_better",
    },
}
#: A claim of run ``r`` the paper only implies, judged as a positive difference ``u``.
UNION_CLAIM: dict[str, Any] = {
    "id": "beats_union",
    "label": "beats always-union",
    "claim": "beats always-union",
    "source": "implied",
    "rule": "positive",
    "paper": {"statement": "implied > 0"},
    "ours": {
        "run": "r",
        "estimate": "u.diff",
        "ci_lo": "u.ci_lo",
        "ci_hi": "u.ci_hi",
        "p": "u.p_value",
        "n": "n",
    },
}


def write_claims(path: Path, *claims: dict[str, Any]) -> Path:
    """A claims file at ``path`` (as ``paper_claims.yml`` is written) holding ``claims``."""
    import yaml

    path.write_text(yaml.safe_dump({"claims": list(claims)}, sort_keys=False), encoding="utf-8")
    return path


# --- runs without papermill --------------------------------------------------------------------


def write_stamped_record(work: Path, run_id: str, **record: Any) -> Path:
    """Write a record for ``run_id`` under ``work/results`` and stamp it as a finished
    ``regime reproduce`` would (readers refuse an unstamped record); ``record`` goes to
    :func:`~regime_core.runner.records.write_record` (``name`` defaults to the run id)."""
    from regime_core.runner.records import write_record
    from regime_core.runner.stamps import write_stamp

    record.setdefault("name", run_id)
    record.setdefault("config", {})
    path = write_record(work / "results" / run_id, **record)
    write_stamp(work, run_id, {"key": "written by a test", "components": {}}, seconds=0.0)
    return path


@contextmanager
def alarm(seconds: int = 15) -> Iterator[None]:
    """Fail a call that blocks (a FIFO opened the plain way) instead of hanging the suite."""

    def ring(*_: object) -> None:
        raise TimeoutError("the call blocked")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def refused(
    kind: type[BaseException] | tuple[type[BaseException], ...], *, names: Sequence[str]
) -> Iterator[pytest.ExceptionInfo[BaseException]]:
    """Expect ``kind`` raised, its message naming each of ``names`` (the file, record, field the
    user must find), whatever prose surrounds them: the wording may change, the names may not."""
    with pytest.raises(kind) as info:
        yield info
    missing = [name for name in names if name not in str(info.value)]
    assert not missing, f"the message does not name {missing}: {info.value}"


@contextmanager
def warned(kind: type[Warning], *, names: Sequence[str]) -> Iterator[None]:
    """Expect a ``kind`` warning whose message names each of ``names``."""
    with pytest.warns(kind) as caught:
        yield
    messages = [str(w.message) for w in caught if issubclass(w.category, kind)]
    assert any(all(name in m for name in names) for m in messages), (names, messages)


# --- retrieval without a model -----------------------------------------------------------------


def settings(**overrides: Any) -> Any:
    """The default retrieval settings with ``overrides`` (fields of the shared config), as a
    run's config derives them (:attr:`regime_core.experiments.common.RunConfig.retrieval`)."""
    from regime_core.experiments.common import RunConfig

    return RunConfig(**overrides).retrieval


class HashingEncoder:
    """Bag of lower-cased words hashed (crc32) into ``dim`` buckets, L2-normalised.
    Deterministic, the same in query and document mode."""

    name = "hashing-test"

    def __init__(self, dim: int = 96) -> None:
        self.dim = dim

    @property
    def identity(self) -> dict[str, Any]:
        return {"name": self.name, "dim": self.dim}

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace("?", " ").split():
                out[i, zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts)


class UnitEncoder:
    """Deterministic unit vectors of four dimensions; counts how many texts it encoded."""

    name = "unit"
    identity: ClassVar[dict[str, Any]] = {"kind": "unit-test", "dim": 4}

    def __init__(self) -> None:
        self.encoded = 0

    def _vectors(self, texts: list[str]) -> np.ndarray:
        self.encoded += len(texts)
        rows = np.array([[len(t) % 7 + 1, 1, len(t) % 3, 2] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    encode_queries = _vectors
    encode_documents = _vectors


class RecordingStore:
    """Stands in for EmbeddingStore: encodes directly and records every text it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def embed(self, encoder: Any, texts: Sequence[str], mode: str) -> np.ndarray:
        self.calls.append((mode, list(texts)))
        if mode == "query":
            return encoder.encode_queries(texts)
        return encoder.encode_documents(texts)


#: Absolute tolerance when two code paths' float scores, or the float64 statistics made from
#: them (margins), are compared: far above the last-bit differences another BLAS kernel or
#: summation order makes (about 1e-7), far below any difference a reader could see. Ranks, hits,
#: counts and the rank-based metrics are exact and are compared exactly.
FLOAT_TOLERANCE = 1e-6
#: The metric columns that are float sums of scores (the rest are functions of ranks).
SCORE_SUM_COLUMNS: tuple[str, ...] = ("margin", "margin_max", "std_margin")


def assert_metrics_match(
    left: Any, right: Any, tolerant: Sequence[str] = SCORE_SUM_COLUMNS
) -> None:
    """Two per-query metric tables agree: every column exactly, except the ``tolerant`` ones
    (float sums of scores), which agree within :data:`FLOAT_TOLERANCE`."""
    import pandas as pd

    assert list(left.columns) == list(right.columns)
    exact = [c for c in left.columns if c not in tolerant]
    pd.testing.assert_frame_equal(left[exact], right[exact], check_exact=True)
    for column in (c for c in left.columns if c in tolerant):
        np.testing.assert_allclose(
            left[column].to_numpy(float), right[column].to_numpy(float),
            rtol=0, atol=FLOAT_TOLERANCE, equal_nan=True, err_msg=column,
        )  # fmt: skip


def assert_scores_match(left: Any, right: Any) -> None:
    """Float32 scores of two code paths agree within :data:`FLOAT_TOLERANCE` (same shape,
    same padding)."""
    np.testing.assert_allclose(
        np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64),
        rtol=0, atol=FLOAT_TOLERANCE,
    )  # fmt: skip


def hashing_context(examples: Any, dim: int = 64) -> Any:
    """A :class:`~regime_core.experiments.context.Context` over ``examples`` (``{dataset:
    examples}``) with the hashing encoder and a recording store: no file is read or written."""
    from regime_core.experiments.context import Context

    return Context(
        examples=examples,
        encoder_factory=lambda name, corpus: HashingEncoder(dim),
        store=RecordingStore(),
    )


# --- the benchmarks ----------------------------------------------------------------------------


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (the folder is no package; its scripts run by path)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # registered first, as importlib's recipe does: a dataclass resolves its module by name
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# --- the book ------------------------------------------------------------------------------------


def copy_book_sources(target: Path) -> Path:
    """The repository's book sources (not its build or executed notebooks) under ``target``."""
    from regime_core import paths

    target.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml", "paper_claims.yml", "expected_numbers.yml"):
        if (paths.REPO_ROOT / name).is_file():
            shutil.copyfile(paths.REPO_ROOT / name, target / name)
    shutil.copytree(
        paths.REPO_ROOT / "book",
        target / "book",
        ignore=shutil.ignore_patterns("executed", "__pycache__"),
        dirs_exist_ok=True,
    )
    return target


FIXTURES = Path(__file__).parent / "fixtures"


def fake_book_build(target: Path) -> Path:
    """A tiny rendered book at ``target``, built from ``tests/fixtures``.

    ``book_html/`` holds what is copied as it is (``good.html``, the redirect ``index.html``,
    ``sub/``, Sphinx's ``genindex.html`` and the asset folders). ``book_pages/`` holds one body per
    bad page, each poured into the one head of ``book_pages/_page.html``; its title is the text of
    the body's first ``<h1>``, as Sphinx takes it from the first heading. The notebooks under
    ``_sources/`` are committed without outputs; :func:`_execute_sources` gives them the image
    outputs an executed copy would hold.
    """
    shutil.copytree(FIXTURES / "book_html", target)
    _execute_sources(target / "_sources")
    template = (FIXTURES / "book_pages" / "_page.html").read_text(encoding="utf-8")
    for body_file in sorted((FIXTURES / "book_pages").glob("[!_]*.html")):
        body = body_file.read_text(encoding="utf-8").rstrip("\n")
        title = re.search(r"<h1[^>]*>(.*?)</h1>", body, re.S)
        if title is None:
            raise ValueError(f"{body_file} has no <h1> to title its page")
        page = template.replace("{title}", title.group(1)).replace("{body}", body)
        (target / body_file.name).write_text(page, encoding="utf-8")
    return target


# The executed copies' image outputs: notebook -> the code cells (ids) that show the one-pixel
# figure ``_images/dot.png`` (a notebook left out draws a figure it never shows).
EXECUTED_FIGURES: dict[str, tuple[str, ...]] = {"figure.ipynb": ("c1",), "notebook.ipynb": ("c1",)}


def _execute_sources(sources: Path) -> None:
    """Add to the copied ``_sources`` notebooks the outputs :data:`EXECUTED_FIGURES` names."""
    import base64
    import json

    png = base64.b64encode((sources.parent / "_images" / "dot.png").read_bytes()).decode()
    for name, cell_ids in EXECUTED_FIGURES.items():
        path = sources / name
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            if cell.get("id") in cell_ids:
                cell["execution_count"] = 1
                cell["outputs"] = [
                    {
                        "output_type": "display_data",
                        "data": {
                            "image/png": png,
                            "text/plain": ["<Figure size 40x40 with 1 Axes>"],
                        },
                        "metadata": {},
                    }
                ]
        path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")


def share_embedding_store(work: Path) -> None:
    """Link ``work``'s embedding store to the checkout's persistent one (``_build/regime``), so
    that a text encoded by one test's notebooks is read by the next ones' (content-addressed:
    sharing it changes no number, only time); ``REGIME_TEST_COLD=1`` keeps a private one."""
    from regime_core import paths

    store = paths.embeddings_dir(work)
    if os.environ.get("REGIME_TEST_COLD") == "1" or store.exists():
        return
    shared = paths.embeddings_dir(paths.REPO_ROOT / "_build" / "regime").resolve()
    shared.mkdir(parents=True, exist_ok=True)
    os.symlink(shared, store, target_is_directory=True)


def relocated_declarations(target: Path) -> Path:
    """A copy of reproduce.yml at ``target``, its notebook paths made absolute (they stay in the
    repository). The runs write only into their work directory; ``regime book`` stages its
    executed pages into the book it builds."""
    import yaml

    from regime_core import paths

    raw = yaml.safe_load((paths.REPO_ROOT / "reproduce.yml").read_text(encoding="utf-8"))
    for body in raw["runs"].values():
        body["notebook"] = str((paths.REPO_ROOT / body["notebook"]).resolve())
    target.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return target


class PageLinks(HTMLParser):
    """The links, images and element ids of one rendered page (subclass it to read more)."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.images: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if tag == "a" and values.get("href"):
            self.hrefs.append(str(values["href"]))
        if tag == "img" and values.get("src"):
            self.images.append(str(values["src"]))

    @classmethod
    def read(cls, page: Path) -> Self:
        """A parser of this class fed with ``page``."""
        parsed = cls()
        parsed.feed(page.read_text(encoding="utf-8"))
        return parsed


def broken_links(html: Path) -> list[str]:
    """Every internal link or image of the pages under ``html`` whose file (or, in an HTML
    page, whose anchor) does not exist, as ``"page -> ref"``."""
    broken: list[str] = []
    parsed = {page: PageLinks.read(page) for page in html.rglob("*.html")}
    for page, links in parsed.items():
        if "_static" in page.parts or "_sources" in page.parts:
            continue
        for ref in links.hrefs + links.images:
            parts = urlsplit(ref)
            if parts.scheme or parts.netloc or ref.startswith(("mailto:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(html)} -> {ref}")
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else PageLinks.read(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(html)} -> {ref} (no such anchor)")
    return broken
