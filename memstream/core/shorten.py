"""Texts cut to a length at a word boundary: memory evidence, episodes, reply gists and the
dense vector's context all keep whole words."""

from __future__ import annotations


def cut_at_word(text: str, limit: int, mark: str = "") -> str:
    """``text`` if it fits in ``limit`` characters; otherwise its first ``limit`` characters
    less the word cut in two (kept when it is the only one), then ``mark`` (" …")."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + mark
