"""The assistant's replies as memories: what was answered, linked to what was asked.

A user later asks about the conversation itself ("what did you recommend for my knee?",
"summarise what we discussed about the move"): the answer is in the assistant's turn,
which no fact about the user covers. Each long enough assistant turn becomes one reply
episode (``core/episodes.py``): subject ``assistant``, its gist as text (opening sentences,
headings and bold terms; code left out), low importance, linked ``related_to`` the
memories of the user's turn it answers (the write plan writes the edges, rule ``reply``).

In recall a reply ranks below what the user said (``REPLY_FACTOR``) unless the question
is about the replies (``asks_about_replies``): then each request is followed by its reply
(``paired``), so both the question and the answer given reach the caller.

Pure: functions of texts, states and ranked ids.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from memstream.core.graph_walk import Hop, Reached
from memstream.core.shorten import cut_at_word

REPLY_SUBJECT: Final = "assistant"
REPLY_RELATION: Final = "related_to"
REPLY_RULE: Final = "reply"
REPLY_CONFIDENCE: Final = 0.7
#: request memories a reply links to (a long request yields several facts)
REPLY_LINKS: Final = 4
GIST_CHARS: Final = 480
#: a reply's score in recall unless the question is about replies. Chosen on the
#: development data (BEAM dev turn-budgeted recall@10 / own set): 0.0 -> 0.622 / 0.735,
#: 0.45 and 0.5 -> 0.625 / 0.735, 0.6 -> 0.631 / 0.732, 0.8 -> 0.623 / 0.727; 0.5 keeps
#: the own set whole.
REPLY_FACTOR: Final = 0.5
REPLY_IMPORTANCE: Final = 0.2

# Past tense only: "what would you suggest" asks for new advice, "what did you suggest"
# for an earlier reply; "the order in which I brought up ... across our conversations" is
# about the user's turns, so "our conversations" alone is no cue.
_ASKS = re.compile(
    r"\byou (?:\w+ )?(?:recommended|suggested|said|told|mentioned|advised|gave|provided"
    r"|explained|proposed|listed|shared|showed|wrote|described|outlined|offered|helped)\b"
    r"|\bdid you\b|\bsummar\w*|\brecap\b"
    r"|\bwe (?:\w+ )?(?:discussed|talked|covered|went over|went through|reviewed)\b",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_BOLD = re.compile(r"\*\*([^*\n]{2,80})\*\*|__([^_\n]{2,80})__")
# a sentence ends at . ! ?, but not at an inline list number ("dinners: 1. Chicken ...")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b\d\.)\s+")
_MARKUP = re.compile(r"[*_#>|]+|^\s*(?:[-+]|\d+[.)])\s+", re.MULTILINE)


def asks_about_replies(query: str) -> bool:
    """The question is about what the assistant said or what was discussed."""
    return _ASKS.search(query) is not None


def _plain(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text).split())


def without_code_blocks(text: str) -> str:
    """``text`` with its fenced code blocks blanked (an unclosed fence runs to the end)."""
    return _FENCE.sub(" ", text)


def reply_gist(text: str, limit: int = GIST_CHARS) -> str:
    """What a reply is about, in at most ``limit`` characters: its opening two sentences,
    then its headings and bold terms (the structure of a long answer); code left out."""
    prose = _INLINE_CODE.sub(" ", without_code_blocks(text))
    first_block = next((b for b in re.split(r"\n\s*\n", prose) if _plain(b)), "")
    sentences = [s for s in _SENTENCE_END.split(_plain(first_block)) if s]
    parts = [" ".join(sentences[:2])] if sentences else []
    seen = {p.lower() for p in parts}
    marks = [m.group(1) for m in _HEADING.finditer(prose)] + [
        m.group(1) or m.group(2) for m in _BOLD.finditer(prose)
    ]
    size = len("; ".join(parts))
    for mark in marks:
        if size > limit:
            break  # the gist is cut at ``limit``: later terms would not reach it
        term = _plain(mark).strip(" :.")
        if term and term.lower() not in seen and not any(term.lower() in s for s in seen):
            seen.add(term.lower())
            size += len(term) + (2 if parts else 0)
            parts.append(term)
    return cut_at_word("; ".join(p for p in parts if p), limit, " …")


def reply_text(text: str) -> str:
    """The memory text of a reply."""
    return f"The assistant replied: {reply_gist(text) or _plain(text)[:GIST_CHARS]}"


def is_reply(kind: str, subject: str | None) -> bool:
    return kind == "episode" and subject == REPLY_SUBJECT


def paired(
    ranked: Sequence[tuple[str, float]],
    replies_of: Mapping[str, Sequence[tuple[str, float]]],
    k: int,
) -> list[tuple[str, float, Reached | None]]:
    """The answer with each memory followed by the replies it got (``replies_of``: memory
    id -> (reply id, edge confidence)), a reply scored as what it answers (moved up to it
    when it ranked lower), cut to ``k``."""
    out: list[tuple[str, float, Reached | None]] = []
    shown: set[str] = set()
    for mid, score in ranked:
        if mid in shown:
            continue
        out.append((mid, score, None))
        shown.add(mid)
        for reply, conf in replies_of.get(mid, ()):
            if reply in shown:
                continue
            hop = Hop(reply, REPLY_RELATION, mid, conf)
            out.append((reply, score, Reached(reply, mid, (hop,), conf)))
            shown.add(reply)
    return out[:k]
