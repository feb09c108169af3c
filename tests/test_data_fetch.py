"""fetch: resumable, atomic, checksummed downloads. file:// URLs and a local HTTP server only."""

from __future__ import annotations

import hashlib
import http.server
import importlib
import io
import json
import os
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import refused

from regime_core.cli import main
from regime_core.data import prepare

fetch_module = importlib.import_module("regime_core.data.fetch")
OfficialFile = fetch_module.OfficialFile
download = fetch_module.download
fetch = fetch_module.fetch

FIXTURES = Path(__file__).parent / "fixtures" / "data"
PAYLOAD = bytes(range(256)) * 4000  # ~1 MB, several chunks


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``server.files``; honours Range unless ``server.ignore_range``; can cut off."""

    def do_GET(self) -> None:
        server = self.server
        server.requests.append(dict(self.headers))  # type: ignore[attr-defined]
        body = server.files.get(self.path)  # type: ignore[attr-defined]
        if body is None:
            self.send_error(404)
            return
        start = 0
        rng = self.headers.get("Range")
        if rng and not server.ignore_range:  # type: ignore[attr-defined]
            start = int(rng.removeprefix("bytes=").split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        cut = server.cut_after  # type: ignore[attr-defined]
        chunk = body[start:] if cut is None else body[start : start + cut]
        self.wfile.write(chunk)

    def log_message(self, *args: object) -> None:  # keep test output quiet
        return None


@pytest.fixture()
def server() -> Iterator[http.server.HTTPServer]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.files = {"/f.bin": PAYLOAD}  # type: ignore[attr-defined]
    srv.requests = []  # type: ignore[attr-defined]
    srv.ignore_range = False  # type: ignore[attr-defined]
    srv.cut_after = None  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def _url(srv: http.server.HTTPServer, path: str = "/f.bin") -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}{path}"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_http_download_resumes_a_partial_file(
    server: http.server.HTTPServer, tmp_path: Path
) -> None:
    dest = tmp_path / "f.bin"
    dest.with_name("f.bin.part").write_bytes(PAYLOAD[:300_000])
    digest = download(_url(server), dest, expected_sha256=_sha(PAYLOAD))
    assert digest == _sha(PAYLOAD)
    assert dest.read_bytes() == PAYLOAD
    assert not dest.with_name("f.bin.part").exists()
    assert server.requests[-1]["Range"] == "bytes=300000-"  # type: ignore[attr-defined]


def test_server_ignoring_range_restarts_the_file(
    server: http.server.HTTPServer, tmp_path: Path
) -> None:
    server.ignore_range = True  # type: ignore[attr-defined]
    dest = tmp_path / "f.bin"
    dest.with_name("f.bin.part").write_bytes(b"stale bytes from another file")
    download(_url(server), dest)
    assert dest.read_bytes() == PAYLOAD


def test_interrupted_download_leaves_no_final_file_then_resumes(
    server: http.server.HTTPServer, tmp_path: Path
) -> None:
    dest = tmp_path / "f.bin"
    server.cut_after = 200_000  # type: ignore[attr-defined]
    with refused(ValueError, names=("f.bin", "200000")):
        download(_url(server), dest)
    assert not dest.exists()
    part = dest.with_name("f.bin.part")
    assert part.stat().st_size == 200_000
    server.cut_after = None  # type: ignore[attr-defined]
    download(_url(server), dest, expected_sha256=_sha(PAYLOAD))
    assert dest.read_bytes() == PAYLOAD


def test_checksum_mismatch_removes_the_part_and_writes_nothing(
    server: http.server.HTTPServer, tmp_path: Path
) -> None:
    dest = tmp_path / "f.bin"
    with refused(ValueError, names=("sha256", "f.bin", "0" * 64)):
        download(_url(server), dest, expected_sha256="0" * 64)
    assert not dest.exists()
    assert not dest.with_name("f.bin.part").exists()


def test_file_url_resume(tmp_path: Path) -> None:
    source = tmp_path / "source.bin"
    source.write_bytes(PAYLOAD)
    dest = tmp_path / "out" / "copy.bin"
    dest.parent.mkdir()
    dest.with_name("copy.bin.part").write_bytes(PAYLOAD[:12345])
    assert download(source.as_uri(), dest) == _sha(PAYLOAD)
    assert dest.read_bytes() == PAYLOAD


def test_a_fifo_as_the_source_or_the_present_file_is_refused_not_waited_on(
    tmp_path: Path,
) -> None:
    """A file:// source or an already-downloaded file that is a FIFO would block its reader
    forever: it is refused, naming it, and nothing is written."""
    fifo = tmp_path / "source.fifo"
    os.mkfifo(fifo)
    dest = tmp_path / "out" / "copy.bin"
    with pytest.raises(ValueError) as err:
        download(fifo.as_uri(), dest)
    assert str(fifo) in str(err.value) and "FIFO" in str(err.value)
    assert not dest.exists()
    present = tmp_path / "data" / "hotpotqa" / "official" / "hotpot_dev_distractor_v1.json"
    present.parent.mkdir(parents=True)
    os.mkfifo(present)
    with pytest.raises(ValueError) as err:
        fetch(["hotpotqa"], tmp_path / "data", registry=_registry(tmp_path))
    assert str(present) in str(err.value)


def test_unsupported_scheme(tmp_path: Path) -> None:
    with refused(ValueError, names=("ftp://example.invalid/x",)):
        download("ftp://example.invalid/x", tmp_path / "x")


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _registry(tmp_path: Path) -> tuple[OfficialFile, ...]:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    hotpot = (FIXTURES / "hotpotqa/orig_dev.json").read_bytes()
    (src / "hotpot_dev_distractor_v1.json").write_bytes(hotpot)
    musique = (FIXTURES / "musique/dev.jsonl").read_bytes()
    (src / "musique_v1.0.zip").write_bytes(
        _zip_bytes({"data/musique_ans_v1.0_dev.jsonl": musique, "data/other.txt": b"x"})
    )
    return (
        OfficialFile(
            "hotpotqa",
            "hotpot_dev_distractor_v1.json",
            (src / "hotpot_dev_distractor_v1.json").as_uri(),
            split="dev",
        ),
        OfficialFile(
            "musique",
            "musique_v1.0.zip",
            (src / "musique_v1.0.zip").as_uri(),
            members=(("musique_ans_v1.0_dev.jsonl", "dev"),),
        ),
    )


def test_fetch_trusts_on_first_use_then_verifies(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    data = tmp_path / "data"
    first = fetch(["hotpotqa", "musique"], data, registry=registry)
    assert [(r.path, r.status) for r in first] == [
        ("hotpotqa/official/hotpot_dev_distractor_v1.json", "downloaded"),
        ("musique/downloads/musique_v1.0.zip", "downloaded"),
        ("musique/official/musique_ans_v1.0_dev.jsonl", "extracted"),
    ]
    checksums = json.loads((data / "checksums.json").read_text())
    assert checksums == {r.path: r.sha256 for r in first}
    extracted = data / "musique/official/musique_ans_v1.0_dev.jsonl"
    assert extracted.read_bytes() == (FIXTURES / "musique/dev.jsonl").read_bytes()
    second = fetch(["hotpotqa", "musique"], data, registry=registry)
    assert {r.status for r in second} == {"present"}
    # A file changed after the first download no longer matches the recorded hash.
    extracted.write_bytes(b"{}")
    with refused(ValueError, names=("musique_ans_v1.0_dev.jsonl", "sha256")):
        fetch(["musique"], data, registry=registry)


def test_fetched_files_prepare_with_their_official_splits(tmp_path: Path) -> None:
    data = tmp_path / "data"
    fetch(["hotpotqa", "musique"], data, registry=_registry(tmp_path))
    manifest = prepare(data, tmp_path / "prepared", ("hotpotqa", "musique"))
    assert manifest["datasets"]["musique"]["questions"] == {"dev": 2, "train": 0}
    assert manifest["datasets"]["hotpotqa"]["questions"] == {"dev": 3, "train": 0}
    assert manifest["ignored_files"] == ["checksums.json", "musique/downloads/musique_v1.0.zip"]


def test_user_sha256_overrides_and_fails(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with refused(ValueError, names=("sha256",)):
        fetch(
            ["hotpotqa"],
            data,
            sha256={"hotpot_dev_distractor_v1.json": "ab" * 32},
            registry=_registry(tmp_path),
        )
    assert not (data / "hotpotqa/official/hotpot_dev_distractor_v1.json").exists()


def test_archive_that_is_not_a_zip(tmp_path: Path) -> None:
    page = tmp_path / "page.zip"
    page.write_bytes(b"<html>Google Drive can't scan this file for viruses</html>")
    registry = (OfficialFile("musique", "m.zip", page.as_uri(), members=(("a.jsonl", "dev"),)),)
    with refused(ValueError, names=("zip", "HTML")):
        fetch(["musique"], tmp_path / "data", registry=registry)


def test_unknown_dataset(tmp_path: Path) -> None:
    with refused(ValueError, names=("['nq']",)):
        fetch(["nq"], tmp_path)


def test_registry_covers_the_official_urls() -> None:
    names = {f.dataset for f in fetch_module.OFFICIAL_FILES}
    assert names == {"hotpotqa", "2wikimultihopqa", "musique"}
    assert fetch_module.OFFICIAL_SPLITS["hotpot_train_v1.1.json"] == "train"
    assert fetch_module.OFFICIAL_SPLITS["musique_ans_v1.0_dev.jsonl"] == "dev"


def test_cli_fetch_uses_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(fetch_module, "OFFICIAL_FILES", _registry(tmp_path))
    data = tmp_path / "data"
    assert main(["data", "fetch", "hotpotqa", "--data-dir", str(data), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["files"][0]["status"] == "downloaded"
    assert main(["data", "fetch", "hotpotqa", "--data-dir", str(data), "--sha256", "x"]) == 2
    assert "--sha256 expects KEY=VALUE" in capsys.readouterr().err
