"""Short answers to a question: the question is what gives them their meaning.

"What position does he play?" - "Goalie, like his mother did." cut alone gives the memory
"Goalie, like his mother did", which no question about the grandson's position finds. A
short turn that answers a question someone else just asked becomes one memory that keeps
both: 'Asked "What position does he play?", Owen said: "Goalie, like his mother did."'.

A short reply that picks one of two options just offered ("We're thinking Iris or June." -
"Iris. Definitely Iris.") is a preference the reply's words alone do not state: it becomes
'Felix prefers Iris over June (of "We're thinking Iris or June."): "Iris. Definitely
Iris."' (``choice_made``).

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


CHOICE_MAX_WORDS = 8  # a longer reply says why, and its claims carry that
_CHOICE_SIDE = 4  # words on each side of "or" an option may use
_CLAUSE = re.compile(r"[,;:.!?()]+")
_TOKEN = re.compile(r"[\w'+#-]+")
# words around the option picked ("Definitely Iris", "I'd go with the blue one")
_PICK_WORDS = wordset(
    "definitely def totally probably maybe surely sure for i i'd id i'll ill we we'd we'll "
    "say go going with pick choose take prefer like love vote team the a an one ones "
    "obviously absolutely of course hands down all the way oh hmm um well yes yeah no "
    "deffo 100 really actually honestly easy easily think guess works work sounds good better "
    "great perfect please thanks thank cheers"
)
# what may stand next to "or" without being an option ("the red one or the blue one")
_NOT_OPTION = _PICK_WORDS | wordset(
    "some either to in on at do you want should would rather get is was be it thinking between"
)
# "or" joining no two options ("more or less", "whether or not", "or so", "or something")
_NO_CHOICE = wordset("not less so something anything whatever two else")


class Choice(NamedTuple):
    """One option of two, picked: ``offer`` is the sentence that offered them."""

    offer: str
    chosen: str
    other: str


def _said_before(session: Session, turn_index: int, speaker: str) -> list[tuple[int, str]]:
    """The sentences of the turn just before, last first, with their index in
    ``session.said``; none when that turn is the same speaker's (or there is none)."""
    before = turn_index - 1
    if before < 0 or session.speakers[before] == speaker:
        return []
    found: list[tuple[int, str]] = []
    for i in range(len(session.said) - 1, -1, -1):  # from the end: a run's session grows long
        s = session.said[i]
        if s.turn < before:
            break
        if s.turn == before:
            found.append((i, s.text.strip()))
    return found


def choice_made(session: Session, turn_index: int, speaker: str, answer: str) -> Choice | None:
    """The option of an "A or B" in the turn just before (someone else's) that the short
    reply ``answer`` picks: its words other than emphasis all stand on one side of the
    "or" and none on the other."""
    offers = [t for _i, t in _said_before(session, turn_index, speaker) if " or " in t.lower()]
    if not offers or answer.rstrip().endswith("?"):
        return None
    words = claim_words(answer)
    picked = {w for w in words if w not in _PICK_WORDS}
    # "That one." picks by pointing: which one it means is in neither side's words
    if not picked or picked <= _POINTERS or len(words) > CHOICE_MAX_WORDS:
        return None
    return next((c for c in (choice_in(t, picked) for t in offers) if c is not None), None)


def choice_in(sentence: str, picked: set[str]) -> Choice | None:
    """The option of an "A or B" in ``sentence`` whose side holds every ``picked`` word."""
    for clause in _CLAUSE.split(sentence):
        tokens = [t.strip("'-") for t in _TOKEN.findall(clause)]
        tokens = [t for t in tokens if t]
        low = [t.lower() for t in tokens]
        for at, word in enumerate(low):
            if word != "or" or 0 in (at, len(low) - 1 - at):
                continue
            left = list(range(max(0, at - _CHOICE_SIDE), at))
            right = list(range(at + 1, min(len(low), at + 1 + _CHOICE_SIDE)))
            if low[right[0]] in _NO_CHOICE:
                continue
            on_left, on_right = {low[j] for j in left}, {low[j] for j in right}
            if picked <= on_left and not picked & on_right:
                chosen, other = left, right
            elif picked <= on_right and not picked & on_left:
                chosen, other = right, left[::-1]
            else:
                continue
            rest = next((tokens[j] for j in other if low[j] not in _NOT_OPTION), None)
            if rest is None:
                continue
            name = " ".join(tokens[j] for j in chosen if low[j] in picked)
            return Choice(sentence, name, rest)
    return None


def choice_text(choice: Choice, name: str, answer: str) -> str:
    """The memory of a reply that picked an option."""
    said = " ".join(answer.split())
    return f'{name} prefers {choice.chosen} over {choice.other} (of "{choice.offer}"): "{said}"'


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
    said_before = _said_before(session, turn_index, speaker)
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
