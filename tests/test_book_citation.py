"""The one citation source (CITATION.cff), the one repository setting, and the files and book
chrome that follow them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import refused

from regime_book import citation, site
from regime_core import paths

URL = "https://example.org/regime/companion"


def _repo(tmp_path: Path, urls: str = "") -> Path:
    for name in (citation.CITATION_FILE, citation.README_FILE):
        shutil.copyfile(paths.REPO_ROOT / name, tmp_path / name)
    (tmp_path / "book").mkdir()
    shutil.copyfile(paths.REPO_ROOT / citation.BIB_FILE, tmp_path / citation.BIB_FILE)
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "regime-core"\nversion = "9.8.7"\n{urls}', encoding="utf-8"
    )
    return tmp_path


def test_the_repository_files_are_in_step_with_their_sources() -> None:
    assert citation.drift() == [], "run `make citation`"


def test_repository_url_unset_set_and_invalid(tmp_path: Path) -> None:
    file = tmp_path / "pyproject.toml"
    file.write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert citation.repository_url(file) is None
    file.write_text(f'[project]\nname = "x"\n[project.urls]\nRepository = "{URL}/"\n')
    assert citation.repository_url(file) == URL
    file.write_text('[project]\nname = "x"\n[project.urls]\nRepository = "placeholder"\n')
    with refused(ValueError, names=("pyproject.toml", "[project.urls] Repository")):
        citation.repository_url(file)


def test_sync_follows_the_setting_both_ways(tmp_path: Path) -> None:
    root = _repo(tmp_path, f'[project.urls]\nRepository = "{URL}"\n')
    assert set(citation.sync(root)) >= {root / "CITATION.cff", root / "README.md"}
    assert citation.drift(root) == []
    cff = (root / "CITATION.cff").read_text()
    assert f"repository-code: {URL}\n" in cff and "version: 9.8.7\n" in cff
    assert f"<{URL}>" in (root / "README.md").read_text()
    (root / "pyproject.toml").write_text('[project]\nname = "regime-core"\nversion = "9.8.7"\n')
    assert citation.drift(root) == [root / "CITATION.cff", root / "README.md"]
    citation.sync(root)
    assert "\nrepository-code:" not in (root / "CITATION.cff").read_text()
    assert URL not in (root / "README.md").read_text()


def test_the_papers_entry_comes_from_the_cff_authors_and_all() -> None:
    cff = citation.load_cff()
    paper = citation.paper_citation(cff)
    assert paper.authors == tuple(a["name"] for a in cff["preferred-citation"]["authors"])
    assert paper.eprint == "2604.09019"
    entry = paper.bibtex()
    assert entry.startswith(f"@misc{{{citation.PAPER_KEY},")
    assert "{{authors as listed at arXiv:2604.09019}}" in entry  # an entity: kept whole
    assert "Two-Hop {QA}" in entry


def test_a_person_author_is_written_family_first_in_bibtex() -> None:
    shown, bib = citation._names(
        [{"family-names": "Doe", "given-names": "Jane"}, {"name": "A Lab"}], "CITATION.cff"
    )
    assert shown == ["Jane Doe", "A Lab"] and bib == ["Doe, Jane", "{A Lab}"]
    with refused(ValueError, names=("CITATION.cff", "author 1")):
        citation._names([{"affiliation": "x"}], "CITATION.cff")


def test_the_companion_says_it_is_unpublished_until_the_setting_is_set() -> None:
    cff = citation.load_cff()
    assert citation.companion_citation(cff, None).text().endswith("Not yet published.")
    assert citation.companion_citation(cff, URL).text().endswith(URL)


def test_no_repository_means_no_buttons_and_no_default_address() -> None:
    options = site.theme_options(None, "1.0")
    assert options["repository_url"] == "" and options["launch_buttons"] == {}
    assert not options["use_repository_button"] and not options["use_issues_button"]
    published = site.theme_options(URL, "1.0")
    assert published["repository_url"] == URL and published["use_issues_button"]
    assert published["launch_buttons"]["binderhub_url"].startswith("https://")
    assert "1.0" in published["extra_footer"] and URL in published["extra_footer"]
    dated = site.theme_options(None, "1.0", "2026-01-02")["extra_footer"]
    assert "Version 1.0" in dated and "built on 2026-01-02" in dated


def test_the_build_date_honours_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert site.build_date() == "1970-01-01"


def test_the_source_download_of_a_markdown_page_is_dropped() -> None:
    group = {
        "type": "group",
        "label": "download-buttons",
        "buttons": [
            {"type": "link", "label": "download-source-button", "text": ".md"},
            {"type": "javascript", "label": "download-pdf-button", "text": ".pdf"},
        ],
    }
    notebook = {"type": "link", "label": "download-source-button", "text": ".ipynb"}
    kept = site._without_unrendered_sources([group, notebook])
    assert [b["label"] for b in kept[0]["buttons"]] == ["download-pdf-button"]
    assert kept[1] == notebook


def test_the_script_prints_both_citations_and_checks_the_repository(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``python book/_ext/regime_book/citation.py --check``: both citations, exit 0 in step."""
    assert citation.main(["--check"]) == 0
    printed = capsys.readouterr().out
    assert "arXiv:2604.09019" in printed and "not in step" not in printed
    assert citation.main(["--bibtex"]) == 0
    assert f"{{{citation.PAPER_KEY}," in capsys.readouterr().out
