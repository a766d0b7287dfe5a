"""One context block for a prompt: the hot memory, the category tree (what the namespace's
memories are about, core/category_tree.py), then what recall found for the question, without
repeats, within a token budget. Pure: the adapters fetch the rows, the tree and the recall.

Tokens are estimated as characters / 4 (English prose with a BPE tokenizer is close to it;
the budget is a bound for the caller's prompt, not an exact count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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
    tree: list[str] = field(default_factory=list)  # the rendered tree's lines shown

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
            "tree": "".join(self.tree),
            "recalled": [
                {"memory_id": r["memory_id"], "text": r["text"], "score": r.get("score")}
                for r in self.recalled
            ],
        }


#: hot memory's sections cut before the tree when the budget is small; the rest after it
BEFORE_TREE = ("hot", "recent", "references")
TREE_HEADER = "\n## Category tree\n"


def _tree_text(lines: Sequence[str]) -> str:
    return TREE_HEADER + "".join(lines) if lines else ""


def assemble(
    hot: HotBlock,
    recalled: Sequence[Mapping[str, Any]],
    budget_tokens: int,
    query_id: str | None = None,
    tree: str = "",
) -> ContextBlock:
    """Hot memory first, then the category tree (``tree``: its rendered lines), cut when the
    budget is small: hot memory's least essential sections first, then the tree from its last
    line (a leaf), then the rest by hot memory's own order; then recall results in rank order
    that are not already shown, as long as they fit."""
    # the caller's block stays as it was (it is kept between calls); its items are frozen,
    # so copying the section lists is enough (a deep copy cost ~0.5 ms)
    hot = replace(
        hot, sections={k: list(v) for k, v in hot.sections.items()}, completed=dict(hot.completed)
    )
    lines = tree.splitlines(keepends=True)
    limit = max(0, budget_tokens) * CHARS_PER_TOKEN
    while len(render(hot)) + len(_tree_text(lines)) > limit:
        cut = next((name for name in BEFORE_TREE if hot.sections.get(name)), None)
        if cut is None and lines:
            lines.pop()
            continue
        cut = cut or next((name for name in CUT_ORDER if hot.sections.get(name)), None)
        if cut is None:
            break
        hot.sections[cut].pop()
        hot.dropped += 1
    text = render(hot) + _tree_text(lines)
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
    return ContextBlock(text, hot, kept, query_id, budget_tokens, lines)
