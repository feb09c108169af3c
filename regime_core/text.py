"""Text utilities: sentence splitting, normalisation for title/alias matching, entity spans.

One normalisation kernel (:func:`_mapped`, then :func:`_normalized` or :func:`_analyse`) turns
a text into normalised tokens and, when asked, the character span of each token in the original
text. :func:`normalize` joins those tokens, and
:func:`find_mentions` matches normalised name forms against them at token boundaries and maps
the match back to the original offsets, so a name and a sentence are always normalised by
exactly the same rules (:class:`NormalizationRules`).

>>> normalize("The Sorrows of Young Werther (film)")
'sorrows of young werther'
>>> [m.surface for m in find_mentions("He met Beyoncé's band in Paris.", ["Beyonce", "Paris"])]
['Beyoncé', 'Paris']
"""

from __future__ import annotations

import dataclasses
import functools
import html
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from regime_core.config import ConfigMixin
from regime_core.inputs import Flag, Items, Word
from regime_core.inputs.configs import declared


@functools.cache
def _sentencizer() -> Any:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences with spaCy's rule-based sentencizer (no model weights).

    The paragraph comes from a record its format's declaration read (``raw_records.RAW_TEXT``,
    the ``regime-twohop/1`` line): a string within :data:`regime_core.limits.MAX_TEXT_CHARS`,
    spaCy's ``max_length``, so spaCy's E088 (which names no file, record or field) never shows.

    >>> split_sentences("Paris is in France. It is large.")
    ['Paris is in France.', 'It is large.']
    """
    if not text.strip():
        return []
    return [s.text.strip() for s in _sentencizer()(text).sents if s.text.strip()]


# --- normalisation ---------------------------------------------------------------------------

_NON_WORD = re.compile(r"[^\w\s]")
# An English possessive clitic right after a word: "Werther's", "Werther’s".
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_TOKEN = re.compile(r"\S+")


def trailing_parenthetical(text: str) -> int:
    r"""Where one trailing parenthetical, as in Wikipedia titles ("Werther (film)"), starts with
    the whitespace before it; ``len(text)`` when there is none.

    What ``re.search(r"\s*\([^)]*\)\s*$", text).start()`` finds, in linear time: that
    expression backtracks quadratically on a title of many "(" and no ")" (300,000 characters
    stalled ``data prepare`` for minutes). ``router.js`` has the same rule.

    >>> t = "Titanic (1997 film) "
    >>> t[: trailing_parenthetical(t)], "a (b (c)"[: trailing_parenthetical("a (b (c)")]
    ('Titanic', 'a')
    """
    body = text.rstrip()
    if not body.endswith(")"):
        return len(text)
    opening = body.find("(", body.rfind(")", 0, len(body) - 1) + 1, len(body) - 1)
    return len(text) if opening < 0 else len(body[:opening].rstrip())


@dataclass(frozen=True)
class NormalizationRules(ConfigMixin):
    """The rules that make a name and a text comparable; the defaults are the only defaults.

    Applied in this order: drop one trailing parenthetical disambiguator ("(film)"; names only,
    see :func:`normalize`), strip accents (Unicode NFKD, combining marks dropped), lowercase,
    drop possessive clitics ("'s"), turn punctuation into token breaks, drop articles, collapse
    whitespace. With ``strip_punctuation`` on, a possessive already splits off as a token ``s``
    ("Paris's" → "paris s"), so "Paris" is found in it either way.

    >>> normalize("Les Misérables", rules=NormalizationRules(strip_accents=False))
    'les misérables'
    """

    lowercase: bool = declared(True, Flag())
    """names and texts are compared in lower case"""
    strip_accents: bool = declared(True, Flag())
    """accents are dropped, so Misérables matches Miserables"""
    strip_punctuation: bool = declared(True, Flag())
    """punctuation becomes a word break"""
    strip_possessive: bool = declared(False, Flag())
    """a possessive 's is dropped (with punctuation stripped, Paris's already splits into paris and
    s)
    """
    strip_articles: bool = declared(True, Flag())
    """the words listed in articles are dropped"""
    articles: tuple[str, ...] = declared(("a", "an", "the"), Items(Word()))
    """the words strip_articles drops"""
    strip_disambiguator: bool = declared(True, Flag())
    """names only: one trailing parenthesis is dropped, so Amélie (film) matches Amélie"""
    strip_comma_qualifier: bool = declared(False, Flag())
    """names only: the form before a trailing comma qualifier counts too (Boston, Lincolnshire
    matches Boston); off, since it also turns Paris, Texas into Paris
    """


DEFAULT_RULES = NormalizationRules()


@dataclass(frozen=True)
class _Analysis:
    """Normalised tokens of a text with their [start, end) character spans in the original."""

    tokens: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @property
    def normalized(self) -> str:
        return " ".join(self.tokens)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@functools.lru_cache(maxsize=1 << 14)
def _map_char(ch: str, strip_accents: bool, lowercase: bool) -> str:
    if strip_accents:
        ch = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    return ch.lower() if lowercase else ch


@functools.lru_cache(maxsize=1 << 16)
def _mapped(
    text: str, rules: NormalizationRules, strip_disambiguator: bool
) -> tuple[str, tuple[int, ...] | None]:
    """Kernel, step 1: the text mapped character by character (disambiguator, accents, case,
    possessives, punctuation), and ``origin[j]``, the original index of mapped character j
    (None when the mapping is one-to-one, the common case)."""
    body = text
    if strip_disambiguator:
        body = text[: trailing_parenthetical(text)]

    origin: tuple[int, ...] | None = None
    if body.isascii():
        mapped = body.lower() if rules.lowercase else body
    else:
        # Each character is mapped on its own (so that a name and a sentence containing it map
        # alike); when every non-ASCII character maps to exactly one character, offsets stay
        # one-to-one and a table substitution does it at C speed.
        table = {
            ch: _map_char(ch, rules.strip_accents, rules.lowercase)
            for ch in set(_NON_ASCII.findall(body))
        }
        mapped = ""
        if all(len(v) == 1 for v in table.values()):
            mapped = _NON_ASCII.sub(lambda m: table[m.group()], body)
            if rules.lowercase:
                mapped = mapped.lower()
        if len(mapped) != len(body):
            # NFKD can expand ("ﬁ" → "fi") or delete (a lone combining mark) characters.
            pieces: list[str] = []
            positions: list[int] = []
            for i, ch in enumerate(body):
                out = _map_char(ch, rules.strip_accents, rules.lowercase)
                pieces.append(out)
                positions.extend([i] * len(out))
            mapped, origin = "".join(pieces), tuple(positions)

    # Deletions are written as same-length runs of spaces, so `origin` stays valid.
    if rules.strip_possessive:
        mapped = _POSSESSIVE.sub(lambda m: " " * len(m.group()), mapped)
    if rules.strip_punctuation:
        mapped = _NON_WORD.sub(" ", mapped)
    return mapped, origin


@functools.cache
def _article_pattern(articles: tuple[str, ...], case_sensitive: bool) -> re.Pattern[str]:
    alternation = "|".join(re.escape(a) for a in articles)
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile(rf"(?<!\S)(?:{alternation})(?!\S)", flags)


@functools.lru_cache(maxsize=1 << 16)
def _normalized(text: str, rules: NormalizationRules, strip_disambiguator: bool) -> str:
    """Kernel, step 2: the normalised string (tokens joined by one space)."""
    mapped, _ = _mapped(text, rules, strip_disambiguator)
    if rules.strip_articles and rules.articles:
        # Articles were lowercased with the text; without lowercasing, match them in any case.
        mapped = _article_pattern(rules.articles, rules.lowercase).sub(" ", mapped)
    return " ".join(mapped.split())


@functools.lru_cache(maxsize=1 << 12)
def _analyse(text: str, rules: NormalizationRules, strip_disambiguator: bool) -> _Analysis:
    """Kernel, step 2 with offsets: the tokens of :func:`_normalized` and their original spans."""
    mapped, origin = _mapped(text, rules, strip_disambiguator)
    articles = frozenset(rules.articles) if rules.strip_articles else frozenset()
    tokens: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _TOKEN.finditer(mapped):
        token = m.group()
        if articles and (token if rules.lowercase else token.lower()) in articles:
            continue
        tokens.append(token)
        if origin is None:
            starts.append(m.start())
            ends.append(m.end())
        else:
            starts.append(origin[m.start()])
            ends.append(origin[m.end() - 1] + 1)
    return _Analysis(tuple(tokens), tuple(starts), tuple(ends))


def normalize(
    text: str,
    *,
    strip_disambiguator: bool | None = None,
    rules: NormalizationRules = DEFAULT_RULES,
) -> str:
    """Normalise a name for matching: accents, case, punctuation, articles, "(film)"-style tails.

    ``strip_disambiguator`` overrides ``rules.strip_disambiguator`` when given (pass False for
    running text, whose final parenthetical is content, not a disambiguator).

    >>> normalize("The Sorrows of Young Werther (film)")
    'sorrows of young werther'
    >>> normalize("Amélie (film)", strip_disambiguator=False)
    'amelie film'
    """
    strip = rules.strip_disambiguator if strip_disambiguator is None else strip_disambiguator
    return _normalized(text, rules, bool(strip))


def surface_forms(
    name: str, aliases: Iterable[str] = (), rules: NormalizationRules = DEFAULT_RULES
) -> tuple[str, ...]:
    """Distinct normalised forms of a name and its aliases, in order, empty forms dropped.

    Each of ``name`` and ``aliases`` contributes its form without the disambiguator (when
    ``rules.strip_disambiguator``) and with it, then (when ``rules.strip_comma_qualifier``) the
    form of the part before a trailing ", qualifier".

    >>> surface_forms("Mercury (planet)", aliases=["The Mercury", "Hg"])
    ('mercury', 'mercury planet', 'hg')
    >>> surface_forms("Boston, Lincolnshire", rules=NormalizationRules(strip_comma_qualifier=True))
    ('boston lincolnshire', 'boston')
    """
    names = [name, *((aliases,) if isinstance(aliases, str) else aliases)]
    forms: dict[str, None] = {}
    for n in names:
        variants = (True, False) if rules.strip_disambiguator else (False,)
        for strip in variants:
            form = _normalized(n, rules, strip)
            if form:
                forms.setdefault(form)
        if rules.strip_comma_qualifier and "," in n:
            head = n.rsplit(",", 1)[0]
            form = _normalized(head, rules, rules.strip_disambiguator)
            if form:
                forms.setdefault(form)
    return tuple(forms)


# --- name matching ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mention:
    """A matched name: ``text[start:end]`` is ``surface``; ``form`` is the normalised form
    that matched and ``name`` the given name it came from, if any."""

    start: int
    end: int
    form: str
    surface: str
    name: str | None = None


@dataclass(frozen=True)
class NameMatcher:
    """A precompiled matcher for one set of names; see :func:`compile_names`."""

    forms: tuple[str, ...]  # longest first, so that alternation picks the longest match
    form_names: dict[str, str]
    rules: NormalizationRules
    pattern: re.Pattern[str] | None  # None when no name has a non-empty form
    #: Forms that only dropping an article made a single word ("The Mother" -> "mother",
    #: "The Who" -> "who"): they match only where the text writes them with their article
    #: (:func:`_written_with_its_article`), so a title does not match the common word ("the
    #: mother of", "Who is ...") or the word inside another title ("How I Met Your Mother").
    capital_forms: frozenset[str] = frozenset()

    def _matching(self, text: str) -> re.Pattern[str] | None:
        """The pattern if a form occurs in the normalised ``text``, else None (the check before
        offsets are worked out)."""
        if self.pattern is None or not self.pattern.search(_normalized(text, self.rules, False)):
            return None
        return self.pattern

    def any(self, text: str) -> bool:
        """Whether any of the names occurs in ``text`` at token boundaries."""
        found = self._matching(text) is not None
        return found and (not self.capital_forms or bool(self.find(text)))

    def find(self, text: str) -> list[Mention]:
        """Leftmost-longest, non-overlapping mentions of the names in ``text``."""
        pattern = self._matching(text)
        if pattern is None:
            return []  # the common case; offsets are only worked out when something matches
        analysis = _analyse(text, self.rules, False)
        joined = analysis.normalized
        # Character offset of each token in the joined string (tokens are joined by one space).
        token_at_char: dict[int, int] = {}
        token_ending_at: dict[int, int] = {}
        offset = 0
        for k, token in enumerate(analysis.tokens):
            token_at_char[offset] = k
            token_ending_at[offset + len(token)] = k
            offset += len(token) + 1
        mentions = []
        for m in pattern.finditer(joined):
            first, last = token_at_char[m.start()], token_ending_at[m.end()]
            start, end = analysis.starts[first], analysis.ends[last]
            form = m.group()
            if form in self.capital_forms and not _written_with_its_article(
                text, start, self.rules
            ):
                continue
            mentions.append(Mention(start, end, form, text[start:end], self.form_names[form]))
        return mentions


def _as_names(names: str | Iterable[str]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else tuple(names)


#: Opening quotes and brackets that may be glued to an article before a title.
_OPENING = "\"'“‘«„([{"


def _written_with_its_article(text: str, start: int, rules: NormalizationRules) -> bool:
    """The word at ``text[start]`` is written as the name it came from: capitalised and right
    after an article ("The Mother", "the Mother", "The Who"), not the common word ("the mother
    of", "Who is ...") nor the same word inside another title ("How I Met Your Mother")."""
    if not text[start : start + 1].isupper():
        return False
    before = text[:start].rstrip()
    # an opening quote or bracket glued to the article ('"The Conversation"') is not part of it
    last = before.rsplit(None, 1)[-1].lstrip(_OPENING) if before else ""
    return last.lower() in {a.lower() for a in rules.articles}


def _article_made_one_word(name: str, form: str, rules: NormalizationRules) -> bool:
    """``form`` is one word only because an article was dropped from ``name`` ("The Mother")."""
    if not rules.strip_articles or " " in form:
        return False
    kept = dataclasses.replace(rules, strip_articles=False)
    articles = {a.lower() for a in rules.articles}
    for strip in (True, False) if rules.strip_disambiguator else (False,):
        tokens = _normalized(name, kept, strip).split()
        if len(tokens) > 1 and [t for t in tokens if t.lower() not in articles] == [form]:
            return True
    return False


@functools.lru_cache(maxsize=1 << 14)
def _compile(names: tuple[str, ...], rules: NormalizationRules) -> NameMatcher:
    form_names: dict[str, str] = {}
    capital: dict[str, bool] = {}  # form -> every name giving it needs a capitalised match
    for name in names:
        for form in surface_forms(name, rules=rules):
            form_names.setdefault(form, name)
            needs = _article_made_one_word(name, form, rules)
            capital[form] = capital.get(form, True) and needs
    forms = tuple(sorted(form_names, key=lambda f: (-len(f), f)))
    if not forms:
        return NameMatcher(forms, form_names, rules, None)
    alternation = "|".join(re.escape(f) for f in forms)
    pattern = re.compile(rf"(?<!\S)(?:{alternation})(?!\S)")
    capital_forms = frozenset(f for f, needs in capital.items() if needs)
    return NameMatcher(forms, form_names, rules, pattern, capital_forms)


def compile_names(
    names: str | Iterable[str], rules: NormalizationRules = DEFAULT_RULES
) -> NameMatcher:
    """Precompile a set of names (memoised per name tuple and rules).

    The match is on whole normalised tokens: "Paris" is found in "Paris's mayor" and in
    "PARIS," but not in "Parisian".
    """
    return _compile(_as_names(names), rules)


def find_mentions(
    text: str, names: str | Iterable[str], rules: NormalizationRules = DEFAULT_RULES
) -> list[Mention]:
    """Mentions of any of ``names`` in ``text``, with offsets into the original ``text``.

    Every name contributes its :func:`surface_forms`. Matches are leftmost-longest and do not
    overlap: with names "New York" and "New York City", "New York City" yields one mention.
    Articles are not part of a match ("the Beatles" → the span of "Beatles").

    >>> [(m.start, m.end, m.form) for m in find_mentions("I love the Beatles!", "The Beatles")]
    [(11, 18, 'beatles')]
    """
    return compile_names(names, rules).find(text)


# --- entity spans ----------------------------------------------------------------------------


def capital_runs(
    capital: Sequence[bool], joined: Sequence[bool], connector: Sequence[bool]
) -> list[list[int]]:
    """Maximal runs of capitalised words, as word indices: the span rule of the router's text
    view (``regime_core.router._text``); pure, and a change here changes the features of saved
    routers.

    Word ``i`` starts with a capital (``capital[i]``), is joined to the word before it by
    whitespace only (``joined[i]``; punctuation breaks a run), and may be a lowercase connector
    (``connector[i]``: "of", "de"...), which stays in a run only between two capitalised words.

    >>> # "Bank of England, UK": a connector inside a run, a comma breaking the next one
    >>> capital_runs([1, 0, 1, 1], joined=[0, 1, 1, 0], connector=[0, 1, 0, 0])
    [[0, 1, 2], [3]]
    """
    runs: list[list[int]] = []
    run: list[int] = []
    pending: list[int] = []  # connectors after the run, kept only if a capital follows
    for i, (cap, join, conn) in enumerate(zip(capital, joined, connector, strict=True)):
        if cap:
            if run and join:
                run.extend(pending)
                run.append(i)
            else:
                if run:
                    runs.append(run)
                run = [i]
            pending = []
        elif run and join and conn:
            pending.append(i)
        elif run:
            runs.append(run)
            run, pending = [], []
    if run:
        runs.append(run)
    return runs


def escape_markdown(text: str) -> str:
    r"""``text`` with the characters Markdown would read as formatting (or HTML) escaped.

    >>> escape_markdown("a_b *c* <d>")
    'a\\_b \\*c\\* &lt;d&gt;'
    """
    escaped = html.escape(text, quote=False)
    for ch in ("\\", "*", "_", "`", "[", "]", "#", "|"):
        escaped = escaped.replace(ch, "\\" + ch)
    return escaped
