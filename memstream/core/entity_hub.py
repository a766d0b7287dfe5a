"""The entity hub: which names in a namespace are one entity, and its timeline.

Pure functions over the entity names memories carry (``MemoryState.entities``):

- ``alias_groups(counts)``: names grouped into entities. A short name is an alias of a
  longer one when it is a prefix of one of the longer name's words ("Mel" of "Melanie",
  "Tom" of "Tom Hanks", "Acme" of "Acme Corp") and that longer name is the only one it
  fits (an ambiguous short name stays its own entity). The canonical name is the most
  mentioned of the group (then the longest, then alphabetical): deterministic.
- ``members(name, counts)``: every name of ``name``'s entity (itself when unknown), so a
  lookup by any alias finds the whole group.
"""

from __future__ import annotations

from collections.abc import Mapping

MIN_ALIAS = 3  # "Al" is too short to tell anyone apart


def _fits(short: str, long: str) -> bool:
    s = short.casefold()
    if s == long.casefold() or len(s) < MIN_ALIAS:
        return False
    return any(word.startswith(s) for word in long.casefold().split())


def alias_groups(counts: Mapping[str, int]) -> dict[str, list[str]]:
    """canonical name -> all names of that entity (canonical first, then by mentions)."""
    names = sorted(counts, key=lambda n: (-len(n), n))
    parent: dict[str, str] = {}
    for name in names:
        hosts = [other for other in names if len(other) > len(name) and _fits(name, other)]
        roots = {parent.get(h, h) for h in hosts}
        if len(roots) == 1:  # exactly one entity it can belong to
            parent[name] = roots.pop()
    groups: dict[str, list[str]] = {}
    for name in names:
        root = parent.get(name, name)
        groups.setdefault(root, []).append(name)
    out: dict[str, list[str]] = {}
    for group in groups.values():
        ordered = sorted(group, key=lambda n: (-counts[n], -len(n), n))
        out[ordered[0]] = ordered
    return out


def members(name: str, counts: Mapping[str, int]) -> list[str]:
    """All names of the entity ``name`` belongs to (case-insensitive lookup)."""
    wanted = name.casefold()
    for group in alias_groups(counts).values():
        if any(n.casefold() == wanted for n in group):
            return group
    return [name]
