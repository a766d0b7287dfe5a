"""The category tree: a small index of what a namespace's memories are about, always in the
prompt beside hot memory. A pure function of the namespace's active memories (category,
subject, entities, last use), the user's node events (``TreeNodeAdded`` /
``TreeNodeRemoved``, in log order) and the namespace's event-time "now".

Placement (``natural_path``), for each memory:

1. under the deepest user node whose last segment names one of the memory's entities
   (``work/projects/budget-tracker`` takes every memory about "Budget Tracker");
2. else ``CATEGORY/ENTITY``: the category at the root (or under the user node named after
   the category: ``work/decision``), the memory's main entity beneath it (the first entity
   that is not its subject, else the subject); a memory with no entity stays at its
   category.

A removed path hides that node and everything below it (a memory meant for it goes to the
nearest visible ancestor); adding it again brings it back. Then, in this order:

- **prune**: a node with nothing placed under it created or accessed (and, for a user node,
  not added) in the last 60 days of event time is left out; a later memory brings it back;
- **bounds**: depth <= 4, <= 10 children per node, <= 50 nodes, rendered text <= 2 KB. Nodes
  are kept best first (user nodes, then most memories, then most recently used, then by
  path), so the least-populated, least-recently-used leaves are the ones dropped.

A memory whose node was left out is shown at the nearest kept ancestor (``CategoryTree.place``),
or has no path when its root is gone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple

SEGMENT_MAX = 40
MAX_DEPTH = 4
#: a normalised path: 1-4 lowercase slugs separated by "/"
PATH_PATTERN = r"[a-z0-9][a-z0-9-]{0,39}(?:/[a-z0-9][a-z0-9-]{0,39}){0,3}"
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class TreeConfig:
    max_nodes: int = 50
    max_depth: int = MAX_DEPTH
    max_children: int = 10
    max_bytes: int = 2048
    idle_days: int = 60


class Placed(NamedTuple):  # a tuple: a namespace has thousands, built on every change
    """What placement reads of a memory (or of ``alike`` memories with the same fields)."""

    category: str
    subject: str | None
    entities: tuple[str, ...]
    last_use: datetime
    alike: int = 1


@dataclass(frozen=True, slots=True)
class NodeEdit:
    """A user's node event, in log order."""

    path: str
    added: bool
    at: datetime


@dataclass(frozen=True, slots=True)
class Node:
    path: str
    count: int  # memories placed at or below it
    last_use: datetime | None
    user: bool

    @property
    def depth(self) -> int:
        return self.path.count("/") + 1

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "count": self.count,
            "last_use": self.last_use.isoformat() if self.last_use else None,
            "user": self.user,
        }


@functools.lru_cache(maxsize=65_536)  # names repeat across a namespace's memories
def slug(text: str) -> str:
    """One path segment: lowercase letters, digits and dashes, at most 40 characters."""
    return _NOT_SLUG.sub("-", text.lower()).strip("-")[:SEGMENT_MAX].strip("-")


def normalize_path(path: str, max_depth: int = MAX_DEPTH) -> str:
    """``"Work/Projects/Budget Tracker"`` -> ``"work/projects/budget-tracker"``; ValueError
    for an empty path or one deeper than ``max_depth``."""
    parts = [s for s in (slug(p) for p in str(path).split("/")) if s]
    if not parts:
        raise ValueError("a tree path needs at least one segment of letters or digits")
    if len(parts) > max_depth:
        raise ValueError(f"a tree path has at most {max_depth} segments, not {len(parts)}")
    return "/".join(parts)


def prefixes(path: str) -> list[str]:
    """``a/b/c`` -> ``[a, a/b, a/b/c]``."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _parent(path: str) -> str | None:
    return path.rsplit("/", 1)[0] if "/" in path else None


def entity_keys(subject: str | None, entities: Iterable[str]) -> list[str]:
    """The memory's entities as segments, main one first: the entities that are not its
    subject in their order, then the subject."""
    subj = slug(subject) if subject else ""
    keys: list[str] = []
    for e in entities:
        s = slug(e)
        if s and s != subj and s not in keys:
            keys.append(s)
    if subj and subj not in keys:
        keys.append(subj)
    return keys


@dataclass(frozen=True, slots=True)
class UserNodes:
    """The user's node events folded: added paths (with when) and hidden ones."""

    added: dict[str, datetime] = field(default_factory=dict)
    removed: frozenset[str] = frozenset()

    def hidden(self, path: str) -> bool:
        return bool(self.removed) and any(p in self.removed for p in prefixes(path))


def fold_edits(edits: Iterable[NodeEdit]) -> UserNodes:
    added: dict[str, datetime] = {}
    removed: set[str] = set()
    for e in edits:
        if e.added:
            added[e.path] = e.at
            removed.difference_update(prefixes(e.path))  # it and its ancestors are visible
        else:
            for p in [p for p in added if p == e.path or p.startswith(e.path + "/")]:
                del added[p]
            removed.add(e.path)
    return UserNodes(added, frozenset(removed))


def _by_leaf(user: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in sorted(user):
        out.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    return out


def natural_path(
    category: str,
    subject: str | None,
    entities: Sequence[str],
    by_leaf: dict[str, list[str]],
    max_depth: int = MAX_DEPTH,
) -> str:
    """Where a memory belongs before pruning and bounds (rules in the module doc)."""
    keys = entity_keys(subject, entities)
    best: tuple[int, int, str] | None = None
    for i, key in enumerate(keys):
        for p in by_leaf.get(key, ()):
            rank = (-(p.count("/") + 1), i, p)
            if best is None or rank < best:
                best = rank
    if best is not None:
        return best[2]
    cat = slug(category) or "other"
    homes = by_leaf.get(cat)
    base = min(homes, key=lambda p: (p.count("/"), p)) if homes else cat
    path = f"{base}/{keys[0]}" if keys else base
    return "/".join(path.split("/")[:max_depth])


@dataclass(frozen=True, slots=True)
class CategoryTree:
    namespace: str
    nodes: tuple[Node, ...]  # kept nodes, in render order
    user: UserNodes
    placed: int  # memories under a kept node
    unplaced: int  # memories whose root was hidden, pruned or trimmed
    pruned: tuple[Node, ...]  # left out by the idle rule (top-most of each pruned subtree)
    trimmed: tuple[Node, ...]  # left out by the bounds
    now: datetime | None
    config: TreeConfig = TreeConfig()
    paths: frozenset[str] = frozenset()  # of ``nodes``
    leaves: dict[str, list[str]] = field(default_factory=dict)  # user nodes by last segment

    def place(self, category: str, subject: str | None, entities: Sequence[str]) -> str | None:
        """The kept node a memory shows under (``None``: its root was left out)."""
        path: str | None = natural_path(
            category, subject, entities, self.leaves, self.config.max_depth
        )
        kept = self.paths
        while path is not None and path not in kept:
            path = _parent(path)
        return path

    def render(self) -> str:
        return render_nodes(self.nodes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "now": self.now.isoformat() if self.now else None,
            "text": self.render(),
            "nodes": [n.as_dict() for n in self.nodes],
            "placed": self.placed,
            "unplaced": self.unplaced,
            "pruned": [n.as_dict() for n in self.pruned],
            "trimmed": [n.as_dict() for n in self.trimmed],
            "bounds": {
                "max_nodes": self.config.max_nodes,
                "max_depth": self.config.max_depth,
                "max_children": self.config.max_children,
                "max_bytes": self.config.max_bytes,
                "idle_days": self.config.idle_days,
            },
        }


def render_nodes(nodes: Sequence[Node]) -> str:
    """One line per node, indented by depth; ``*`` marks a node the user added."""
    return "".join(
        f"{'  ' * (n.depth - 1)}- {n.name} ({n.count}){' *' if n.user else ''}\n" for n in nodes
    )


def _order(nodes: Iterable[Node]) -> list[Node]:
    """Depth-first, siblings best first (the order the tree renders in)."""
    children: dict[str | None, list[Node]] = {}
    for n in nodes:
        children.setdefault(_parent(n.path), []).append(n)
    for kids in children.values():
        kids.sort(key=_rank)
    out: list[Node] = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(children.get(n.path, [])))
    return out


def _rank(n: Node) -> tuple[Any, ...]:
    """Best first: user nodes, most memories, most recently used, then by path."""
    last = n.last_use.timestamp() if n.last_use else float("-inf")
    return (not n.user, -n.count, -last, n.depth, n.path)


def build_tree(
    namespace: str,
    memories: Iterable[Placed],
    edits: Iterable[NodeEdit],
    now: datetime | None,
    config: TreeConfig = TreeConfig(),
) -> CategoryTree:
    user = fold_edits(edits)
    by_leaf = _by_leaf(user.added)
    count: dict[str, int] = {}
    last: dict[str, datetime] = {}
    unplaced = 0
    placed = 0

    def use(path: str, at: datetime, n: int) -> None:
        for p in prefixes(path):
            count[p] = count.get(p, 0) + n
            if p not in last or at > last[p]:
                last[p] = at

    at_path: dict[str, tuple[int, datetime]] = {}  # memories by the node they belong to
    for m in memories:
        path: str | None = natural_path(
            m.category, m.subject, m.entities, by_leaf, config.max_depth
        )
        while path is not None and user.hidden(path):
            path = _parent(path)
        if path is None:
            unplaced += m.alike
            continue
        placed += m.alike
        before, at = at_path.get(path, (0, m.last_use))
        at_path[path] = (before + m.alike, max(at, m.last_use))
    for path, (alike, at) in at_path.items():
        use(path, at, alike)
    for path, at in user.added.items():
        if len(path.split("/")) <= config.max_depth and not user.hidden(path):
            use(path, at, 0)
    # a node is the user's when the user added it or something below it
    user_marked = {p for path in user.added for p in prefixes(path)}
    every = [Node(p, count[p], last.get(p), p in user_marked) for p in count]
    cut = now - timedelta(days=config.idle_days) if now is not None else None
    idle = {
        n.path for n in every if cut is not None and n.last_use is not None and n.last_use < cut
    }
    # an ancestor is used whenever a descendant is, so the idle set is closed under descent
    pruned = tuple(
        sorted(
            (n for n in every if n.path in idle and (_parent(n.path) not in idle)),
            key=lambda n: n.path,
        )
    )
    alive = sorted((n for n in every if n.path not in idle), key=_rank)
    # Greedy, best first: a parent ranks at least as high as its children (it counts them
    # and their last use; the user flag goes up too), so it is always decided first.
    kept: dict[str, Node] = {}
    kids: dict[str | None, int] = {}
    trimmed: list[Node] = []
    for n in alive:
        parent = _parent(n.path)
        if (
            len(kept) >= config.max_nodes
            or n.depth > config.max_depth
            or (parent is not None and parent not in kept)
            or kids.get(parent, 0) >= config.max_children
        ):
            trimmed.append(n)
            continue
        kept[n.path] = n
        kids[parent] = kids.get(parent, 0) + 1
    nodes = _order(kept.values())
    while nodes and len(render_nodes(nodes).encode()) > config.max_bytes:
        has_child = {_parent(n.path) for n in nodes}
        worst = max((n for n in nodes if n.path not in has_child), key=_rank)
        trimmed.append(worst)
        nodes = [n for n in nodes if n.path != worst.path]
    shown = sum(n.count for n in nodes if n.depth == 1)
    return CategoryTree(
        namespace=namespace,
        nodes=tuple(nodes),
        user=user,
        placed=shown,
        unplaced=unplaced + placed - shown,
        pruned=pruned,
        trimmed=tuple(sorted(trimmed, key=lambda n: n.path)),
        now=now,
        config=config,
        paths=frozenset(n.path for n in nodes),
        leaves=by_leaf,
    )


def under(path: str | None, prefix: str) -> bool:
    """Whether a tree path is ``prefix`` or below it (the recall filter)."""
    return path is not None and (path == prefix or path.startswith(prefix + "/"))
