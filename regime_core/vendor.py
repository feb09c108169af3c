"""Vendor MathJax into the work directory so the rendered book shows its maths offline.

MathJax is too large to commit (its main file alone is over 1 MiB), so ``regime book`` fetches
the npm package once with ``npm pack``, checks the tarball's sha256, and unpacks only what the
book loads. The Sphinx extension then serves it from ``_static/mathjax``; when it is absent (no
npm, or a test build), pages fall back to Sphinx's default CDN address.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from regime_core import paths
from regime_core.integrity import fresh_directory, make_directory
from regime_core.locks import directory_lock

MATHJAX_VERSION = "3.2.2"
MATHJAX_TARBALL_SHA256 = "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09"
# the combined TeX-to-CHTML component, its web fonts, and the TeX extensions it loads on demand
MATHJAX_MEMBERS: tuple[str, ...] = (
    "package/es5/tex-chtml.js",
    "package/es5/output/chtml/fonts/woff-v2/",
    "package/es5/input/tex/extensions/",
    "package/LICENSE",
)
MATHJAX_ENTRY = "tex-chtml.js"


def mathjax_dir(work: str | Path | None = None) -> Path:
    """Where the vendored MathJax lives: ``<work>/vendor/mathjax``."""
    return paths.work_dir(work) / "vendor" / "mathjax"


def vendor_mathjax(work: str | Path | None = None, *, npm: str = "npm") -> Path:
    """Fetch MathJax with ``npm pack`` (once), verify its sha256, unpack the needed files.

    Returns the directory holding ``tex-chtml.js``. Raises ``FileNotFoundError`` when npm is not
    installed and ``ValueError`` when the tarball's checksum differs from the pinned one.
    """
    dest = mathjax_dir(work)
    if (dest / MATHJAX_ENTRY).is_file():
        return dest
    # its own lock: `regime book` holds the work directory's only shared
    with directory_lock(dest.parent, what="vendoring MathJax"):
        return _vendor(dest, npm, paths.work_dir(work))


def _vendor(dest: Path, npm: str, work: Path) -> Path:
    if (dest / MATHJAX_ENTRY).is_file():  # another build vendored it while this one waited
        return dest
    npm_path = shutil.which(npm)
    if npm_path is None:
        raise FileNotFoundError(f"{npm!r} is not installed; it is needed to vendor MathJax")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [npm_path, "pack", f"mathjax@{MATHJAX_VERSION}", "--pack-destination", tmp],
            check=True,
            capture_output=True,
            text=True,
        )
        tarball = Path(tmp) / f"mathjax-{MATHJAX_VERSION}.tgz"
        digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
        if digest != MATHJAX_TARBALL_SHA256:
            raise ValueError(
                f"{tarball.name}: sha256 {digest} differs from the pinned "
                f"{MATHJAX_TARBALL_SHA256}; refusing to vendor it"
            )
        staging = Path(tmp) / "staging"
        with tarfile.open(tarball) as archive:
            members = [m for m in archive.getmembers() if _wanted(m.name)]
            archive.extractall(staging, members=members, filter="data")
        # by the writers' rule (regime_core.integrity): a link in their place is never followed
        # out of the work directory, and a removal that fails is an error, not swallowed
        make_directory(dest.parent, inside=work)
        partial = fresh_directory(dest.with_name(dest.name + ".partial"), inside=work)
        shutil.copytree(staging / "package" / "es5", partial, dirs_exist_ok=True)
        shutil.copy2(staging / "package" / "LICENSE", partial / "LICENSE")
        fresh_directory(dest, inside=work)  # an empty directory, which the rename replaces
        partial.rename(dest)  # atomic: a half-copied tree is never served
    return dest


def _wanted(name: str) -> bool:
    return any(name == m or (m.endswith("/") and name.startswith(m)) for m in MATHJAX_MEMBERS)
