"""The invented world: unique names, typed entities and their Wikipedia-like passages.

A :class:`World` owns every name it has handed out, so that each name denotes exactly one entity
(across all questions of a split) and coined words never repeat across entities; the only
deliberate overlaps are the *near names* made for hard distractors ("Tavel Korrin" and
"Mira Korrin"). A fixed geography of countries and cities is drawn from the seed alone, so
the dev and train splits of one seed share it.

A passage is a title and 3-8 sentences: one sentence per *fact* of the entity's kind (the lead
"X is a ..." plus the typed relations of ``vocabulary.FACTS``) and *fillers*. How the sentences
are worded and ordered is a :class:`Style`; hard distractors word their facts as the target
does (:func:`like_style`), so the relation sentences differ only in names and values.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from regime_core.data.toyworld import vocabulary as voc
from regime_core.schema import Passage

T = TypeVar("T")

KINDS: tuple[str, ...] = tuple(voc.FACTS)

# The most sentences every kind can fill without repeating a template.
MAX_SENTENCES: int = min(len(voc.FACTS[k]) + len(voc.FILLERS[k]) for k in KINDS)
# The fewest sentences every kind needs (one per fact).
MIN_SENTENCES: int = max(len(voc.FACTS[k]) for k in KINDS)

LAST_YEAR = 2025  # no filler event lies in the future
N_COUNTRIES = 24
CITIES_PER_COUNTRY = 8  # the first is the capital

# Open syllables ("ba") are listed twice: names read more easily.
_SYLLABLES: tuple[str, ...] = tuple(
    dict.fromkeys(o + v + c for o in voc.ONSETS for v in voc.VOWELS for c in voc.CODAS)
) + tuple(dict.fromkeys(o + v for o in voc.ONSETS for v in voc.VOWELS))
_ARTICLES = frozenset(("a", "an", "the"))

_FORMATTER = string.Formatter()
_A_BEFORE_VOWEL = re.compile(r"\b([Aa]) (?=[aeiouAEIOU])")  # "a engineer" -> "an engineer"


def _fields(template: str) -> tuple[str, ...]:
    return tuple(name for _, name, _, _ in _FORMATTER.parse(template) if name)


# The typed facts of each kind, in the order their random values are drawn.
_FACT_FIELDS: dict[str, tuple[str, ...]] = {
    "person": ("occupation", "city", "year", "adjective"),
    "film": ("genre", "director", "year", "adjective"),
    "band": ("genre", "city", "year", "singer", "adjective"),
    "company": ("industry", "founder", "year", "city", "adjective"),
    "city": ("city_kind", "country", "adjective"),
    "country": ("country_kind", "capital", "adjective"),
}
_YEAR_RANGES: dict[str, tuple[int, int]] = {
    "person": (1900, 1995),
    "film": (1930, 2020),
    "band": (1955, 2015),
    "company": (1850, 2015),
}
_FACT_CHOICES: dict[str, tuple[str, ...]] = {
    "occupation": voc.OCCUPATIONS,
    "industry": voc.INDUSTRIES,
    "city_kind": voc.CITY_KINDS,
    "country_kind": voc.COUNTRY_KINDS,
}
_FILLER_CHOICES: dict[str, tuple[str, ...]] = {
    "adjective2": voc.ADJECTIVES,
    "field": voc.FIELDS,
    "craft": voc.CRAFTS,
    "aspect": voc.ASPECTS,
}

_FILLER_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    kind: tuple(_fields(t) for t in templates) for kind, templates in voc.FILLERS.items()
}


@dataclass(frozen=True)
class Style:
    """How a passage is written: a template variant per fact, the fillers, the sentence order.

    ``order[j]`` is the slot printed as sentence ``j``; slots are the facts (in
    ``vocabulary.FACTS`` order) followed by the fillers.
    """

    variants: tuple[int, ...]
    fillers: tuple[int, ...]
    order: tuple[int, ...]

    def sentence_of_fact(self, kind: str, fact: str) -> int:
        slot = list(voc.FACTS[kind]).index(fact)
        return self.order.index(slot)


@dataclass(frozen=True)
class Entity:
    kind: str
    name: str
    attrs: Mapping[str, str]
    style: Style
    passage: Passage

    def sentence_of(self, fact: str) -> int:
        """Index (in ``passage.sentences``) of the sentence stating ``fact``."""
        return self.style.sentence_of_fact(self.kind, fact)


def make_style(
    kind: str,
    n_sentences: int,
    rng: random.Random,
    *,
    relation: str | None = None,
    position: str = "random",
) -> Style:
    """Draw a style; ``relation``'s sentence goes to ``position`` (first/second/last/random).

    Without a relation the lead sentence comes first and the rest are shuffled.
    """
    facts = list(voc.FACTS[kind])
    n_facts = len(facts)
    variants = tuple(rng.randrange(len(voc.FACTS[kind][f])) for f in facts)
    fillers = tuple(rng.sample(range(len(voc.FILLERS[kind])), n_sentences - n_facts))
    lead = facts.index("lead")
    rel = facts.index(relation) if relation is not None else None
    others = [s for s in range(n_sentences) if s not in (lead, rel)]
    rng.shuffle(others)
    order = [lead, *others] if rel != lead else others
    if rel is not None:
        if position == "first":
            order.insert(0, rel)
        elif position == "second":
            order.insert(1, rel)
        elif position == "last":
            order.append(rel)
        else:  # "random": ToyWorldConfig's relation_sentence_position allows nothing else
            order.insert(int(rng.random() * n_sentences), rel)
    return Style(variants=variants, fillers=fillers, order=tuple(order))


def like_style(kind: str, style: Style, rng: random.Random) -> Style:
    """A style with the fact wordings of ``style`` but its own fillers and sentence order.

    Hard distractors use it: they read like the target where the relations are stated, while
    their other sentences vary as any two pages do. (Exact copies would tie every candidate on
    the question's words, and corpus statistics, such as how often the target's name recurs in
    other passages, would then decide the ranking alone.)
    """
    fresh = make_style(kind, len(style.order), rng)
    return Style(variants=style.variants, fillers=fresh.fillers, order=fresh.order)


class World:
    """Name registry, fixed geography and entity factory of one seed.

    The geography's passages have ``min_sentences`` to ``max_sentences`` sentences, like the rest.
    """

    def __init__(
        self, seed: int, min_sentences: int = MIN_SENTENCES, max_sentences: int = MAX_SENTENCES
    ) -> None:
        self._names: set[str] = set()
        self._coined: set[str] = set()
        self._near: dict[str, list[Entity]] = {}
        rng = random.Random(f"toyworld:{seed}:geography")
        country_names = [self._unique(lambda: self._country_name(rng)) for _ in range(N_COUNTRIES)]
        city_names = [
            [self._unique(lambda: self._coin(rng, _pick(rng, (2, 2, 3)))) for _ in range(k)]
            for k in [CITIES_PER_COUNTRY] * N_COUNTRIES
        ]
        self.city_names: list[str] = [c for group in city_names for c in group]
        self._geography: frozenset[str] = frozenset([*country_names, *self.city_names])
        self.countries: list[Entity] = []
        self.cities: list[Entity] = []
        for country, cities in zip(country_names, city_names, strict=True):
            style = make_style("country", rng.randint(min_sentences, max_sentences), rng)
            self.countries.append(
                self.entity("country", rng, style, name=country, capital=cities[0])
            )
            for city in cities:
                style = make_style("city", rng.randint(min_sentences, max_sentences), rng)
                self.cities.append(self.entity("city", rng, style, name=city, country=country))

    # --- names --------------------------------------------------------------------------
    def _coin(self, rng: random.Random, syllables: int = 2, *, register: bool = True) -> str:
        """A coined word; registered ones never recur (in names, so names share no word).

        Filler words (prize, river and festival names) are not registered: they only need to
        sound alike, and registering them would exhaust the word space of large worlds sooner.
        """
        while True:
            n = len(_SYLLABLES)
            word = "".join([_SYLLABLES[int(rng.random() * n)] for _ in range(syllables)])
            word = word.capitalize()
            if not register:
                return word
            if word not in self._coined:
                self._coined.add(word)
                return word

    def _country_name(self, rng: random.Random) -> str:
        return self._coin(rng, 2) + _pick(rng, ("ia", "land", "ar", "", ""))

    def _unique(self, draw: Callable[[], str]) -> str:
        """Draw names until one is new (as ``text.normalize`` would compare it) and register it."""
        for _ in range(50):
            name = draw()
            if self._register(name):
                return name
        # Fifty collisions in a row only happen when a name list is exhausted; a numbered
        # variant is still a unique, readable name.
        base, n = draw(), 2
        while _name_key(f"{base} {n}") in self._names:
            n += 1
        self._names.add(_name_key(f"{base} {n}"))
        return f"{base} {n}"

    def _register(self, name: str) -> bool:
        """Register ``name`` if it is new; whether it was."""
        key = _name_key(name)
        if key in self._names:
            return False
        self._names.add(key)
        return True

    def new_name(self, kind: str, rng: random.Random) -> str:
        """A fresh, unique name for an entity of ``kind``."""
        return self._unique(lambda: self._draw_name(kind, rng))

    def _draw_name(self, kind: str, rng: random.Random) -> str:
        if kind == "person":
            return f"{self._coin(rng, 2)} {self._coin(rng, _pick(rng, (2, 2, 3)))}"
        if kind == "film":
            return self._film_name(rng)
        if kind == "band":
            return self._band_name(rng)
        if kind == "company":
            return f"{self._coin(rng, 2)} {_pick(rng, voc.COMPANY_SUFFIXES)}"
        if kind == "city":
            return self._coin(rng, _pick(rng, (2, 2, 3)))
        return self._country_name(rng)  # "country": KINDS come from the vocabulary, not a user

    def _film_name(self, rng: random.Random) -> str:
        adjective = _pick(rng, voc.ADJECTIVES).capitalize()
        noun = _pick(rng, voc.NOUNS).capitalize()
        pattern = rng.randrange(4)
        if pattern == 0:
            return f"The {adjective} {noun}"
        if pattern == 1:
            return f"{adjective} {noun}"
        if pattern == 2:
            return f"{noun} of {self._coin(rng, 2)}"
        return f"The {self._coin(rng, 2)} {noun}"

    def _band_name(self, rng: random.Random) -> str:
        plural = _pick(rng, voc.PLURAL_NOUNS).capitalize()
        if rng.random() < 0.5:
            return f"The {self._coin(rng, 2)} {plural}"
        return f"The {_pick(rng, voc.ADJECTIVES).capitalize()} {plural}"

    def near_name(self, kind: str, name: str, rng: random.Random) -> str:
        """A new unique name that shares one word with ``name`` and varies the others.

        The kept word is the surname of a person, else the name's coined word, else its first
        word; the varied word is replaced by another of its list ("The Silent Harbor" -> "The
        Silent Meadow", "Varlo Industries" -> "Varlo Holdings") or, when it is coined (a first
        name), by a fresh coined word ("Tavel Korrin" -> "Mira Korrin"). Replacing rather than
        altering keeps the cluster symmetric: the target's own varied word is as rare as each
        distractor's, so no lexical statistic singles the target out as the cluster's centre.
        A one-word name gets an ending instead ("Ventra" -> "Ventrao"). When a list is used up
        (popular words), the varied word becomes a fresh coined word.
        """
        tokens = name.split()
        editable = [i for i, t in enumerate(tokens) if t not in ("The", "of")]
        if len(editable) == 1:
            varied: list[int] = editable
        else:
            keep = editable[-1] if kind == "person" else _kept_word(tokens, editable)
            varied = [i for i in editable if i != keep]
        for attempt in range(50):
            new = list(tokens)
            i = _pick(rng, varied)
            if len(editable) == 1:
                new[i] = new[i] + _pick(rng, voc.NEAR_NAME_SUFFIXES + _SYLLABLES)
            else:
                new[i] = _replacement(new[i], rng, attempt < 10) or self._coin(
                    rng, 2, register=False
                )
            candidate = " ".join(new)
            if self._register(candidate):
                return candidate
        return self._unique(lambda: name)  # a numbered variant

    def near_entity(self, target: Entity, index: int, rng: random.Random, **attrs: str) -> Entity:
        """The ``index``-th near-name entity of ``target``, worded like it (``like_style``).

        Near names of the shared geography are themselves shared (one "Ventrao" per world, as
        one page per title in a corpus); without that, popular targets would use up their
        near names. Near names of other targets are made afresh.
        """
        if target.name not in self._geography:
            name = self.near_name(target.kind, target.name, rng)
            style = like_style(target.kind, target.style, rng)
            return self.entity(target.kind, rng, style, name=name, **attrs)
        made = self._near.setdefault(target.name, [])
        while len(made) <= index:
            name = self.near_name(target.kind, target.name, rng)
            style = like_style(target.kind, target.style, rng)
            made.append(self.entity(target.kind, rng, style, name=name, **attrs))
        return made[index]

    # --- entities -----------------------------------------------------------------------
    def random_city(self, rng: random.Random, avoid: Collection[str] = ()) -> str:
        while True:
            city = _pick(rng, self.city_names)
            if city not in avoid:
                return city

    def _fact_value(self, kind: str, field: str, rng: random.Random) -> str:
        """A random value of one typed fact (linked entities are named, not built)."""
        if field == "adjective":
            return _pick(rng, voc.LEAD_ADJECTIVES)
        if field == "year":
            low, high = _YEAR_RANGES[kind]
            return str(rng.randint(low, high))
        if field in ("director", "singer", "founder"):
            return self.new_name("person", rng)
        if field == "city":
            return self.random_city(rng)
        if field == "country":
            return _pick(rng, self.countries).name
        if field == "capital":
            return self.new_name("city", rng)
        if field == "genre":
            return _pick(rng, voc.FILM_GENRES if kind == "film" else voc.MUSIC_GENRES)
        return _pick(rng, _FACT_CHOICES[field])

    def entity(
        self,
        kind: str,
        rng: random.Random,
        style: Style,
        *,
        name: str | None = None,
        avoid: Collection[str] = (),
        **attrs: str,
    ) -> Entity:
        """Build an entity: random facts overridden by ``attrs``, its passage in ``style``.

        ``avoid`` lists names the fillers must not mention (the question's linking entity, so
        that the bridge names it only in its relation sentence).
        """
        values = dict(attrs)
        for field in _FACT_FIELDS[kind]:
            if field not in values:
                values[field] = self._fact_value(kind, field, rng)
        values["name"] = name if name is not None else self.new_name(kind, rng)
        values["short"] = values["name"].split()[-1] if kind == "person" else values["name"]
        facts = voc.FACTS[kind]
        templates = [facts[f][v] for f, v in zip(facts, style.variants, strict=True)]
        for filler in style.fillers:
            for field in _FILLER_FIELDS[kind][filler]:
                if field not in values:
                    values[field] = self._filler_value(field, values, rng, avoid)
            templates.append(voc.FILLERS[kind][filler])
        sentences = []
        for slot in style.order:
            sentence = templates[slot].format_map(values)
            if "a {" in templates[slot]:  # the only place where "a" may precede a vowel
                sentence = _A_BEFORE_VOWEL.sub(r"\1n ", sentence)
            sentences.append(sentence)
        return Entity(
            kind=kind,
            name=values["name"],
            attrs=values,
            style=style,
            passage=Passage.make(values["name"], sentences),
        )

    def _filler_value(
        self, field: str, values: Mapping[str, str], rng: random.Random, avoid: Collection[str]
    ) -> str:
        if field in ("year2", "year3"):
            if "year" not in values:
                return str(rng.randint(1800, 1990))
            return str(min(int(values["year"]) + rng.randint(3, 40), LAST_YEAR))
        if field == "coined":
            return self._coin(rng, 2, register=False)
        if field in ("other_person", "other_person2"):
            while True:  # unregistered, so it must not happen to be a name the passage avoids
                person = (
                    f"{self._coin(rng, 2, register=False)} {self._coin(rng, 2, register=False)}"
                )
                if person not in avoid:
                    return person
        if field == "other_city":
            return self.random_city(rng, avoid={*avoid, values["name"]})
        if field == "small_number":
            return str(rng.randint(2, 9))
        if field == "minutes":
            return str(rng.randint(80, 170))
        if field == "thousands":
            return f"{rng.randint(2, 900)},000"
        if field == "album":
            return f"{_pick(rng, voc.ADJECTIVES).capitalize()} {_pick(rng, voc.NOUNS).capitalize()}"
        if field in _FILLER_CHOICES:
            return _pick(rng, _FILLER_CHOICES[field])
        raise ValueError(f"toyworld vocabulary: filler field {{{field}}} has no provider")


def _pick(rng: random.Random, options: Sequence[T]) -> T:
    """``rng.choice`` without its bounds machinery (a third faster; the generator's hot path)."""
    return options[int(rng.random() * len(options))]


def _name_key(name: str) -> str:
    """``text.normalize`` for the ASCII names of this world (letters, digits, spaces), faster:
    lowercase, articles dropped. Two names with one key would be one name to every matcher."""
    return " ".join(w for w in name.lower().split() if w not in _ARTICLES)


_WORD_LISTS: tuple[tuple[str, ...], ...] = (
    tuple(w.capitalize() for w in voc.ADJECTIVES),
    tuple(w.capitalize() for w in voc.NOUNS),
    tuple(w.capitalize() for w in voc.PLURAL_NOUNS),
    voc.COMPANY_SUFFIXES,
)


def _kept_word(tokens: list[str], editable: list[int]) -> int:
    """The word a near name keeps: the first coined word (not in a word list), else the first."""
    for i in editable:
        if not any(tokens[i] in words for words in _WORD_LISTS):
            return i
    return editable[0]


def _replacement(token: str, rng: random.Random, from_list: bool) -> str | None:
    """Another word of ``token``'s list, or None (coined words, or ``from_list`` False)."""
    if from_list:
        for words in _WORD_LISTS:
            if token in words:
                return _pick(rng, [w for w in words if w != token])
    return None
