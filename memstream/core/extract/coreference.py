"""Coreference: a claim that opens with a pronoun ("She took me to a jazz bar", "It's a
bakery in Austin", "They seem simpler") gets the person or thing it points back to, found
in what was said before it in the session; an empty "it" ("It's important to ...", "It
sounds like ...") becomes the speaker's view; a reply without a subject ("Loves it.",
"Moved in last week.") gets the one the question was about, or the speaker.

Pure: a ``Session`` is the sentences of one extraction run so far, nothing else. The words
put in are always words of the session (a mention, a speaker's name) or a few function
words ("the", "is", "I think"): resolution never invents a name. When nothing fits, the
claim is left as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memstream.core.extract.dates import undated
from memstream.core.extract.gates import wordset
from memstream.core.extract.mentions import Gender, Kind, Mention, mentions, relation_noun
from memstream.core.extract.person import PAST_OR_FIXED
from memstream.core.extract.there import there_named

ASSISTANT = "the assistant"
_TURNS_BACK = 3  # how many earlier turns a pronoun may reach
_SENTENCES_BACK = 12
LONG_TURN = 400  # an assistant turn longer than this is generated content, not context


@dataclass(frozen=True, slots=True)
class Said:
    """One sentence of the session and who said it (a speaker's name, "User", or
    ``ASSISTANT``)."""

    text: str
    speaker: str
    turn: int
    first: bool  # the first sentence of its turn
    context: bool = True  # False: too long a turn to point back into


@dataclass
class Session:
    """What has been said so far in one extraction run, sentence by sentence, with the
    mentions of each worked out only when a pronoun needs them."""

    known: tuple[str, ...] = ()  # the speakers' names
    said: list[Said] = field(default_factory=list)
    _mentions: dict[int, tuple[Mention, ...]] = field(default_factory=dict)
    _found: dict[int, list[Mention]] = field(default_factory=dict)  # antecedents noted
    _names: set[str] = field(default_factory=set)
    _resolved: dict[str, str] = field(default_factory=dict)  # names pronouns became
    _named_upto: int = 0
    speakers: list[str] = field(default_factory=list)  # by turn

    def add_turn(self, speaker: str, sentences: list[str], *, context: bool = True) -> None:
        turn = len(self.speakers)
        self.speakers.append(speaker)
        for i, text in enumerate(sentences):
            self.said.append(Said(text, speaker, turn, i == 0, context))

    def addressee(self, turn: int) -> str | None:
        """Who a turn speaks to: the last speaker before it who is someone else."""
        me = self.speakers[turn]
        for other in reversed(self.speakers[:turn]):
            if other != me:
                return other
        return None

    def note(self, index: int, mention: Mention) -> None:
        """A pronoun of sentence ``index`` meant ``mention``: later ones may mean it too."""
        self._found.setdefault(index, []).append(mention)

    def mentions_of(self, index: int) -> tuple[Mention, ...]:
        cached = self._mentions.get(index)
        if cached is None:
            cached = mentions(self.said[index].text, self.known, self.seen_names())
            named = self._answered_name(index)
            cached = (named, *cached) if named is not None else cached
            self._mentions[index] = cached
        return (*self._found.get(index, ()), *cached)

    def _answered_name(self, index: int) -> Mention | None:
        """ "Biscuit." opening the answer to "What's its name?": the name is who later
        pronouns mean ("He's a beagle mix"), a pet for "its", a person for "his"/"her"."""
        said = self.said[index]
        if not said.first or said.turn == 0 or not _BARE_NAME.fullmatch(said.text):
            return None
        asked = [s for s in self.said[:index] if s.turn == said.turn - 1]
        whose = _ASKS_NAME.search(asked[-1].text) if asked else None
        if whose is None or asked[-1].speaker == said.speaker:
            return None
        owner = whose.group(1).lower()
        kind: Kind = "animal" if owner == "its" else "person"
        gender: Gender = "m" if owner == "his" else "f" if owner == "her" else ""
        return Mention(said.text.strip(" .!"), kind, gender, False, 0)

    def seen_names(self) -> frozenset[str]:
        for s in self.said[self._named_upto :]:
            self._names.update(w.casefold() for w in _INNER_CAPITAL.findall(s.text))
        self._named_upto = len(self.said)
        return frozenset(self._names)

    def names(self) -> tuple[str, ...]:
        """The speakers' names and the names pronouns were resolved to, as written, so
        such a name opening a claim ("Noor is on spring break", resolved from "She's ...")
        is known for one, not taken for a sentence start. (Names merely seen earlier are
        not: "Wow, Mel, that's great!" would make the vocative a named claim.)"""
        return (*self.known, *self._resolved.values()) if self._resolved else self.known

    def resolved_to(self, name: str) -> None:
        """A pronoun was resolved to ``name`` (as written): one of ``names()`` from now."""
        self._resolved.setdefault(name.casefold(), name)


_BARE_NAME = re.compile(r"\s*[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\s*[.!]*\s*")
_ASKS_NAME = re.compile(r"\bwhat(?:'s|\s+is|\s+was)\s+(its|his|her|their)\s+name\b", re.I)
_INNER_CAPITAL = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+")


@dataclass(frozen=True, slots=True)
class Where:
    """Where a claim was said: sentence ``index`` of the session, after ``before``."""

    index: int
    before: str = ""
    photo: str | None = None  # what a photo shared with the turn shows ("the sunset")


# --- what a pronoun may point to ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Wanted:
    animate: bool
    gender: str  # "m", "f" or "" (any)
    plural: bool
    places: bool = False

    def fits(self, m: Mention) -> bool:
        if m.plural != self.plural:
            return False
        if self.animate:
            return m.animate and (not self.gender or m.gender in ("", self.gender))
        if m.kind == "place":
            return self.places
        return m.kind == "thing" or (m.kind == "animal" and not m.gender)


_PRONOUNS = {
    "he": _Wanted(True, "m", False),
    "him": _Wanted(True, "m", False),
    "his": _Wanted(True, "m", False),
    "she": _Wanted(True, "f", False),
    "her": _Wanted(True, "f", False),
    "it": _Wanted(False, "", False, places=True),
    "its": _Wanted(False, "", False),
    "they": _Wanted(False, "", True),
    "them": _Wanted(False, "", True),
    "their": _Wanted(False, "", True),
    "this": _Wanted(False, "", False),
    "that": _Wanted(False, "", False),
    "these": _Wanted(False, "", True),
    "those": _Wanted(False, "", True),
}


def _antecedent(
    session: Session, where: Where, wanted: _Wanted, speaker: str
) -> tuple[Mention, str] | None:
    """The nearest mention that fits, and who said it: in the claim's own sentence before
    it, then sentence by sentence back; within a sentence a gender that matches, then the
    earliest."""
    addressee = session.addressee(session.said[where.index].turn) if session.said else None
    shut = {speaker.casefold(), (addressee or "").casefold(), "user", ASSISTANT}

    def best(found: tuple[Mention, ...]) -> Mention | None:
        fits = [m for m in found if wanted.fits(m) and m.text.casefold() not in shut]
        if not fits:
            return None
        if wanted.gender:
            exact = [m for m in fits if m.gender == wanted.gender]
            fits = exact or fits
        # at one start the longer mention: "Kai's cousin", not its owner "Kai"
        return min(fits, key=lambda m: (m.start, -len(m.text)))

    here = session.said[where.index]
    if where.before.strip():
        hit = best(mentions(where.before, session.known, session.seen_names()))
        if hit is not None:
            return hit, here.speaker
    turn = here.turn
    for i in range(where.index - 1, max(-1, where.index - 1 - _SENTENCES_BACK), -1):
        said = session.said[i]
        if turn - said.turn > (_TURNS_BACK if wanted.animate else 2):
            break
        if not said.context:
            continue
        # a thing is rarely named turns back: only the other side's question right before
        # sets one up ("How's the truck coming along?" - "It's almost there"); "they" stays
        # within the turn
        if not wanted.animate and not _may_name_things(session, where, i, speaker, wanted):
            continue
        found = session.mentions_of(i)
        if said.speaker == ASSISTANT:
            # the assistant's "see a vet", "ask a doctor" is advice about anyone: not whom
            # the user's next "she" means ("She's 12" is the cat)
            found = tuple(m for m in found if not _INDEFINITE.match(m.text))
        hit = best(found)
        if hit is not None:
            return hit, said.speaker
    return None


_INDEFINITE = re.compile(r"(?:a|an|any|some)\s", re.I)  # "a vet": anyone's
_OWNED_NAME = re.compile(r"\s+(?P<rel>[a-z]+)\s+(?P<name>[A-Z][a-z]+)\b")  # " daughter Yui"
_QUOTED_PRONOUN = re.compile(r"\b(he|she|him|her|they|them|it)\b(?!['’])", re.I)


def referent(session: Session, index: int, speaker: str) -> str | None:
    """Who or what the first third-person pronoun of sentence ``index`` (a question quoted
    whole, "Are you going to adopt her?") means, in words anyone may use ("Pepper",
    "Owen's grandson Leo"); None when it has none or nothing fits."""
    m = _QUOTED_PRONOUN.search(session.said[index].text)
    if m is None:
        return None
    before = session.said[index].text[: m.start()]
    hit = _antecedent(session, Where(index, before), _PRONOUNS[m.group(1).lower()], speaker)
    if hit is None:
        return None
    found, owner = hit
    words = said_by(found, owner, "", None)  # nobody's own: "my grandson" is Owen's
    if words is None or found.kind == "place":
        return None
    return words


def _may_name_things(session: Session, where: Where, i: int, speaker: str, wanted: _Wanted) -> bool:
    """Whether sentence ``i`` may name the thing a pronoun of ``where`` means. Things are
    rarely named far back: the two sentences before in the same turn; the other side's
    question right before ("How's the truck coming along?" - "It's almost there"); and
    what that question itself asked about with "it" ("Jonah got a job" - "Does he like
    it?" - "Loves it"). "They" stays within the turn."""
    said, here = session.said[i], session.said[where.index]
    if said.turn == here.turn:
        return where.index - i <= 2
    if wanted.plural:
        return False
    asked = [s for s in session.said if s.turn == here.turn - 1]
    if not asked or asked[0].speaker == speaker or not asked[-1].text.rstrip().endswith("?"):
        return False
    if said.turn == here.turn - 1:
        return said.text.rstrip().endswith("?")
    return said.turn == here.turn - 2 and _IT.search(asked[-1].text) is not None


_IT = re.compile(r"\bit\b", re.I)


_DETERMINER = re.compile(r"^(?:(?:a few|a couple of|some|a|an|this|that|these|those|the)\s+)", re.I)
_OWN = re.compile(r"^(?:my|our)\s+", re.I)
_YOURS = re.compile(r"^your\s+", re.I)
_THEIRS = re.compile(r"^(?:his|her|their|its)\s+", re.I)


def said_by(mention: Mention, owner: str, speaker: str, addressee: str | None) -> str | None:
    """The mention in the words of ``speaker`` (first person, as the claim is before it is
    rewritten): "my mom" said by Rosa is "my mom" for Rosa and "Rosa's mom" for anyone
    else; "your mom" said to Rosa is "my mom" for her. None when it cannot be said so."""
    text = mention.text
    if _OWN.match(text):
        if owner == speaker:
            return text
        if owner == ASSISTANT:
            return None
        return f"{owner}'s {_OWN.sub('', text)}"
    if _YOURS.match(text):
        if owner != speaker and speaker == _addressed(owner, addressee, speaker):
            return f"my {_YOURS.sub('', text)}"
        return None
    if _THEIRS.match(text):
        return None
    if _DETERMINER.match(text):
        rest = _DETERMINER.sub("", text)
        return f"the {rest}" if rest else None
    return text


def _addressed(owner: str, addressee: str | None, speaker: str) -> str:
    # in a two-party exchange whoever speaks now was spoken to before
    return speaker if addressee == owner else ""


# --- the rewrites ---------------------------------------------------------------------------

_OPENING = re.compile(
    r"^(?P<p>he|she|it|they|this|that|these|those|his|her|its|their)(?P<c>'s|'re|'ve|'d|'ll)?\b",
    re.I,
)
_CONNECTIVE = re.compile(r"^(?:(?:that|this) way|this time|that said|in that case)\s*,?\s+", re.I)
# a concessive clause left on its own by the clause split ("Although he ate a sock" of
# "Although he ate a sock and we ended up at the vet"): its pronoun is the claim's subject
_CONCESSIVE = re.compile(
    r"^(?:although|though|even though)\s+(?=(?:he|she|they|it)\b)(?![^,]*,)", re.I
)
# a time said before the subject stays, the pronoun after it is resolved ("For now he just
# chews my shoes")
_TIME_FIRST = re.compile(
    r"^(?:for now|right now|these days|lately|at the moment|nowadays)\s*,?\s+(?=(?:he|she|they)\b)",
    re.I,
)
_SEEMS_ANY = re.compile(
    r"^it\s+(?:(?:really|just|definitely|also|still|kind of|kinda)\s+)?"
    r"(?:sounds|seems|feels|looks)\s+(?:like|as if|as though)\s+",
    re.I,
)
_NP_START = wordset("a an the my your our such this that")
_AUX = wordset("""is are was were will would can could has have had should might may must
    did does do isn't aren't wasn't won't can't""")
_ADJECTIVES = (
    "important|interesting|nice|good|great|hard|harder|easy|easier|difficult|tough|reassuring|"
    "comforting|helpful|useful|fun|exciting|frustrating|annoying|cool|amazing|weird|strange|funny|"
    "crazy|tricky|tempting|surprising|sad|scary|stressful|exhausting|overwhelming|worth|better|"
    "best|possible|impossible|necessary|essential|crucial|clear|obvious|fair|okay|ok|fine|"
    "natural|normal|encouraging|motivating|rewarding|satisfying|refreshing|a relief|wild|"
    "wonderful|lovely|awesome|challenging|manageable|doable|smart|wise|good to know|fascinating|"
    "humbling|inspiring|validating|nerve-wracking|relaxing|hard to believe|a good idea|a great idea|"
    "clearer|simpler|nicer|faster|cheaper|worse|more important|more fun|easiest|hardest"
)
_EXTRAPOSED = re.compile(
    r"^it(?P<v>'s been|'s|\s+is|\s+was|\s+has been|\s+would be|'d be|\s+will be|'ll be)\s+"
    r"(?P<adv>(?:(?:really|so|way|much|pretty|quite|also|just|definitely|still|always|kind of|"
    r"kinda|super|very|actually|honestly)\s+)*)"
    r"(?P<adj>" + _ADJECTIVES + r")(?P<when>\s+(?:now|then|enough))?"
    r"\s+(?P<rest>(?:to|that|knowing|seeing|how|when|if|having|\w+ing)\b.*)$",
    re.I,
)
_IT_VERB = re.compile(
    r"^it\s+(?P<adv>(?:(?:really|just|definitely|also|still|actually|honestly)\s+)*)"
    r"(?P<verb>makes sense|made sense|helps|helped|matters|feels good|felt good|hurts|"
    r"bothers me|worries me|amazes me|surprises me)\s+(?P<rest>(?:to|that|when|knowing|seeing|how|"
    r"if|having)\b.*)$",
    re.I,
)
_SINCE = re.compile(
    r"^it(?:'s|\s+has)\s+(?:only\s+)?been\s+(?:a while|a bit|ages|forever|a long time|too long|"
    r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|a few|several|many)\s+"
    r"(?:days|weeks|months|years|day|week|month|year))\s+since\b",
    re.I,
)
_NAME_IS = re.compile(
    r"^(?P<p>(?i:her|his|their))\s+name\s+is\s+(?P<n>[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?)"
    r"(?:\s*[,;]\s*(?:and\s+)?(?:she|he|they)(?:'s|\s+is|'re|\s+are)\s+(?P<rest>.+))?$",
)
_HAS_AUX = wordset("""been got gotten had done gone seen made taken given known shown written
    grown eaten driven ridden spoken broken chosen forgotten begun become come run""")
_ADVERBS = wordset("already just never really finally also still always recently ever since")
_WOULD_HAD = wordset("been had gone done already never just seen met")
_DEMONSTRATIVE_NOUN = re.compile(
    r"^(?P<d>this|that|these|those)\s+(?P<np>(?:(?:updated|new|revised|whole|final|last|first|"
    r"second|next|latest|little|same|other|kind of|type of|sort of)\s+)?(?P<noun>[a-z][\w-]+))\b(?!['’])",
    re.I,
)
# Words that may follow "this"/"that" as their verb or adverb: then it is a pronoun.
_AFTER_PRONOUN = wordset("""is was are were has had have does did do will would can could should
    may might must seems seem seemed looks look looked sounds sound sounded feels feel felt
    makes made helps helped means meant works worked gives gave shows showed fits fit gets got
    goes went sucks rocks definitely really just also totally actually still probably
    honestly kind kinda sort""")
# "these days", "this morning", "that summer": a time, not a thing pointed back to
_TIME_NOUNS = wordset("""day days week weeks weekend weekends morning mornings afternoon evening
    evenings night nights month months year years summer winter spring fall autumn season
    semester time times moment""")
_SUBJECTLESS_S = wordset("""loves likes hates wants needs says thinks works lives goes has does
    enjoys prefers misses keeps gets makes plays sleeps eats runs""")
_ASKED_ABOUT = re.compile(
    r"\b(?i:does|did|is|was|has|will|would|can|could|do)\s+(?P<s>(?i:he|she)|[A-Z][a-z]+)\b"
    r"(?P<rest>[^?]*)\?"
)
_TRAILING = re.compile(r"\b(?P<p>it|them)\s*$", re.I)
_DATED = re.compile(
    r"^it(?:'s|\s+is|\s+was|'ll be|\s+will be)\s+(?:(?:on|in|at|due|scheduled for)\s+)?"
    r"(?:\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|tomorrow|today|tonight|next|this)",
    re.I,
)
_HAS_SUBJECT = re.compile(r"^(?:(?i:I|we|my|our)\b|[A-Z][a-z]+(?<!ing)(?:'s)?\s+(?!it\b))")
_CLEFT = re.compile(
    r"^(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:(?:only|not|just)\s+)?"
    r"(?:what|why|how|because|when|where|all|it|that)\b",
    re.I,
)
_MEASURE = re.compile(
    r"^it(?:'s|\s+is|\s+was|'ll be|\s+will be)\s+(?:(?:only|just|about|almost|nearly|like|over|been|"
    r"under|less than|more than|around)\s+)?(?:a|an|\d[\d,.]*|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|twenty|thirty|a few|a couple of|several)\s+(?:minutes?|hours?|days?|weeks?|"
    r"months?|years?|miles?|km|kilometers?|blocks?|dollars?|bucks|degrees?)\b",
    re.I,
)


def _lead(text: str) -> str:
    return text[:1].lower() + text[1:]


def _subject(name: str, contraction: str, rest: str, plural: bool) -> str:
    """``name`` as the subject in place of a pronoun with its contraction ("she's" ->
    "Noor is", "it's been" -> "The plan has been")."""
    c = contraction.lower()
    words = [w.lower() for w in rest.split()[:4]]
    first = next((w for w in words if w not in _ADVERBS), "")
    if c == "'s":
        return f"{name} {'has' if first in _HAS_AUX else 'is'}"
    if c == "'re":
        return f"{name} are"
    if c == "'ve":
        return f"{name} have"
    if c == "'d":
        return f"{name} {'had' if first in _WOULD_HAD else 'would'}"
    if c == "'ll":
        return f"{name} will"
    return name


def resolve(
    body: str, session: Session, where: Where, speaker: str, *, after_assistant: bool
) -> str:
    """``body`` (a claim of ``speaker``, first person) with its opening pronoun, empty "it"
    or missing subject resolved against ``session``; unchanged when nothing fits.

    ``after_assistant``: the claim opens a turn that answers the assistant ("This plan
    looks great" is about the assistant's plan)."""
    try:
        return there_named(_resolve(body, session, where, speaker, after_assistant), session, where)
    except (IndexError, ValueError):  # a bad index must never cost the claim
        return body


_FIRST_WORDS = wordset("""he she it they this that these those his her its their he's she's
    it's they're they've they'd they'll he'd she'd he'll she'll it'll that's this's""")


def _may_resolve(body: str) -> bool:
    """Cheap test first: most claims open with nothing to resolve."""
    first = body.split(None, 1)[0].lower().rstrip(",.!") if body.split() else ""
    if first in _FIRST_WORDS or first in _SUBJECTLESS_S or first in PAST_OR_FIXED:
        return True
    if first in _LEADING_ADVERBS:
        return True  # "Just finished ..."
    if len(first) > 4 and first.endswith("ed"):
        return True
    if " it " in body or body.endswith(" it"):
        return True  # an object "it" in a reply (_reply_object)
    return len(body.split()) <= 5 and _TRAILING.search(body) is not None


def _resolve(body: str, session: Session, where: Where, speaker: str, after_assistant: bool) -> str:
    concessive = _CONCESSIVE.match(body)
    if concessive:
        body = body[concessive.end() :]
    time_first = _TIME_FIRST.match(body)
    if time_first:
        rest = _resolve(body[time_first.end() :], session, where, speaker, after_assistant)
        return body[: time_first.end()] + rest
    if not _may_resolve(body):
        return body
    m = _CONNECTIVE.match(body)
    if m:
        body = body[m.end() :]
    for rewrite in _EMPTY_IT:
        out = rewrite(body)
        if out is not None:
            return out
    out = _subjectless(body, session, where, speaker)
    if out is None and body.split()[0].lower() in _SUBJECTLESS_S:
        return body  # whose news it is stays unknown
    body = out if out is not None else _opening(body, session, where, speaker, after_assistant)
    return _reply_object(_trailing(body, session, where, speaker), session, where, speaker)


def _reply_object(body: str, session: Session, where: Where, speaker: str) -> str:
    """ "I can give it to you tomorrow" answering "Can I borrow your ladder?": "it" is the
    ladder. Only in the first sentence of a reply, and only a thing the question named."""
    m = _OBJECT_IT.search(body)
    here = session.said[where.index]
    earlier = sum(1 for s in session.said[: where.index] if s.turn == here.turn)
    if m is None or where.before.strip() or earlier > 1:  # "Sure thing! I can give it..."
        return body
    asked = [i for i, s in enumerate(session.said) if s.turn == here.turn - 1]
    if not asked or session.said[asked[0]].speaker == speaker:
        return body
    if not session.said[asked[-1]].text.rstrip().endswith("?"):
        return body
    things = [
        mention
        for mention in session.mentions_of(asked[-1])
        if mention.kind == "thing" and not mention.plural
    ]
    if not things:
        return body
    owner = session.said[asked[-1]].speaker
    words = said_by(min(things, key=lambda t: t.start), owner, speaker, owner)
    return body if words is None else body[: m.start()] + undated(words) + body[m.end() :]


_OBJECT_IT = re.compile(r"(?<=\w )it\b(?!['’])")


def _seems(body: str) -> str | None:
    m = _SEEMS_ANY.match(body)
    if not m:
        return None
    rest = body[m.end() :]
    words = rest.lower().split()[:7]
    if words and words[0] in _NP_START and _AUX.isdisjoint(words):
        return None  # "It sounds like a good fit": "it" is a thing
    return f"I think {rest}"


def _extraposed(body: str) -> str | None:
    m = _EXTRAPOSED.match(body)
    if not m:
        return None
    verb = m.group("v").strip().lower()
    when = m.group("when") or ""
    if verb in ("was", "is", "'s") or "been" in verb:
        found = "find" if verb in ("is", "'s") else "found"
        return f"I {found} it {m.group('adv')}{m.group('adj')}{when} {m.group('rest')}"
    be = "would be" if "d" in verb else "will be"
    return f"I think it {be} {m.group('adv')}{m.group('adj')}{when} {m.group('rest')}"


def _it_verb(body: str) -> str | None:
    m = _IT_VERB.match(body)
    return f"I think it {m.group('adv')}{m.group('verb')} {m.group('rest')}" if m else None


def _since(body: str) -> str | None:
    return f"I feel {_lead(body)}" if _SINCE.match(body) else None


_EMPTY_IT: tuple[Callable[[str], str | None], ...] = (_seems, _extraposed, _it_verb, _since)


def _opening(body: str, session: Session, where: Where, speaker: str, after_assistant: bool) -> str:
    named = _NAME_IS.match(body)
    if named:  # "Her name is Tess, she's a vet": Tess is the vet; whose name, unsaid
        return f"{named.group('n')} is {named.group('rest')}" if named.group("rest") else body
    # "It's only three hours", "it's on Friday": no thing meant, unless the sentence named
    # one before ("I start my training in May, it's six months of ground school")
    timed = (_MEASURE.match(body) or _DATED.match(body)) and not _names_a_thing_before(
        session, where
    )
    if timed or (_CLEFT.match(body) and not after_assistant):
        return body  # "It's only three hours", "That's why": no thing meant
    dem = _DEMONSTRATIVE_NOUN.match(body)
    if (
        dem
        and dem.group("noun").lower() not in _AFTER_PRONOUN
        and dem.group("noun").lower() not in _TIME_NOUNS
    ):
        rest = body[dem.end() :]
        if dem.group("noun").lower() == "one":
            return _one(body, dem, session, where, speaker)
        if after_assistant:
            return f"{ASSISTANT}'s {dem.group('np')}{rest}"
        return f"the {dem.group('np')}{rest}"
    m = _OPENING.match(body)
    if not m:
        return body
    pronoun = m.group("p").lower()
    rest = body[m.end() :]
    if where.photo and pronoun in ("it", "this", "that") and not where.before.strip():
        # "This is my favourite spot" said with a photo of a lake at sunset
        return _subject(undated(where.photo), m.group("c") or "", rest, False) + rest
    if pronoun in ("this", "that", "these", "those"):
        # a bare demonstrative points at what was just said, not at a thing: only an
        # answer to the assistant says what ("That didn't work" is about its advice)
        if after_assistant and pronoun in ("this", "that") and not _CLEFT.match(body):
            return f"what {ASSISTANT} suggested" + _be(m.group("c") or "", rest) + rest
        return body
    possessive = pronoun in ("his", "its", "their") or (
        pronoun == "her" and not m.group("c") and bool(rest[:1].isspace())
    )
    if pronoun in ("his", "her", "its", "their") and not possessive:
        return body
    hit = _antecedent(session, where, _PRONOUNS[pronoun], speaker)
    if hit is None:
        named = _OWNED_NAME.match(rest) if possessive else None
        if named and relation_noun(named.group("rel").lower()):
            # "Their daughter Yui taught us origami": whose daughter is unsaid, Yui is not
            return named.group("name") + rest[named.end() :]
        return body
    found, owner = hit
    words = said_by(found, owner, speaker, session.addressee(session.said[where.index].turn))
    if words is None:
        return body
    # later pronouns may mean the same one, in the words used now
    session.note(where.index, Mention(words, found.kind, found.gender, found.plural, -1))
    if (
        found.animate  # a person or a named pet ("Miso is on antibiotics")
        and words == found.text
        and words.replace(" ", "").isalpha()
        and all(w[:1].isupper() for w in words.split())  # a name ("Noor"), not "my sister"
    ):
        session.resolved_to(words)
    if possessive:
        return f"{undated(words)}'s{rest}"
    if found.animate and not found.plural:
        rest = _aged(m.group("c") or "", rest)
    return _subject(undated(words), m.group("c") or "", rest, found.plural) + rest


# "She's 12", "he is seven": an age ("How old is Mochi?" shares "old" with it then)
_BARE_AGE = re.compile(
    r"^(\s+(?:is\s+|was\s+|turned\s+|just\s+turned\s+)?)(\d{1,3}|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|"
    r"nineteen|twenty)\b(?=\s*(?:$|[,.!;]|and\b|now\b|so\b|but\b|already\b))",
    re.I,
)


def _aged(contraction: str, rest: str) -> str:
    """``rest`` with "years old" after a bare age said of a person or an animal ("She's
    12", "he is seven"; not "He 12")."""
    m = _BARE_AGE.match(rest) if contraction.lower() in ("'s", "") else None
    if m is None or (not contraction and not m.group(1).strip()):
        return rest
    return f"{rest[: m.end()]} years old{rest[m.end() :]}"


def _names_a_thing_before(session: Session, where: Where) -> bool:
    """Whether the claim's sentence names a thing before it: then "it's in September" is
    that thing's date ("I signed up for a half marathon, it's in September"), "it's six
    months" its length."""
    if not where.before.strip():
        return False
    found = mentions(where.before, session.known, session.seen_names())
    return any(m.kind == "thing" and not m.plural for m in found)


def _be(contraction: str, rest: str) -> str:
    return " " + _subject("", contraction, rest, False).strip() if contraction else ""


def _one(body: str, dem: re.Match[str], session: Session, where: Where, speaker: str) -> str:
    """ "This one has me confused": the thing just mentioned."""
    hit = _antecedent(session, where, _Wanted(False, "", False), speaker)
    if hit is None:
        return body
    said = session.said[where.index]
    words = said_by(hit[0], hit[1], speaker, session.addressee(said.turn))
    return body if words is None else undated(words) + body[dem.end() :]


def _subjectless(body: str, session: Session, where: Where, speaker: str) -> str | None:
    """ "Loves it." answering "Does he like it?" is about him; "Moved in last week." with no
    such question is the speaker's own news."""
    words = body.split()
    first = words[0] if words else ""
    low = first.lower().strip(",.!")
    if low in _LEADING_ADVERBS and len(words) > 2:
        # "Just finished Becoming by Michelle Obama": the verb after the adverb says it
        low = words[1].lower().strip(",.!")
    past = low in _PAST or (len(low) > 4 and low.endswith("ed"))
    third = low in _SUBJECTLESS_S
    negated = low in _NEGATED_MODALS
    if not (past or third or negated) or not first[:1].isupper() or where.before.strip():
        return None
    if len(words) < 2 or _OWN_OBJECT.search(body):
        return None  # "Called me right after": someone else did
    said = session.said[where.index]
    asked = _question_subject(session, where, speaker) if said.first else None
    if asked is not None:
        return f"{asked} {_lead(body)}"
    return f"I {_lead(body)}" if past or negated else None


_PAST = wordset("""went got made took saw bought began ran met found gave knew thought told
    became came wrote spent sold won lost built taught brought heard kept paid sent drove rode
    flew grew ate forgot chose broke spoke woke wore caught slept swam sang drank finished""")
_NEGATED_MODALS = wordset("wouldn't won't can't couldn't didn't haven't")
_LEADING_ADVERBS = wordset("just finally also already recently actually literally totally")
# "Called me right after": someone else did it; "Sold my car" is the speaker's own doing
_OWN_OBJECT = re.compile(r"\bme\b", re.I)


def _question_subject(session: Session, where: Where, speaker: str) -> str | None:
    """The person the other speaker's question right before was about ("Does he like it?")."""
    turn = session.said[where.index].turn
    for i in range(where.index - 1, -1, -1):
        said = session.said[i]
        if said.turn != turn - 1 or said.speaker == speaker:
            return None
        m = _ASKED_ABOUT.search(said.text)
        if m is None:
            continue
        subject = m.group("s")
        if subject.lower() in ("he", "she"):
            hit = _antecedent(session, Where(i), _PRONOUNS[subject.lower()], speaker)
            return None if hit is None else said_by(hit[0], hit[1], speaker, said.speaker)
        return subject if subject.casefold() != speaker.casefold() else None
    return None


def _trailing(body: str, session: Session, where: Where, speaker: str) -> str:
    """A short claim ending in "it" ("Jonah loves it"): the thing it means, if any."""
    if len(body.split()) > 5 or not _HAS_SUBJECT.match(body):
        return body
    m = _TRAILING.search(body)
    if not m:
        return body
    wanted = _Wanted(False, "", m.group("p").lower() == "them")
    hit = _antecedent(session, where, wanted, speaker)
    if hit is None:
        return body
    said = session.said[where.index]
    words = said_by(hit[0], hit[1], speaker, session.addressee(said.turn))
    return body if words is None else body[: m.start()] + undated(words)
