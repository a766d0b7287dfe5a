"""Mentions: the people, animals and things a sentence names, as a later pronoun may point
back to them ("my grandmother", "Biscuit", "the truck", "The Dune Series").

A mention keeps the words the sentence used (``my late mother``, ``a job at a bike shop``);
``core.extract.coreference`` turns them into the words of whoever refers to them later.
Nothing here guesses: a name whose kind is unknown is a person of unknown gender, and words
that are only sometimes names (holidays, months) are never mentions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from memstream.core.calendar_words import MONTH_NAMES, WEEKDAYS
from memstream.core.extract.entities import TECH, find_entities
from memstream.core.extract.filler import FILLER_WORDS
from memstream.core.extract.gates import wordset
from memstream.core.extract.slots import JOBS
from memstream.core.signal_tables.words import COMMON_WORDS, STOPWORDS

Kind = Literal["person", "animal", "thing", "place"]
Gender = Literal["m", "f", ""]


@dataclass(frozen=True, slots=True)
class Mention:
    text: str  # as said: "my late mother", "Biscuit", "the truck"
    kind: Kind
    gender: Gender
    plural: bool
    start: int  # where it begins in the sentence (earlier is likelier the topic)

    @property
    def animate(self) -> bool:
        return self.kind in ("person", "animal")


_MALE = wordset("""brother father dad daddy son husband boyfriend grandfather grandpa granddad uncle
    nephew fiance fiancé boy guy man gentleman grandson stepfather stepson stepdad king""")
_FEMALE = wordset("""sister mother mom mum mommy mummy daughter wife girlfriend grandmother grandma
    granny aunt niece fiancee fiancée girl woman lady granddaughter stepmother stepdaughter
    stepmom queen""")
_PEOPLE = (
    wordset("""partner spouse friend bestie colleague coworker co-worker boss manager mentor
    roommate neighbor neighbour cousin kid child baby toddler teen teenager
    landlord landlady therapist coach teacher doctor surgeon dentist vet nurse sibling parent
    grandparent stepparent advisor adviser supervisor classmate teammate bandmate housemate
    flatmate lecturer trainer drummer guitarist bassist patient employee""")
    | frozenset(JOBS.split("|"))
) - {"lead", "owner", "assistant", "producer"}
_ANIMALS = wordset("""dog puppy pup cat kitten kitty pet horse pony greyhound retriever beagle poodle
    labrador lab terrier spaniel collie husky corgi pug shepherd bulldog bird parrot budgie
    rabbit bunny hamster guinea tortoise turtle fish goldfish snake lizard gecko chicken hen
    goat cow pig""")
_GROUPS = wordset("""parents kids children friends family grandparents folks neighbors neighbours
    coworkers colleagues team twins cousins siblings guys""")
_NOUNS = _MALE | _FEMALE | _PEOPLE | _ANIMALS
_PLURALS = {w + "s" for w in _NOUNS if not w.endswith("s")} | {"children", "people"} | _GROUPS

# Words that end a noun phrase: it names a thing up to here.
_STOP = wordset("""named called and or but nor so because if when while than then that which who whom whose
    is are was were be been being am will would can could should shall may might must do does did
    have has had having to for with by from about into onto over under after before during since
    until till at on in of as like i me you he him she her it its we us they them this these those
    there here not no very really just also too already still even now again ever never always
    up down out off away back along around maybe probably some any all both each every more most
    much many few less such what how why where yes ok okay please thanks my your our his their
    a an the one
    seems seem seemed looks look looked sounds sound sounded feels feel felt gets get got goes
    go went has makes make made turns turned wants want wanted needs need says said takes took
    comes came works worked lives lived loves loved likes liked hates hated helps helped keeps
    kept gives gave starts started won lost ran runs sleeps slept eats ate""")
_DETERMINERS = ("the", "a", "an", "my", "our", "your", "this", "that", "these", "those", "some")
_LINKS = frozenset({"of", "at", "from", "on", "in"})  # one prepositional phrase is kept
# Verbs whose bare object is what a later "it" or "they" means ("start with coin toss problems").
_OBJECT_CUE = re.compile(
    r"\b(?:go(?:ing)? with|went with|stick(?:ing)? with|start(?:ing)? with|chose|choose|picked|pick|"
    r"try|tried|bought|buy|use|using|prefer|recommend|suggest|switch(?:ed)? to)\s+(?=[a-z])",
    re.I,
)
_TOKEN = re.compile(r"[\w'’.+#-]*[\w+#]|[^\w\s]")
_QUOTED = re.compile(r"\"([^\"]{2,60})\"")
# Capitalised words that are never the person or thing a pronoun means.
_NOT_MENTIONED = wordset("""christmas easter thanksgiving halloween hanukkah diwali eid ramadan eve
    day new year years valentine's valentine mother's father's god lol omg ok okay yes no""")
_PLACE_WORDS = wordset("""in to from at near into around visit visiting visited through across
    toward towards via""")
_ORG_ENDS = wordset("""center centre hub school university college library park street st avenue
    road cafe café restaurant hospital inc ltd llc company co corp bank club hotel museum lake
    river beach island city county lagoon studio studios awards festival series store shop
    market mall church academy institute gallery theater theatre stadium airport station
    bar grill bakery app platform""")
_ALL_CAPS_NAME = re.compile(r"^[A-Z0-9&.-]{2,}$")
# What may follow a name that opens a sentence ("Jonah got a job", "Noor and I").
_NAME_VERBS = wordset("""got gets is was has had and said says went goes came comes took made
    wants loves likes hates started starts won moved lives lived works worked just finally
    already never always also still called texted asked told will would can could should
    might must""")
_ABSTRACT = wordset("""way ways thing things time times lot lots bit kind sort fact idea ideas
    point chance while moment one ones stuff question questions reason sense approach option
    options start plan side""")
_ING_NOUNS = wordset("""training meeting wedding building morning evening painting drawing
    clothing housing rating reading writing setting feeling ceiling booking parking hearing
    recording offering savings earnings listing opening ending filling frosting icing
    stuffing dressing seating lighting flooring plumbing roofing wiring funding""")
_CALENDAR = frozenset(w.lower() for w in (*MONTH_NAMES, *WEEKDAYS))
# a time said as a noun phrase ("in the fall", "over the weekend") is when, not a thing
_TIMES = wordset("""spring summer fall autumn winter weekend weekends morning mornings afternoon
    evening evenings night nights holidays""")
_TIME_LINKS = wordset("in on at during over for by until till this next last that")
# Kin words used as names ("Dad", "Grandma"), their gender known.
_KIN_NAMES = wordset("mom mum mommy mummy dad daddy grandma granny grandpa granddad")
_NOT_NAME_WORDS = (
    COMMON_WORDS
    | STOPWORDS
    | FILLER_WORDS
    | wordset("""does did would could should
    can will may might must shall has have had is are was were do""")
)


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    start: int
    low: str


def _tokens(text: str) -> list[_Token]:
    return [_Token(m.group(), m.start(), m.group().lower()) for m in _TOKEN.finditer(text)]


def _noun_gender(word: str) -> tuple[Kind, Gender, bool] | None:
    """(kind, gender, plural) of a relation or animal noun, else None."""
    w = word.lower()
    plural = w in _PLURALS
    if plural:
        w = "child" if w == "children" else "person" if w == "people" else w[:-1]
    if w in _MALE:
        return "person", "m", plural
    if w in _FEMALE:
        return "person", "f", plural
    if w in _ANIMALS:
        return "animal", "", plural
    if w in _PEOPLE or w in _GROUPS or w + "s" in _GROUPS or w == "person":
        return "person", "", plural or (w + "s" in _GROUPS and w not in _PEOPLE)
    return None


def _phrase(toks: list[_Token], i: int) -> tuple[int, int]:
    """The noun phrase after a determiner at ``i``: (i, end) token indices. It ends at a
    word that cannot be in it, at a relation noun ("my grandmother turns 90") or after four
    words; one prepositional phrase is kept ("a job at a bike shop")."""
    end = _words_until(toks, i + 1, 4)
    if (
        end > i + 1
        and end + 1 < len(toks)
        and toks[end].low in _LINKS
        and (toks[end + 1].low in _DETERMINERS or toks[end + 1].text[:1].isupper())
        and toks[end + 1].low not in _CALENDAR  # "your ladder on Saturday": the ladder
    ):
        k = end + 1 + (toks[end + 1].low in _DETERMINERS)
        m = _words_until(toks, k, 3)
        if m > k:
            end = m
    # trailing participles and adverbs describe, they do not name ("the truck coming"); a
    # noun in -ing does ("my instrument rating training")
    while (
        end > i + 2
        and toks[end - 1].low.endswith(("ing", "ly", "ed"))
        and toks[end - 1].low not in _ING_NOUNS
    ):
        end -= 1
    return i, end


def _words_until(toks: list[_Token], j: int, most: int) -> int:
    start = j
    while j < len(toks) and j - start < most and _content(toks[j]):
        if (
            j > start
            and toks[j].low.endswith("ing")
            and (j + 1 == len(toks) or not _content(toks[j + 1]))
        ):
            break  # "the science department starting in August", not "my reading list"
        if j > start and _plural(toks[j - 1].text) and not _plural(toks[j].text):
            break  # "the urchins win": a verb after a plural noun
        j += 1
        if _noun_gender(toks[j - 1].low) is not None and (
            j == len(toks) or _noun_gender(toks[j].low) is None
        ):
            break  # "my grandmother" ends there ("a beagle puppy" at "puppy")
    return j


def _content(tok: _Token) -> bool:
    return tok.low not in _STOP and tok.text[:1].isalnum()


def _plural(words: str) -> bool:
    last = words.rsplit(None, 1)[-1].lower().strip("'’")
    return (
        last in _PLURALS
        or (last.endswith("s") and not last.endswith(("ss", "us", "is", "'s", "’s")))
        or " and " in words
    )


def mentions(
    sentence: str, known: tuple[str, ...] = (), names: frozenset[str] = frozenset()
) -> tuple[Mention, ...]:
    """The mentions of one sentence, in order of where they start; ``known`` are speaker
    names (always people), ``names`` words seen capitalised inside a sentence of the session
    (casefolded): a sentence may start with one of them ("Jonah got a job")."""
    out: list[Mention] = []
    quoted: list[tuple[int, int]] = []
    seen: set[tuple[int, str]] = set()

    def add(m: Mention, end: int) -> None:
        # mentions may nest ("a photo of Maya"), but not inside a quoted title
        if (m.start, m.text) in seen or any(a <= m.start < b for a, b in quoted):
            return
        seen.add((m.start, m.text))
        out.append(m)

    for q in _QUOTED.finditer(sentence):
        add(Mention(q.group(1).strip(), "thing", "", _plural(q.group(1)), q.start(1)), q.end())
        quoted.append((q.start(), q.end()))
    toks = _tokens(sentence)
    named = _named_kinds(sentence, toks, known, names)
    for start, end, kind, gender, plural in named:
        add(Mention(sentence[start:end], kind, gender, plural, start), end)
    name_starts = {start for start, *_ in named}
    for start, end, *_ in named:
        owned = _owned_relation(sentence, toks, start, end)
        if owned is not None:
            add(owned, owned.start + len(owned.text))
    for i, tok in enumerate(toks):
        if tok.low not in _DETERMINERS and not (
            tok.low in ("few", "couple") and i and toks[i - 1].low == "a"
        ):
            continue
        first, end = _phrase(toks, i)
        if end <= first + 1:
            continue
        det_start = toks[i - 1].start if tok.low in ("few", "couple") else tok.start
        # a name right after is the same one ("my dog Max", "a greyhound named Comet")
        after = end + (end < len(toks) and toks[end].low in ("named", "called"))
        if after < len(toks) and toks[after].start in name_starts:
            continue
        for k in range(first + 1, end - 1):
            owner = toks[k].low.removesuffix("'s").removesuffix("’s")
            found = _noun_gender(owner) if owner != toks[k].low else None
            if found is not None:  # "my late mother's recipe": the mother too
                stop = toks[k].start + len(owner)
                add(
                    Mention(sentence[det_start:stop], found[0], found[1], found[2], det_start), stop
                )
        head = toks[end - 1]
        if (
            head.low in _TIMES
            and end == first + 2
            and (tok.low in _TIME_LINKS or (i and toks[i - 1].low in _TIME_LINKS))
        ):
            continue
        if head.low in _ABSTRACT or (end < len(toks) and toks[end].low in ("one", "ones")):
            # "that way", "a good idea": nothing a pronoun points back to; "a small one"
            # is no "small"
            continue
        said = _NounInfo.of(toks, first + 1, end)
        stop = head.start + len(head.text)
        add(Mention(sentence[det_start:stop], said.kind, said.gender, said.plural, det_start), stop)
    for cue in _OBJECT_CUE.finditer(sentence):
        i = next((k for k, t in enumerate(toks) if t.start >= cue.end()), len(toks))
        if (
            i >= len(toks)
            or not _content(toks[i])
            or toks[i].low in _DETERMINERS
            or toks[i].low.endswith("ing")  # "tried using the attribute": not a thing
        ):
            continue
        first, end = _phrase(toks, i - 1)
        if end <= i:
            continue
        head = toks[end - 1]
        said = _NounInfo.of(toks, i, end)
        add(
            Mention(sentence[toks[i].start : head.start + len(head.text)], said.kind, said.gender,
                    said.plural, toks[i].start),
            head.start + len(head.text),
        )  # fmt: skip
    return tuple(sorted((_gendered(m, sentence) for m in out), key=lambda m: m.start))


# "the landlord changed his mind", "Mia loves her new job": the possessive right after a
# person's verb says who they are; "gave her a book" is an object, not hers
_OWN_AFTER = re.compile(
    r"\s+(?:[a-z]+\s+){1,2}?(?:(his)|(her)(?!\s+(?:a|an|the|to|for|with|in|on|at|and|that|this)\b)\s+[a-z])"
)


def _gendered(m: Mention, sentence: str) -> Mention:
    if m.gender or not m.animate or m.plural:
        return m
    found = _OWN_AFTER.match(sentence, m.start + len(m.text))
    if found is None:
        return m
    return replace(m, gender="m" if found.group(1) else "f")


def _owned_relation(sentence: str, toks: list[_Token], start: int, end: int) -> Mention | None:
    """ "Kai's cousin", "Mia's little dog": a relation or animal noun owned by the name at
    ``start:end``, a mention of its own ("Did Kai's cousin join?" - "He did": the cousin)."""
    if sentence[end : end + 2] not in ("'s", "’s"):
        return None
    k = next((i for i, t in enumerate(toks) if t.start > end), len(toks))
    for i in range(k, min(k + 2, len(toks))):  # one adjective may come first ("older")
        found = _noun_gender(toks[i].low)
        if found is not None:
            stop = toks[i].start + len(toks[i].text)
            return Mention(sentence[start:stop], found[0], found[1], found[2], start)
        if not toks[i].low.isalpha() or toks[i].low in _LINKS:
            return None
    return None


@dataclass(frozen=True, slots=True)
class _NounInfo:
    kind: Kind
    gender: Gender
    plural: bool

    @staticmethod
    def of(toks: list[_Token], first: int, end: int) -> _NounInfo:
        """What the words toks[first:end] name: the first relation or animal noun among them
        decides (the head may come before a prepositional phrase)."""
        for tok in toks[first:end]:
            if tok.low in _LINKS:
                break
            found = _noun_gender(tok.low)
            if found is not None:
                return _NounInfo(*found)
        words = " ".join(t.text for t in toks[first:end])
        return _NounInfo("thing", "", _plural(words))


def _opening_name(toks: list[_Token], known: frozenset[str], names: frozenset[str]) -> str | None:
    """The sentence's first word when it is a name, which capitals alone cannot tell: a
    speaker, a word seen capitalised inside a sentence of the session, or one followed by
    "'s" ("Leo's team") or set off as "Maple, our golden retriever"."""
    if not toks or not toks[0].text[:1].isupper():
        return None
    word = toks[0].text.removesuffix("'s").removesuffix("’s")
    if not word.isalpha():
        return None
    low = word.casefold()
    if low in _KIN_NAMES:
        return word  # "Dad would be proud"
    if len(word) < 2 or low in _STOP or low in _NOT_MENTIONED or low in _NOT_NAME_WORDS:
        return None
    if low in known or low in names or toks[0].low.endswith(("'s", "’s")) or low in _KIN_NAMES:
        return word
    if len(toks) > 1 and toks[1].low in _NAME_VERBS and not low.endswith(("ing", "ly", "ed")):
        return word  # "Jonah got a job", "Noor and I"
    if len(toks) > 2 and toks[1].text == "," and toks[2].low in _DETERMINERS:
        return word
    return None


def _named_kinds(
    sentence: str, toks: list[_Token], known: tuple[str, ...], names: frozenset[str]
) -> list[tuple[int, int, Kind, Gender, bool]]:
    """Names of the sentence with their span and what they are, as far as the words around
    them tell: a place after "in"/"to", an animal or person after "named", a relation noun
    beside them ("my sister Ana", "Maple, our golden retriever")."""
    out: list[tuple[int, int, Kind, Gender, bool]] = []
    known_fold = frozenset(k.casefold() for k in known)
    cursor = 0
    found = list(find_entities(sentence, known))
    opening = _opening_name(toks, known_fold, names)
    if opening is not None and opening.casefold() not in {f.casefold() for f in found}:
        found.insert(0, opening)
    for entity in found:
        words = entity.split()
        while words and (words[0].lower() in _STOP or words[0].lower() in _NOT_NAME_WORDS):
            words.pop(0)  # "Would Noor" at the start of a question is Noor
        name = " ".join(words)
        if not name or any(w.lower() in _NOT_MENTIONED for w in words):
            continue
        start = sentence.find(name, cursor)
        if start < 0:
            start = sentence.find(name)
            if start < 0:
                continue
        end = start + len(name)
        cursor = end
        before = sentence[:start].rstrip().rsplit(None, 2)
        prev = before[-1].lower().strip(",") if before else ""
        prev2 = before[-2].lower() if len(before) > 1 else ""
        last = name.rsplit(None, 1)[-1].lower()
        kind: Kind = "person"
        gender: Gender = ""
        if name.casefold() in known_fold:
            kind = "person"
        elif prev in _DETERMINERS:
            kind = "thing"  # people are not "the Adidas Ultraboosts" or "my Ultraboost"
        elif (
            name.lower() in TECH
            or name in TECH.values()
            or _ALL_CAPS_NAME.match(name)
            or last in _ORG_ENDS
        ):
            kind = "thing"
        elif prev in _PLACE_WORDS:
            kind = "place"
        kin = _noun_gender(name.lower()) if name.lower() in _KIN_NAMES else None
        if kin is not None:
            kind, gender = kin[0], kin[1]
        relation = _relation_beside(sentence, start, end)
        if relation is not None and name.casefold() not in known_fold:
            kind, gender = relation
        if prev in ("named", "called") or prev2 in ("named", "called"):
            kind = kind if kind in ("person", "animal") else "person"
            if prev in ("him", "her"):
                gender = "m" if prev == "him" else "f"
        own = re.search(r"\b(his|her) name is\s*$", sentence[:start], re.I)
        if own:
            gender = "m" if own.group(1).lower() == "his" else "f"
        out.append((start, end, kind, gender, False))
    return out


def relation_noun(word: str) -> bool:
    """Whether ``word`` names a relation or an animal ("daughter", "boss", "dog")."""
    return _noun_gender(word) is not None


def _relation_beside(sentence: str, start: int, end: int) -> tuple[Kind, Gender] | None:
    """A relation or animal noun right before a name ("my sister Ana", "a greyhound named
    Comet") or right after it, set off by a comma ("Maple, our golden retriever")."""
    before = sentence[max(0, start - 60) : start].split()
    for word in reversed(before[-4:]):
        w = word.lower().strip(",")
        if w in ("named", "called"):
            continue
        found = _noun_gender(w)
        if found is not None:
            return found[0], found[1]
        if w in _STOP and w not in _DETERMINERS:
            break
    after = sentence[end : end + 60]
    if after.startswith(","):
        words = after[1:].split()
        if words and words[0].lower() in _DETERMINERS:
            for word in words[1:5]:
                found = _noun_gender(word.lower().strip(",.!?"))
                if found is not None:
                    return found[0], found[1]
                if word.lower() in _STOP:
                    break
    return None
