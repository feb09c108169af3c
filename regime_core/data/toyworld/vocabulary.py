"""Word lists and sentence templates of the synthetic world (all invented for this project).

Names are coined from syllables so that no dataset text enters the repository; common English
words (adjectives, nouns, genres) only fill the templates. Each entity kind has *facts* (the
sentences that carry a typed relation, one template variant chosen per passage) and *fillers*
(sentences about the entity that no question asks about). Placeholders are ``str.format`` fields
filled from the entity's attributes (see ``world.py``).
"""

from __future__ import annotations

# --- coined names ---------------------------------------------------------------------------
ONSETS: tuple[str, ...] = (
    "b", "br", "d", "f", "g", "h", "j", "k", "kr", "l", "m", "n", "p", "r", "s", "st", "t",
    "th", "tr", "v", "z",
)  # fmt: skip
VOWELS: tuple[str, ...] = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ou")
CODAS: tuple[str, ...] = ("", "", "", "", "n", "r", "l", "s", "m", "nd")

# Endings that turn a coined stem into a near name ("Korrin" -> "Korrinsen").
NEAR_NAME_SUFFIXES: tuple[str, ...] = ("sen", "a", "er", "ov", "ine", "o", "is", "ham")

# --- English fill words ---------------------------------------------------------------------
ADJECTIVES: tuple[str, ...] = (
    "silent", "golden", "broken", "hidden", "distant", "crimson", "quiet", "burning", "frozen",
    "wild", "hollow", "bright", "last", "lonely", "northern", "secret", "velvet", "iron",
    "painted", "sleeping", "restless", "silver", "bitter", "endless", "fading", "gentle",
    "hungry", "lucky", "pale", "rapid", "stolen", "sudden", "tender", "wandering", "winter",
)  # fmt: skip
NOUNS: tuple[str, ...] = (
    "harbor", "garden", "mirror", "river", "lantern", "window", "bridge", "shadow", "orchard",
    "tower", "island", "letter", "compass", "violin", "meadow", "engine", "feather", "signal",
    "station", "kingdom", "voyage", "theater", "circus", "lighthouse", "forest", "crown",
    "horizon", "storm", "tide", "canyon", "citadel", "carnival", "archive", "frontier",
)  # fmt: skip
PLURAL_NOUNS: tuple[str, ...] = (
    "lanterns", "ravens", "pilots", "wolves", "sparrows", "engines", "comets", "saints",
    "echoes", "giants", "drifters", "tigers", "mirrors", "rebels", "strangers", "owls",
)  # fmt: skip
LEAD_ADJECTIVES: tuple[str, ...] = (
    "celebrated", "prominent", "popular", "little-known", "influential", "award-winning",
    "independent", "acclaimed", "respected", "modest",
)  # fmt: skip
COMPANY_SUFFIXES: tuple[str, ...] = (
    "Industries", "Holdings", "Systems", "Works", "Group", "Labs", "Motors", "Foods",
    "Textiles", "Logistics", "Dynamics", "Partners",
)  # fmt: skip

FILM_GENRES: tuple[str, ...] = (
    "drama", "comedy", "thriller", "western", "musical", "horror", "science fiction", "war",
    "romance", "mystery", "documentary", "adventure",
)  # fmt: skip
MUSIC_GENRES: tuple[str, ...] = (
    "rock", "folk", "jazz", "punk", "pop", "blues", "soul", "electronic", "metal", "country",
)  # fmt: skip
INDUSTRIES: tuple[str, ...] = (
    "shipping", "software", "textile", "mining", "food", "automotive", "chemical", "banking",
    "publishing", "aviation", "steel", "retail",
)  # fmt: skip
OCCUPATIONS: tuple[str, ...] = (
    "film director", "singer", "entrepreneur", "painter", "novelist", "architect",
    "sculptor", "chemist", "poet", "engineer",
)  # fmt: skip
CITY_KINDS: tuple[str, ...] = ("port", "market", "river", "mountain", "university", "industrial")
COUNTRY_KINDS: tuple[str, ...] = ("landlocked", "coastal", "mountainous", "island", "small")
FIELDS: tuple[str, ...] = ("Arts", "Music", "Sciences", "Design", "Letters", "Engineering")
CRAFTS: tuple[str, ...] = ("editing", "cinematography", "screenplay", "sound", "costume design")
ASPECTS: tuple[str, ...] = ("pacing", "photography", "dialogue", "score", "performances")

# --- sentence templates ---------------------------------------------------------------------
# Every kind has a "lead" fact (what the entity is). The relation facts are the ones questions
# ask about; a question's relation sentence is one of these.
FACTS: dict[str, dict[str, tuple[str, ...]]] = {
    "person": {
        "lead": (
            "{name} is a {occupation}.",
            "{name} is a {adjective} {occupation}.",
            "{name} is a {occupation} and teacher.",
        ),
        "born": (
            "{name} was born in {city} in {year}.",
            "{name} was born in {year} in the city of {city}.",
            "In {year}, {name} was born in {city}.",
        ),
    },
    "film": {
        "lead": (
            "{name} is a {genre} film.",
            "{name} is a {adjective} {genre} film.",
            "{name} is a feature-length {genre} film.",
        ),
        "directed_by": (
            "{name} was directed by {director}.",
            "The film was directed by {director}.",
            "{director} directed the film {name}.",
        ),
        "released": (
            "{name} was released in {year}.",
            "The film premiered in {year}.",
            "It was first shown in cinemas in {year}.",
        ),
    },
    "band": {
        "lead": (
            "{name} are a {genre} band.",
            "{name} is a {genre} group.",
            "{name} are a {adjective} {genre} band.",
        ),
        "formed_in": (
            "{name} were formed in {city} in {year}.",
            "The band formed in {city} in {year}.",
            "{name} was founded in {year} in {city}.",
        ),
        "lead_singer": (
            "The band is fronted by {singer}.",
            "{singer} is the lead singer of {name}.",
            "Its lead vocalist is {singer}.",
        ),
    },
    "company": {
        "lead": (
            "{name} is a {industry} company.",
            "{name} is a {adjective} {industry} firm.",
            "{name} is a {industry} business.",
        ),
        "founded_by": (
            "{name} was founded by {founder} in {year}.",
            "The company was established in {year} by {founder}.",
            "{founder} founded {name} in {year}.",
        ),
        "headquartered_in": (
            "{name} is headquartered in {city}.",
            "Its headquarters are in {city}.",
            "The company is based in {city}.",
        ),
    },
    "city": {
        "lead": (
            "{name} is a {city_kind} city.",
            "{name} is a {adjective} {city_kind} town.",
            "{name} is an old {city_kind} city.",
        ),
        "located_in": (
            "{name} is located in {country}.",
            "The city lies in {country}.",
            "{name} is a city in {country}.",
        ),
    },
    "country": {
        "lead": (
            "{name} is a {country_kind} country.",
            "{name} is a {adjective} {country_kind} state.",
            "{name} is a {country_kind} republic.",
        ),
        "capital": (
            "Its capital is {capital}.",
            "The capital of {name} is {capital}.",
            "{capital} is the capital of {name}.",
        ),
    },
}

# Fillers: facts about the entity that no question asks about. They may name other (invented)
# people or places, as real Wikipedia paragraphs do, which is what makes the whole bridge a
# noisier query than its relation sentence alone.
FILLERS: dict[str, tuple[str, ...]] = {
    "person": (
        "{short} studied at the {coined} Academy of {field}.",
        "{short} married {other_person} in {year2}.",
        "{short} received the {coined} Prize in {year3}.",
        "{short} has lived in {other_city} since {year2}.",
        "The early work of {short} was influenced by {other_person}.",
        "{short} is known for a {adjective2} style.",
    ),
    "film": (
        "The film was shot in {other_city} over {small_number} weeks.",
        "Its score was composed by {other_person}.",
        "The film stars {other_person} and {other_person2}.",
        "It won the {coined} Award for best {craft}.",
        "The film runs {minutes} minutes.",
        "Critics praised its {adjective2} {aspect}.",
    ),
    "band": (
        "Their debut album, {album}, appeared in {year2}.",
        "The group has released {small_number} studio albums.",
        "They toured {other_city} in {year3}.",
        "Their drummer is {other_person}.",
        "The band signed with {coined} Records in {year2}.",
        "Critics called their sound {adjective2}.",
    ),
    "company": (
        "It employs about {thousands} people.",
        "The firm reported revenue of {small_number}00 million in {year2}.",
        "Its chief executive is {other_person}.",
        "It opened a branch in {other_city} in {year3}.",
        "{short} is listed on the {coined} Exchange.",
        "The company is known for its {adjective2} products.",
    ),
    "city": (
        "It has a population of about {thousands} people.",
        "The city stands on the {coined} River.",
        "{short} was founded in {year2}.",
        "Its main square is named after {other_person}.",
        "The city hosts the annual {coined} Festival.",
        "{short} is twinned with {other_city}.",
    ),
    "country": (
        "Its official language is {coined}ic.",
        "It has a population of about {small_number} million.",
        "{short} became independent in {year2}.",
        "Its currency is the {coined}.",
        "The highest peak is Mount {coined}.",
        "{short} is known for its {adjective2} landscapes.",
    ),
}
