"""The frame of a question: the words that say how to answer, not what about.

"Can you walk me through the order in which I brought up different aspects of my app
deployment across our conversations? Mention ONLY and ONLY five items." asks about *app
deployment*; the rest is frame. Searched as written, the frame's words are the rarest of
the question ("conversations", "order", "items", "aspects" seldom occur in memories), so
lexical and hashed-dense matching ranked memories that happen to say "order" or
"conversation" above the ones about the topic, and the sentence "Mention ONLY and ONLY five
items." was even searched as a question of its own.

``strip_frame`` removes the frame phrases (requests to list, summarise or walk through,
"the order in which", "I brought up" / "I mentioned", "throughout our conversations",
"so far", "over time", "has developed", "mention only N items") and returns what is left,
or the question unchanged when no content word would be left. ``spans_conversations``
says whether the question asks across the whole history (an order, a summary, a
development over time); the recall then spreads its picks over time (``core.mmr``).

Measured with ``python -m bench.retrieval_eval --dev`` (BEAM's development conversations;
the own set has no framed question): evidence recall@10 0.668 -> 0.671 stripped, 0.682
with "has developed" stripped too and the spread (summarization 0.186 -> 0.226, event
ordering 0.308 -> 0.344).

Pure functions of the text.
"""

from __future__ import annotations

import re
from typing import Final

from memstream.core.tokens import DEFAULT_TOKENIZER

_PLACES = (
    r"conversations?|chats?|discussions?|sessions?|messages?|requests?|questions?|exchanges?"
    r"|talks?|interactions?"
)
_KINDS = r"(?:(?:recent|previous|past|earlier|many|various|different)\s+)?"
_FRAMES: Final = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # "Mention ONLY and ONLY five items." / "list only three"
        r"\b(?:mention|list|name|give)\s+only\s+(?:and\s+only\s+)?\w+(?:\s+(?:items?|things?"
        r"|points?|events?))?\b[.!]?",
        # "can you (please) walk me through / list / give me / summarize ..."
        r"\b(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:list|walk\s+me\s+through"
        r"|take\s+me\s+through|tell\s+me|give\s+me|provide|summari[sz]e|recap|outline"
        r"|remind\s+me(?:\s+of)?|describe|go\s+over|lay\s+out)\b",
        # "a comprehensive summary of", "an overview of"
        r"\b(?:an?\s+)?(?:(?:clear|complete|comprehensive|quick|brief|short|detailed|full"
        r"|overall)\s+)?(?:summary|overview|recap|rundown|timeline)\s+of\b",
        # "the order in which", "in what order", ", in order"
        r"\b(?:in\s+)?(?:the\s+)?order\s+in\s+which\b|\bin\s+what\s+order\b"
        r"|,?\s*\bin\s+order\b(?!\s+to\b)",
        # "I brought up", "I've mentioned", "did I mention", "we've discussed"
        r"\b(?:I|we)(?:\s*['’]ve|\s+have|\s+had)?\s+(?:brought\s+up|mentioned|talked\s+about"
        r"|discussed|raised|told\s+you(?:\s+about)?|shared|asked\s+about|covered)\b",
        r"\bdid\s+I\s+(?:bring\s+up|mention|talk\s+about|discuss|raise|tell\s+you(?:\s+about)?)\b",
        # "throughout our conversations", "across all my sessions", "over our chats"
        # ("during the sessions with Dr. Lee" is content: only "our" goes with in / during)
        rf"\b(?:throughout|across|over|through|during|in)\s+(?:all\s+)?(?:of\s+)?our\s+"
        rf"{_KINDS}(?:{_PLACES})\b",
        rf"\b(?:throughout|across)\s+(?:all\s+)?(?:of\s+)?(?:(?:my|the|these|those)\s+)?"
        rf"{_KINDS}(?:{_PLACES})\b",
        r"\b(?:over|with)\s+time\b|\bso\s+far\b|\balong\s+the\s+way\b",
        r"\b(?:different|various)\s+(?:aspects|parts|sides|facets)\s+of\b",
        r"\b(?:(?:have|has|had)\s+)?(?:developed|evolved|progressed)\b",
    )
)
_SPANS: Final = re.compile(
    r"\border\s+in\s+which\b|\bin\s+(?:what\s+)?order\b(?!\s+to\b)|\bsummar(?:y|i[sz]e)\b"
    r"|\boverview\b"
    r"|\b(?:recap|timeline)\b|\bover\s+time\b|\b(?:throughout|across)\s+(?:all\s+)?(?:of\s+)?"
    rf"(?:(?:our|my|the)\s+)?(?:{_PLACES})\b"
    r"|\b(?:developed|evolved|progressed|changed)\b",
    re.IGNORECASE,
)
_SPACES: Final = re.compile(r"\s+")
#: fewer content words than this left after stripping: the question is searched as written
#: (one is enough: "can you summarize what I told you about Melanie?" is about Melanie;
#: 1 and 2 give the same figures on BEAM dev, whose questions are long)
MIN_CONTENT_WORDS: Final = 1


def strip_frame(query: str) -> str:
    """``query`` without its frame phrases, or unchanged when fewer than
    ``MIN_CONTENT_WORDS`` content words would be left."""
    out = query
    for rx in _FRAMES:
        out = rx.sub(" ", out)
    out = _SPACES.sub(" ", out).strip(" ,;:")
    if len(DEFAULT_TOKENIZER(out)) < MIN_CONTENT_WORDS:
        return query
    return out


def spans_conversations(query: str) -> bool:
    """The question asks across the history: an order, a summary, a development."""
    return _SPANS.search(query) is not None
