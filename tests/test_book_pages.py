"""The book's pages: prose reads its numbers from records (nothing typed), named choices are read
from the code, and, over the quick profile's records (``quick_book`` in conftest.py), the strict
build renders every chapter with no unresolved key, every figure and no broken internal link."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers import PageLinks, broken_links, refused

from regime_book.choices import describe_choice
from regime_book.records import parse_reference
from regime_core import paths
from regime_core.book.build import toc_files

BOOK = paths.REPO_ROOT / "book"
ROLE = re.compile(r"\{(rec|default|verdict|claim|robust|compare|statement)\}`([^`]+)`")
# Words that state a verdict or a significance: on a claim page they come from a role, never typed.
VERDICT_WORDS = re.compile(
    r"\b(significant(ly)?|reproduced|direction only|smaller than reported|larger than reported"
    r"|n\.s\.)",
    re.IGNORECASE,
)
FENCE = re.compile(r"^(`{3,}|~{3,})")
# Numbers that look like results: decimals, percentages, percentage points, p-values.
RESULT_LIKE = re.compile(
    r"(?<![\w.@-])(\d+\.\d+|\d+(?:\.\d+)?\s?%|\d+(?:\.\d+)?\s?pp\b|p\s?[<=]\s?0)"
)


def _prose_pages() -> list[Path]:
    return sorted(p for p in BOOK.rglob("*.md") if "executed" not in p.parts)


def _top_level_directives(text: str, name: str) -> int:
    """How many ``{name}`` directives the page renders (not those shown inside code examples)."""
    count = 0
    fence: str | None = None
    for line in text.splitlines():
        match = FENCE.match(line.strip())
        if fence is None and match:
            fence = match.group(1)
            count += line.strip()[len(fence) :].startswith(f"{{{name}}}")
        elif fence is not None and match and line.strip() == fence:
            fence = None
    return count


def _strip_non_prose(text: str) -> str:
    """Prose without fenced blocks (code, directives), inline code, maths and roles."""
    prose = ROLE.sub("", _without_fences(text))
    prose = re.sub(r"\$\$.*?\$\$", "", prose, flags=re.DOTALL)
    prose = re.sub(r"\$[^$\n]+\$", "", prose)
    return re.sub(r"`[^`\n]+`", "", prose)


def _without_fences(text: str) -> str:
    """``text`` without its fenced blocks; ``:::`` admonitions hold prose and are kept."""
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        match = FENCE.match(line.strip())
        if fence is None:
            if match:
                fence = match.group(1)
            else:
                out.append(line)
        elif (
            match
            and line.strip() == match.group(1)
            and match.group(1)[0] == fence[0]
            and len(match.group(1)) >= len(fence)
        ):
            fence = None
    return "\n".join(out)


def test_prose_pages_type_no_result_numbers() -> None:
    """Every number that looks like a result comes through {rec} (or {default} for a default)."""
    typed: list[str] = []
    for page in _prose_pages():
        for match in RESULT_LIKE.finditer(_strip_non_prose(page.read_text(encoding="utf-8"))):
            typed.append(f"{page.relative_to(paths.REPO_ROOT)}: {match.group(0)!r}")
    assert typed == []


def _claim_pages() -> list[Path]:
    return sorted((BOOK / "claims").glob("*.md"))


def _verdict_words(text: str) -> list[str]:
    """Verdict and significance words typed in a page's prose (roles, code, maths and the
    keys of ``rec-table`` lines stripped)."""
    return [m.group(0) for m in VERDICT_WORDS.finditer(_strip_non_prose(text))]


def test_claim_pages_type_no_verdict_and_no_significance() -> None:
    """Every sentence of a claim page that states a verdict or a significance is generated from
    the records ({verdict}, {claim}, {robust} and {compare}), so none can contradict them."""
    assert _findings(_claim_pages(), lambda text: [repr(w) for w in _verdict_words(text)]) == []


def _findings(pages: list[Path], find: Callable[[str], list[str]]) -> list[str]:
    """``"page: finding"`` for every finding of ``find`` in the source of every page."""
    return [
        f"{page.relative_to(paths.REPO_ROOT)}: {found}"
        for page in pages
        for found in find(page.read_text(encoding="utf-8"))
    ]


def test_the_verdict_check_catches_a_typed_verdict() -> None:
    text = "Routing is significantly better; {verdict}`router_2wiki` says so. `reproduced`"
    assert _verdict_words(text) == ["significantly"]
    assert _verdict_words("The claim is not reproduced here.") == ["reproduced"]
    assert _verdict_words("{compare}`router_train:train.outcome.routed_vs_q`") == []


def test_every_generated_sentence_names_a_claim_or_a_declared_run() -> None:
    from regime_core.paper import load_claims
    from regime_core.runner.declarations import load_declarations

    claims = {c.id for c in load_claims()}
    runs = set(load_declarations().runs)
    unknown = []
    for page in _prose_pages():
        for match in ROLE.finditer(_without_inline_literals(page.read_text(encoding="utf-8"))):
            role, target = match.groups()
            if role in ("verdict", "claim", "robust", "statement") and target.strip() not in claims:
                unknown.append(f"{page.name}: {match.group(0)}")
            if role == "compare" and parse_reference(target).run not in runs:
                unknown.append(f"{page.name}: {match.group(0)}")
    assert unknown == []


def test_the_prose_check_catches_a_typed_number() -> None:
    text = (
        "The gain is 5.6 pp, or {rec}`r:a.b|pp`, p < 0.001, and `0.25` in code is fine.\n"
        "```{rec-table} r\nGain = a.b|pp\n0.5\n```\nR@5 and hit@1 and T3 are names.\n"
    )
    found = RESULT_LIKE.findall(_strip_non_prose(text))
    assert found == ["5.6", "p < 0"]


def _without_inline_literals(text: str) -> str:
    """Drop ````` ``...`` ````` spans and single-backtick role names shown as code (`{rec}`)."""
    text = re.sub(r"``.+?``", "", text, flags=re.DOTALL)
    return re.sub(r"`\{(rec|default)\}`(?!`)", "", text)


def test_top_level_directives_skip_code_examples() -> None:
    text = "```{rec-figure} a:b\nCaption\n```\n````md\n```{rec-figure} a:c\n```\n````\n"
    assert _top_level_directives(text, "rec-figure") == 1


def test_every_record_reference_names_a_declared_run() -> None:
    from regime_core.runner.declarations import load_declarations

    runs = set(load_declarations().runs)
    unknown: list[str] = []
    for page in _prose_pages():
        text = _without_inline_literals(page.read_text(encoding="utf-8"))
        refs = [m.group(2) for m in ROLE.finditer(text) if m.group(1) == "rec"]
        refs += re.findall(r"```\{rec-(?:figure|table)\}\s+([A-Za-z0-9_-]+)", text)
        for ref in refs:
            run = parse_reference(ref).run if ":" in ref else ref
            if run not in runs:
                unknown.append(f"{page.name}: {ref}")
    assert unknown == []


def test_every_default_reference_resolves() -> None:
    from regime_book.choices import import_dotted

    for page in _prose_pages():
        for match in ROLE.finditer(_without_inline_literals(page.read_text(encoding="utf-8"))):
            if match.group(1) == "default":
                import_dotted(match.group(2).partition("|")[0].strip())


# --- one vocabulary (book/reference/glossary.rst defines each term once) ------------------------

#: Variants of a glossary term that prose must not use, each with the term to write instead. Code,
#: maths, roles and directive bodies are not prose (the records' own keys are lower-case).
BANNED_VARIANTS: dict[str, tuple[re.Pattern[str], str]] = {
    "b_dominant": (re.compile(r"\b[bq]_dominant\b", re.IGNORECASE), "B-dominant / Q-dominant"),
    "B dominant": (
        re.compile(r"\b[BbQq] dominant\b|\bb-dominant\b|\bq-dominant\b"),
        "B-dominant / Q-dominant",
    ),
    "2wikimultihopqa": (re.compile(r"\b2wikimultihopqa\b"), "2WikiMultiHopQA"),
    "2Wiki": (re.compile(r"\b2Wiki\b"), "2WikiMultiHopQA"),
    "R@5": (
        re.compile(r"(?<!paper's )(?<!paper\u2019s )\bR@(?:\d+|k)\b"),
        "hit@5 (the paper's R@5 only when quoting the paper)",
    ),
    "recall": (re.compile(r"\brecall", re.IGNORECASE), "hit@5"),
    "hit@k": (re.compile(r"\bhit@k\b|\bHit@"), "hit@5"),
    "hit rate": (re.compile(r"\bhit rates?\b", re.IGNORECASE), "hit@5"),
    "normalise(": (re.compile(r"normali[sz]e\s*\("), "f(q) + \u03b1 f(B_rel), as in the glossary"),
}


def _vocabulary_variants(text: str) -> list[str]:
    prose = _strip_non_prose(text)
    return [
        f"{match.group(0)!r} (write {instead})"
        for pattern, instead in BANNED_VARIANTS.values()
        for match in pattern.finditer(prose)
    ]


def test_prose_pages_use_the_glossary_vocabulary() -> None:
    assert _findings(_prose_pages(), _vocabulary_variants) == []


def test_the_vocabulary_check_catches_each_variant() -> None:
    text = (
        "On 2Wiki and 2wikimultihopqa, b_dominant items, a q-dominant one, recall@5, R@5 and\n"
        "hit@k with normalise(f(q)). The paper's R@5 is our hit@5 on 2WikiMultiHopQA.\n"
        "`b_dominant` in code and {rec}`t2:cells.b_dominant.n` are fine, and so is $R@5$.\n"
        "```{rec-table} t2\nB-dominant = verdict.union_vs_q.minilm.b_dominant_significant\n```\n"
    )
    found = [v.split(" (write")[0].strip("'") for v in _vocabulary_variants(text)]
    assert sorted(found) == sorted(
        ["2Wiki", "2wikimultihopqa", "b_dominant", "q-dominant", "recall", "R@5", "hit@k",
         "normalise("]
    )  # fmt: skip


# --- the landing page and the teaching pages ----------------------------------------------------


def test_the_landing_page_judges_every_claim_and_states_the_caveats() -> None:
    """The landing page shows every claim of paper_claims.yml through the chart (computed, so
    no verdict is typed there) and leaves the table with each verdict's reason to "The paper's
    numbers and ours"; the data caveat reads the subsets' sizes from the data record; the key
    figure is there and says from a record how many questions it leaves out."""
    source = (BOOK / "intro.md").read_text(encoding="utf-8")
    text = _without_fences(_without_inline_literals(source))
    assert _top_level_directives(source, "regime-claims-chart") == 1
    assert _top_level_directives(source, "regime-verdict-table") == 0
    assert "{doc}`reproducing/paper_vs_ours`" in text
    assert "{rec}`t2_regime_decomposition:excluded_no_b_rel." in source
    assert "{verdict}" not in text and "| Claim |" not in text  # no hand-made verdict table
    for dataset in ("hotpotqa", "2wikimultihopqa", "musique"):
        assert f"{{rec}}`data_regimes:prepared.{dataset}.two_hop|int`" in text, dataset
    assert _top_level_directives(source, "rec-figure") == 1
    assert "```{rec-figure} t2_regime_decomposition:key_union_vs_q" in source
    assert "{doc}`reference/our_reading`" in text  # only the abstract: our choices, listed


#: How the teaching pages name the encoders of reproduce.yml (the glossary's names).
ENCODER_NAMES: dict[str, str] = {"minilm": "MiniLM", "tfidf": "TF-IDF"}


def test_teaching_pages_name_the_encoders_their_runs_use() -> None:
    """The toy-world page and the exercises quote different numbers for the same arms because
    their runs use different encoders; each teaching page names every encoder the teaching runs
    use, in any profile, so a change of reproduce.yml cannot leave the prose behind."""
    from regime_core.runner.declarations import PROFILES
    from regime_core.runner.runs import RUNS
    from regime_core.teaching.lesson import LessonConfig

    teaching = [run for run in RUNS.values() if run.config is LessonConfig]
    encoders = {
        run.config.from_parameters(**run.spec.parameters_for(profile)).encoder
        for run in teaching
        for profile in PROFILES
    }
    for run in teaching:
        text = (paths.REPO_ROOT / f"{run.chapter}.md").read_text(encoding="utf-8")
        for encoder in encoders:
            assert ENCODER_NAMES[encoder] in text, f"{run.chapter} does not name {encoder}"


def test_exercises_introduction_gives_no_solution_away() -> None:
    """The page before the exercises quotes no number of the exercises' record but how many
    questions exercise 1 asks."""
    text = (BOOK / "start" / "exercises.md").read_text(encoding="utf-8")
    quoted = [m.group(2) for m in ROLE.finditer(text) if m.group(2).startswith("exercises:")]
    assert quoted and all(q.startswith("exercises:exercise1_questions.") for q in quoted)


def test_titles_have_no_number_prefixes_and_prose_names_no_notebook_number() -> None:
    """Pages are referred to by title ({doc} links), never as "notebook 05"; no title or toc
    caption carries a "05 ·" prefix (the book numbers its chapters itself)."""
    import yaml

    prefix = re.compile(r"^\s*\d+\s*[·.:)-]\s")
    toc = yaml.safe_load((paths.REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    captions = [part.get("caption", "") for part in toc.get("parts", [])]
    bad = [c for c in captions if prefix.match(c)]
    for page in _prose_pages():
        text = page.read_text(encoding="utf-8")
        title = next((ln[2:] for ln in text.splitlines() if ln.startswith("# ")), "")
        if prefix.match(title):
            bad.append(f"{page.name}: {title}")
        bad += [
            f"{page.name}: {m.group(0)!r}"
            for m in re.finditer(r"\bnotebooks?\s+\d+", _strip_non_prose(text), re.IGNORECASE)
        ]
    assert bad == []


# --- named choices read from the code ------------------------------------------------------------


def test_describe_choice_reads_each_kind_of_object() -> None:
    from regime_core import config, schema
    from regime_core.data.regimes import RegimeRules
    from regime_core.data.toyworld.generator import ToyWorldConfig
    from regime_core.experiments.common import RunConfig

    rules = describe_choice("regime_core.data.regimes.RegimeRules")
    by_name = {row[0]: row for row in rules.rows}
    assert set(by_name) == {f for f in RegimeRules.__dataclass_fields__}
    assert by_name["use_title"][1] == "True"
    assert by_name["use_title"][2] == config.meaning([RegimeRules], "use_title").text
    assert by_name["normalization"][1] == "NormalizationRules()"
    assert rules.kind == "dataclass"

    hop = describe_choice("regime_core.schema.HOP_ORDER_RULES")
    assert [r[0] for r in hop.rows] == list(schema.HOP_ORDER_RULES)
    assert all(value is None for _, value, _ in hop.rows)  # a mapping: name and meaning

    sources = describe_choice("regime_core.schema.RELATION_SOURCES")  # a knob's values
    assert sources.kind == "values"
    assert [r[0] for r in sources.rows] == list(schema.RELATION_SOURCES)
    assert sources.rows[-1][2] == "no sentence could be identified"
    assert sources.summary == config.meaning([schema], "RELATION_SOURCES").text

    alpha = describe_choice("regime_core.config.ALPHA")  # a default shares its field's meaning
    assert alpha.rows == (("ALPHA", repr(config.ALPHA), config.meaning([RunConfig], "alpha").text),)
    assert alpha.kind == "value"

    seed = describe_choice("regime_core.data.toyworld.generator.ToyWorldConfig")
    own = config.meaning([ToyWorldConfig], "seed").text  # an owner's own meaning wins
    assert dict((r[0], r[2]) for r in seed.rows)["seed"] == own != alpha.rows[0][2]

    text = describe_choice("regime_core.retrieval.document_text")
    assert text.rows[0][0].startswith("document_text(passage")
    assert "Title. Body" in text.rows[0][2]

    called = describe_choice("regime_core.router.labels.describe_label_rule()")
    assert "ties->" in called.rows[0][2]

    with refused(ValueError, names=("NO_SUCH_DEFAULT",)):
        describe_choice("regime_core.config.NO_SUCH_DEFAULT")


#: "Our reading of the paper" and the pages split from it by topic, in the toc's order.
READING_PAGES: tuple[str, ...] = ("our_reading", "knobs", "router_choices", "settings", "defaults")


def _our_reading_choices() -> list[str]:
    """The dotted names the page "Our reading of the paper" and the pages split from it show,
    in page order."""
    text = "".join(
        (BOOK / "reference" / f"{page}.md").read_text(encoding="utf-8") for page in READING_PAGES
    )
    blocks = re.findall(r"```\{regime-choices\}\n(.*?)```", text, flags=re.DOTALL)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_every_row_of_our_reading_has_a_meaning() -> None:
    """Each name the page shows (a knob, a field, a rule, a value) says what it means, and each
    table of a knob's values or rules says what they are about."""
    from regime_book.choices import config_defaults

    missing = [
        f"{choice.name}: {name}"
        for choice in map(describe_choice, _our_reading_choices())
        for name, _, meaning in choice.rows
        if not meaning.strip()
    ]
    missing += [
        f"regime_core.config.{name}" for name, _, meaning in config_defaults() if not meaning
    ]
    assert missing == [], "write an attribute docstring (the string after the name) for each"
    unexplained = [
        c.name
        for c in map(describe_choice, _our_reading_choices())
        if c.kind in ("values", "dataclass") and not c.summary
    ]
    assert unexplained == []


def test_a_knob_s_meaning_lists_exactly_its_values() -> None:
    """A constant that lists a knob's values explains each value, and nothing else."""
    from regime_book.choices import constant_meaning, import_dotted

    for name in _our_reading_choices():
        obj, module, attribute = import_dotted(name.removesuffix("()"))
        if isinstance(obj, tuple | dict) and not isinstance(obj, type):
            found = constant_meaning(module, attribute)
            if found is not None and found.alternatives:
                assert list(found.alternatives) == [str(v) for v in obj], name


def test_meanings_are_plain_text() -> None:
    """One line of plain English each: no reST or Markdown markup, no line breaks."""
    from regime_book.choices import config_defaults, import_dotted

    def written_as_docstrings(name: str) -> bool:  # a mapping's values are the code's own text
        obj = import_dotted(name.removesuffix("()"))[0]
        return (not isinstance(obj, dict) and not callable(obj)) or isinstance(obj, type)

    choices = [describe_choice(name) for name in _our_reading_choices()]
    texts = [meaning for c in choices if written_as_docstrings(c.name) for _, _, meaning in c.rows]
    texts += [c.summary for c in choices if c.kind == "values"]
    texts += [meaning for _, _, meaning in config_defaults()]
    marked = [t for t in texts if re.search(r"[`*\n]|:\w+:|\b_\w+_\b", t)]
    assert marked == []
    # the glossary's words too; k is a knob there, so hit@k and recall@k (the registry's
    # metrics at every k) are its own names, not variants of hit@5
    general = {"hit@k", "recall"}
    variants = [
        f"{t!r}: {name}"
        for t in texts
        for name, (pattern, _) in BANNED_VARIANTS.items()
        if name not in general and pattern.search(t)
    ]
    assert variants == []


def test_the_cli_page_is_generated_from_the_parser() -> None:
    """sphinx-argparse renders the page from ``build_parser``: nothing about a command is typed."""
    import argparse

    from regime_core.cli import build_parser

    text = (BOOK / "reference" / "cli.rst").read_text(encoding="utf-8")
    assert ".. argparse::\n   :module: regime_core.cli\n   :func: build_parser\n" in text
    parser = build_parser()
    assert parser.prog == "regime"
    # the commands are split over two pages, each command documented once, in the parser's order
    text += (BOOK / "reference" / "cli_checks.rst").read_text(encoding="utf-8")
    (subcommands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert re.findall(r"^   :path: (\S+)$", text, re.MULTILINE) == list(subcommands.choices)


def _automodules(text: str) -> list[str]:
    return re.findall(r"^\.\. automodule:: (\S+)$", text, re.MULTILINE)


#: modules the API pages leave out: the CLI has its own page (the book's Sphinx extension is no
#: part of the package: book/_ext/regime_book)
API_EXCLUDED_PREFIXES: tuple[str, ...] = ("regime_core.cli",)
#: the API page of the package's top-level modules (every sub-package has a page of its own)
CORE_WING = "core"


def public_modules(package: str = "regime_core") -> list[str]:
    """Every importable module of the package that the API pages document, sorted."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        parts = info.name.split(".")
        if any(part.startswith("_") for part in parts):
            continue
        if info.name.startswith(API_EXCLUDED_PREFIXES):
            continue
        names.append(info.name)
    return sorted(names)


def api_wings(package: str = "regime_core") -> dict[str, list[str]]:
    """The API pages: ``{wing: modules}``, ``core`` first (the package and its top-level
    modules), then every sub-package with its modules, by name."""
    wings: dict[str, list[str]] = {CORE_WING: []}
    for module in public_modules(package):
        parts = module.split(".")
        top = ".".join(parts[:2])
        is_package = hasattr(importlib.import_module(top), "__path__")
        wing = parts[1] if len(parts) > 1 and is_package else CORE_WING
        wings.setdefault(wing, []).append(module)
    return {CORE_WING: wings.pop(CORE_WING), **dict(sorted(wings.items()))}


def _module_page(wing: str, module: str) -> str:
    """The API page of ``module`` of ``wing``: ``api/<wing>/<the rest of its name>``."""
    base = "regime_core" if wing == "core" else f"regime_core.{wing}"
    return f"book/reference/api/{wing}/" + module.removeprefix(base + ".").replace(".", "_")


def test_every_module_has_an_api_page_in_the_toc() -> None:
    """One page per wing of the package under book/reference/api/ (its package, and the list of
    its modules) and one page per module under the wing's folder (no API page is a scroll of a
    whole wing), in the toc in the order of the index; each module page documents its module
    (automodule), and the index lists every one of them (autosummary): a module added to the
    package and not to its page fails here."""
    wings = api_wings()
    pages = sorted(p.stem for p in (BOOK / "reference" / "api").glob("*.rst"))
    assert pages == sorted(wings)
    index = (BOOK / "reference" / "api.rst").read_text(encoding="utf-8")
    # the index lists each wing's package; each wing's page lists its modules
    listed = re.findall(r"^   (regime_core\S*)$", index, re.MULTILINE)
    assert listed == [modules[0] for modules in wings.values()]
    listed = []
    expected_toc = ["book/reference/api"]
    for wing, modules in wings.items():
        text = (BOOK / "reference" / "api" / f"{wing}.rst").read_text(encoding="utf-8")
        assert _automodules(text) == modules[:1], f"book/reference/api/{wing}.rst"
        listed += [modules[0], *re.findall(r"^   (regime_core\S*)$", text, re.MULTILINE)]
        assert f":doc:`api/{wing}`" in index
        expected_toc.append(f"book/reference/api/{wing}")
        for module in modules[1:]:
            page = _module_page(wing, module)
            text = (paths.REPO_ROOT / f"{page}.rst").read_text(encoding="utf-8")
            assert _automodules(text) == [module], page
            expected_toc.append(page)
        folder = BOOK / "reference" / "api" / wing
        stray = {p.stem for p in folder.glob("*.rst")} if folder.is_dir() else set()
        assert stray == {_module_page(wing, m).rsplit("/", 1)[1] for m in modules[1:]}, wing
    assert listed == [m for modules in wings.values() for m in modules]
    toc = [e for e in toc_files(paths.REPO_ROOT / "_toc.yml") if e.startswith("book/reference/api")]
    assert toc == expected_toc
    assert sorted(listed) == public_modules()


# --- the real book over the quick profile's records -----------------------------------------------


class _Page(PageLinks):
    """The links of a page, its record numbers, verdict cells and generated sentences."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers = 0
        self.verdict_cells: list[str] = []
        self._in_verdict = False
        # the text of every generated sentence, in page order: (class, text)
        self.generated: list[tuple[str, str]] = []
        self._generated_depth = 0
        self._generated_class = ""
        self._generated_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        super().handle_starttag(tag, attrs)
        classes = (dict(attrs).get("class") or "").split()
        if "regime-number" in classes:
            self.numbers += 1
        if any(c.startswith("regime-verdict-") for c in classes):
            self.verdict_cells.append(next(c for c in classes if c.startswith("regime-verdict-")))
        if self._generated_depth:
            self._generated_depth += 1
        elif wanted := [c for c in classes if c in GENERATED_CLASSES]:
            self._generated_depth, self._generated_class, self._generated_text = 1, wanted[0], []

    def handle_endtag(self, tag: str) -> None:
        if self._generated_depth:
            self._generated_depth -= 1
            if not self._generated_depth:
                self.generated.append((self._generated_class, "".join(self._generated_text)))

    def handle_data(self, data: str) -> None:
        if self._generated_depth:
            self._generated_text.append(data)


GENERATED_CLASSES = ("regime-verdict", "regime-claim-text", "regime-comparison")


@pytest.fixture(scope="module")
def html(quick_book: Any) -> Path:
    assert quick_book.ok, "\n".join(quick_book.warnings()) or quick_book.log[-3000:]
    return Path(quick_book.html_dir)


@pytest.mark.realdata
@pytest.mark.slow
def test_book_builds_strictly_with_every_chapter(html: Path, quick_run: Any) -> None:
    for entry in toc_files(quick_run.book_root / "_toc.yml"):
        assert (html / f"{entry}.html").is_file(), f"toc page {entry} was not rendered"


@pytest.mark.realdata
@pytest.mark.slow
def test_every_record_reference_is_rendered_as_a_number(html: Path) -> None:
    """A page renders exactly as many record numbers as its source has {rec} roles."""
    for page in _prose_pages():
        source = _without_fences(_without_inline_literals(page.read_text(encoding="utf-8")))
        roles = sum(1 for m in ROLE.finditer(source) if m.group(1) == "rec")
        rendered = html / page.relative_to(paths.REPO_ROOT).with_suffix(".html")
        assert _Page.read(rendered).numbers >= roles, page.name
        text = rendered.read_text(encoding="utf-8")
        assert "regime reproduce` to produce it" not in text


@pytest.mark.realdata
@pytest.mark.slow
def test_figures_are_present(html: Path) -> None:
    expected_figures = 0
    for page in _prose_pages():
        source = page.read_text(encoding="utf-8")
        figures = _top_level_directives(source, "rec-figure")
        expected_figures += figures
        rendered = _Page.read(html / page.relative_to(paths.REPO_ROOT).with_suffix(".html"))
        local = [src for src in rendered.images if not urlsplit(src).scheme]
        assert len(local) >= figures, page.name
    assert expected_figures > 0


@pytest.mark.realdata
@pytest.mark.slow
def test_no_broken_internal_links_or_images(html: Path) -> None:
    assert broken_links(html) == []


@pytest.mark.realdata
@pytest.mark.slow
def test_paper_against_ours_has_a_computed_verdict_per_claim(html: Path) -> None:
    from regime_book.claims import verdict_class
    from regime_core.paper import load_claims
    from regime_core.runner.judge import VERDICTS

    page = html / "book" / "reproducing" / "paper_vs_ours.html"
    verdicts = _Page.read(page).verdict_cells
    assert len(verdicts) == len(load_claims())
    assert set(verdicts) <= {verdict_class(v) for v in VERDICTS}


@pytest.mark.realdata
@pytest.mark.slow
def test_the_landing_page_charts_and_tabulates_every_claim(html: Path, quick_run: Any) -> None:
    """The landing page's chart has a row per pp claim (or part) and a text row per other
    claim, and the cards of "The paper's numbers and ours" a row per claim linked to its
    chapter, each with the verdict recomputed here from the quick run's records."""
    from bs4 import BeautifulSoup

    from regime_book.claims import verdict_class
    from regime_book.claims_chart import chart_rows
    from regime_core.paper import load_claims
    from regime_core.runner.verdicts import judge_claims

    claims = load_claims()
    judged = judge_claims({c.run: quick_run.record(c.run) for c in claims}, claims)
    pp_rows, text_rows = chart_rows(judged)
    page = BeautifulSoup((html / "book" / "intro.html").read_text(encoding="utf-8"), "html.parser")
    chart = page.select_one("figure.regime-claims-chart")
    shown = chart.select(".regime-chart-row") + chart.select(".regime-chart-textrow")
    expected = [*pp_rows, *text_rows]
    assert [_plain(r["aria-label"]).split(". Paper:")[0] for r in shown] == [
        r.label for r in expected
    ]
    for row, want in zip(shown, expected, strict=True):
        assert verdict_class(want.verdict) in row["class"], want.label
        assert _plain(row.select_one(".regime-chart-verdict").get_text(" ")) == want.verdict_label
    assert page.select_one("table.regime-landing-verdicts") is None  # the table moved
    paper_vs_ours = html / "book" / "reproducing" / "paper_vs_ours.html"
    page = BeautifulSoup(paper_vs_ours.read_text(encoding="utf-8"), "html.parser")
    table = page.select_one("table.regime-claims-table")
    cells = [row.find_all("td", recursive=False) for row in table.select("tbody tr")]
    labels = [_plain(c[0].select_one("strong").get_text(" ")) for c in cells]
    assert labels == [c.label for c in claims]
    for row, verdict in zip(cells, judged, strict=True):
        assert verdict_class(verdict.verdict) in row[3]["class"], verdict.claim.id
        links = [a["href"].split("#")[0] for a in row[0].select("a")]
        assert links == [f"../{verdict.claim.chapter.removeprefix('book/')}.html"]


@pytest.mark.realdata
@pytest.mark.slow
def test_our_reading_lists_the_named_choices(html: Path) -> None:
    from regime_core import schema
    from regime_core.router.features import FEATURE_NAMES

    text = "".join(
        (html / "book" / "reference" / f"{page}.html").read_text(encoding="utf-8")
        for page in READING_PAGES
    )
    for name in [*schema.HOP_ORDER_RULES, *FEATURE_NAMES, "strip_accents", "distractor_similarity"]:
        assert name in text, name


def _plain(text: str) -> str:
    """Whitespace folded, and Sphinx's typographic apostrophes and quotes made plain again."""
    for curly, straight in (("’", "'"), ("‘", "'"), ("“", '"'), ("”", '"')):
        text = text.replace(curly, straight)
    return " ".join(text.split())


@pytest.mark.realdata
@pytest.mark.slow
def test_every_generated_sentence_matches_its_record(html: Path, quick_run: Any) -> None:
    """Each {verdict}, {claim}, {robust}, {statement} and {compare} on a rendered page says
    exactly what the records (and paper_claims.yml) say, recomputed here from the quick run's."""
    from regime_core.paper import load_claims
    from regime_core.runner.verdicts import (
        claim_sentence,
        comparison_phrase,
        judge_claims,
        robustness_phrase,
    )

    claims = load_claims()
    judged = {
        v.claim.id: v
        for v in judge_claims(
            {c.run: quick_run.record(c.run) for c in claims}, claims, quick_run.record("robustness")
        )
    }
    checked = 0
    for page in _prose_pages():
        source = _without_fences(_without_inline_literals(page.read_text(encoding="utf-8")))
        expected = []
        for role, target in (m.groups() for m in ROLE.finditer(source)):
            target = target.strip()
            if role == "verdict":
                expected.append(("regime-verdict", judged[target].verdict))
            elif role == "claim":
                expected.append(("regime-claim-text", claim_sentence(judged[target])))
            elif role == "robust":
                expected.append(("regime-claim-text", robustness_phrase(judged[target].robustness)))
            elif role == "statement":  # the claim as paper_claims.yml states it
                expected.append(("regime-claim-text", judged[target].claim.claim))
            elif role == "compare":
                ref = parse_reference(target)
                node = quick_run.record(ref.run)["numbers"]
                for part in ref.key.split("."):
                    node = node[part]
                expected.append(("regime-comparison", comparison_phrase(node)))
        if not expected:
            continue
        rendered = _Page.read(html / page.relative_to(paths.REPO_ROOT).with_suffix(".html"))
        found = [(c, _plain(t)) for c, t in rendered.generated]
        assert found == [(c, _plain(t)) for c, t in expected], page.name
        checked += len(expected)
    assert checked > 20


# --- the reference pages, rendered ----------------------------------------------------------------


class _Text(HTMLParser):
    """A page's visible text (no scripts, no styles), and the rows of one class of table:
    each row a list of (cell text, the cell's links, the cell's classes)."""

    def __init__(self, table_class: str = "") -> None:
        super().__init__()
        self.table_class = table_class
        self.text: list[str] = []
        self.rows: list[list[tuple[str, list[str], list[str]]]] = []
        self.captions: list[str] = []
        self._skip = 0
        self._table_depth = 0
        self._cell: tuple[list[str], list[str], list[str]] | None = None
        self._caption: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if tag in ("script", "style"):
            self._skip += 1
        if tag == "table":
            self._table_depth += 1 if (self._table_depth or self.table_class in classes) else 0
        if tag == "caption" and self._table_depth:
            self._caption = []
        if self._table_depth and tag == "tr":
            self.rows.append([])
        if self._table_depth and tag in ("td", "th"):
            self._cell = ([], [], classes)
        if self._cell is not None and tag == "a" and values.get("href"):
            self._cell[1].append(str(values["href"]))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1
        if tag == "table" and self._table_depth:
            self._table_depth -= 1
        if tag == "caption" and self._caption is not None:
            self.captions.append(" ".join("".join(self._caption).split()))
            self._caption = None
        if tag in ("td", "th") and self._cell is not None:
            text = " ".join("".join(self._cell[0]).split())
            self.rows[-1].append((text, self._cell[1], self._cell[2]))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)
        if self._cell is not None:
            self._cell[0].append(data)
        if self._caption is not None:
            self._caption.append(data)


def _read(page: Path, table_class: str = "") -> _Text:
    parser = _Text(table_class)
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _reference_pages(html: Path) -> list[Path]:
    reference = html / "book" / "reference"
    names = (*READING_PAGES, "cli", "cli_checks", "api", "glossary")
    pages = [reference / f"{name}.html" for name in names]
    return [*pages, *sorted((reference / "api").glob("*.html"))]


@pytest.mark.realdata
@pytest.mark.slow
def test_reference_pages_show_no_markup_and_no_local_path(html: Path, quick_run: Any) -> None:
    """No raw reST role or double backtick, and no absolute path of this machine (a signature's
    default shows as written in the source: autodoc_preserve_defaults)."""
    local = {str(paths.REPO_ROOT), str(quick_run.work), str(quick_run.book_root)}
    pages = [*_reference_pages(html), html / "book" / "reproducing" / "paper_vs_ours.html"]
    leaks = []
    for page in pages:
        text = "".join(_read(page).text)
        found = re.findall(r":(?:func|data|class|mod|meth|attr|doc|ref):`|``", text)
        found += [path for path in local if path in text]
        leaks += [f"{page.relative_to(html)}: {sorted(set(found))}"] if found else []
    assert leaks == []


@pytest.mark.realdata
@pytest.mark.slow
def test_api_pages_document_every_module_once(html: Path) -> None:
    index = (html / "book" / "reference" / "api.html").read_text(encoding="utf-8")
    for wing, modules in api_wings().items():
        # the index links each wing's package on the wing's page; the wing's page links each of
        # its modules on the module's own page
        page = (html / "book" / "reference" / "api" / f"{wing}.html").read_text(encoding="utf-8")
        assert f'id="module-{modules[0]}"' in page, modules[0]
        assert f"api/{wing}.html#module-{modules[0]}" in index, modules[0]
        for module in modules[1:]:
            name = _module_page(wing, module).rsplit("/", 1)[1]
            own = html / "book" / "reference" / "api" / wing / f"{name}.html"
            assert f'id="module-{module}"' in own.read_text(encoding="utf-8"), module
            assert f"{wing}/{name}.html#module-{module}" in page, module


@pytest.mark.realdata
@pytest.mark.slow
def test_paper_against_ours_reads_on_a_phone(html: Path) -> None:
    """Captioned as its page's Table 1, a card per claim at every width: every cell but the
    claim led by its column's name (so no column is ever off-screen), the verdict cell carrying
    its class, each claim linked to the chapter that holds its evidence."""
    from regime_book.claims import CLAIM_COLUMNS
    from regime_core.paper import load_claims

    page = _read(html / "book" / "reproducing" / "paper_vs_ours.html", "regime-claims-table")
    assert page.captions[0].startswith("Table 1 The paper")
    header, *rows = page.rows
    names = [name for name, _ in CLAIM_COLUMNS]
    assert [cell[0] for cell in header] == names
    claims = load_claims()
    assert len(rows) == len(claims)
    for row, claim in zip(rows, claims, strict=True):
        assert all(cell[0].startswith(name) for cell, name in zip(row[1:], names[1:], strict=True))
        verdict = row[names.index("Verdict")]
        assert any(c.startswith("regime-verdict-") for c in verdict[2]), claim.id
        links = [href.split("#")[0] for href in row[0][1]]
        assert links == [f"../{claim.chapter.removeprefix('book/')}.html"], claim.id
        # Sphinx's smart quotes curl the label's apostrophe on the page
        shown = row[0][0].translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'}))
        assert shown.startswith(claim.label), claim.id


def test_the_exercises_run_on_the_toy_worlds_encoder_in_every_profile() -> None:
    """The exercises quote hit rates of the toy world that the toy-world page also reports:
    the two runs must share the world and the encoder, whatever the profile."""
    from regime_core.runner.declarations import PROFILES, load_declarations

    runs = load_declarations().runs
    for profile in PROFILES:
        toy, exercises = (runs[r].parameters_for(profile) for r in ("toyworld", "exercises"))
        for name in ("encoder", "seed", "n_questions"):
            assert toy.get(name) == exercises.get(name), (profile, name)
