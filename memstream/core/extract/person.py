"""First- and second-person wording rewritten to the third person ("I love" -> "Ann loves")."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from memstream.core.extract.gates import Gates, gate, words_of, wordset

ADVERB = (
    r"(?:(?:really|also|just|usually|always|never|often|sometimes|recently|finally|still|actually|absolutely|"
    r"totally|definitely|mostly|only|even|already|generally|rarely|seldom|truly|honestly|personally|currently|"
    r"now|no longer|kind of|sort of|kinda|sorta|mainly|primarily|occasionally|normally|typically|frequently|"
    r"regularly|certainly|probably|basically|literally|seriously|officially|eventually|initially|originally|"
    r"once|then|first|too|both|all|absolutely|strongly|deeply|badly|simply|somehow|again|hardly|barely|"
    r"particularly|especially|genuinely|almost|nearly|ever|soon|suddenly|quickly|slowly|happily|"
    r"gladly|secretly|immediately|completely|fully|partly|luckily|thankfully|proudly)\s+)"
)
PAST_OR_FIXED = wordset("""was were went got had made took saw bought began ran met left felt found gave knew thought told became
    came wrote spent sold won lost built taught brought said heard kept held sat stood understood paid sent
    drove rode flew grew threw drew ate fell forgot chose broke spoke woke wore tore froze hid bit caught
    fought sought slept swam sang rang drank shook stole struck lent bent burnt learnt dreamt meant put cut
    hit set let quit read hurt cost shut spread upset led fled fed bred shed sped dealt dug hung lit slid spun
    stuck swung won wound did can could will would shall should may might must ought used""")
# Words that can follow a subject pronoun without being its verb ("my sister and I too").
_NOT_VERB = wordset("""and or but nor too alone here there to with in on at for of from myself yourself not who that which
    as than when if so because also really just usually always never often sometimes recently finally still
    actually only even already now then once both all personally""")
# past tenses of verbs in "-ee" ("agree"): not the present of a verb in "-eed" ("need")
_PAST_EED = wordset("agreed disagreed freed guaranteed decreed refereed emceed pureed")
_THIRD_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_NEGATIONS = {
    "don't": "does not",
    "do not": "does not",
    "didn't": "did not",
    "can't": "cannot",
    "cannot": "cannot",
    "won't": "will not",
    "wouldn't": "would not",
    "couldn't": "could not",
    "shouldn't": "should not",
    "haven't": "has not",
    "have not": "has not",
    "hadn't": "had not",
    "wasn't": "was not",
    "weren't": "was not",
    "aren't": "is not",
    "ain't": "is not",
}


# "rewrote", "overslept", "mistook", "withdrew": a prefix on an irregular past tense
_PAST_PREFIXES = ("re", "over", "under", "mis", "out", "with", "fore", "up")


def _prefixed_past(low: str) -> bool:
    return any(
        low.startswith(p) and len(low) - len(p) >= 3 and low[len(p) :] in PAST_OR_FIXED
        for p in _PAST_PREFIXES
    )


def past_tense(low: str) -> bool:
    """A lower-case verb form that is past (or fixed: a modal): "went", "rewrote", "tried"."""
    return (
        low in PAST_OR_FIXED
        or _prefixed_past(low)
        or (low.endswith("ed") and (not low.endswith("eed") or low in _PAST_EED))
    )


def third_person_verb(verb: str) -> str:
    """'love' -> 'loves', 'study' -> 'studies'; past tense and modals stay as they are."""
    low = verb.lower()
    if low in _THIRD_IRREGULAR:
        return _THIRD_IRREGULAR[low]
    if not low.isalpha() or past_tense(low) or low in _NOT_VERB:
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


@dataclass(frozen=True, slots=True)
class _Person:
    """The pronoun forms of one grammatical person, for rewriting to a name."""

    subject: str  # "I" or "you" as a regex alternative
    be: str  # contraction/long forms of the verb "be" in the present tense
    was: str
    have: str
    would: str
    will: str
    objects: str  # object and reflexive forms that become the name
    possessive: str


_FIRST = _Person(
    subject=r"(?<![\w.'/-])[Ii](?![\w/-]|\.\w)",
    be=r"(?<![\w.'/-])[Ii](?:\s*'m| am)\b",
    was=r"(?<![\w.'/-])[Ii] was\b",
    have=r"(?<![\w.'/-])[Ii](?:'ve| have)\b",
    would=r"(?<![\w.'/-])[Ii]'d\b",
    will=r"(?<![\w.'/-])[Ii](?:'ll)\b",
    objects=r"\b(?:[Mm]e)\b",
    possessive=r"\b(?:[Mm]y|[Mm]ine)\b",
)
_SECOND = _Person(
    subject=r"\b[Yy]ou\b",
    be=r"\b[Yy]ou(?:'re| are)\b",
    was=r"\b[Yy]ou were\b",
    have=r"\b[Yy]ou(?:'ve| have)\b",
    would=r"\b[Yy]ou'd\b",
    will=r"\b[Yy]ou'll\b",
    objects=r"\b(?:[Yy]ou)\b",
    possessive=r"\b(?:[Yy]our|[Yy]ours)\b",
)
_REFLEXIVE = {"first": re.compile(r"\b[Mm]yself\b"), "second": re.compile(r"\b[Yy]ourself\b")}
_NEG_ALT = "|".join(sorted((re.escape(k) for k in _NEGATIONS), key=len, reverse=True))
_Replacement = str | Callable[[re.Match[str]], str]
_NAME_SLOT = "\x01"


def _negated(m: re.Match[str]) -> str:
    return f"{_NAME_SLOT} {m.group(1)}{_NEGATIONS[m.group(2).lower()]}"


def _conjugated(m: re.Match[str]) -> str:
    verb = m.group(2)
    if verb.lower() == "are":  # ("I were" may be a wish: "if I were you")
        # "I are" is what a cut leaves of "Robert and I are": several people, as "we" is
        return f"{_NAME_SLOT} and others {m.group(1)}{verb}"
    # a capitalised word after "I" is a name, not a verb ("Tomas and I Lena"): left as is
    return f"{_NAME_SLOT} {m.group(1)}{verb if verb[:1].isupper() else third_person_verb(verb)}"


# The rewrites of one person, in order (pattern, replacement), and the wording of their
# gates. Gates see the words of the claim as given: the words the rewrites put in ("is",
# "does not", "themself", a verb plus "s") are never a pronoun a later gate waits for (bar
# "yours" from "your", which the same gate already admits).
_PERSON_WORDING = {
    "first": (
        *("i'm|i am", "i was", "i've|i have", "i'd", "i'd", "i'll"),
        "|".join(f"i {negation}" for negation in _NEGATIONS),
        *("i", "myself", "i", "my|mine", "me"),
    ),
    "second": (
        *("you're|you are", "you were", "you've|you have", "you'd", "you'd", "you'll"),
        "|".join(f"you {negation}" for negation in _NEGATIONS),
        *("you", "yourself", "you", "your|yours", "you"),
    ),
}
_PERSON_STEPS: dict[str, tuple[tuple[re.Pattern[str], _Replacement], ...]] = {}
_PERSON_GATES: dict[str, Gates] = {}
for _key, _p in (("first", _FIRST), ("second", _SECOND)):
    # Matches of "I" start with it: saying so first spares the lookbehinds at every position.
    _i = "(?=[Ii])" if _key == "first" else ""
    _steps: tuple[tuple[re.Pattern[str], _Replacement], ...] = (
        (re.compile(_i + _p.be), f"{_NAME_SLOT} is"),
        (re.compile(_i + _p.was), f"{_NAME_SLOT} was"),
        (re.compile(_i + _p.have), f"{_NAME_SLOT} has"),
        (
            re.compile(
                _i
                + _p.would
                + r"(?=\s+(?:been|had|gone|done|already|never|just|seen|met|better)\b)"
            ),
            f"{_NAME_SLOT} had",
        ),
        (re.compile(_i + _p.would), f"{_NAME_SLOT} would"),
        (re.compile(_i + _p.will), f"{_NAME_SLOT} will"),
        (
            re.compile(_i + _p.subject + r"\s+(" + ADVERB + r"*)(" + _NEG_ALT + r")\b", re.I),
            _negated,
        ),
        # "my sister and I love ..." keeps the plural verb ("..., and I get" is a clause)
        (
            re.compile(
                _i
                + r"(?:(?<!\band )|(?<=, and ))"
                + _p.subject
                + r"\s+("
                + ADVERB
                + r"*)([A-Za-z]+)\b"
            ),
            _conjugated,
        ),
        (_REFLEXIVE[_key], "themself"),
        (re.compile(_i + _p.subject), _NAME_SLOT),
        (re.compile(_p.possessive), f"{_NAME_SLOT}'s"),
        (re.compile(_p.objects), _NAME_SLOT),
    )
    _PERSON_STEPS[_key] = _steps
    _PERSON_GATES[_key] = Gates([gate(wording) for wording in _PERSON_WORDING[_key]])
    assert len(_PERSON_GATES[_key]) == len(_steps)
_WE_RULES = (
    (r"\b[Ww]e(?:'re| are)\b", "we're|we are", "{n} and others are"),
    (r"\b[Ww]e(?:'ve| have)\b", "we've|we have", "{n} and others have"),
    (r"\b[Ww]e'll\b", "we'll", "{n} and others will"),
    (r"\b[Ww]e'd\b", "we'd", "{n} and others would"),
    (r"\b[Ww]e\b", "we", "{n} and others"),
    (r"\bus\b", "us", "{n} and others"),
    (r"\b[Oo]urs?\b", "our|ours", "{n}'s"),
    (r"\b[Oo]urselves\b", "ourselves", "themselves"),
)
_WE = tuple(
    (re.compile(pattern), template.format(n=_NAME_SLOT)) for pattern, _, template in _WE_RULES
)
_WE_GATES = Gates([gate(wording) for _, wording, _ in _WE_RULES])
# The words a _WE pattern needs, and the words the verb rewrite turns into one of those
# ("I u" -> "us", "our" -> "ours", "ourselve" -> "ourselves"): a claim with none of these
# has no "we" to rewrite. (Other rewrites only put in "is", "has", "does not", "themself"...)
_WE_SOURCES = wordset("we us our ours ourselves u ourselve")


_YOU = re.compile(r"\byou\b(?!['’])", re.I)
_PLURAL_YOU = re.compile(r"\b(?:you (?:two|guys|all|both|three|folks|people|lot)|y'?all)\b", re.I)
_CLAUSE_OPENERS = wordset("""and but so if when because that since until till while or then
    though although whether once unless before after where what how as""")
_OBJECT_SLOT = "\x04"


def addressed_to(claim: str, name: str) -> str | None:
    """A claim said to ``name`` with "you" rewritten to the name ("I can give it to you
    tomorrow" -> "I can give it to Tomas tomorrow", "You'll love it" -> "Tomas will love
    it"); None when "you" is several people or is no subject where the claim has none
    ("Proud of you")."""
    if _PLURAL_YOU.search(claim):
        return None
    subject = False

    def place(m: re.Match[str]) -> str:
        nonlocal subject
        before = claim[: m.start()].rstrip()
        previous = before.rsplit(None, 1)[-1].lower() if before else ""
        if not before or before.endswith((",", ";", ":")) or previous in _CLAUSE_OPENERS:
            subject = True
            return m.group()  # the subject: its verb is conjugated below
        return _OBJECT_SLOT  # "to you", "miss you", "can you": the name, verb untouched

    out = _YOU.sub(place, claim.replace(_OBJECT_SLOT, " "))
    if not subject and not re.search(
        r"\b(?:I|I'm|I've|I'll|I'd|[Yy]our|[Yy]ou're|[Yy]ou've|[Yy]ou'll|[Yy]ou'd)\b", out
    ):
        return None
    return third_person(out, name, "second", words_of(out)).replace(_OBJECT_SLOT, name)


def to_third_person(claim: str, name: str, person: str = "first") -> str:
    """Rewrite first-person (or, for assistant turns, second-person) references to ``name``."""
    return third_person(claim, name, person, words_of(claim))


def third_person(claim: str, name: str, person: str, words: frozenset[str]) -> str:
    steps = _PERSON_STEPS[person]
    # A placeholder, not the name, goes in first: later patterns must not rewrite
    # pronoun-like words inside a name (a speaker called "Me" or "My Tran").
    out = claim.replace(_NAME_SLOT, " ")
    admitted = _PERSON_GATES[person].admitting(words, claim)
    for i in admitted:
        pattern, replacement = steps[i]
        out = pattern.sub(replacement, out)
    if person == "first" and not _WE_SOURCES.isdisjoint(words):
        # gated on the words of the rewritten claim: the verb rewrite can make an "us"
        for i in _WE_GATES.admitting(words_of(out) if admitted else words, out):
            pattern, template = _WE[i]
            out = pattern.sub(template, out)
    return _untautology(out.replace(_NAME_SLOT, name), name)


def _untautology(text: str, name: str) -> str:
    """Maya saying "I'm Maya" gives "Maya is Maya": followed by more of the sentence the
    clause says nothing and goes ("Maya is Maya, Maya leads ..." -> "Maya leads ..."); alone
    it is a name ("Maya's name is Maya")."""
    said = f"{name} is {name}"
    if said not in text:
        return text
    text = re.sub(rf"\b{re.escape(said)}(?:\s*[,;]|\s+and)\s+(?={re.escape(name)}\b)", "", text)
    named = f"{name}'s name is {name}"  # a function: a name is text, never a template
    return re.sub(rf"\b{re.escape(said)}\b(?!['’])", lambda _m: named, text)
