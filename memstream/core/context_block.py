"""One context block for a prompt: the hot memory, then what recall found for the question,
without repeats, within a token budget. Pure: the adapters fetch the rows and the recall.

Tokens are estimated as characters / 4 (English prose with a BPE tokenizer is close to it;
the budget is a bound for the caller's prompt, not an exact count).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memstream.core.hot_memory import CUT_ORDER, HotBlock, render

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass
class ContextBlock:
    text: str
    hot: HotBlock
    recalled: list[Mapping[str, Any]] = field(default_factory=list)
    query_id: str | None = None
    budget: int = 0

    @property
    def ids(self) -> list[str]:
        return self.hot.ids + [str(r["memory_id"]) for r in self.recalled]

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tokens": estimate_tokens(self.text),
            "budget": self.budget,
            "memory_ids": self.ids,
            "query_id": self.query_id,
            "hot": self.hot.as_dict(),
            "recalled": [
                {"memory_id": r["memory_id"], "text": r["text"], "score": r.get("score")}
                for r in self.recalled
            ],
        }


def assemble(
    hot: HotBlock,
    recalled: Sequence[Mapping[str, Any]],
    budget_tokens: int,
    query_id: str | None = None,
) -> ContextBlock:
    """Hot memory first (cut by its own order when the budget is small), then recall
    results in rank order that are not already shown, as long as they fit."""
    hot = copy.deepcopy(hot)
    limit = max(0, budget_tokens) * CHARS_PER_TOKEN
    while len(render(hot)) > limit:
        cut = next((name for name in CUT_ORDER if hot.sections.get(name)), None)
        if cut is None:
            break
        hot.sections[cut].pop()
        hot.dropped += 1
    text = render(hot)
    shown = set(hot.ids)
    kept: list[Mapping[str, Any]] = []
    header = "\n## Relevant to the question\n"
    for r in recalled:
        if str(r["memory_id"]) in shown:
            continue
        line = f"- {' '.join(str(r['text']).split())}\n"
        extra = (header if not kept else "") + line
        if len(text) + len(extra) > limit:
            break
        text += extra
        kept.append(r)
        shown.add(str(r["memory_id"]))
    return ContextBlock(text, hot, kept, query_id, budget_tokens)
