"""Rule-based fact extraction: what users get offline, and the LLM extractor's fallback.

Pure and deterministic: the only notion of "now" is each turn's ``occurred_at``.
Pipeline per turn: clean -> sentences -> atomic claims -> drop filler -> rewrite into
the third person -> resolve dates -> classify, find entities and subject/slot.

Roles: user turns are the main source. Assistant turns contribute only when the
assistant restates something about the user in the second person ("You mentioned you
live in Boston"), at low confidence: assistant prose is mostly suggestions and
generated content, and treating it as memory would let the model write its own
guesses into the user's profile. System and tool turns contribute nothing.

Speed (this runs on a stream agent's hot path): each pattern is gated on the wording it
cannot match without (``core.extract.gates``), so a claim meets only the few patterns that
may match it; the results are those of running every pattern on every claim.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import replace

from memstream.core.extract.answers import (
    Choice,
    answer_text,
    choice_made,
    choice_text,
    question_answered,
)
from memstream.core.extract.claims import (
    CONF_CORRECTION,
    CONF_THIRD_PARTY,
    Claim,
    assistant_claims,
    display_name,
    speaker_key_of,
    user_claims,
)
from memstream.core.extract.concrete import concrete as is_concrete
from memstream.core.extract.coreference import ASSISTANT, LONG_TURN, Session, Where, resolve
from memstream.core.extract.cues import FIRST_PERSON, SECOND_PERSON_WORDS, classify_worded
from memstream.core.extract.dates import resolve_dates_worded, undated
from memstream.core.extract.entities import find_entities_worded
from memstream.core.extract.filler import claim_words, has_content, substantive
from memstream.core.extract.gates import Caseless, words_of, wordset
from memstream.core.extract.images import caption_of, shown, without_markers
from memstream.core.extract.person import addressed_to, third_person
from memstream.core.extract.sentences import split_sentences
from memstream.core.extract.slots import detect_slot_worded, restated
from memstream.core.facts import Fact, TurnView
from memstream.core.hashing import normalize
from memstream.core.importance import Channels, spectrum
from memstream.core.signals import scan
from memstream.schemas.events import Category, Kind

RULES_VERSION = "rules-v1"


_MAX_CLAIM_CHARS = 400  # longer "claims" are pasted documents, not statements


_ABOUT_ASSISTANT = frozenset({"preference", "principle", "correction"})
_RECURRING_SLOTS = frozenset({"birthday"})
_PRONOUN_OBJECT = re.compile(r"\b(?:it|that|this|them|those|these|one)\s*$", re.I)
# _EMPHASIS matches where one of these is a word, and maybe where "so" and "much" are.
_EMPHASIS_WORDS = wordset("really very important must always never")
_SO_MUCH = wordset("so much")
_EMPHASIS = re.compile(
    r"\b(?:really|very|so much|important|never forget|must|always|never)\b", re.I
)
_EMPHASIS_ANY = Caseless(_EMPHASIS)


# A subject and an auxiliary with nothing after it: the rest was in the question ("Is she
# okay?" - "She is now").
_ELLIPTICAL = re.compile(
    r"^(?:\S+\s+){1,3}(?:is|are|was|were|am|did|does|do|has|have|had|will|would|can|could|"
    r"should)(?:\s+(?:now|too|still|again|already|not|so|as well))?[.!]?$",
    re.I,
)


_AND = re.compile(r"\s+and\s+")
# what may start the clause after "and": a subject, or the verb of the first one ("and
# thinks you're ...", "and says hi to you")
_CLAUSE_START = wordset("i you he she they we it")
_SAYS = wordset("""think say hope want know wish send love miss feel believe tell ask""")


def _before_you(body: str) -> str | None:
    """The first conjunct of ``body`` when only what follows its "and" speaks to someone
    ("Ella is seven and thinks you're the coolest person alive"), else None."""
    parts = _AND.split(body, maxsplit=1)
    if len(parts) < 2 or len(parts[0].split()) < 3:
        return None
    after = parts[1].split(None, 1)[0].lower()
    if after not in _CLAUSE_START and not (after.endswith("s") and after[:-1] in _SAYS):
        return None  # "the difference between independent and mutually exclusive events"
    head = parts[0]
    if head.count("\x02") != head.count("\x03"):
        return None  # inside a caption or a date we wrote
    return head if SECOND_PERSON_WORDS.isdisjoint(words_of(head)) else None


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _facts_of_turn(
    turn: TurnView,
    user_name: str,
    names: frozenset[str],
    known: tuple[str, ...],
    session: Session,
    date_gates: bool = True,
) -> list[Fact]:
    caption = turn.image_caption or caption_of(None, turn.text)
    sentences = split_sentences(without_markers(turn.text) if caption else turn.text)
    if turn.role == "user":
        name, person = display_name(turn), "first"
        speaker = name
    elif turn.role == "assistant":
        name, person = user_name, "second"
        speaker = ASSISTANT
    else:
        return []
    answers = session.speakers[-1:] == [ASSISTANT]
    session.add_turn(speaker, sentences, context=person == "first" or len(turn.text) <= LONG_TURN)
    turn_index = len(session.speakers) - 1
    base = len(session.said) - len(sentences)
    addressee = session.addressee(turn_index)
    speaker_key = speaker_key_of(name)
    facts: list[Fact] = []
    photo = None
    if caption and person == "first":
        photo = "the " + _ARTICLE.sub("", shown(caption))
        fact = _photo_fact(caption, sentences, turn, name, speaker_key, known, addressee)
        if fact is not None:
            facts.append(fact)
    for k, sentence in enumerate(sentences):
        claims = (
            user_claims(sentence, names, sentences[k - 1] if k else "")
            if person == "first"
            else assistant_claims(sentence)
        )
        for claim in claims:
            named_here = known
            if person == "first":
                where = Where(base + k, photo=photo)
                claim = _resolved(claim, sentence, session, where, name, answers and k == 0)
                # with the names pronouns were resolved to ("Noor is on spring break",
                # from "She's ..."): a capital opening a claim is otherwise no name
                named_here = session.names()
            facts.extend(
                _fact_of_claim(
                    claim, turn, name, person, speaker_key, named_here, addressee, date_gates
                )
            )
    may_answer = person == "first" and photo is None  # a photo turn shares, not answers
    choice = choice_made(session, turn_index, speaker, turn.text) if may_answer else None
    question = (
        question_answered(session, turn_index, speaker, turn.text)
        if may_answer and choice is None
        else None
    )
    if choice:  # the reply picks an option offered: a preference, said where offered
        asked, about = choice.offer, None
    elif question:
        asked, about = question.text, question.about
    else:
        return facts
    said = " ".join(turn.text.split())
    answered = _answer_fact(asked, said, turn, name, speaker_key, known, about, choice)
    if answered is not None:
        # the fragments cut from the answer as said ("Goalie, like his mother did") say
        # nothing alone; what is about the speaker, or was rewritten to stand alone (a
        # pronoun resolved: "Jonah loves the job at a bike shop"), stays
        said = said.casefold()
        facts = [f for f in facts if f.subject is not None or f.text.casefold() not in said] + [
            answered
        ]
    return facts


def _answer_fact(
    question: str,
    said: str,
    turn: TurnView,
    name: str,
    speaker_key: str,
    known: tuple[str, ...],
    about: str | None = None,
    choice: Choice | None = None,
) -> Fact | None:
    """A short answer (``said``: the turn's words, spaces normalised) with the question it
    answers, or the option it picks from ``question`` (``core.extract.answers``)."""
    said_words = words_of(said)
    dated = resolve_dates_worded(said, turn.occurred_at, said_words)
    text = (
        choice_text(choice, name, dated.text)
        if choice
        else answer_text(question, name, dated.text, about)
    )
    if text is None:
        return None
    category: Category = "preference" if choice else classify_worded(said, said_words)
    # each part alone: a word opening a quotation is no name ("Asked "Eating anything ...")
    entities = tuple(
        dict.fromkeys(
            (
                *find_entities_worded(question, known, words_of(question)),
                *find_entities_worded(dated.text, known, words_of(dated.text)),
            )
        )
    )
    named = any(e != name for e in entities)
    if name != "User" and name not in entities:
        entities = (name, *entities)
    return Fact(
        category=category,
        text=text,
        confidence=CONF_THIRD_PARTY,  # the answer is the speaker's; its reading is ours
        entities=entities,
        kind="note",
        source_turn_ids=(turn.turn_id,),
        subject=speaker_key,
        importance=_importance(
            category, False, named, dated.has_date, name, said, said_words, words_of(question)
        ),
    )


_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_PHOTO_SAID_CHARS = 240
_CONF_PHOTO = 0.8


def _photo_fact(
    caption: str,
    sentences: list[str],
    turn: TurnView,
    name: str,
    speaker_key: str,
    known: tuple[str, ...],
    addressee: str | None,
) -> Fact | None:
    """ "Mel shared a photo of a sunset over the lake on 8 May 2024: Mel and others went
    there on the weekend of 4 May 2024": the photo with what was said around it."""
    head = f"I shared a photo of {undated(shown(caption))} today"
    # the sentences that state something ("So good!" and "Look!" do not)
    said = " ".join(s for s in sentences if user_claims(s, frozenset()))
    if len(said) > _PHOTO_SAID_CHARS:
        said = said[:_PHOTO_SAID_CHARS].rsplit(" ", 1)[0] + " …"
    for body in (f"{head}: {said}", head) if said.strip() else (head,):
        claim = Claim(body, body, _CONF_PHOTO, "moment")
        found = _fact_of_claim(claim, turn, name, "first", speaker_key, known, addressee)
        if found:
            return found[0]
    return None


def _resolved(
    claim: Claim, sentence: str, session: Session, where: Where, name: str, opens_reply: bool
) -> Claim:
    """The claim with what its pronouns point to in the session (core.extract.coreference)."""
    at = sentence.find(claim.body[:24]) if claim.body else -1
    before = sentence[:at] if at > 0 else ""
    body = resolve(
        claim.body,
        session,
        Where(where.index, before, where.photo),
        name,
        after_assistant=opens_reply and not before.strip(),
    )
    return claim if body == claim.body else claim._replace(body=body, words=None)


def _fact_of_claim(
    claim: Claim,
    turn: TurnView,
    name: str,
    person: str,
    speaker_key: str,
    known: tuple[str, ...],
    addressee: str | None = None,
    date_gates: bool = True,
) -> list[Fact]:
    if len(claim.body) > _MAX_CLAIM_CHARS or not any(ch.isalnum() for ch in claim.body):
        return []
    first_person = person == "first" and bool(FIRST_PERSON.search(claim.body))
    body = claim.body
    body_words = words_of(body)
    said_words = body_words if claim.text == body else words_of(claim.text)
    to_someone = False
    # spoken to another person by name (in a chat between two people), not the assistant
    to_person = (
        person == "first"
        and addressee is not None
        and addressee not in (ASSISTANT, "User", name)
        and name != "User"
    )
    if to_person and not claim.forced and not SECOND_PERSON_WORDS.isdisjoint(body_words):
        kept = _before_you(body)
        if kept is not None:  # "Ella is seven and thinks you're the coolest": Ella is seven
            body = kept
            body_words = words_of(body)
    if person == "first" and not SECOND_PERSON_WORDS.isdisjoint(body_words):
        # "you" is whoever was spoken to: another person by name ("I can give it to you
        # tomorrow" -> "... to Tomas"), or the assistant, where only a rule about how it
        # should behave is worth keeping ("I don't like it when you use bullet points").
        if to_person and addressee is not None:
            addressed = addressed_to(body, addressee)
            if addressed is None:
                return []
            body, to_someone = addressed, True
        else:
            category = claim.forced or classify_worded(claim.text, said_words)
            if name != "User" or category not in _ABOUT_ASSISTANT:
                return []
            body = third_person(body, ASSISTANT, "second", body_words)
        body_words = words_of(body)
    if first_person and not has_content(
        claim.words if body is claim.body and claim.words is not None else claim_words(body)
    ):
        return []
    if len(body.split()) <= 5 and _PRONOUN_OBJECT.search(body):
        return []  # "I really enjoy it": the "it" lives in another turn
    rewritten = third_person(body, name, person, body_words)
    rewritten_words = body_words if rewritten == body else words_of(rewritten)
    dated = resolve_dates_worded(
        rewritten, turn.occurred_at, rewritten_words if date_gates else None, turn.text
    )
    pieces = dated.text.split()  # capitalising the first letter splits it no differently
    text = _capitalize(" ".join(pieces))
    if len(pieces) < 3 or not any(ch.isalnum() for ch in text) or _ELLIPTICAL.match(text):
        return []  # fragments like "User's sister" or "Miso is now" are not claims
    category = claim.forced or classify_worded(claim.text, said_words)
    # no date written and an ASCII first letter: the words are those of ``rewritten``
    same = dated.text == rewritten and text[:1].isascii()
    text_words = rewritten_words if same else words_of(text)
    entities = find_entities_worded(text, known, text_words)
    named = any(e != name for e in entities)  # the speaker's own name makes nothing concrete
    if name != "User" and name not in entities and name in text:
        entities = (name, *entities)
    hit = detect_slot_worded(text, name, speaker_key, text_words)
    slot = (hit.subject, hit.slot) if hit is not None and hit.slot is not None else None
    state = restated(text, slot[1]) if slot is not None else None
    confidence = claim.confidence
    if to_someone and not (dated.has_date or slot):
        # said to someone, kept when it is a plan or a fact with a date ("I can give it to
        # you tomorrow"): small talk ("you're a saint", "I'll miss you") crowds recall
        # (own set: recall@10 0.716 -> 0.708 with it all)
        return []
    if not first_person and person == "first":
        # a statement not about the speaker is kept only with something concrete in it: a
        # name, a date, a slot, or enough words that say something ("Leo ate eleven
        # pierogi", "the judges loved the tacos"; not "the meeting was long")
        if not (entities or dated.has_date or slot or substantive(body)):
            return []
        confidence = min(confidence, CONF_THIRD_PARTY)
    if person == "second" and slot is None and category == "fact" and not dated.has_date:
        return []
    if category == "correction" and person == "first":
        confidence = max(confidence, CONF_CORRECTION)
    valid_from, valid_until = dated.valid_from, dated.valid_until
    if slot is not None and slot[1] in _RECURRING_SLOTS:
        # the date of a birthday is the slot's value, not a bound on when the fact holds
        category, valid_from, valid_until = "fact", None, None
    if (
        category == "commitment"
        and valid_until is None
        and dated.due is not None
        and (valid_from is None or dated.due >= valid_from)
    ):
        # "I'll renew my passport by 8 March": a task's valid_until is its due date (what
        # plan expiry and the hot block's task list read), not the end of its truth; a due
        # date before another date of the claim ("finalize the list by May 5 ... a game night
        # on May 11") bounds nothing
        valid_until = dated.due
    kind: Kind = "episode" if category == "moment" or valid_from or valid_until else "note"
    fact = Fact(
        category=category,
        text=state or text,
        confidence=round(confidence, 3),
        entities=entities,
        valid_from=valid_from,
        valid_until=valid_until,
        kind=kind,
        source_turn_ids=(turn.turn_id,),
        subject=hit.subject
        if hit is not None
        else (speaker_key if first_person or person == "second" else None),
        slot=slot[1] if slot else None,
        replaces=hit.replaces if hit is not None else (),
        cancels=hit.cancels if hit is not None else (),
        moves=hit.moves if hit is not None else (),
        importance=_importance(
            category, slot is not None, named, dated.has_date, name, claim.text, said_words
        ),
    )
    if state is None:
        return [fact]
    # a move or a new job: the state it leads to, which supersedes the old one, and the
    # event as said ("Maya moved from Lisbon to Porto in February 2024"), for history
    event = replace(
        fact,
        text=text,
        slot=None,
        replaces=(),
        cancels=(),
        moves=(),
        kind=kind if valid_from else "note",
    )
    return [replace(fact, kind="note"), event]


def _importance(
    category: Category,
    has_slot: bool,
    named: bool,
    has_date: bool,
    speaker: str,
    said: str,
    words: frozenset[str],
    context: frozenset[str] = frozenset(),
) -> float:
    """The importance spectrum (``core.importance``): the claim's band by category, slot and
    what is concrete in it, placed by the signal scan's channels of the claim as said and
    its emphasis. ``context``: words of the question a short answer answers ("Is there a
    room for the baby?" makes "Yes, yellow walls already." concrete)."""
    emphasis = not _EMPHASIS_WORDS.isdisjoint(words) or (
        words >= _SO_MUCH and _EMPHASIS_ANY.found(said)
    )
    found = scan(said)
    channels = Channels(
        found.importance.novelty,
        found.importance.arousal,
        found.importance.reward,
        found.importance.attention,
    )
    concrete = is_concrete(
        named, has_date, speaker, said, words | context if context else words, found
    )
    return spectrum(category, channels, has_slot=has_slot, concrete=concrete, emphasis=emphasis)


@functools.lru_cache(maxsize=256)
def _roster(named: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The casefolded names of the speakers, and the names once each in order."""
    return frozenset(n.casefold() for n in named), tuple(dict.fromkeys(named))


def extract_rules(turns: Sequence[TurnView], *, date_gates: bool = True) -> list[Fact]:
    """Facts stated in ``turns``, in order; the same claim twice becomes one fact with
    both source turns.

    ``date_gates=False`` tries every date pattern on every claim, as before the gates
    (same facts, several times slower): the baseline of bench/bench_rule_extractor.py.
    """
    names, known = _roster(
        tuple(n for t in turns if t.role == "user" and (n := display_name(t)) != "User")
    )
    facts: list[Fact] = []
    user_name = "User"
    session = Session(known)
    for turn in turns:
        if turn.role == "user":
            user_name = display_name(turn)
        facts.extend(_facts_of_turn(turn, user_name, names, known, session, date_gates))
    if len(facts) < 2:
        return facts
    merged: dict[str, Fact] = {}
    for fact in facts:
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
