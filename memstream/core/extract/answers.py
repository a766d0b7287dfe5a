"""Short answers to a question: the question is what gives them their meaning.

"What position does he play?" - "Goalie, like his mother did." cut alone gives the memory
"Goalie, like his mother did", which no question about the grandson's position finds. A
short turn that answers a question someone else just asked becomes one memory that keeps
both: 'Asked "What position does he play?", Owen said: "Goalie, like his mother did."'.

Pure: the question is the last sentence of the turn before in the same extraction run,
or, for an answer that opens by confirming or denying, that turn's last question wherever
it stands ("For a knee replacement? Remove loose rugs, ..." - "It is a replacement, yes.").
"""

from __future__ import annotations

import re
from typing import NamedTuple

from memstream.core.extract.coreference import Session, referent
from memstream.core.extract.filler import claim_words, has_content, is_filler_words
from memstream.core.extract.gates import wordset

QUESTION_MAX_WORDS = 16  # longer questions are requests with context, not a prompt to answer
ANSWER_MAX_WORDS = 24  # longer turns state their own claims
QUESTION_MAX_CHARS = 160
# an answer opening so answers a yes-or-no question, even one followed by more words
_CONFIRMS = re.compile(
    r"(?:yes|yeah|yep|yup|no|nope|nah|correct|exactly|it is|it was|it's|that's right)\b",
    re.I,
)
# an answer of nothing but these leans on yet another turn ("He did.", "That one")
_POINTERS = wordset(
    "he she it they him her them his hers its their we us i me you this that these those "
    "one ones did do does was were is are"
)


class Question(NamedTuple):
    """The question a short answer answers, and whom its pronoun means (None: no pronoun,
    or nothing it fits): "Are you going to adopt her?" after "an old greyhound called
    Pepper" is about Pepper. The quote stays as said; the memory names ``about`` beside
    it, so a question naming Pepper finds the answer."""

    text: str
    about: str | None


def question_answered(
    session: Session, turn_index: int, speaker: str, answer: str = ""
) -> Question | None:
    """The question the turn at ``turn_index`` answers: the last sentence of the turn just
    before, when someone else said it and it asks something; or, for an answer that opens
    by confirming or denying (``answer``: "It is a replacement, yes."), the last question
    of that turn wherever it stands ("For a knee replacement? Remove loose rugs, ...")."""
    before = turn_index - 1
    if before < 0 or session.speakers[before] == speaker:
        return None
    said_before: list[tuple[int, str]] = []  # the turn before's sentences, last first
    for i in range(len(session.said) - 1, -1, -1):  # from the end: a run's session grows long
        s = session.said[i]
        if s.turn < before:
            break
        if s.turn == before:
            said_before.append((i, s.text.strip()))
    if not said_before:
        return None
    index, question = said_before[0]
    if not question.endswith("?") and _CONFIRMS.match(answer.lstrip()):
        index, question = next((q for q in said_before if q[1].endswith("?")), said_before[0])
    if not question.endswith("?") or len(question) > QUESTION_MAX_CHARS:
        return None
    asked = claim_words(question)
    if not has_content(asked) or len(asked) > QUESTION_MAX_WORDS:
        return None
    return Question(question, referent(session, index, session.said[index].speaker))


def answer_text(question: str, name: str, answer: str, about: str | None = None) -> str | None:
    """The memory of a short answer, or None when the turn is no short answer (long, a
    question back, or only "yes" and "thanks"). ``about``: whom the question's pronoun
    means."""
    said = " ".join(answer.split())
    words = claim_words(said)
    if not words or len(words) > ANSWER_MAX_WORDS or said.endswith("?"):
        return None
    if is_filler_words(words) or not has_content(words) or _POINTERS.issuperset(words):
        return None
    asked = f'Asked "{question}" (about {about})' if about else f'Asked "{question}"'
    return f'{asked}, {name} said: "{said}"'
