"""Rule-based fact extraction: what users get offline, and the LLM extractor's fallback.

Pure and deterministic: the only notion of "now" is each turn's ``occurred_at``.
Pipeline per turn: clean -> sentences -> atomic claims -> drop filler -> rewrite into
the third person -> resolve dates -> classify, find entities and subject/slot.

Roles: user turns are the main source. Assistant turns contribute only when the
assistant restates something about the user in the second person ("You mentioned you
live in Boston"), at low confidence: assistant prose is mostly suggestions and
generated content, and treating it as memory would let the model write its own
guesses into the user's profile. System and tool turns contribute nothing.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta

from core.facts import Fact, TurnView
from core.hashing import normalize
from schemas.events import Category, Kind

RULES_VERSION = "rules-v1"


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


# --- confidence and importance -----------------------------------------------------

_CONF_FIRST_PERSON = 0.8
_CONF_CORRECTION = 0.85
_CONF_HEDGED = 0.55
_CONF_THIRD_PARTY = 0.6
_CONF_FROM_QUESTION = 0.6
_CONF_ASSISTANT = 0.4

_IMPORTANCE: dict[str, float] = {
    "correction": 0.8,
    "commitment": 0.7,
    "decision": 0.7,
    "relationship": 0.7,
    "moment": 0.7,
    "principle": 0.7,
    "preference": 0.6,
    "skill": 0.6,
    "entity": 0.5,
    "fact": 0.5,
}

_MAX_CLAIM_CHARS = 400  # longer "claims" are pasted documents, not statements

# --- text cleaning and sentence splitting ------------------------------------------

_QUOTES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "“": '"', "”": '"'})
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_URL = re.compile(r"https?://\S+")
_SPACES = re.compile(r"[ \t\f\v]+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_BOUNDARY = re.compile(r"([.!?…]+)([\"')\]]*)(?=\s|$)")
_ABBREVIATIONS = _wordset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie inc ltd co corp approx dept est fig no mt ft"
)


def _clean(text: str) -> str:
    text = _CODE_BLOCK.sub(" ", text).translate(_QUOTES)
    text = _URL.sub(" ", text)
    # emoji and control characters carry no claims; control chars are also our sentinels
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch == "\n":
            kept.append(ch)
        elif cat == "So" or cat.startswith("C"):
            kept.append(" ")
        else:
            kept.append(ch)
    return "".join(kept)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``; newlines always end one, abbreviations and initials do not."""
    out: list[str] = []
    for line in _clean(text).split("\n"):
        line = _SPACES.sub(" ", _BULLET.sub("", line)).strip()
        start = 0
        for m in _BOUNDARY.finditer(line):
            if m.group(1) == ".":
                words = line[start : m.start()].split()
                token = words[-1].lower().strip("(\"'") if words else ""
                initials = "." in token and all(
                    len(p) <= 2 and p.isalpha() for p in token.split(".")
                )
                if (
                    token in _ABBREVIATIONS
                    or initials
                    or (len(token) == 1 and token.isalpha() and token != "i")
                ):
                    continue
            piece = line[start : m.end()].strip()
            if piece:
                out.append(piece)
            start = m.end()
        rest = line[start:].strip()
        if rest:
            out.append(rest)
    return out


# A clause boundary only where the right side starts with its own pronoun subject and the
# left side already has one ("I love cats and I hate dogs", not "my sister and I went").
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|,?\s+(?:and|but|so|plus|and then|then|while|whereas)\s+(?=(?:I|i|[Ww]e)\b)|,\s*but\s+|,\s*and\s+(?=(?:[Mm]y|[Oo]ur)\b)"
    # a trailing verdict ("..., it was amazing") is its own (usually contentless) claim
    r"|,\s*(?=(?:[Ii]t|[Tt]hat|[Tt]his)(?:'s|\s+(?:is|was|has|had|felt|feels|looks|looked|sounds|sounded))\b)"
    # "my email is X and my phone is Y": the right side is plainly a clause of its own
    r"|(?P<free>,?\s+and\s+(?=(?:[Mm]y|[Oo]ur)(?:\s+[\w'-]+){1,3}\s+(?:is|are|was|were)\b))"
)
_HAS_SUBJECT = re.compile(r"\b(?:I|i|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|[Ii]t|[Yy]ou)\b")


def split_claims(sentence: str) -> list[str]:
    """Atomic claims of one sentence (conjoined independent clauses become separate claims)."""
    claims: list[str] = []
    start = 0
    for m in _CLAUSE_SPLIT.finditer(sentence):
        left = sentence[start : m.start()]
        if m.group(0).strip() != ";" and m.group("free") is None and not _HAS_SUBJECT.search(left):
            continue
        claims.append(left)
        start = m.end()
    claims.append(sentence[start:])
    return [c.strip() for c in claims if c.strip()]


# --- filler ------------------------------------------------------------------------

_FILLER_WORDS = _wordset("""hi hello hey heya yo hiya there thanks thank you so much a lot lots very ok okay k kk
    sure yes yeah yep yup no nope nah cool great nice awesome perfect wow lol haha hahaha
    bye goodbye see ya later good morning night evening afternoon day got it sounds
    welcome problem of course right exactly agreed indeed alright fine glad happy hear
    that to this is was it's that's totally absolutely definitely oh ah um uh hmm well
    amazing wonderful fantastic lovely interesting true same here too me again cheers np
    ty thx pls please appreciate appreciated really love will do done noted understood
    makes sense fair enough all the best take care congrats congratulations for and wish
    luck hope doing how are what's up sup nothing much not bad pretty sounds fun""")
# Verbs/adjectives that say nothing on their own: "I agree", "I'm fine", "I see".
_EMPTY_WORDS = _wordset("""i i'm im me my we us our am is are was were be been being do does did have has had
    the a an and or but so to of in on at it this that these those there here just really
    very too also quite pretty much so such well fine good great okay ok sure glad happy
    excited thrilled sorry agree see know think guess understand hope mean feel suppose
    believe bet wonder sure right yes no not doing going gonna wanna get got thanks thank
    totally absolutely definitely now again still yet can could would should will shall
    might may must bit lot kind sort like what how then all ready back""")
_WORD_RE = re.compile(r"[\w'+#.-]+")


def _words(text: str) -> list[str]:
    return [w.strip(".'-").lower() for w in _WORD_RE.findall(text) if w.strip(".'-")]


def is_filler(claim: str) -> bool:
    """Greetings, thanks, acknowledgements and contentless reactions."""
    words = _words(claim)
    if not words:
        return True
    if all(w in _FILLER_WORDS for w in words):
        return True
    # a vocative name after a greeting ("thanks Mel") is still filler
    return (
        len(words) <= 3
        and sum(w not in _FILLER_WORDS for w in words) <= 1
        and words[0] in _FILLER_WORDS
    )


def _has_content(claim: str) -> bool:
    return any(w not in _EMPTY_WORDS and w not in _FILLER_WORDS for w in _words(claim))


# --- cue patterns --------------------------------------------------------------------

_MARKERS = re.compile(
    r"^(?:(?:well|so|oh|ah|um+|uh+|hmm+|yeah|yes|yep|no(?! longer| one| more)|nope|ok|okay|anyway|anyways|also|btw|"
    r"by the way|actually|honestly|basically|fyi|fun fact|guess what|wow|haha|lol|hey|hi|hello|"
    r"sorry|wait|oops|plus|and|but|to be honest|tbh|oh and|oh well|then|now|correction|thank you so much|"
    r"thank you|thanks so much|thanks|nice to meet you|good to see you|"
    r"update|just so you know|for the record|quick update)\b[\s,!.:;-]*)+",
    re.I,
)
_HEDGE = re.compile(
    r"^(?:I think|I guess|I feel like|I suppose|I mean|I reckon|I'd say|I believe|probably|maybe|perhaps)(?: that)?,?\s+(?=(?:I|i|[Ww]e|[Mm]y|[Oo]ur)\b)"
)
_HEDGE_WORDS = re.compile(r"\b(?:maybe|perhaps|probably|might|not sure|i think|i guess)\b", re.I)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|can|could|would|will|should|is|are|am|was|were|have|has|what|why|how|when|where|who|whom|which|any|anything|shall|may|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|right)\b",
    re.I,
)
_REASON_CLAUSE = re.compile(
    r"\b(?:since|because|as|now that|given that|considering)\s+((?:I|i|[Ww]e|[Mm]y|[Oo]ur)\b.+)"
)
_WONDER = re.compile(
    r"^(?:I|i)(?:'m| am| was)? (?:wonder|wondering|curious|need help|want to know|would like to know|'d like to know)",
    re.I,
)
_FIRST_PERSON = re.compile(
    r"(?<![\w.])(?:[Ii]|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|[Ww]e|us|[Oo]ur|[Oo]urs|[Oo]urselves)(?![\w]|\.\w)"
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'll|you'd)\b", re.I)

_STANDING_ORDER = re.compile(
    r"^(?:please\s+)?(?P<verb>always|never|don't|do not|avoid|stop|make sure(?: to)?|remember to|keep(?! up| going| it up)|use|prefer|stick to|stick with)\b\s*(?P<rest>.*)$",
    re.I,
)
_REMIND_ME = re.compile(
    r"^(?:please\s+)?(?:can you\s+|could you\s+)?remind me\s+(?:to\s+)?(?P<rest>.+)$", re.I
)
_CALL_ME = re.compile(r"^(?:please\s+)?(?:just\s+)?call me\s+(?P<rest>.+)$", re.I)
_LETS = re.compile(r"^(?:let's|let us)\s+(?P<rest>.+)$", re.I)
_IMPERATIVE = re.compile(
    r"^(?:please|can you|could you|would you|will you|write|help|tell|show|give|make|create|explain|summarize|summarise|translate|fix|find|list|generate|draft|check|send|book|search|look|let me know|go ahead|try|imagine|pretend|describe|compare|recommend|suggest|rewrite|refactor|add|remove|delete|update|run|open|read|calculate|convert|edit|review|plan)\b",
    re.I,
)

_ASSISTANT_LEAD_IN = re.compile(
    r"^(?:(?:got it|noted|understood|sure|great|okay|ok|perfect|thanks for sharing|good to know|of course|absolutely|right)\s*[,!.:;—–-]?\s*)*"
    r"(?:(?:so\s+)?(?:you (?:mentioned|said|told me|noted|shared|indicated|explained)|as you (?:mentioned|said)|"
    r"i (?:remember|recall|understand|noted|note|have noted|'ve noted|see)|i've noted|it sounds like|since)(?: that)?,?\s+)?",
    re.I,
)
_ADVICE = re.compile(
    r"\b(?:you (?:should|could|might|can|may|need to|must|have to|want to|'d|would|will want|ought)|if you|let me know|feel free|"
    r"would you|do you|did you|have you|are you|can you|could you|hope you|good luck)\b",
    re.I,
)

_CATEGORY_CUES: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (
        "correction",
        re.compile(
            r"^(?:actually|correction|no,|nope|sorry,|wait,|oops|update:)|\b(?:i meant|i was wrong|scratch that|"
            r"that's wrong|that's not right|that is wrong|that's incorrect|no longer|not anymore|anymore|changed my mind|"
            r"to clarify|instead of|i misspoke|rather than what i said)\b",
            re.I,
        ),
    ),
    (
        "decision",
        re.compile(
            r"\b(?:decided|decide|decision|going with|go with|went with|chose|chosen|settled on|opted|picked|"
            r"switching to|switched to|switch to|migrating to|migrated to|we'll use|we will use|let's|let us|"
            r"agreed to|committed to using|finalized|final answer)\b",
            re.I,
        ),
    ),
    (
        "commitment",
        re.compile(
            r"(?:\b(?:will|shall|going to|gonna|plan to|plans to|planning to|intend to|promise|promised|need to|"
            r"needs to|have to|has to|got to|must|remind me|deadline|due (?:on|by|date|tomorrow|next|this)|scheduled|appointment|by (?:monday|tuesday|"
            r"wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next week|the end of))\b|'ll\b)",
            re.I,
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(?:love|loves|loved|loving|enjoy|enjoys|enjoyed|prefer|prefers|preferred|favou?rite|hate|hates|hated|"
            r"dislike|dislikes|disliked|can't stand|cannot stand|fan of|fond of|adore|adores|rather|obsessed with|"
            r"passionate about|go-to|(?:'m|am|is|are|really|so|totally) into|allergic|(?<!feel )(?<!feels )(?<!look )(?<!looks )(?<!seem )(?<!sound )"
            r"(?<!sounds )(?<!something )(?<!just )(?<!more )(?<!less )likes?)\b",
            re.I,
        ),
    ),
    (
        "skill",
        re.compile(
            r"\b(?:know how to|knows how to|good at|great at|skilled|fluent|proficient|experienced (?:in|with)|expert|"
            r"years of experience|speak|speaks|learning|learned|learnt|studying|studied|certified|taught (?:me|myself)|"
            r"practic(?:e|ing)|practis(?:e|ing)|can (?:code|program|cook|play|speak|write|draw|paint|swim|drive|sing|dance))\b",
            re.I,
        ),
    ),
    (
        "principle",
        re.compile(
            r"\b(?:always|never|principle|rule of thumb|my rule|believe in|believe that|it's important to|"
            r"it is important to|make sure to|should always|should never|values?|priorit(?:y|ies|ize))\b",
            re.I,
        ),
    ),
    (
        "relationship",
        re.compile(
            r"\b(?:wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|sister|brother|siblings?|mother|mom|"
            r"mum|father|dad|parents?|son|daughter|kids?|children|child|baby|grandma|grandmother|grandpa|"
            r"grandfather|grandparents?|aunt|uncle|cousin|nephew|niece|friends?|best friend|colleague|coworker|"
            r"co-worker|boss|manager|mentor|roommate|neighbou?r|married|dating|divorced|engaged|in-laws?|family)\b",
            re.I,
        ),
    ),
    (
        "moment",
        re.compile(
            r"\b(?:birthday|anniversary|wedding|graduat(?:ed|ion)|got married|got engaged|passed away|died|was born|"
            r"gave birth|promoted|promotion|retired|first time|never forget|best day|worst day|proud|milestone|"
            r"celebrat\w*|accident|diagnosed|vacation|holiday|trip|concert|festival|ceremony|parade|race|marathon)\b",
            re.I,
        ),
    ),
    (
        "entity",
        re.compile(
            r"\b(?:is called|are called|named|'s name is|stands for|is an? (?:tool|library|framework|company|startup|"
            r"service|project|app|application|team|product|database|platform|band|restaurant|shop|store|book|movie|"
            r"show|game|podcast|dog|cat|pet|repo|repository|codebase|client|customer))\b",
            re.I,
        ),
    ),
)


def classify(claim: str) -> Category:
    """Category of a claim from cue words; the first matching family wins, else "fact"."""
    for category, pattern in _CATEGORY_CUES:
        if pattern.search(claim):
            return category
    return "fact"


# --- first/second person to third person -------------------------------------------

_ADVERB = (
    r"(?:(?:really|also|just|usually|always|never|often|sometimes|recently|finally|still|actually|absolutely|"
    r"totally|definitely|mostly|only|even|already|generally|rarely|seldom|truly|honestly|personally|currently|"
    r"now|no longer|kind of|sort of|kinda|sorta|mainly|primarily|occasionally|normally|typically|frequently|"
    r"regularly|certainly|probably|basically|literally|seriously|officially|eventually|initially|originally|"
    r"once|then|first|too|both|all|absolutely|strongly|deeply|badly|simply|somehow|again|hardly|barely|"
    r"particularly|especially|genuinely)\s+)"
)
_PAST_OR_FIXED = _wordset("""was were went got had made took saw bought began ran met left felt found gave knew thought told became
    came wrote spent sold won lost built taught brought said heard kept held sat stood understood paid sent
    drove rode flew grew threw drew ate fell forgot chose broke spoke woke wore tore froze hid bit caught
    fought sought slept swam sang rang drank shook stole struck lent bent burnt learnt dreamt meant put cut
    hit set let quit read hurt cost shut spread upset led fled fed bred shed sped dealt dug hung lit slid spun
    stuck swung won wound can could will would shall should may might must ought used""")
# Words that can follow a subject pronoun without being its verb ("my sister and I too").
_NOT_VERB = _wordset("""and or but nor too alone here there to with in on at for of from myself yourself not who that which
    as than when if so because also really just usually always never often sometimes recently finally still
    actually only even already now then once both all personally""")
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


def third_person_verb(verb: str) -> str:
    """'love' -> 'loves', 'study' -> 'studies'; past tense and modals stay as they are."""
    low = verb.lower()
    if low in _THIRD_IRREGULAR:
        return _THIRD_IRREGULAR[low]
    if (
        not low.isalpha()
        or low in _PAST_OR_FIXED
        or low in _NOT_VERB
        or (low.endswith("ed") and not low.endswith("eed"))
    ):
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
_PERSON_RE: dict[str, tuple[re.Pattern[str], ...]] = {}
for _key, _p in (("first", _FIRST), ("second", _SECOND)):
    _PERSON_RE[_key] = (
        re.compile(_p.be),
        re.compile(_p.was),
        re.compile(_p.have),
        re.compile(_p.would + r"(?=\s+(?:been|had|gone|done|already|never|just|seen|met)\b)"),
        re.compile(_p.would),
        re.compile(_p.will),
        re.compile(_p.subject + r"\s+(" + _ADVERB + r"*)(" + _NEG_ALT + r")\b", re.I),
        # "my sister and I love ..." keeps the plural verb
        re.compile(r"(?<!\band )" + _p.subject + r"\s+(" + _ADVERB + r"*)([A-Za-z]+)\b"),
        re.compile(_p.subject),
        re.compile(_p.possessive),
        re.compile(_p.objects),
    )
_NAME_SLOT = "\x01"
_WE = (
    (re.compile(r"\b[Ww]e(?:'re| are)\b"), "{n} and others are"),
    (re.compile(r"\b[Ww]e(?:'ve| have)\b"), "{n} and others have"),
    (re.compile(r"\b[Ww]e'll\b"), "{n} and others will"),
    (re.compile(r"\b[Ww]e'd\b"), "{n} and others would"),
    (re.compile(r"\b[Ww]e\b"), "{n} and others"),
    (re.compile(r"\bus\b"), "{n} and others"),
    (re.compile(r"\b[Oo]urs?\b"), "{n}'s"),
    (re.compile(r"\b[Oo]urselves\b"), "themselves"),
)


def to_third_person(claim: str, name: str, person: str = "first") -> str:
    """Rewrite first-person (or, for assistant turns, second-person) references to ``name``."""
    (be, was, have, had, would, will, neg, verb, subject, possessive, objects) = _PERSON_RE[person]
    # A placeholder, not the name, goes in first: later patterns must not rewrite
    # pronoun-like words inside a name (a speaker called "Me" or "My Tran").
    n = _NAME_SLOT
    out = claim.replace(n, " ")
    out = be.sub(f"{n} is", out)
    out = was.sub(f"{n} was", out)
    out = have.sub(f"{n} has", out)
    out = had.sub(f"{n} had", out)
    out = would.sub(f"{n} would", out)
    out = will.sub(f"{n} will", out)
    out = neg.sub(lambda m: f"{n} {m.group(1)}{_NEGATIONS[m.group(2).lower()]}", out)
    out = verb.sub(lambda m: f"{n} {m.group(1)}{third_person_verb(m.group(2))}", out)
    out = _REFLEXIVE[person].sub("themself", out)
    out = subject.sub(n, out)
    out = possessive.sub(f"{n}'s", out)
    out = objects.sub(n, out)
    if person == "first":
        for pattern, template in _WE:
            out = pattern.sub(template.format(n=n), out)
    return out.replace(n, name)


# --- dates ------------------------------------------------------------------------------

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTH_NUM = {m.lower(): i + 1 for i, m in enumerate(_MONTHS)} | {
    m.lower()[:3]: i + 1 for i, m in enumerate(_MONTHS)
}
_MONTH_NUM["sept"] = 9
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
}
_NUM = r"(?P<n>\d{1,4}|a couple of|a couple|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?P<unit>day|weekend|week|month|year)s?"
_WD = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MON = r"(?P<mon>january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_PREP = r"(?:\b(?P<prep>on|in|by|until|till|through|since|before|after|from|during)\s+)?"
_FUTURE = re.compile(
    r"\b(?:will|shall|going to|gonna|plan(?:s|ning)? to|intends? to|next|tomorrow|upcoming|scheduled|about to|"
    r"(?:am|is|are) (?!\w+ing\s+to\b)\w+ing)\b|'ll\b",
    re.I,
)
_IRREGULAR_PAST = sorted(
    _PAST_OR_FIXED - _wordset("can will shall should may might must ought set let put cut hit read")
)
_PAST = re.compile(
    r"\b(?:" + "|".join(_IRREGULAR_PAST) + r"|did|ago|yesterday|last)\b"
    r"|(?<!\bis )(?<!\bam )(?<!\bare )(?<!'m )(?<!'re )(?<!\bbe )\b\w{2,}(?<!e)ed\b",
    re.I,
)
_OPEN, _CLOSE = "\x02", "\x03"  # brackets around dates we wrote, so they are not parsed twice


@dataclass(frozen=True, slots=True)
class Dated:
    """A claim with its dates resolved against the event time."""

    text: str
    valid_from: datetime | None
    valid_until: datetime | None

    @property
    def has_date(self) -> bool:
        return self.valid_from is not None or self.valid_until is not None


@dataclass(frozen=True, slots=True)
class _Span:
    start: date
    end: date  # exclusive
    plain: str  # absolute wording, e.g. "7 May 2023" or "the week before 8 May 2023"
    prep: str  # the preposition the plain wording needs when the speaker gave none


def _fmt(d: date) -> str:
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def _month_start(d: date, delta: int) -> date:
    index = d.year * 12 + d.month - 1 + delta
    return date(index // 12, index % 12 + 1, 1)


def _day(d: date, prep: str = "on") -> _Span:
    return _Span(d, d + timedelta(days=1), _fmt(d), prep)


def _month(d: date, delta: int) -> _Span:
    start = _month_start(d, delta)
    return _Span(start, _month_start(start, 1), f"{_MONTHS[start.month - 1]} {start.year}", "in")


def _year(year: int) -> _Span:
    return _Span(date(year, 1, 1), date(year + 1, 1, 1), str(year), "in")


def _weekday_before(d: date, wd: int) -> date:
    return d - timedelta(days=(d.weekday() - wd - 1) % 7 + 1)


def _weekday_after(d: date, wd: int) -> date:
    return d + timedelta(days=(wd - d.weekday() - 1) % 7 + 1)


def _count(m: re.Match[str]) -> int:
    raw = m.group("n").lower()
    return int(raw) if raw.isdigit() else _NUMBERS[raw]


def _shift(d: date, unit: str, n: int) -> _Span:
    if unit == "day":
        return _day(d + timedelta(days=n))
    if unit == "weekend":
        # the n-th weekend back (or ahead) from the one nearest before (after) d
        sat = _weekday_before(d, 5) if n < 0 else _weekday_after(d, 5)
        return _weekend(sat + timedelta(weeks=n + 1 if n < 0 else n - 1))
    if unit == "week":
        when = d + timedelta(weeks=n)
        return _Span(when, when + timedelta(days=7), f"the week of {_fmt(when)}", "in")
    if unit == "month":
        return _month(d, n)
    return _year(d.year + n)


def _weekend(sat: date) -> _Span:
    return _Span(sat, sat + timedelta(days=2), f"the weekend of {_fmt(sat)}", "on")


def _week(start: date, plain: str) -> _Span:
    return _Span(start, start + timedelta(days=7), plain, "in")


_Resolver = Callable[[re.Match[str], date, bool], _Span]


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


_RELATIVE: tuple[tuple[re.Pattern[str], _Resolver], ...] = tuple(
    (re.compile(_PREP + pattern + r"\b", re.I), resolver)
    for pattern, resolver in (
        (r"\bthe day before yesterday", lambda m, d, f: _day(d - timedelta(days=2))),
        (r"\bthe day after tomorrow", lambda m, d, f: _day(d + timedelta(days=2))),
        (
            r"\byesterday(?: (?:morning|afternoon|evening|night))?",
            lambda m, d, f: _day(d - timedelta(days=1)),
        ),
        (r"\blast night", lambda m, d, f: _day(d - timedelta(days=1))),
        (r"\b(?:tonight|today|this (?:morning|afternoon|evening))", lambda m, d, f: _day(d)),
        (
            r"\btomorrow(?: (?:morning|afternoon|evening|night))?",
            lambda m, d, f: _day(d + timedelta(days=1)),
        ),
        (
            r"\b" + _NUM + r" " + _UNIT + r" ago",
            lambda m, d, f: _shift(d, m.group("unit").lower(), -_count(m)),
        ),
        (
            r"\b" + _NUM + r" " + _UNIT + r" from now",
            lambda m, d, f: _shift(d, m.group("unit").lower(), _count(m)),
        ),
        (
            r"\b(?:last|this past|the past|past) weekend",
            lambda m, d, f: _weekend(
                _weekday_before(d, 5) - timedelta(days=7 if d.weekday() == 6 else 0)
            ),
        ),
        (
            r"\bthis weekend",
            lambda m, d, f: _weekend(
                d - timedelta(days=1) if d.weekday() == 6 else _monday(d) + timedelta(days=5)
            ),
        ),
        (r"\bnext weekend", lambda m, d, f: _weekend(_weekday_after(d, 5))),
        (
            r"\b(?:last|the previous|the past) week",
            lambda m, d, f: _week(_monday(d) - timedelta(days=7), f"the week before {_fmt(d)}"),
        ),
        (r"\bthis week", lambda m, d, f: _week(_monday(d), f"the week of {_fmt(_monday(d))}")),
        (
            r"\b(?:next|the following|the coming) week",
            lambda m, d, f: _week(_monday(d) + timedelta(days=7), f"the week after {_fmt(d)}"),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?month",
            lambda m, d, f: _Span(
                _month_start(d, 1) - timedelta(days=1),
                _month_start(d, 1),
                f"the end of {_MONTHS[d.month - 1]} {d.year}",
                "at",
            ),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?year",
            lambda m, d, f: _Span(
                date(d.year, 12, 31), date(d.year + 1, 1, 1), f"the end of {d.year}", "at"
            ),
        ),
        (
            r"\b(?:the )?end of (?:the |this )?week",
            lambda m, d, f: _Span(
                _monday(d) + timedelta(days=6),
                _monday(d) + timedelta(days=7),
                f"the end of the week of {_fmt(_monday(d))}",
                "at",
            ),
        ),
        (r"\b(?:last|the previous) month", lambda m, d, f: _month(d, -1)),
        (r"\bthis month", lambda m, d, f: _month(d, 0)),
        (r"\bnext month", lambda m, d, f: _month(d, 1)),
        (r"\b(?:last|the previous) year", lambda m, d, f: _year(d.year - 1)),
        (r"\bthis year", lambda m, d, f: _year(d.year)),
        (r"\bnext year", lambda m, d, f: _year(d.year + 1)),
        (
            r"\b(?:last|this past|past) " + _WD,
            lambda m, d, f: _day(_weekday_before(d, _WEEKDAYS.index(m.group("wd").lower()))),
        ),
        (
            r"\bnext " + _WD,
            lambda m, d, f: _day(_weekday_after(d, _WEEKDAYS.index(m.group("wd").lower()))),
        ),
        (
            r"\bthis " + _WD,
            lambda m, d, f: _day(
                _monday(d) + timedelta(days=_WEEKDAYS.index(m.group("wd").lower()))
            ),
        ),
        (
            r"(?<!\bevery )\b" + _WD + r"(?!s)",
            lambda m, d, f: _day(
                (_weekday_after if f else _weekday_before)(
                    d, _WEEKDAYS.index(m.group("wd").lower())
                )
            ),
        ),
        (
            r"\bin " + _NUM + r" " + _UNIT,
            lambda m, d, f: _shift(d, m.group("unit").lower(), _count(m)),
        ),
    )
)


def _infer_year(d: date, month: int, day: int, future: bool) -> date:
    when = date(d.year, month, day)
    if future and when < d:
        return date(d.year + 1, month, day)
    if not future and when > d:
        return date(d.year - 1, month, day)
    return when


def _explicit_day(m: re.Match[str], d: date, f: bool) -> _Span:
    month = _MONTH_NUM[m.group("mon").lower().rstrip(".")]
    day = int(m.group("day"))
    year = m.group("year")
    return _day(date(int(year), month, day) if year else _infer_year(d, month, day, f))


def _numeric_day(m: re.Match[str], d: date, f: bool) -> _Span:
    year = int(m.group("year"))
    return _day(
        date(year + 2000 if year < 100 else year, int(m.group("month")), int(m.group("day")))
    )


def _bare_month(m: re.Match[str], d: date, f: bool) -> _Span:
    month = _MONTH_NUM[m.group("mon").lower().rstrip(".")]
    start = _infer_year(d.replace(day=1), month, 1, f)
    return _month(start, 0)


_EXPLICIT: tuple[tuple[re.Pattern[str], _Resolver], ...] = (
    (
        re.compile(_PREP + r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
        lambda m, d, f: _day(
            date(int(m.group("year")), int(m.group("month")), int(m.group("day")))
        ),
    ),
    (
        re.compile(
            _PREP + r"\b" + _MON + r" (?P<day>\d{1,2})(?:st|nd|rd|th)?\b(?:,? (?P<year>\d{4})\b)?",
            re.I,
        ),
        _explicit_day,
    ),
    (
        re.compile(
            _PREP
            + r"\b(?:the )?(?P<day>\d{1,2})(?:st|nd|rd|th)? (?:of )?"
            + _MON
            + r"(?:,? (?P<year>\d{4})\b)?",
            re.I,
        ),
        _explicit_day,
    ),
    (
        re.compile(_PREP + r"\b" + _MON + r",? (?P<year>(?:19|20)\d{2})\b", re.I),
        lambda m, d, f: _month(
            date(int(m.group("year")), _MONTH_NUM[m.group("mon").lower().rstrip(".")], 1), 0
        ),
    ),
    (
        # a bare month needs its capital: "in May", never the verb "may"
        re.compile(
            r"\b(?P<prep>in|since|until|till|by|during|from|before|after) (?P<mon>(?-i:January|February|March|"
            r"April|May|June|July|August|September|October|November|December))\b",
            re.I,
        ),
        _bare_month,
    ),
    (
        re.compile(_PREP + r"\b(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4}|\d{2})\b"),
        _numeric_day,
    ),
    (
        re.compile(
            r"\b(?P<prep>in|since|until|till|by|during|from|before|after) (?P<year>(?:19|20)\d{2})\b",
            re.I,
        ),
        lambda m, d, f: _year(int(m.group("year"))),
    ),
)
_DURATION = re.compile(r"\bfor (?:the (?:past|last) )?" + _NUM + r" " + _UNIT + r"\b", re.I)
_PERFECT = re.compile(
    r"\b(?:has|have|had|'ve) been\b|\b(?:has|have|'ve) (?:\w+ed|known|had|lived|worked)\b", re.I
)


def resolve_dates(text: str, occurred_at: datetime) -> Dated:
    """Rewrite relative dates to absolute ones and derive validity bounds.

    "yesterday" said on 8 May 2023 becomes "on 7 May 2023" with valid_from 2023-05-07;
    "until Friday" sets valid_until to the end of that Friday; "since 2019" sets
    valid_from. Explicit dates stay as written. Bounds carry the turn's timezone.
    """
    today = occurred_at.date()
    # an undated weekday or day of month lies ahead unless the claim is in the past tense
    future = bool(_FUTURE.search(text)) or not _PAST.search(text)
    starts: list[date] = []
    ends: list[date] = []

    def note(span: _Span, prep: str | None) -> None:
        prep = (prep or "").lower()
        if prep in ("until", "till", "through", "by"):
            if prep != "by":
                ends.append(span.end)
        elif prep == "before":
            ends.append(span.start)
        elif prep == "after":
            starts.append(span.end)
        else:
            starts.append(span.start)

    def relative(resolver: _Resolver) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            prep = m.group("prep")
            bound = (prep or "").lower() in ("until", "till", "through", "by")
            ahead = future or bound
            # "from Monday until Wednesday": the end is counted from the start
            anchor = starts[-1] if bound and starts and starts[-1] > today else today
            try:
                span = resolver(m, anchor, ahead)
            except (ValueError, OverflowError, KeyError):
                return m.group(0)
            note(span, prep)
            lead = prep if prep and prep.lower() not in ("on", "in", "during") else span.prep
            return f"{_OPEN}{lead} {span.plain}{_CLOSE}"

        return sub

    def explicit(resolver: _Resolver) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            ahead = future or (m.group("prep") or "").lower() in ("until", "till", "through", "by")
            try:
                span = resolver(m, today, ahead)
            except (ValueError, OverflowError, KeyError):
                return m.group(0)
            note(span, m.group("prep"))
            return f"{_OPEN}{m.group(0)}{_CLOSE}"

        return sub

    out = text
    for table, wrap in ((_RELATIVE, relative), (_EXPLICIT, explicit)):
        for pattern, resolver in table:
            pieces = re.split(f"({_OPEN}[^{_CLOSE}]*{_CLOSE})", out)
            out = "".join(
                piece if piece.startswith(_OPEN) else pattern.sub(wrap(resolver), piece)
                for piece in pieces
            )
    if not starts and _PERFECT.search(text):
        duration = _DURATION.search(text)
        if duration:
            with contextlib.suppress(ValueError, OverflowError):
                starts.append(
                    _shift(today, duration.group("unit").lower(), -_count(duration)).start
                )
    out = out.replace(_OPEN, "").replace(_CLOSE, "")
    tz = occurred_at.tzinfo

    def at(d: date | None) -> datetime | None:
        return None if d is None else datetime.combine(d, time(0), tzinfo=tz)

    valid_from = starts[0] if starts else None
    valid_until = ends[0] if ends else None
    if valid_from is not None and valid_until is not None and valid_until < valid_from:
        valid_until = None
    return Dated(out, at(valid_from), at(valid_until))


# --- entities -----------------------------------------------------------------------------

_TECH = {
    "python": "Python",
    "rust": "Rust",
    "golang": "Go",
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "react": "React",
    "django": "Django",
    "flask": "Flask",
    "fastapi": "FastAPI",
    "postgres": "Postgres",
    "postgresql": "PostgreSQL",
    "mysql": "MySQL",
    "sqlite": "SQLite",
    "redis": "Redis",
    "kafka": "Kafka",
    "docker": "Docker",
    "kubernetes": "Kubernetes",
    "k8s": "Kubernetes",
    "aws": "AWS",
    "gcp": "GCP",
    "azure": "Azure",
    "linux": "Linux",
    "macos": "macOS",
    "vim": "Vim",
    "neovim": "Neovim",
    "emacs": "Emacs",
    "vscode": "VS Code",
    "git": "Git",
    "github": "GitHub",
    "gitlab": "GitLab",
    "terraform": "Terraform",
    "node.js": "Node.js",
    "nodejs": "Node.js",
    "java": "Java",
    "kotlin": "Kotlin",
    "c++": "C++",
    "c#": "C#",
    "php": "PHP",
    "duckdb": "DuckDB",
    "qdrant": "Qdrant",
    "numpy": "NumPy",
    "pytorch": "PyTorch",
    "tensorflow": "TensorFlow",
    "openai": "OpenAI",
    "chatgpt": "ChatGPT",
    "mongodb": "MongoDB",
    "elasticsearch": "Elasticsearch",
    "graphql": "GraphQL",
    "next.js": "Next.js",
    "vue": "Vue",
    "svelte": "Svelte",
    "angular": "Angular",
    "bigquery": "BigQuery",
    "haskell": "Haskell",
    "scala": "Scala",
    "elixir": "Elixir",
    "jupyter": "Jupyter",
    "pytest": "pytest",
    "mypy": "mypy",
    "ubuntu": "Ubuntu",
    "debian": "Debian",
    "ios": "iOS",
    "android": "Android",
    "faust": "Faust",
    "airflow": "Airflow",
    "pandas": "pandas",
}
_TECH_RE = "|".join(sorted((re.escape(k) for k in _TECH), key=len, reverse=True))
_AMBIGUOUS_TECH = _wordset(
    "rust react java vue angular faust scala elixir airflow pandas git node swift go android"
)
_NOT_ENTITY = (
    _wordset("""the a an my our your his her their its this that these those it he she they we you i i'm i've i'll
    i'd user assistant and but or so if then when while after before because since also just yes no ok
    okay hi hello hey thanks thank well oh wow today yesterday tomorrow tonight last next this every
    what why how where who which there here some any all both each many much more most few other such
    mr mrs ms dr english""")
    | {w.lower() for w in _MONTHS}
    | set(_WEEKDAYS)
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w+#&.'-]*[\w+#]|[A-Za-z0-9]")
_CONNECTORS = frozenset({"of", "de", "du", "van", "von", "da", "del", "la", "le", "y", "&"})


def _unpossessed(word: str) -> str:
    return word[:-2] if word.endswith("'s") else word


def _tech(word: str) -> str | None:
    canonical = _TECH.get(word.lower())
    # "rust", "react" and friends are ordinary words unless capitalised
    if canonical is None or (word.lower() in _AMBIGUOUS_TECH and not word[:1].isupper()):
        return None
    return canonical


def find_entities(text: str, known: Sequence[str] = ()) -> tuple[str, ...]:
    """Capitalised names (multi-word runs like "New York"), known tech names and
    ``known`` names (speakers) in order of appearance, deduplicated case-insensitively."""
    tokens = list(_TOKEN.finditer(text))
    known_fold = {k.casefold(): k for k in known if k}
    found: list[str] = []
    seen: set[str] = set()

    def add(name: str) -> None:
        name = _unpossessed(name.strip(" .'-"))
        if not name or name.casefold() in _NOT_ENTITY:
            return
        canonical = _tech(name) or known_fold.get(name.casefold(), name)
        if canonical.casefold() not in seen:
            seen.add(canonical.casefold())
            found.append(canonical)

    i = 0
    while i < len(tokens):
        tok = tokens[i].group(0)
        if _tech(_unpossessed(tok)):
            add(tok)
            i += 1
            continue
        if not tok[0].isupper():
            i += 1
            continue
        run = [i]
        j = i + 1
        while j < len(tokens) and not tokens[run[-1]].group(0).endswith("'s"):
            word = tokens[j].group(0)
            if text[tokens[j - 1].end() : tokens[j].start()] != " " or _tech(_unpossessed(word)):
                break
            if word[0].isupper():
                run.append(j)
                j += 1
            elif (
                word in _CONNECTORS
                and j + 1 < len(tokens)
                and tokens[j + 1].group(0)[0].isupper()
                and text[tokens[j].end() : tokens[j + 1].start()] == " "
            ):
                run.extend((j, j + 1))
                j += 2
            else:
                break
        words = [tokens[k].group(0) for k in run]
        while words and _unpossessed(words[0]).lower() in _NOT_ENTITY:
            words.pop(0)
        while words and _unpossessed(words[-1]).lower() in _NOT_ENTITY:
            words.pop()
        if words:
            phrase = _unpossessed(" ".join(words))
            at_start = not text[: tokens[i].start()].strip() or text[
                : tokens[i].start()
            ].rstrip().endswith((".", "!", "?"))
            # a lone capitalised first word is usually just a sentence start ("Painting is ...")
            lone = len(words) == 1 and at_start and words[0] == tok
            distinctive = any(c.isupper() for c in phrase[1:]) or phrase.casefold() in known_fold
            if not lone or distinctive:
                add(phrase)
        i = j
    return tuple(found)


# --- subject and slot ---------------------------------------------------------------

_RELATIONS = (
    r"wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|sister|brother|mother|mom|mum|father|dad|"
    r"son|daughter|kids?|child|baby|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|nephew|niece|"
    r"best friend|friend|colleague|coworker|boss|manager|mentor|roommate|neighbou?r|dog|cat|pet|puppy|kitten|"
    r"horse|team|company|startup|project|family|parents|children"
)
_SUBJ = (
    r"^(?!(?-i:He|She|They|It|This|That|There|These|Those|Here|What|Who)\b)"
    r"(?P<subj>(?-i:[A-Z])[\w.-]*(?: (?-i:[A-Z])[\w.-]*){0,2}?)(?:'s (?:(?:older|younger|little|big|best|new|old) )?"
    r"(?P<rel>" + _RELATIONS + r"))?(?P<group> and others)?\s+" + _ADVERB + r"*"
)
_JOBS = (
    r"engineer|developer|programmer|designer|manager|teacher|nurse|doctor|physician|lawyer|attorney|scientist|"
    r"analyst|student|consultant|writer|author|artist|painter|musician|counselor|counsellor|therapist|architect|"
    r"accountant|researcher|professor|chef|cook|pilot|driver|firefighter|officer|journalist|editor|photographer|"
    r"founder|ceo|cto|cfo|director|intern|freelancer|entrepreneur|pharmacist|dentist|veterinarian|vet|"
    r"mechanic|electrician|plumber|carpenter|salesperson|recruiter|librarian|administrator|admin|sre|"
    r"devops|technician|assistant|barista|waiter|waitress|cashier|soldier|homemaker|retiree|lead|"
    r"specialist|coordinator|strategist|owner|marketer|producer|actor|actress|singer|dancer|coach|tutor|"
    r"instructor|psychologist|surgeon|paramedic|clerk|secretary|banker|trader|investor|economist|"
    r"statistician|mathematician|physicist|chemist|biologist|data scientist|scientist"
)
_HEAD_SKIP = _wordset("a an the my your our their his her its some more less very really much")
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern, re.I))
    for slot, pattern in (
        (
            "name",
            _SUBJ.replace(r"\s+" + _ADVERB + "*", "") + r"'s (?:full |first |last |nick)?name is\b",
        ),
        ("name", _SUBJ + r"(?:is called|goes by|is named|wants to be called)\b"),
        ("email", _SUBJ.replace(r"\s+" + _ADVERB + "*", "") + r"'s (?:e-?mail|email address) is\b"),
        (
            "phone",
            _SUBJ.replace(r"\s+" + _ADVERB + "*", "")
            + r"'s (?:phone|cell|mobile)(?: number)? is\b",
        ),
        ("birthday", _SUBJ.replace(r"\s+" + _ADVERB + "*", "") + r"'s birthday is\b"),
        ("birthday", _SUBJ + r"(?:was|were) born on\b"),
        (
            "age",
            _SUBJ
            + r"(?:is|turned|just turned|will turn|turns) \d{1,3}(?: years old| years of age)?$",
        ),
        ("age", _SUBJ.replace(r"\s+" + _ADVERB + "*", "") + r"'s age is\b"),
        (
            "job_title",
            _SUBJ
            + r"(?:is|was|works as|is working as|has been|became|is now|started as|got promoted to|was promoted to) "
            r"(?:an? |the |a senior |a junior |a lead )?(?:[\w-]+ ){0,3}(?:" + _JOBS + r")s?\b",
        ),
        (
            "job_title",
            _SUBJ.replace(r"\s+" + _ADVERB + "*", "")
            + r"'s (?:job|role|title|position|occupation|profession|job title) is\b",
        ),
        (
            "employer",
            _SUBJ
            + r"(?:(?:works?|worked|is working|has been working|has worked|started working|is employed|"
            r"was employed|was hired|got hired|got a job|got a new job|started a (?:new )?job|landed a job|"
            r"is interning|interns|is an intern|does not work|did not work|is not working)(?: \w+){0,2}? (?:at|for|by|with)\s+"
            r"|(?:joined|now works for|quit|left|was laid off from|got laid off from) (?=(?-i:[A-Z])))",
        ),
        (
            "location",
            _SUBJ
            + r"(?:lives?|lived|is living|has lived|has been living|moved|has moved|relocated|has relocated|"
            r"is based|is located|resides?|resided|is staying|is moving|will move|will be moving|is relocating|"
            r"settled|is settling|does not live|no longer lives)(?: back)? (?:in|to|at|into)\b",
        ),
        (
            "origin",
            _SUBJ + r"(?:is|was|comes|came|is originally|was originally) (?:originally )?from\b",
        ),
        ("origin", _SUBJ + r"grew up in\b"),
        (
            "relationship_status",
            _SUBJ + r"(?:is|got|just got|recently got|has been|was) (?:now |happily )?"
            r"(?:married|single|divorced|engaged|widowed|separated)\b",
        ),
        (
            "diet",
            _SUBJ
            + r"(?:is|has been|became|went) (?:a |now |strictly |fully )?(?:vegetarian|vegan|pescatarian|"
            r"keto|paleo|gluten-free|lactose intolerant|kosher|halal)\b",
        ),
        ("diet", _SUBJ + r"does not eat (?:meat|fish|dairy|gluten|pork|beef)\b"),
    )
)
_FAVORITE = re.compile(
    r"^(?P<subj>(?-i:[A-Z])[\w.-]*(?: (?-i:[A-Z])[\w.-]*){0,2}?)'s (?:all-time |absolute |current |new |personal )?"
    r"favou?rite (?P<what>[a-z][a-z -]{0,40}?) (?:is|are|was|has become|will always be)\b",
    re.I,
)
_FAVORITE_REVERSED = re.compile(
    r"^.+? (?:is|are|was|has become) (?P<subj>(?-i:[A-Z])[\w.-]*(?: (?-i:[A-Z])[\w.-]*){0,2}?)'s (?:all-time |absolute |"
    r"current |new |personal )?favou?rite (?P<what>[a-z][a-z -]{0,40}?)$",
    re.I,
)
_PREFER = re.compile(
    _SUBJ
    + r"(?:prefers|would rather|likes|loves) (?P<a>.+?)(?: (?:over|to|rather than|instead of|vs\.?|versus|"
    r"more than|better than|than) (?P<b>.+?)| for (?P<topic>.+?))?$",
    re.I,
)
_PREFER_VERB = re.compile(
    r"\bprefers\b|\bwould rather\b|\b(?:likes|loves) .+ (?:better|more) than\b", re.I
)
_USES_FOR = re.compile(
    _SUBJ + r"(?:uses|is using|relies on) (?P<a>.+?) (?:for|as) (?P<topic>.+?)$", re.I
)
_VERSION = re.compile(
    r"(?<![\w.])(?P<tech>" + _TECH_RE + r")(?: version)? v?(?P<ver>\d+(?:\.\d+){0,3})(?![\w.])"
    r"|\bversion (?P<ver2>\d+(?:\.\d+){0,3}) of (?P<tech2>" + _TECH_RE + r")(?![\w])",
    re.I,
)


def _head(phrase: str) -> str:
    words: list[str] = [w for w in re.findall(r"[\w+#.-]+", phrase.lower()) if w not in _HEAD_SKIP]
    if not words:
        return ""
    if words[0] == "to" and len(words) > 1:
        return words[1]
    return words[-1].strip(".")


def _subject_key(match: re.Match[str], name: str, speaker_key: str) -> str:
    subj = match.group("subj")
    base = speaker_key if subj.casefold() == name.casefold() else subj.casefold()
    rel = match.groupdict().get("rel")
    return f"{base}'s {rel.lower()}" if rel else base


def detect_slot(text: str, name: str, speaker_key: str) -> tuple[str, str] | None:
    """(subject, slot) of a third-person claim, e.g. ("user", "employer"), or None.

    Slots name the question the claim answers, so "User works at Acme" and
    "User works at Initech" share ("user", "employer") and can contradict.
    """
    m = _FAVORITE.match(text) or _FAVORITE_REVERSED.match(text)
    if m:
        what = re.sub(r"[\s-]+", "_", m.group("what").strip().lower())
        return _subject_key(m, name, speaker_key), f"favorite_{what}"
    for slot, pattern in _SLOTS:
        m = pattern.match(text)
        if m:
            return _subject_key(m, name, speaker_key), slot
    m = _PREFER.match(text)
    if m and _PREFER_VERB.search(text):
        if m.group("b"):
            pair = sorted(h for h in (_head(m.group("a")), _head(m.group("b"))) if h)
            return _subject_key(m, name, speaker_key), "preference:" + "|".join(pair)
        topic = _head(m.group("topic") or m.group("a"))
        if topic:
            return _subject_key(m, name, speaker_key), f"preference:{topic}"
    m = _USES_FOR.match(text)
    if m and _head(m.group("topic")):
        return _subject_key(m, name, speaker_key), f"tool:{_head(m.group('topic'))}"
    v = _VERSION.search(text)
    if v:
        tech = v.group("tech") or v.group("tech2")
        return speaker_key, f"version:{_TECH.get(tech.lower(), tech).lower()}"
    return None


# --- the pipeline -------------------------------------------------------------------

_GENERIC_USER = frozenset(
    {"", "user", "human", "me", "you", "customer", "client", "u", "person", "anonymous"}
)


def display_name(turn: TurnView) -> str:
    """Name first-person claims are rewritten to: the speaker, or "User" if unnamed."""
    speaker = " ".join(turn.speaker.split())
    if speaker.casefold() in _GENERIC_USER or turn.role != "user":
        return "User"
    return speaker.title() if speaker.islower() else speaker


def _speaker_key(name: str) -> str:
    return "user" if name == "User" else (normalize(name) or "user")


@dataclass(frozen=True, slots=True)
class _Claim:
    text: str  # original wording, markers included (for cue words)
    body: str  # what gets rewritten
    confidence: float
    forced: Category | None = None  # set when the rewrite already decided it


_EMOTICON_TAIL = re.compile(r"(?:\s*(?:[:;]-?[)(DPp/\\|]|<3)|\s+(?:xd|xo+))+\s*$", re.I)
_VOCATIVE_HEAD = re.compile(
    r"^(?:(?:hey|hi|hello|thanks|thank you|oh|so|well|ok|okay|wow|yes|yeah|no)[, ]+)?(?P<name>[A-Z][\w-]*)\s*,\s*"
)
_TRAILING_MARKERS = re.compile(
    r"[,\s]+(?:btw|lol|haha|tbh|fyi|though|anyway|anyways|lmao|imo)[.!?]*$", re.I
)
_VOCATIVE_TAIL = re.compile(r",\s*(?P<name>[A-Z][\w-]*)\s*$")
_GREETING = re.compile(r"^(?:hi|hello|hey|greetings)\b", re.I)
_INTRO = re.compile(r"^(?:I'm|I am|i'm|i am) (?P<n>(?-i:[A-Z])[\w-]+(?: (?-i:[A-Z])[\w-]+)?)$")
_REWRITES: tuple[tuple[re.Pattern[str], str, Category | None], ...] = (
    (_REMIND_ME, "I need to {rest}", "commitment"),
    (_CALL_ME, "I want to be called {rest}", None),
    (_LETS, "I proposed to {rest}", "decision"),
)


def _strip_tail(text: str) -> str:
    text = _EMOTICON_TAIL.sub("", text)
    text = text.strip().rstrip(".!?…,;: ").strip().strip("\"'").strip()
    return _TRAILING_MARKERS.sub("", text)


def _strip_vocatives(text: str, names: frozenset[str]) -> str:
    m = _VOCATIVE_HEAD.match(text)
    if m and m.group("name").casefold() in names:
        text = text[m.end() :]
    m = _VOCATIVE_TAIL.search(text)
    if m and m.group("name").casefold() in names:
        text = text[: m.start()]
    return text


def _body(raw: str, names: frozenset[str]) -> str:
    # markers and vocatives interleave ("Wow, Mel, that's ..."): peel both twice
    body = raw
    for _ in range(2):
        body = _MARKERS.sub("", _strip_vocatives(body, names)).strip()
    return body


def _standing_order(body: str, raw: str, confidence: float) -> _Claim | None:
    """ "Always use type hints" is a rule the user sets for the assistant: keep it."""
    m = _STANDING_ORDER.match(body)
    if not m or _FIRST_PERSON.match(body) or not m.group("rest").strip():
        return None
    verb = m.group("verb").lower()
    verb = "not" if verb in ("don't", "do not") else verb
    category: Category = (
        "preference" if verb in ("use", "prefer", "stick to", "stick with") else "principle"
    )
    return _Claim(
        raw, f"I want the assistant to {verb} {m.group('rest').strip()}", confidence, category
    )


def _rewrite_request(body: str, raw: str, confidence: float) -> _Claim | None:
    """Requests that still state something: "remind me to X", "call me X", "let's X"."""
    for pattern, template, forced in _REWRITES:
        m = pattern.match(body)
        if m:
            return _Claim(raw, template.format(rest=m.group("rest")), confidence, forced)
    return None


def _question_content(body: str) -> str | None:
    """The statement inside a question ("..., since I moved to Boston?"), if any."""
    reason = _REASON_CLAUSE.search(body)
    if reason:
        return reason.group(1)
    for piece in (p.strip() for p in body.split(",")):
        if (
            _FIRST_PERSON.match(piece)
            and not _WONDER.match(piece)
            and not _QUESTION_START.match(piece)
        ):
            return piece
    return None


def _user_claims(sentence: str, names: frozenset[str]) -> list[_Claim]:
    question = sentence.rstrip().rstrip("\"')").endswith("?")
    raw_claims = split_claims(sentence)
    out: list[_Claim] = []
    for index, raw_claim in enumerate(raw_claims):
        raw = _strip_tail(raw_claim)
        if raw.isupper() and sum(ch.isalpha() for ch in raw) > 3:
            raw = raw.lower()  # shouting: case carries no names here, and "I'M" breaks the rules
        body = _body(raw, names)
        if not body or is_filler(body):
            continue
        confidence = _CONF_FIRST_PERSON
        if question and index == len(raw_claims) - 1:
            content = _question_content(body)
            if content is None:
                continue
            body, confidence = content, _CONF_FROM_QUESTION
        intro = _INTRO.match(body)
        if intro and _GREETING.match(raw):
            out.append(_Claim(raw, f"my name is {intro.group('n')}", confidence))
            continue
        rewritten = _rewrite_request(body, raw, confidence)
        if rewritten is not None:
            out.append(rewritten)
            continue
        standing = _standing_order(body, raw, confidence)
        if standing is not None:
            out.append(standing)
            continue
        if _IMPERATIVE.match(body) or (question and _QUESTION_START.match(body)):
            continue
        hedge = _HEDGE.match(body)
        if hedge:
            body, confidence = body[hedge.end() :], _CONF_HEDGED
        elif _HEDGE_WORDS.search(body):
            confidence = _CONF_HEDGED
        out.append(_Claim(raw, body, confidence))
    return out


def _assistant_claims(sentence: str) -> list[_Claim]:
    if sentence.rstrip().endswith("?"):
        return []
    out: list[_Claim] = []
    for raw in split_claims(sentence):
        raw = _strip_tail(raw)
        body = _ASSISTANT_LEAD_IN.sub("", raw).strip()
        if not re.match(r"^(?:you|your)\b", body, re.I) or _ADVICE.search(body):
            continue
        out.append(_Claim(raw, body, _CONF_ASSISTANT))
    return out


_ABOUT_ASSISTANT = frozenset({"preference", "principle", "correction"})
_RECURRING_SLOTS = frozenset({"birthday"})
_PRONOUN_OBJECT = re.compile(r"\b(?:it|that|this|them|those|these|one)\s*$", re.I)
_EMPHASIS = re.compile(
    r"\b(?:really|very|so much|important|never forget|must|always|never)\b", re.I
)


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _facts_of_turn(
    turn: TurnView, user_name: str, names: frozenset[str], known: tuple[str, ...]
) -> list[Fact]:
    if turn.role == "user":
        name, person = display_name(turn), "first"
    elif turn.role == "assistant":
        name, person = user_name, "second"
    else:
        return []
    speaker_key = _speaker_key(name)
    facts: list[Fact] = []
    for sentence in split_sentences(turn.text):
        claims = _user_claims(sentence, names) if person == "first" else _assistant_claims(sentence)
        for claim in claims:
            fact = _fact_of_claim(claim, turn, name, person, speaker_key, known)
            if fact is not None:
                facts.append(fact)
    return facts


def _fact_of_claim(
    claim: _Claim, turn: TurnView, name: str, person: str, speaker_key: str, known: tuple[str, ...]
) -> Fact | None:
    if len(claim.body) > _MAX_CLAIM_CHARS or not any(ch.isalnum() for ch in claim.body):
        return None
    first_person = person == "first" and bool(_FIRST_PERSON.search(claim.body))
    body = claim.body
    if person == "first" and _SECOND_PERSON.search(body):
        # "you" is the assistant when an unnamed user talks to one; a rule about how it
        # should behave is worth keeping ("I don't like it when you use bullet points").
        # Otherwise it is the other person, or small talk ("I'm so proud of you").
        if name != "User" or (claim.forced or classify(claim.text)) not in _ABOUT_ASSISTANT:
            return None
        body = to_third_person(body, "the assistant", "second")
    if first_person and not _has_content(body):
        return None
    if len(body.split()) <= 5 and _PRONOUN_OBJECT.search(body):
        return None  # "I really enjoy it": the "it" lives in another turn
    rewritten = to_third_person(body, name, person)
    dated = resolve_dates(rewritten, turn.occurred_at)
    text = _capitalize(" ".join(dated.text.split()))
    if len(text.split()) < 3 or not any(ch.isalnum() for ch in text):
        return None  # fragments like "User's sister" are not claims
    category = claim.forced or classify(claim.text)
    entities = find_entities(text, known)
    if name != "User" and name not in entities and name in text:
        entities = (name, *entities)
    slot = detect_slot(text, name, speaker_key)
    confidence = claim.confidence
    if not first_person and person == "first":
        # a statement not about the speaker is kept only with something concrete in it
        if not (entities or dated.has_date or slot):
            return None
        confidence = min(confidence, _CONF_THIRD_PARTY)
    if person == "second" and slot is None and category == "fact" and not dated.has_date:
        return None
    if category == "correction" and person == "first":
        confidence = max(confidence, _CONF_CORRECTION)
    valid_from, valid_until = dated.valid_from, dated.valid_until
    if slot is not None and slot[1] in _RECURRING_SLOTS:
        # the date of a birthday is the slot's value, not a bound on when the fact holds
        category, valid_from, valid_until = "fact", None, None
    kind: Kind = "episode" if category == "moment" or valid_from or valid_until else "note"
    return Fact(
        category=category,
        text=text,
        confidence=round(confidence, 3),
        entities=entities,
        valid_from=valid_from,
        valid_until=valid_until,
        kind=kind,
        source_turn_ids=(turn.turn_id,),
        subject=slot[0] if slot else (speaker_key if first_person or person == "second" else None),
        slot=slot[1] if slot else None,
        importance=_importance(category, slot is not None, claim.text),
    )


def _importance(category: Category, has_slot: bool, said: str) -> float:
    """Category baseline, more for a known slot (it can be asked about) and emphasis."""
    importance = _IMPORTANCE.get(category, 0.5) + (0.1 if has_slot else 0.0)
    if _EMPHASIS.search(said):
        importance += 0.1
    return round(min(importance, 1.0), 3)


def extract_rules(turns: Sequence[TurnView]) -> list[Fact]:
    """Facts stated in ``turns``, in order; the same claim twice becomes one fact with
    both source turns."""
    names = frozenset(
        display_name(t).casefold() for t in turns if t.role == "user" and display_name(t) != "User"
    )
    known = tuple(
        dict.fromkeys(
            display_name(t) for t in turns if t.role == "user" and display_name(t) != "User"
        )
    )
    merged: dict[str, Fact] = {}
    user_name = "User"
    for turn in turns:
        if turn.role == "user":
            user_name = display_name(turn)
        for fact in _facts_of_turn(turn, user_name, names, known):
            key = normalize(fact.text)
            previous = merged.get(key)
            if previous is None:
                merged[key] = fact
            else:
                sources = tuple(dict.fromkeys(previous.source_turn_ids + fact.source_turn_ids))
                merged[key] = replace(
                    previous,
                    source_turn_ids=sources,
                    confidence=max(previous.confidence, fact.confidence),
                )
    return list(merged.values())
