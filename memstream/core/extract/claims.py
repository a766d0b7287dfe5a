"""Claims of one sentence as its speaker meant them: markers, vocatives and hedges peeled,
requests and standing orders reworded, questions kept only for the statement inside."""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from memstream.core.extract.cues import (
    ADVICE,
    ASSISTANT_LEAD_IN,
    CALL_ME,
    FIRST_PERSON,
    HEDGE,
    HEDGE_ANY,
    HEDGE_PARTS,
    IMPERATIVE,
    LETS,
    MARKERS,
    QUESTION_START,
    REASON_CLAUSE,
    REMIND_ME,
    STANDING_ORDER,
    WONDER,
    reports_state_of_mind,
)
from memstream.core.extract.filler import claim_words, is_filler_words
from memstream.core.extract.gates import alternatives, any_in, fold, wordset
from memstream.core.extract.self_description import self_descriptions
from memstream.core.extract.sentences import split_claims
from memstream.core.facts import TurnView
from memstream.core.hashing import normalize
from memstream.core.replacement import replaced_values
from memstream.core.tokens import ENGLISH_STOPWORDS
from memstream.schemas.events import Category

_CONF_FIRST_PERSON = 0.8
CONF_CORRECTION = 0.85
# Hedged claims ("maybe", "I think", "might") are speculative: under the dream cycle's 0.40
# confirmation line, so they expire after 30 days unless something confirms them.
_CONF_HEDGED = 0.35
CONF_THIRD_PARTY = 0.6
_CONF_FROM_QUESTION = 0.6
_CONF_ASSISTANT = 0.4


_GENERIC_USER = frozenset(
    {"", "user", "human", "me", "you", "customer", "client", "u", "person", "anonymous"}
)


def display_name(turn: TurnView) -> str:
    """Name first-person claims are rewritten to: the speaker, or "User" if unnamed."""
    return _display_name(turn.speaker, turn.role)


@functools.lru_cache(maxsize=1024)
def _display_name(speaker: str, role: str) -> str:
    speaker = " ".join(speaker.split())
    if speaker.casefold() in _GENERIC_USER or role != "user":
        return "User"
    return speaker.title() if speaker.islower() else speaker


@functools.lru_cache(maxsize=1024)
def speaker_key_of(name: str) -> str:
    return "user" if name == "User" else (normalize(name) or "user")


class Claim(NamedTuple):
    text: str  # original wording, markers included (for cue words)
    body: str  # what gets rewritten
    confidence: float
    forced: Category | None = None  # set when the rewrite already decided it
    words: list[str] | None = None  # claim_words(body), when known already


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
# What the anchored patterns here can match at the start of a claim (folded, where re.I).
_REQUEST_STARTS = ("please", "can", "could", "remind", "just", "call", "let")
_ORDER_STARTS = alternatives(
    "please|always|never|do|avoid|stop|make|remember|keep|use|prefer|stick"
)
_IMPERATIVE_STARTS = alternatives(
    "please|can you|could you|would you|will you|write|help|tell|show|give|make|create|explain|"
    "summarize|summarise|translate|fix|find|list|generate|draft|check|send|book|search|look|"
    "let me know|go ahead|try|imagine|pretend|describe|compare|recommend|suggest|rewrite|"
    "refactor|add|remove|delete|update|run|open|read|calculate|convert|edit|review|plan"
)
_HEDGE_STARTS = ("I ", "I'", "probably", "maybe", "perhaps")
_REWRITES: tuple[tuple[re.Pattern[str], str, Category | None], ...] = (
    (REMIND_ME, "I need to {rest}", "commitment"),
    (CALL_ME, "I want to be called {rest}", None),
    (LETS, "I proposed to {rest}", "decision"),
)


# What _EMOTICON_TAIL and _TRAILING_MARKERS can end in (case-insensitively).
_EMOTICON_MOUTHS = frozenset(")(dDpP/\\|")
_TRAILING_WORDS = ("btw", "lol", "haha", "tbh", "fyi", "though", "anyway", "lmao", "imo", "anyways")
# What text MARKERS matches starts with, folded.
_MARKER_STARTS = alternatives(
    "well|so|oh|ah|aw|um|uh|hmm|yeah|yes|yep|no|ok|anyway|also|btw|by the way|actually|honestly|"
    "basically|fyi|fun fact|guess what|wow|haha|lol|hey|hi|hello|sorry|wait|oops|plus|and|but|"
    "to be honest|tbh|then|now|correction|thank|nice to meet you|good to see you|update|"
    "just so you know|for the record|quick update|big news|good news|bad news|some news|great news"
)


def _may_end_in_emoticon(text: str) -> bool:
    """False when _EMOTICON_TAIL cannot match: it ends in ":)", ":-p", "<3", "xd" or "xoo"."""
    text = text.rstrip()
    end = text[-1:]
    if end in _EMOTICON_MOUTHS:
        eyes = text[-3:-2] if text[-2:-1] == "-" else text[-2:-1]
        if eyes in (":", ";"):
            return True
    if end in ("o", "O"):
        return text.rstrip("oO")[-1:] in ("x", "X")
    return text[-2:] == "<3" or text[-2:].lower() == "xd"


def _strip_tail(text: str) -> str:
    if _may_end_in_emoticon(text):
        text = _EMOTICON_TAIL.sub("", text)
    text = text.strip().rstrip(".!?…,;: ").strip().strip("\"'").strip()
    if fold(text.rstrip(".!?")[-7:]).endswith(_TRAILING_WORDS):
        text = _TRAILING_MARKERS.sub("", text)
    return text


def _strip_vocatives(text: str, names: frozenset[str]) -> str:
    if "," not in text:  # both patterns need one
        return text
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
        peeled = _strip_vocatives(body, names)
        if fold(peeled[:24]).startswith(_MARKER_STARTS):
            peeled = MARKERS.sub("", peeled)
        peeled = peeled.strip()
        if peeled == body:
            break  # the second peel would find nothing either
        body = peeled
    return body


def _standing_order(body: str, raw: str, confidence: float, head: str) -> Claim | None:
    """ "Always use type hints" is a rule the user sets for the assistant: keep it.

    ``head`` is the start of ``body`` folded (fold(body[:12])).
    """
    m = STANDING_ORDER.match(body) if head.startswith(_ORDER_STARTS) else None
    if not m or FIRST_PERSON.match(body) or not m.group("rest").strip():
        return None
    verb = m.group("verb").lower()
    verb = "not" if verb in ("don't", "do not") else verb
    category: Category = (
        "preference" if verb in ("use", "prefer", "stick to", "stick with") else "principle"
    )
    return Claim(
        raw, f"I want the assistant to {verb} {m.group('rest').strip()}", confidence, category
    )


def _rewrite_request(body: str, raw: str, confidence: float, head: str) -> Claim | None:
    """Requests that still state something: "remind me to X", "call me X", "let's X"."""
    if not head.startswith(_REQUEST_STARTS):
        return None
    for pattern, template, forced in _REWRITES:
        m = pattern.match(body)
        if m:
            return Claim(raw, template.format(rest=m.group("rest")), confidence, forced)
    return None


# "I prefer sneakers in neutral colours, do you have any ideas?": the statement is all of
# what comes before the closing question, commas and all (cut at the first comma it lost
# its object: "Sam prefers sneakers with a sleek")
_CLOSING_ASK = re.compile(
    r"^(?P<stmt>.+?),\s*(?:so\s+|and\s+|but\s+)?(?:can|could|would|will|do|does|should|"
    r"shall|is|are|any|what|how|which|where|who)\b[^,]*$",
    re.IGNORECASE,
)
# "..., you know, ...": an interjection, not the listener (whom the claim would then be
# about, and dropped)
_INTERJECTION = re.compile(r",\s*(?:you know|you see|ya know|y'know),\s*", re.IGNORECASE)


# "I prefer worked examples, so can you help me with X, considering my goal is Y?": the ask
# to the assistant has commas of its own, so _CLOSING_ASK cannot cut it; what comes before
# it is still a statement, and a reason inside the ask is another
_ASK_YOU = re.compile(
    r"^(?P<stmt>.+?),\s*(?:so\s+|and\s+|but\s+)?(?:can|could|would|will)\s+you\b(?P<ask>.+)$",
    re.IGNORECASE,
)


# "Their daughter Yui taught us origami, can you mention that?": a statement about someone
# else before the ask is a statement too
_THIRD_SUBJECT = re.compile(
    r"(?:[Hh]e|[Ss]he|[Tt]hey|[Hh]is|[Hh]er|[Tt]heir|(?P<cap>[A-Z][a-z]+))\b"
)
# a capitalised opener that is no name ("For example, how would ...", "Given that ...")
_NOT_SUBJECTS = ENGLISH_STOPWORDS | wordset(
    """given considering also please thanks maybe like plus now here just yes ok okay well hey
    hi any anyone anything every everyone nothing"""
)


def _third_subject(piece: str) -> bool:
    m = _THIRD_SUBJECT.match(piece)
    return m is not None and (m.group("cap") is None or m.group("cap").lower() not in _NOT_SUBJECTS)


def _statement(piece: str) -> bool:
    """A statement before an ask (first person, or about someone named or pointed to): not
    a wondering, a question or a reason clause."""
    return bool(
        (FIRST_PERSON.match(piece) or _third_subject(piece))
        and not WONDER.match(piece)
        and not QUESTION_START.match(piece)
        and not REASON_CLAUSE.match(piece)
    )


def _question_contents(body: str, ask: re.Match[str] | None) -> list[str]:
    """The statements inside a question: before an ask with commas of its own (``ask``, the
    match of ``_ASK_YOU`` on ``body``), and the reason inside that ask; otherwise the one
    ``_question_content`` finds."""
    if ask and "," in ask.group("ask") and _statement(stmt := ask.group("stmt").strip()):
        reason = REASON_CLAUSE.search(ask.group("ask"))
        return [stmt, reason.group(1)] if reason else [stmt]
    content = _question_content(body)
    return [content] if content is not None else []


#: a comma between clauses, not one inside a number ("$5,000" is one amount)
_CLAUSE_COMMA = re.compile(r"(?<!\d),|,(?!\d)")


def _question_content(body: str) -> str | None:
    """The statement inside a question ("..., since I moved to Boston?"), if any."""
    closing = _CLOSING_ASK.match(body)
    if closing and _statement(stmt := closing.group("stmt").strip()):
        return stmt
    reason = REASON_CLAUSE.search(body)
    if reason:
        return reason.group(1)
    for piece in (p.strip() for p in _CLAUSE_COMMA.split(body)):
        if (
            FIRST_PERSON.match(piece)
            and not WONDER.match(piece)
            and not QUESTION_START.match(piece)
        ):
            return piece
    return None


# "I swim instead" at a clause's end: instead of what the clause before gave up
_INSTEAD_END = re.compile(r"\binstead(?:\s+(?P<when>now|these days))?\W*$", re.I)


def instead_of(body: str, before: str) -> str:
    """``body`` with what it replaces said, when it ends in a bare "instead" and ``before``
    (the clause or sentence before it) says what was given up: "I swim instead" after "I
    stopped playing tennis" is "I swim instead of tennis" (alone it says nothing of the
    sport it replaced, and no rule links it to the old memory)."""
    m = _INSTEAD_END.search(body)
    if m is None:
        return body
    values = replaced_values(before)
    if not values:
        return body
    when = f"{m.group('when')} " if m.group("when") else ""
    return f"{body[: m.start()]}{when}instead of {values[-1]}"


def user_claims(sentence: str, names: frozenset[str], before: str = "") -> list[Claim]:
    """The claims of a user's ``sentence``; ``before`` is the sentence said before it."""
    question = sentence.rstrip().rstrip("\"')").endswith("?")
    raw_claims = split_claims(sentence)
    # what the speaker says they are in passing ("As a nurse, I ...") is lost with the
    # phrase or the question around it: a claim of its own
    out = [Claim(sentence, role, _CONF_FIRST_PERSON) for role in self_descriptions(sentence)]
    for index, raw_claim in enumerate(raw_claims):
        raw = instead_of(_strip_tail(raw_claim), raw_claims[index - 1] if index else before)
        if raw.isupper() and sum(ch.isalpha() for ch in raw) > 3:
            raw = raw.lower()  # shouting: case carries no names here, and "I'M" breaks the rules
        body = _body(raw, names)
        if "," in body and ("know" in body or "see" in body):
            body = _INTERJECTION.sub(", ", body)
        words, worded = claim_words(body), body
        if not body or is_filler_words(words):
            continue
        confidence = _CONF_FIRST_PERSON
        # the ask can sit in any claim of a question ("I prefer X, so can you help me with
        # Y, and I've done Z?"): each such claim keeps only its statements
        ask = _ASK_YOU.match(body) if question and "," in body else None
        if question and (index == len(raw_claims) - 1 or ask):
            contents = _question_contents(body, ask)
            if not contents:
                continue
            body, confidence = contents[0], _CONF_FROM_QUESTION
            # a second statement (the reason inside the ask) is a claim of its own
            out.extend(Claim(raw, more, confidence) for more in contents[1:])
        intro = _INTRO.match(body) if body[:1] in ("I", "i") else None
        if intro and _GREETING.match(raw):
            out.append(Claim(raw, f"my name is {intro.group('n')}", confidence))
            continue
        head = fold(body[:12])  # for the anchored patterns below
        rewritten = _rewrite_request(body, raw, confidence, head)
        if rewritten is not None:
            out.append(rewritten)
            continue
        standing = _standing_order(body, raw, confidence, head)
        if standing is not None:
            out.append(standing)
            continue
        if (head.startswith(_IMPERATIVE_STARTS) and IMPERATIVE.match(body)) or (
            question and QUESTION_START.match(body)
        ):
            continue
        hedge = HEDGE.match(body) if body.startswith(_HEDGE_STARTS) else None
        if hedge:
            body, confidence = body[hedge.end() :], _CONF_HEDGED
        elif (
            any_in(HEDGE_PARTS, fold(body))
            and HEDGE_ANY.found(body)
            and not reports_state_of_mind(body)
        ):
            confidence = _CONF_HEDGED
        out.append(Claim(raw, body, confidence, words=words if body is worded else None))
    return out


_YOU_START = re.compile(r"^(?:you|your)\b", re.I)
# What a raw claim must start with for its body to start with "you": the quotes and spaces
# _strip_tail peels, the lead-in, then "you". One match instead of the peeling; _strip_tail
# only cuts non-word characters, so it cannot make this match where the peeled claim fails.
_MAY_START_WITH_YOU = re.compile(
    r"[\s\"']*" + ASSISTANT_LEAD_IN.pattern.removeprefix("^") + r"\s*(?:you|your)\b", re.I
)


def assistant_claims(sentence: str) -> list[Claim]:
    # every claim kept starts with "you": most sentences of a long answer have none (the
    # cuts below only remove text, and no other letter folds to y, o or u)
    if sentence.rstrip().endswith("?") or "you" not in sentence.lower():
        return []
    out: list[Claim] = []
    for raw in split_claims(sentence):
        if "you" not in raw.lower() or not _MAY_START_WITH_YOU.match(raw):
            continue
        raw = _strip_tail(raw)
        body = ASSISTANT_LEAD_IN.sub("", raw).strip()
        if not _YOU_START.match(body) or ADVICE.search(body):
            continue
        out.append(Claim(raw, body, _CONF_ASSISTANT))
    return out
