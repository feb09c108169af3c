"""regime_core.vendor: MathJax unpacked into the work directory by the writers' rule, with a
stand-in ``npm`` (no network in tests) that packs a small tarball."""

from __future__ import annotations

import hashlib
import io
import stat
import sys
import tarfile
from pathlib import Path

import pytest

from regime_core import vendor

FILES = {"package/es5/tex-chtml.js": b"/* MathJax */\n", "package/LICENSE": b"Apache-2.0\n"}


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An ``npm`` whose ``pack`` writes a tarball of :data:`FILES`, pinned as the real one is."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in FILES.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    tarball = tmp_path / "fake.tgz"
    tarball.write_bytes(buffer.getvalue())
    monkeypatch.setattr(
        vendor, "MATHJAX_TARBALL_SHA256", hashlib.sha256(buffer.getvalue()).hexdigest()
    )
    script = tmp_path / "npm"
    script.write_text(
        f"#!{sys.executable}\n"
        "import shutil, sys\n"
        "destination = sys.argv[sys.argv.index('--pack-destination') + 1]\n"
        f"shutil.copy({str(tarball)!r}, destination + '/mathjax-{vendor.MATHJAX_VERSION}.tgz')\n",
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_mathjax_is_unpacked_into_the_work_directory(tmp_path: Path, fake_npm: str) -> None:
    work = tmp_path / "work"
    stale = vendor.mathjax_dir(work) / "old.js"  # a half-vendored tree: no entry file
    stale.parent.mkdir(parents=True)
    stale.write_text("stale", encoding="utf-8")
    dest = vendor.vendor_mathjax(work, npm=fake_npm)
    assert dest == vendor.mathjax_dir(work)
    assert (dest / vendor.MATHJAX_ENTRY).read_bytes() == FILES["package/es5/tex-chtml.js"]
    assert (dest / "LICENSE").is_file() and not stale.exists()
    assert not dest.with_name(dest.name + ".partial").exists()


def test_a_link_out_of_the_work_directory_is_refused_not_followed(
    tmp_path: Path, fake_npm: str
) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine", encoding="utf-8")
    partial = vendor.mathjax_dir(work).with_name("mathjax.partial")
    partial.parent.mkdir(parents=True)
    partial.symlink_to(elsewhere)
    with pytest.raises(ValueError) as err:
        vendor.vendor_mathjax(work, npm=fake_npm)
    assert str(partial) in str(err.value)
    assert [p.name for p in elsewhere.iterdir()] == ["keep.txt"]
    assert not (vendor.mathjax_dir(work) / vendor.MATHJAX_ENTRY).exists()
