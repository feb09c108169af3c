"""Download the official full files: resumable, atomic, checksummed (trust on first use).

- **Resumable**: bytes go to ``<file>.part``; a rerun asks for the rest with an HTTP ``Range``
  header (``file://`` URLs seek). A server that ignores ``Range`` (status 200) restarts the file.
- **Atomic**: only a complete, verified download is renamed to its final name.
- **Checksums**: the expected sha256 comes from ``--sha256`` if given, else from
  ``checksums.json`` in the data directory. When neither has one (we cannot know the official
  hashes offline), the first download's hash is recorded there and every later download or
  extraction is verified against it (trust on first use).
- **Archives**: 2Wiki and MuSiQue ship as zips; the members ``prepare`` reads are extracted
  (each atomically) next to the archive's folder, and the archive is kept under ``downloads/``.

Files land in ``<data_dir>/<dataset>/official/``; ``prepare`` gives them their split from
``OFFICIAL_SPLITS``. A file, ``.part`` or ``checksums.json`` in the way that is not a regular
file (a directory, a FIFO, a device, a dangling link) is an error naming it: it is never read
in a way that blocks, nor replaced (:func:`regime_core.integrity.output_target`).
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regime_core.inputs import Table, Text, check_value
from regime_core.integrity import make_directory, open_regular
from regime_core.limits import expanded_bound

CHECKSUMS_NAME = "checksums.json"
#: what it holds: the sha256 of each file, by its path relative to the data directory
_CHECKSUMS = Table(Text(blank=True), key=Text(blank=True))
CHUNK_BYTES = 1 << 20
TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class OfficialFile:
    """One official download. ``members`` maps an archive member's base name to the split it
    holds (empty for a plain file, whose own name is then in ``OFFICIAL_SPLITS``)."""

    dataset: str
    name: str
    url: str
    split: str | None = None
    members: tuple[tuple[str, str], ...] = ()


OFFICIAL_FILES: tuple[OfficialFile, ...] = (
    OfficialFile(
        "hotpotqa",
        "hotpot_dev_distractor_v1.json",
        "http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
        split="dev",
    ),
    OfficialFile(
        "hotpotqa",
        "hotpot_train_v1.1.json",
        "http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_train_v1.1.json",
        split="train",
    ),
    OfficialFile(
        "2wikimultihopqa",
        "data_ids_april7.zip",
        "https://www.dropbox.com/s/ms2m13252h6xubs/data_ids_april7.zip?dl=1",
        members=(("dev.json", "dev"), ("train.json", "train")),
    ),
    OfficialFile(
        "musique",
        "musique_v1.0.zip",
        "https://drive.google.com/uc?export=download&id=1tGdADlNjWFaHLeZZGShh2IRcpO6Lv24h"
        "&confirm=t",
        members=(("musique_ans_v1.0_dev.jsonl", "dev"), ("musique_ans_v1.0_train.jsonl", "train")),
    ),
)

# Official file name (compression suffix removed) -> split; used by `prepare` for unknown files.
OFFICIAL_SPLITS: dict[str, str] = {
    **{f.name: f.split for f in OFFICIAL_FILES if f.split},
    **{member: split for f in OFFICIAL_FILES for member, split in f.members},
}


@dataclass(frozen=True)
class FetchResult:
    dataset: str
    path: str  # relative to the data directory
    sha256: str
    status: str  # "downloaded", "present", "extracted"


def _regular(path: Path) -> Path:
    """``path`` if nothing is there or it is a regular file (a link to one), else ValueError."""
    from regime_core.integrity import output_target

    output_target(path)
    return path


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as f:  # a FIFO or device is refused, never waited on
        for chunk in iter(lambda: f.read(CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _open_from(url: str, offset: int, timeout: float) -> tuple[Any, bool, int | None]:
    """A stream starting at ``offset`` if the source supports it:
    ``(stream, resumed, expected total size or None)``."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        local = Path(urllib.request.url2pathname(parsed.path))
        f = open_regular(local)
        f.seek(offset)
        return f, offset > 0, os.fstat(f.fileno()).st_size
    if parsed.scheme not in ("http", "https"):
        raise ValueError(f"unsupported URL scheme in {url!r} (use http, https or file)")
    request = urllib.request.Request(url, headers={"User-Agent": "regime-core-fetch"})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    response = urllib.request.urlopen(request, timeout=timeout)
    length = response.headers.get("Content-Length")
    size = int(length) if length and length.isdigit() else None
    if offset and response.status == 206:
        content_range = response.headers.get("Content-Range", "")
        if not content_range.startswith(f"bytes {offset}-"):
            response.close()
            raise ValueError(f"{url}: server answered Range {offset}- with {content_range!r}")
        return response, True, None if size is None else offset + size
    return response, False, size


def download(
    url: str,
    dest: Path,
    *,
    expected_sha256: str | None = None,
    timeout: float = TIMEOUT_SECONDS,
) -> str:
    """Download ``url`` to ``dest`` via ``dest.part``; return the sha256 of the whole file.

    On a checksum mismatch the ``.part`` file is deleted (it cannot be resumed into a correct
    file) and ``ValueError`` names the URL and both hashes; ``dest`` is never written.
    """
    make_directory(dest.parent)
    part = _regular(dest.with_name(dest.name + ".part"))
    _regular(dest)
    offset = part.stat().st_size if part.exists() else 0
    stream, resumed, expected_size = _open_from(url, offset, timeout)
    try:
        with part.open("ab" if resumed else "wb") as out:
            for chunk in iter(lambda: stream.read(CHUNK_BYTES), b""):
                out.write(chunk)
    finally:
        stream.close()
    got = part.stat().st_size
    if expected_size is not None and got != expected_size:
        # A dropped connection ends the stream early without an exception; keep the .part.
        raise ValueError(
            f"{url}: incomplete download of {dest.name} ({got} of {expected_size} bytes); "
            "rerun the command to resume"
        )
    return _verified_rename(part, dest, f"{dest.name} from {url}", expected_sha256)


def read_checksums(data_dir: Path) -> dict[str, str]:
    from regime_core.strict_json import read_json_file

    path = data_dir / CHECKSUMS_NAME
    if not path.exists() and not path.is_symlink():
        return {}
    data = read_json_file(path)  # ValueError naming it: not JSON, a duplicate key, a FIFO, ...
    return check_value(_CHECKSUMS, data, where=str(path), field="")


def _write_checksums(data_dir: Path, checksums: Mapping[str, str]) -> None:
    from regime_core.integrity import atomic_write_bytes

    text = json.dumps(dict(sorted(checksums.items())), indent=2) + "\n"
    atomic_write_bytes(data_dir / CHECKSUMS_NAME, text.encode("utf-8"))


def _verify(rel: str, digest: str, expected: str | None) -> None:
    if expected is not None and digest != expected.lower():
        raise ValueError(
            f"{rel}: sha256 {digest} does not match the recorded {expected.lower()} "
            f"({CHECKSUMS_NAME} or --sha256); delete the file to download it again, or pass "
            "--sha256 if the official file changed"
        )


def _verified_rename(part: Path, dest: Path, source: str, expected: str | None) -> str:
    """Rename a complete ``part`` to ``dest`` once its sha256 matches ``expected``; on a
    mismatch ``part`` is deleted (it cannot be resumed into the right file)."""
    digest = sha256_file(part)
    try:
        _verify(source, digest, expected)
    except ValueError:
        part.unlink()
        raise
    os.replace(part, dest)
    return digest


def _extract(archive: Path, member_base: str, dest: Path, rel: str, expected: str | None) -> str:
    """Extract one member (found by base name) atomically; verify before the rename."""
    part = _regular(dest.with_name(dest.name + ".part"))
    try:
        with zipfile.ZipFile(_regular(archive)) as zf:
            names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == member_base]
            if not names:
                raise ValueError(f"{archive.name}: no member named {member_base}")
            member = zf.getinfo(sorted(names)[0])
            bound = expanded_bound(member.compress_size)
            with zf.open(member) as src, part.open("wb") as out:
                written = 0
                while chunk := src.read(CHUNK_BYTES):
                    written += len(chunk)
                    if written > bound:  # a zip bomb: stop before the disk fills
                        raise ValueError(
                            f"{archive}: its member {member.filename} expands to more than "
                            f"{bound:,} bytes from {member.compress_size:,}; refused as a "
                            "decompression bomb"
                        )
                    out.write(chunk)
    except ValueError:
        part.unlink(missing_ok=True)
        raise
    except zipfile.BadZipFile as err:
        raise ValueError(
            f"{archive}: not a zip archive ({err}); the host may have returned an HTML page — "
            "download the file by hand from the dataset homepage and put it there"
        ) from err
    return _verified_rename(part, dest, rel, expected)


def fetch(
    datasets: Sequence[str],
    data_dir: Path,
    *,
    sha256: Mapping[str, str] | None = None,
    registry: Sequence[OfficialFile] = OFFICIAL_FILES,
    timeout: float = TIMEOUT_SECONDS,
) -> list[FetchResult]:
    """Fetch the official files of ``datasets`` into ``data_dir/<dataset>/official``.

    ``sha256`` maps a file name (as in ``registry``) to its expected hash and overrides
    ``checksums.json``. Files already present are verified, not downloaded again.
    """
    known = sorted({f.dataset for f in registry})
    unknown = [d for d in datasets if d not in known]
    if unknown:
        raise ValueError(f"no official files registered for {unknown}; known: {known}")
    overrides = {k: v.lower() for k, v in (sha256 or {}).items()}
    checksums = read_checksums(data_dir)
    results = []
    for entry in registry:
        if entry.dataset not in datasets:
            continue
        folder = "downloads" if entry.members else "official"
        rel = f"{entry.dataset}/{folder}/{entry.name}"
        dest = data_dir / rel
        expected = overrides.get(entry.name, checksums.get(rel))
        if dest.exists():
            digest = sha256_file(dest)
            _verify(rel, digest, expected)
            status = "present"
        else:
            digest = download(entry.url, dest, expected_sha256=expected, timeout=timeout)
            status = "downloaded"
        checksums[rel] = digest
        _write_checksums(data_dir, checksums)
        results.append(FetchResult(entry.dataset, rel, digest, status))
        for member, _split in entry.members:
            member_rel = f"{entry.dataset}/official/{member}"
            member_dest = data_dir / member_rel
            make_directory(member_dest.parent)
            member_expected = overrides.get(member, checksums.get(member_rel))
            if member_dest.exists():
                member_digest, member_status = sha256_file(member_dest), "present"
                _verify(member_rel, member_digest, member_expected)
            else:
                member_digest = _extract(dest, member, member_dest, member_rel, member_expected)
                member_status = "extracted"
            checksums[member_rel] = member_digest
            _write_checksums(data_dir, checksums)
            results.append(FetchResult(entry.dataset, member_rel, member_digest, member_status))
    return results
