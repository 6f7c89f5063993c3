"""Name pools and deterministic name makers for generated worlds (no external data)."""

from __future__ import annotations

import functools
import random
import re

FIRST_NAMES = (
    "Alex Amira Ana Anders Anya Ari Ben Bianca Carlos Chen Chloe Dana Daniel Dara Diego Elena Eli Emma "
    "Erik Fatima Felix Freya Gabriel Hana Hugo Ines Ivan Jada Jonas Julia Kai Karim Kenji Lara Leila Leo "
    "Lina Luca Maya Marco Mei Mila Nadia Nate Nia Noah Nora Omar Oscar Priya Rafael Rania Ravi Rosa Sam "
    "Sara Sofia Tariq Theo Tomas Uma Vera Victor Wei Yara Yusuf Zane Zoe Aiko Bruno Cyrus Dmitri Esme "
    "Farah Gita Hamid Irene Joel Katya Lars Malik Nina Olga Pablo Quinn Reza Selin Tobias Ugo Vivian"
).split()

LAST_NAMES = (
    "Abbott Adeyemi Alvarez Andersen Bauer Becker Bianchi Brandt Castro Chen Costa Dahl Diaz Dubois Ek "
    "Fischer Fontaine Garcia Gomez Haas Hansen Ito Ivanova Jensen Kato Keller Khan Kim Kowalski Lang "
    "Larsen Lopez Martin Meyer Moreau Murphy Nakamura Nguyen Novak Okafor Olsen Park Patel Petrov Quinn "
    "Rossi Sato Schmidt Silva Singh Sorensen Suzuki Tanaka Torres Vogel Wagner Walsh Weber Wolf Yilmaz "
    "Zhang Ahmadi Berg Carter Duarte Engel Farouk Gallo Horvat Ibrahim Jovanovic Kaur Lindqvist Mendes"
).split()

# Organisation and event names start with a word of two of these ("Ral" + "ven": "Ralven AI Summit 2025").
SYLLABLES = (
    "al an ar bel bor cal dan del dor el en fal gar hal is kar kel lan lor mar mel nor or pal "
    "quin ral ren sal sel tar tor ul val ven war yor zel"
).split()

CITIES = (
    "Oslo Lisbon Porto Lyon Turin Krakow Tallinn Riga Vilnius Ghent Utrecht Aarhus Bergen Malmo Tampere "
    "Graz Brno Leipzig Dresden Bilbao Valencia Seville Naples Bologna Geneva Basel Zagreb Ljubljana "
    "Sofia Varna Izmir Haifa Tunis Accra Lagos Nairobi Kigali Durban Pune Kochi Hanoi Osaka Sendai Busan "
    "Taipei Cebu Perth Hobart Dunedin Quito Cusco Recife Montevideo Rosario Calgary Halifax Tucson Omaha"
).split()

COUNTRIES = {
    "Oslo": "Norway", "Bergen": "Norway", "Lisbon": "Portugal", "Porto": "Portugal", "Lyon": "France",
    "Turin": "Italy", "Naples": "Italy", "Bologna": "Italy", "Krakow": "Poland", "Tallinn": "Estonia",
    "Riga": "Latvia", "Vilnius": "Lithuania", "Ghent": "Belgium", "Utrecht": "Netherlands",
    "Aarhus": "Denmark", "Malmo": "Sweden", "Tampere": "Finland", "Graz": "Austria", "Brno": "Czechia",
    "Leipzig": "Germany", "Dresden": "Germany", "Bilbao": "Spain", "Valencia": "Spain", "Seville": "Spain",
    "Geneva": "Switzerland", "Basel": "Switzerland", "Zagreb": "Croatia", "Ljubljana": "Slovenia",
    "Sofia": "Bulgaria", "Varna": "Bulgaria", "Izmir": "Turkey", "Haifa": "Israel", "Tunis": "Tunisia",
    "Accra": "Ghana", "Lagos": "Nigeria", "Nairobi": "Kenya", "Kigali": "Rwanda", "Durban": "South Africa",
    "Pune": "India", "Kochi": "India", "Hanoi": "Vietnam", "Osaka": "Japan", "Sendai": "Japan",
    "Busan": "South Korea", "Taipei": "Taiwan", "Cebu": "Philippines", "Perth": "Australia",
    "Hobart": "Australia", "Dunedin": "New Zealand", "Quito": "Ecuador", "Cusco": "Peru",
    "Recife": "Brazil", "Montevideo": "Uruguay", "Rosario": "Argentina", "Calgary": "Canada",
    "Halifax": "Canada", "Tucson": "USA", "Omaha": "USA",
}

ORG_KINDS = "Labs Systems Group Media Partners Analytics Logistics Health Capital Works Studio Institute".split()
INDUSTRIES = "security fintech logistics health media energy robotics biotech retail education".split()
EVENT_TOPICS = "Security Data Cloud Privacy Robotics Design Fintech Health Climate Media Open-Source AI".split()
EVENT_KINDS = "Summit Meetup Conference Hackathon Forum Workshop Expo".split()
ADJECTIVES = "quiet swift amber silent lucky hidden bold rusty lunar crimson polar misty velvet".split()
ANIMALS = "fox owl lynx heron otter raven wolf hare crane moth badger falcon marten".split()
JOB_TITLES = "Engineer Analyst Designer Researcher Manager Consultant Developer Writer Director".split()


def generated_words() -> tuple[frozenset[str], frozenset[str]]:
    """The closed set of words a default-sized generated world writes: (words of names, titles,
    places and bios, as written after a space: ``Lina``, ``Ralven``, ``Malmo``, ``Summit``; the
    lowercase words handles are made of: ``lina``, ``brandt``, ``rusty``, ``heron``). Organisation
    and event names use every two-syllable word; worlds with more locations than `CITIES` name the
    rest with three syllables, which are left out (46,656 words). Tokenizers for small models add
    these as whole tokens, so an agent copies a name as one token per word, except that they split a
    two-syllable word into its `SYLLABLES` (`osint_eval.modeling`)."""
    title = set(FIRST_NAMES) | set(LAST_NAMES) | set(CITIES) | set(COUNTRIES.values()) | {"Freeland"}
    title |= set(ORG_KINDS) | set(EVENT_TOPICS) | set(EVENT_KINDS) | set(JOB_TITLES)
    title |= two_syllable_words()
    title |= {w.capitalize() for w in ADJECTIVES + ANIMALS}  # an unlisted account's display name: "Rusty Heron45"
    handle = {w.lower() for w in FIRST_NAMES + LAST_NAMES + ADJECTIVES + ANIMALS}
    words = {part for w in title for part in w.replace("-", " ").split()}
    return frozenset(words), frozenset(handle)


_CAPITALISED = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?![A-Za-z])")


@functools.cache
def two_syllable_words() -> frozenset[str]:
    """The 1,369 made-up words organisation and event names start with ("Ralven", "Palzel")."""
    return frozenset((a + b).capitalize() for a in SYLLABLES for b in SYLLABLES)


@functools.cache
def _two_syllable_sorted() -> tuple[str, ...]:
    return tuple(sorted(two_syllable_words()))


def rename_made_up_words(texts: list[str], rng: random.Random) -> list[str]:
    """``texts`` (one episode's messages) with each made-up two-syllable word replaced by another one
    drawn by ``rng``, the same word by the same word throughout, no two by one, none by a word the
    texts already hold: the episode of a world whose organisations and events had those names.

    Why (osint-selfplay's ``warm_start.rename_words``): a world writes a few dozen of the 1,369
    words (the main job's 32 training worlds write 860; 14 of the 42 of the v0:test world are not
    among them), and a held-out question naming one of those failed 94 times in 97
    (`osint_eval.modeling.pretokenize_pattern`)."""
    pool = two_syllable_words()
    present = dict.fromkeys(w for t in texts for w in _CAPITALISED.findall(t))  # in order of first use
    found = [w for w in present if w in pool]
    if not found:
        return list(texts)
    fresh = rng.sample([w for w in _two_syllable_sorted() if w not in present], len(found))
    mapping = dict(zip(found, fresh))
    return [_CAPITALISED.sub(lambda m: mapping.get(m.group(0), m.group(0)), t) for t in texts]


def syllable_word(rng: random.Random, n: int = 2) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(n)).capitalize()


class UniqueNamer:
    """Hands out names that are unique within one world, deterministically from an rng."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, candidate: str, rng: random.Random, suffixes: tuple[str, ...] = ()) -> str:
        name = candidate
        attempt = 0
        while name.lower() in self.used:
            attempt += 1
            extra = rng.choice(suffixes) if suffixes and attempt < 4 else str(rng.randint(2, 9999))
            name = f"{candidate} {extra}" if not suffixes else f"{candidate}{extra}"
        self.used.add(name.lower())
        return name


def handle_variants(first: str, last: str) -> list[str]:
    f, l_ = first.lower(), last.lower()
    return [f + l_, f"{f}.{l_}", f"{f}_{l_}", f[0] + l_, l_ + f[0], f"{l_}.{f}", f"{f}{l_[:3]}"]


def lookalike(handle: str, rng: random.Random) -> str:
    """A decoy handle that a careless reader takes for the real one."""
    tricks = (
        lambda h: h.replace("l", "1", 1) if "l" in h else h + "_",
        lambda h: h.replace("o", "0", 1) if "o" in h else "_" + h,
        lambda h: h + "_real",
        lambda h: h + "official",
        lambda h: h.replace(".", "_") if "." in h else h[:1] + "_" + h[1:],
        lambda h: h + "_",
    )
    return rng.choice(tricks)(handle)
