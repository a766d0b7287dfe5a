"""Episodes: what was said in a turn no fact covers, kept as it was said.

The rule extractor reads claims about people; many turns carry none it can name (a long
message with code or a list, a plan described at length), yet a later question may be about
exactly that turn. Each such turn of the user's becomes one episode memory (kind ``episode``, category
``moment``): its speaker and its words, cut at ``EPISODE_CHARS``, citing the turn. So does a
user's turn whose facts hold less than ``MIN_COVERAGE`` of its words: "I'm trying to deploy
my frontend on Render.com, aiming for March 1, can you help me with that, I've got this
Dockerfile: ... I'm using JWT validation as well, so I want to make sure those work too"
gave one fact, "User wants to make sure that those are working correctly too", and the
deadline was nowhere. Each long
enough assistant turn becomes a reply episode (``core/replies.py``): its gist, subject
``assistant``, answering the user's turn before it. Episodes
skip the similarity gate (they record what was said, they do not assert a fact that could
update another) and are dropped only as exact repeats, by content hash.

Pure: a function of the flushed turns and the facts extracted from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from memstream.core.facts import Fact
from memstream.core.replies import (
    REPLY_IMPORTANCE,
    REPLY_SUBJECT,
    reply_text,
    without_code_blocks,
)
from memstream.core.shorten import cut_at_word
from memstream.core.tokens import STEMMING_TOKENIZER
from memstream.core.write_plan import BufferedTurn

EPISODES_VERSION: Final = "3"  # 2: the assistant's replies too; 3: turns their facts hold little of
EPISODE_CHARS: Final = 480
#: scanner filters that say nothing about worth: a long or code-heavy turn can still be asked about
KEPT_FILTERS: Final = frozenset({"too_long", "code_heavy", "markdown_heavy"})
MIN_WORDS: Final = 12  # a short remark is chit-chat, not an episode
#: a user's turn whose facts hold less than this share of its words (stopwords and code
#: left out) is kept as an episode as well. Chosen on the development data (turn-budgeted
#: recall@10): BEAM 500K-token conversations (eight, odd-numbered) 0.524 -> 0.535, @20
#: 0.595 -> 0.612; BEAM dev and the own set as before (0.680 / 0.838); 0.3 the same, 0.7
#: and always (1.0) lower on BEAM dev (0.679, 0.670) and the own set @10 (0.832 always).
MIN_COVERAGE: Final = 0.5


def eligible(turn: BufferedTurn) -> bool:
    # Chosen on the development data (own set + BEAM dev, turn-budgeted recall@10): episodes
    # of the user's turns lifted BEAM dev 0.507 -> 0.554 with the own set unchanged (0.721);
    # episodes of assistant turns too crowded the top (BEAM dev 0.486, preferences 0.50 ->
    # 0.26); 6 words let chit-chat in (own 0.703), 20 dropped some (BEAM dev 0.551).
    # Assistant turns are kept as replies, ranked below what the user said unless the
    # question is about the replies (core/replies.py): BEAM dev 0.602 -> 0.627, own unchanged.
    if len(turn.text.split()) < MIN_WORDS:
        return False
    if not turn.skipped:
        return True
    return bool(turn.signal.filters) and set(turn.signal.filters) <= KEPT_FILTERS


def episode_text(turn: BufferedTurn, limit: int = EPISODE_CHARS) -> str:
    who = "The assistant" if turn.role == "assistant" else turn.speaker
    words = cut_at_word(" ".join(turn.text.split()), limit, " …")
    return f"{who} said: {words}"


def _reply(turn: BufferedTurn, request: BufferedTurn | None) -> Fact:
    return Fact(
        category="moment",
        text=reply_text(turn.text),
        confidence=0.6,
        kind="episode",
        source_turn_ids=(turn.turn_id,),
        valid_from=turn.occurred_at,
        subject=REPLY_SUBJECT,
        importance=REPLY_IMPORTANCE,
        reply_to=request.turn_id if request is not None else None,
    )


def coverage(text: str, facts: Sequence[str]) -> float:
    """The share of ``text``'s words (stemmed; stopwords and fenced code left out) that
    ``facts`` hold; 1.0 for a text with no such word."""
    words = set(STEMMING_TOKENIZER(without_code_blocks(text)))
    if not words:
        return 1.0
    held: set[str] = set()
    for fact in facts:
        held.update(STEMMING_TOKENIZER(fact))
    return len(words & held) / len(words)


def episodes_for(turns: Sequence[BufferedTurn], facts: Sequence[Fact]) -> list[Fact]:
    """One episode for each eligible turn that no fact cites, or (a user's) whose facts
    hold less than ``MIN_COVERAGE`` of it, in turn order; an assistant turn's answers the
    user's turn before it in the buffer, if any."""
    said: dict[str, list[str]] = {}
    for f in facts:
        for t in f.source_turn_ids:
            said.setdefault(t, []).append(f.text)
    out = []
    request: BufferedTurn | None = None
    for turn in turns:
        stated = said.get(turn.turn_id)
        thin = (
            stated is not None
            and turn.role != "assistant"
            and coverage(turn.text, stated) < MIN_COVERAGE
        )
        if (stated is None or thin) and eligible(turn):
            if turn.role == "assistant":
                out.append(_reply(turn, request))
            else:
                out.append(
                    Fact(
                        category="moment",
                        text=episode_text(turn),
                        confidence=0.6,
                        kind="episode",
                        source_turn_ids=(turn.turn_id,),
                        valid_from=turn.occurred_at,
                        importance=0.3,
                    )
                )
        if turn.role != "assistant":
            request = turn
    return out
