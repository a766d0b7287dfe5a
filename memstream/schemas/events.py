"""Event payloads: what producers publish and what the agents decide.

Each payload is a frozen dataclass; its type hints and ``spec`` metadata are the
validation rules and the exported JSON Schema. ``EVENT_TYPES`` maps the wire name
to the class and its current schema version. Memory events (the memory log) all
carry ``memory_id`` and an ``evidence`` object that says why the decision was taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Literal

from memstream.schemas._fields import spec

ID = r"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,199}"

Role = Literal["user", "assistant", "system", "tool"]
Outcome = Literal["positive", "negative", "very_negative", "correction"]
WorkflowOutcome = Literal["success", "failure", "corrected", "missed"]
Category = Literal[
    "fact",
    "preference",
    "correction",
    "entity",
    "decision",
    "relationship",
    "principle",
    "commitment",
    "moment",
    "skill",
    "summary",
]
Kind = Literal["episode", "note"]
Tier = Literal["core", "working", "peripheral"]
GateDecision = Literal["create", "update", "reinforce", "supersede"]
Relation = Literal["supersedes", "contradicts", "causes", "elaborates", "same_entity", "related_to"]


def _id(description: str) -> Any:
    return field(metadata=spec(pattern=ID, description=description))


def _evidence() -> Any:
    return field(default_factory=dict, metadata=spec(description="why the decision was taken"))


# --- inputs from producers ---------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationTurn:
    """One turn of a conversation, as the producer saw it."""

    TYPE: ClassVar[str] = "ConversationTurn"
    VERSION: ClassVar[int] = 2

    turn_id: str = _id("the producer's id of this turn, unique within the namespace")
    role: Role
    speaker: str = field(metadata=spec(min_len=1, max_len=200, description="who spoke"))
    text: str = field(metadata=spec(text=True, description="what was said"))
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class AccessedMemory:
    memory_id: str = _id("memory returned by a recall")
    rank: int = field(metadata=spec(ge=1))
    score: float


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryAccessed:
    """A recall returned these memories, in this order."""

    TYPE: ClassVar[str] = "MemoryAccessed"
    VERSION: ClassVar[int] = 1

    query_id: str = _id("id of the recall")
    memories: list[AccessedMemory] = field(metadata=spec(max_len=1000))
    query: str | None = field(default=None, metadata=spec(text=True))
    top_score: float | None = None
    source: str = field(default="recall", metadata=spec(max_len=64))


@dataclass(frozen=True, slots=True, kw_only=True)
class Feedback:
    """How useful memories (or a whole recall) turned out to be."""

    TYPE: ClassVar[str] = "Feedback"
    VERSION: ClassVar[int] = 1

    memory_ids: list[str] = field(default_factory=list, metadata=spec(max_len=1000))
    query_id: str | None = field(default=None, metadata=spec(pattern=ID))
    outcome: Outcome | None = None
    reward: float | None = field(default=None, metadata=spec(ge=0.0, le=1.0))
    reason: str | None = field(default=None, metadata=spec(text=True))
    correction: str | None = field(
        default=None,
        metadata=spec(text=True, description="the corrected statement, with outcome=correction"),
    )

    def __post_init__(self) -> None:
        from memstream.schemas.errors import EventValidationError

        if not self.memory_ids and self.query_id is None:
            raise EventValidationError("missing_target", "feedback needs memory_ids or a query_id")
        if self.outcome is None and self.reward is None:
            raise EventValidationError("missing_outcome", "feedback needs an outcome or a reward")
        for i, mid in enumerate(self.memory_ids):
            if not isinstance(mid, str) or not mid:
                raise EventValidationError(
                    "bad_value", "memory ids must be non-empty strings", f"memory_ids[{i}]"
                )


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryEdit:
    """A user edits a memory directly (SDK/HTTP ``update`` and ``delete``). Nothing is
    physically removed: an update becomes MemoryUpdated, a delete becomes MemoryArchived."""

    TYPE: ClassVar[str] = "MemoryEdit"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the memory to edit")
    # pin: exempt from forgetting and boosted; lock: pinned and immutable (no rule and no
    # extraction changes it; only the user's own update or delete); unpin: neither
    action: Literal["update", "delete", "pin", "unpin", "lock"]
    text: str | None = field(default=None, metadata=spec(min_len=1, text=True))
    reason: str | None = field(default=None, metadata=spec(max_len=500))

    def __post_init__(self) -> None:
        from memstream.schemas.errors import EventValidationError

        if self.action == "update" and not self.text:
            raise EventValidationError("missing_field", "an update needs the new text", "text")


#: a category tree path: 1-4 lowercase segments (core/category_tree.py normalises input)
TREE_PATH = r"[a-z0-9][a-z0-9-]{0,39}(?:/[a-z0-9][a-z0-9-]{0,39}){0,3}"


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeEdit:
    """A user adds or removes a node of the namespace's category tree (SDK/HTTP/CLI
    ``tree add|remove``); the q-learner turns it into TreeNodeAdded / TreeNodeRemoved."""

    TYPE: ClassVar[str] = "TreeEdit"
    VERSION: ClassVar[int] = 1

    action: Literal["add", "remove"]
    path: str = field(metadata=spec(pattern=TREE_PATH, description="e.g. work/projects"))
    reason: str | None = field(default=None, metadata=spec(max_len=500))


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowObserved:
    """Operational telemetry: how one run of a workflow went. Never recalled as memory."""

    TYPE: ClassVar[str] = "WorkflowObserved"
    VERSION: ClassVar[int] = 1

    workflow: str = field(metadata=spec(min_len=1, max_len=200))
    outcome: WorkflowOutcome
    detail: str | None = field(default=None, metadata=spec(text=True))
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallRequested:
    """A consumer on the bus asks for memories; the answer comes on the reply topic."""

    TYPE: ClassVar[str] = "RecallRequested"
    VERSION: ClassVar[int] = 1

    query_id: str = _id("id the answer will carry")
    query: str = field(metadata=spec(min_len=1, text=True))
    k: int = field(default=10, metadata=spec(ge=1, le=200))
    as_of: datetime | None = None
    include_superseded: bool = False
    filters: dict[str, Any] = field(default_factory=dict)
    # forgotten (archived) memories too, ranked below the rest (consumers/recall.py)
    include_archived: bool = False
    # the whole answer whatever its confidence: a "skipped" one is otherwise withheld and an
    # "abbreviated" one shortened (core/recall_gate.py)
    include_low_confidence: bool = False
    # the evaluation time ("now" for recency, retention and the access event it records);
    # unset: the wall clock. Unlike as_of it cuts nothing: a replay or a benchmark sets it.
    at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallHit:
    memory_id: str = _id("the memory")
    text: str
    score: float
    explain: dict[str, Any] = field(default_factory=dict)
    source_turn_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallAnswered:
    """The ranked, explained answer to a RecallRequested (same correlation id)."""

    TYPE: ClassVar[str] = "RecallAnswered"
    VERSION: ClassVar[int] = 1

    query_id: str = _id("id of the request")
    results: list[RecallHit] = field(default_factory=list)
    confidence: Literal["full", "abbreviated", "skipped"] = "full"
    error: str | None = None


# --- the memory log: decisions of the agents ----------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Extraction:
    """How a fact was extracted: which extractor, model, prompt and what it cost."""

    extractor: str = field(metadata=spec(max_len=64))
    model: str | None = None
    prompt_version: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    fallback: bool = False
    fallback_reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryCreated:
    """A new memory, with everything needed to explain where it came from."""

    TYPE: ClassVar[str] = "MemoryCreated"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("deterministic id of the memory")
    text: str = field(metadata=spec(min_len=1, text=True))
    category: Category
    kind: Kind = "note"
    confidence: float = field(default=1.0, metadata=spec(ge=0.0, le=1.0))
    importance: float = field(default=0.5, metadata=spec(ge=0.0, le=1.0))
    arousal: float = field(default=0.0, metadata=spec(ge=0.0, le=1.0))
    entities: list[str] = field(default_factory=list)
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    content_hash: str = field(metadata=spec(pattern=r"[0-9a-f]{64}"))
    source_turn_ids: list[str] = field(default_factory=list)
    source_event_ids: list[str] = field(default_factory=list)
    extraction: Extraction | None = None
    pinned: bool = False
    tier: Tier = "working"
    subject: str | None = field(default=None, metadata=spec(max_len=200))
    slot: str | None = field(default=None, metadata=spec(max_len=200))
    metadata: dict[str, Any] = field(
        default_factory=dict,
        metadata=spec(
            description="URLs, commands, paths, versions and ids (core/metadata.py); the "
            "producer's turn metadata under 'turn'"
        ),
    )
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSignal:
    """What the signal scan said of one turn (the full record is in the extraction evidence)."""

    turn_id: str = _id("the producer's turn id")
    event_id: str = _id("the ConversationTurn event")
    level: Literal["HIGH", "NORMAL", "SKIP"]
    reasons: list[str] = field(default_factory=list)
    importance: float = field(default=0.0, metadata=spec(ge=0.0, le=1.0))


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnsExtracted:
    """A session buffer was flushed: which turns were read (or skipped), why now, by which
    extractor and at what cost. Every turn appears in exactly one of these events, so the
    log itself proves no turn was lost; memory events it caused name it as causation."""

    TYPE: ClassVar[str] = "TurnsExtracted"
    VERSION: ClassVar[int] = 1

    # "cycle": the namespace's clock reached a dream-cycle boundary (streams/maintenance.py)
    trigger: Literal["high_signal", "buffer_full", "buffer_age", "idle", "session_change", "cycle"]
    turns: list[TurnSignal] = field(metadata=spec(min_len=1, max_len=10_000))
    extraction: Extraction | None = None
    llm_calls: int = field(default=0, metadata=spec(ge=0))
    cost_usd: float = field(default=0.0, metadata=spec(ge=0.0))
    facts: int = field(default=0, metadata=spec(ge=0))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryUpdated:
    """New detail merged into an existing memory (prediction-error gate: UPDATE, or a user edit)."""

    TYPE: ClassVar[str] = "MemoryUpdated"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the memory")
    text: str = field(metadata=spec(min_len=1, text=True))
    previous_text: str = field(metadata=spec(text=True))
    content_hash: str = field(metadata=spec(pattern=r"[0-9a-f]{64}"))
    entities: list[str] = field(default_factory=list)
    source_turn_ids: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(
        default_factory=dict,
        metadata=spec(
            description="URLs, commands, paths, versions and ids (core/metadata.py); the "
            "producer's turn metadata under 'turn'"
        ),
    )
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryReinforced:
    """The same knowledge arrived again (or was used together with others): stability grows."""

    TYPE: ClassVar[str] = "MemoryReinforced"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the memory")
    stability_before: float = field(metadata=spec(ge=0.0))
    stability_after: float = field(metadata=spec(ge=0.0))
    reason: str = field(metadata=spec(max_len=64))
    source_turn_ids: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemorySuperseded:
    """A newer memory contradicts this one: it is invalidated from valid_until, never deleted."""

    TYPE: ClassVar[str] = "MemorySuperseded"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the old memory")
    superseded_by: str | None = field(default=None, metadata=spec(pattern=ID))
    valid_until: datetime
    reason: str = field(metadata=spec(max_len=64))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class DuplicateSkipped:
    """An extracted fact whose normalized content hash already exists: not written again."""

    TYPE: ClassVar[str] = "DuplicateSkipped"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the existing memory with the same content hash")
    content_hash: str = field(metadata=spec(pattern=r"[0-9a-f]{64}"))
    text: str = field(metadata=spec(text=True))
    source_turn_ids: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class QValueUpdated:
    """Q-learning step from one feedback event."""

    TYPE: ClassVar[str] = "QValueUpdated"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the memory")
    old_q: float = field(metadata=spec(ge=0.0, le=1.0))
    new_q: float = field(metadata=spec(ge=0.0, le=1.0))
    reward: float = field(metadata=spec(ge=0.0, le=1.0))
    weight: float = field(metadata=spec(ge=0.0, le=1.0))
    alpha: float = field(metadata=spec(ge=0.0, le=1.0))
    feedback_event_id: str = _id("the Feedback event")
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class SynapticTagged:
    """A weak memory is tagged: a strong one in the same session before expiry captures it."""

    TYPE: ClassVar[str] = "SynapticTagged"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the weak memory")
    expires_at: datetime
    importance: float = field(metadata=spec(ge=0.0, le=1.0))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class TagCaptured:
    """A strong memory arrived while the tag was live: the weak memory is consolidated."""

    TYPE: ClassVar[str] = "TagCaptured"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the tagged memory")
    captured_by: str = _id("the strong memory")
    stability_before: float = field(metadata=spec(ge=0.0))
    stability_after: float = field(metadata=spec(ge=0.0))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class TagExpired:
    """A synaptic tag's TTL passed with no strong memory: the tag is dropped."""

    TYPE: ClassVar[str] = "TagExpired"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the tagged memory")
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class TierChanged:
    """Promotion or demotion between core / working / peripheral, with the rule that fired."""

    TYPE: ClassVar[str] = "TierChanged"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the memory")
    from_tier: Tier
    to_tier: Tier
    rule: str = field(metadata=spec(max_len=64))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryArchived:
    """The memory leaves retrieval; the log keeps it, and MemoryRestored brings it back."""

    TYPE: ClassVar[str] = "MemoryArchived"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the memory")
    rule: str = field(metadata=spec(max_len=64))
    merged_into: str | None = field(default=None, metadata=spec(pattern=ID))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryRestored:
    """An archived memory returns to retrieval."""

    TYPE: ClassVar[str] = "MemoryRestored"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the memory")
    reason: str = field(metadata=spec(max_len=200))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryPinned:
    """The user pinned, locked (pinned and immutable) or unpinned a memory."""

    TYPE: ClassVar[str] = "MemoryPinned"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the memory")
    pinned: bool
    immutable: bool = False
    reason: str | None = field(default=None, metadata=spec(max_len=500))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeNodeAdded:
    """The user added a node to the namespace's category tree: memories about the entity its
    last segment names are placed under it (core/category_tree.py)."""

    TYPE: ClassVar[str] = "TreeNodeAdded"
    VERSION: ClassVar[int] = 1

    path: str = field(metadata=spec(pattern=TREE_PATH))
    reason: str | None = field(default=None, metadata=spec(max_len=500))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeNodeRemoved:
    """The user removed a node (and what is below it) from the category tree; its memories
    show under the nearest remaining ancestor. Adding it again brings it back."""

    TYPE: ClassVar[str] = "TreeNodeRemoved"
    VERSION: ClassVar[int] = 1

    path: str = field(metadata=spec(pattern=TREE_PATH))
    reason: str | None = field(default=None, metadata=spec(max_len=500))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class RelationAdded:
    """A typed edge from one memory (``memory_id``) to another of the same namespace, with
    the rule (or model) that decided it; adding it again changes its confidence."""

    TYPE: ClassVar[str] = "RelationAdded"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the edge's source memory (the cause, the newer, the elaboration)")
    target_id: str = _id("the edge's target memory")
    relation: Relation
    confidence: float = field(metadata=spec(ge=0.0, le=1.0))
    rule: str = field(metadata=spec(max_len=64, description="the rule or model that decided"))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class RelationRemoved:
    """An edge leaves the graph (pruned by the namespace's bound, or its memory ended)."""

    TYPE: ClassVar[str] = "RelationRemoved"
    VERSION: ClassVar[int] = 1

    memory_id: str = _id("the edge's source memory")
    target_id: str = _id("the edge's target memory")
    relation: Relation
    reason: str = field(metadata=spec(max_len=64))
    evidence: dict[str, Any] = _evidence()


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsolidationReported:
    """A dream cycle that was applied: what each step did; its actions name it as cause."""

    TYPE: ClassVar[str] = "ConsolidationReported"
    VERSION: ClassVar[int] = 1

    counts: dict[str, Any] = field(default_factory=dict)
    deferred: dict[str, Any] = field(default_factory=dict)
    actions: int = field(default=0, metadata=spec(ge=0))
    memories: int = field(default=0, metadata=spec(ge=0))
    evidence: dict[str, Any] = _evidence()


INPUT_TYPES: tuple[type, ...] = (
    ConversationTurn,
    MemoryAccessed,
    Feedback,
    MemoryEdit,
    TreeEdit,
    WorkflowObserved,
    RecallRequested,
    RecallAnswered,
)
MEMORY_TYPES: tuple[type, ...] = (
    TurnsExtracted,
    ConsolidationReported,
    MemoryCreated,
    MemoryUpdated,
    MemoryReinforced,
    MemorySuperseded,
    DuplicateSkipped,
    QValueUpdated,
    SynapticTagged,
    TagCaptured,
    TagExpired,
    TierChanged,
    MemoryArchived,
    MemoryRestored,
    MemoryPinned,
    RelationAdded,
    RelationRemoved,
    TreeNodeAdded,
    TreeNodeRemoved,
)

#: wire name -> payload class; the class carries its current VERSION.
EVENT_TYPES: dict[str, type] = {cls.TYPE: cls for cls in INPUT_TYPES + MEMORY_TYPES}  # type: ignore[attr-defined]
