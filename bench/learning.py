"""Does feedback change what recall returns? A simulated agent on an evaluation set.

The agent recalls for each question of a training half, judges every top-10 result against
the question's evidence turns (a result citing one is useful: positive feedback; any other
is a distractor: negative) and sends that feedback, for a few rounds of event time. Each
feedback goes through the same pure Q-learning rule the q-learner agent runs
(core/qlearning.py) and its ``QValueUpdated`` events through the same retrieval projection,
so recall ranks with the learned Q exactly as a worker would. Then:

- recall@10 (turn-budgeted) on the training questions and on held-out questions of the same
  conversations, against the same pipeline with learning off (no feedback), same run;
- for each question, the top-ranked distractor in the top 5 gets three negative feedbacks:
  the share that leaves the top 5 of its question.

Deterministic: no wall clock, no randomness (the split alternates questions).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bench.offline_pipeline import configured_embedder
from bench.retrieval_eval import (
    ABSTENTION,
    EvalSet,
    Pipeline,
    budgeted,
    build_pipeline,
    load_set,
)
from memstream.core.qlearning import FeedbackView, QState, plan_q_updates
from memstream.core.scoped_feedback import EVIDENCE_KEY, query_key
from memstream.core.sparse import BM25Encoder
from memstream.projections.port import LogRecord
from memstream.projections.qdrant_projection import QdrantProjection
from memstream.schemas.envelope import encode, make_event
from memstream.schemas.events import QValueUpdated

ROUNDS = 3
TOP = 10
_TOPIC = "eval.memory.log"  # the topic build_pipeline projects from
_FIRST_OFFSET = 10**9  # after every offset the pipeline's own events used


@dataclass
class Learner:
    """Feedback -> Q updates -> the pipeline's retrieval store, as the q-learner would."""

    pipeline: Pipeline
    q: dict[str, QState] = field(default_factory=dict)
    offset: int = _FIRST_OFFSET
    updates: int = 0

    def __post_init__(self) -> None:
        self.projection = QdrantProjection(
            self.pipeline.store, _TOPIC, configured_embedder(), BM25Encoder()
        )

    def feedback(
        self, ns: str, verdicts: Sequence[tuple[str, bool]], at: datetime, query: str = ""
    ) -> None:
        """``query``: the question the results answered, kept with the feedback as the
        q-learner keeps it when the feedback names the recall (core/scoped_feedback.py)."""
        scope = {EVIDENCE_KEY: key} if (key := query_key(query)) else {}
        records = []
        for memory_id, useful in verdicts:
            view = FeedbackView(
                memory_ids=(memory_id,), outcome="positive" if useful else "negative"
            )
            state = self.q.get(memory_id, QState(0.5))
            for change in plan_q_updates({memory_id: state}, view, None, at, scoped=bool(scope)):
                env = make_event(
                    QValueUpdated(
                        memory_id=memory_id,
                        old_q=change.old_q,
                        new_q=change.new_q,
                        reward=change.reward,
                        weight=change.weight,
                        alpha=change.alpha,
                        feedback_event_id=f"sim-{self.offset}",
                        evidence={**change.evidence(), **scope},
                    ),
                    namespace=ns,
                    occurred_at=at,
                )
                self.q[memory_id] = QState(change.new_q, at)
                records.append(LogRecord(_TOPIC, 0, self.offset, env.key, encode(env)))
                self.offset += 1
                self.updates += 1
        if records:
            self.projection.apply(records)


def _ask(pipeline: Pipeline, q: Mapping[str, Any], at: datetime) -> list[Any]:
    result = pipeline.service.recall_sync(
        q["namespace"], q["query"], k=40, now=at, include_low_confidence=True
    )
    return list(result.results)


def _recalls10(
    pipeline: Pipeline, questions: Sequence[Mapping[str, Any]], at: datetime
) -> dict[str, float]:
    """Each question's recall@10 (turn-budgeted), by its id."""
    out = {}
    for q in questions:
        groups = [r.source_turn_ids for r in _ask(pipeline, q, at)]
        out[q["id"]] = budgeted(set(q["evidence_turn_ids"]), groups)[10]
    return out


def _mean(per: Mapping[str, float], questions: Sequence[Mapping[str, Any]]) -> float:
    return sum(per[q["id"]] for q in questions) / len(questions) if questions else 0.0


def _recall10(pipeline: Pipeline, questions: Sequence[Mapping[str, Any]], at: datetime) -> float:
    return _mean(_recalls10(pipeline, questions, at), questions)


def split(
    questions: Sequence[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """Per namespace, alternate questions into training and held-out halves."""
    by_ns: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for q in questions:
        if q["kind"] != ABSTENTION and q["evidence_turn_ids"]:
            by_ns[q["namespace"]].append(q)
    train: list[Mapping[str, Any]] = []
    held: list[Mapping[str, Any]] = []
    for ns in sorted(by_ns):
        for i, q in enumerate(by_ns[ns]):
            (train if i % 2 == 0 else held).append(q)
    return train, held


def evaluate_learning(eval_set: EvalSet, rounds: int = ROUNDS) -> dict[str, Any]:
    train, held = split(eval_set.questions)
    start = max(datetime.fromisoformat(t["occurred_at"]) for t in eval_set.turns) + timedelta(
        days=1
    )
    # the wording: held-out questions "about the same facts" as trained ones, i.e.
    # sharing an evidence turn with a training question of their conversation
    trained_turns = {(q["namespace"], t) for q in train for t in q["evidence_turn_ids"]}
    same = [
        q for q in held if any((q["namespace"], t) in trained_turns for t in q["evidence_turn_ids"])
    ]
    off = build_pipeline(eval_set.turns)
    on = build_pipeline(eval_set.turns)
    learner = Learner(on)
    try:
        # the same-facts questions are held-out ones: asked once, averaged twice
        base_train, held_off = _recall10(off, train, start), _recalls10(off, held, start)
        base_held, base_same = _mean(held_off, held), _mean(held_off, same)
        at = start
        for _round in range(rounds):
            for q in train:
                evidence = set(q["evidence_turn_ids"])
                verdicts = [
                    (r.memory_id, bool(evidence & set(r.source_turn_ids)))
                    for r in _ask(on, q, at)[:TOP]
                ]
                learner.feedback(q["namespace"], verdicts, at, q["query"])
            at += timedelta(days=1)
        after_train, held_on = _recall10(on, train, at), _recalls10(on, held, at)
        after_held, after_same = _mean(held_on, held), _mean(held_on, same)
        left, tried = _three_negatives(off, train, start)
    finally:
        off.store.close()
        on.store.close()
    return {
        "questions": {"train": len(train), "held_out": len(held), "same_facts": len(same)},
        "rounds": rounds,
        "q_updates": learner.updates,
        "recall@10": {
            "train": {"off": round(base_train, 4), "on": round(after_train, 4)},
            "held_out": {"off": round(base_held, 4), "on": round(after_held, 4)},
            "same_facts": {"off": round(base_same, 4), "on": round(after_same, 4)},
        },
        "three_negatives": {"distractors": tried, "left_top5": left},
    }


def _three_negatives(
    pipeline: Pipeline, questions: Sequence[Mapping[str, Any]], at: datetime
) -> tuple[int, int]:
    """(distractors that left their question's top 5 after three negatives, tried)."""
    learner = Learner(pipeline)
    left = tried = 0
    for q in questions:
        evidence = set(q["evidence_turn_ids"])
        top = _ask(pipeline, q, at)[:5]
        distractor = next((r for r in top if not evidence & set(r.source_turn_ids)), None)
        if distractor is None:
            continue
        tried += 1
        for _ in range(3):
            learner.feedback(q["namespace"], [(distractor.memory_id, False)], at, q["query"])
        if distractor.memory_id not in {r.memory_id for r in _ask(pipeline, q, at)[:5]}:
            left += 1
    return left, tried


IMPORTANT_FROM = 0.7  # the spectrum's identity, commitment and strong personal claims
CYCLE_EVERY = timedelta(days=7)
YEAR = timedelta(days=365)


def _tier_moves(
    views: Sequence[Any], at: datetime, config: Any, tiers: Any
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """The tier rules as the worker runs them after each cycle (streams/learning.py): per
    namespace, (memory id, to tier, rule, evidence). Nobody recalls in the simulated year:
    no access times, no sustained Q."""
    from memstream.core.lifecycle import retention
    from memstream.core.tiers import TierView, entity_group_sizes, tier_change, topical_entities

    moves: list[tuple[str, str, str, dict[str, Any]]] = []
    by_ns: dict[str, list[Any]] = defaultdict(list)
    for v in views:
        if v.status == "active":
            by_ns[v.namespace].append(v)
    for members in by_ns.values():
        groups = entity_group_sizes(
            (v.memory_id, topical_entities(v.entities, v.subject)) for v in members
        )
        for v in sorted(members, key=lambda v: v.memory_id):
            view = TierView(
                memory_id=v.memory_id,
                tier=v.tier,
                q_value=v.q_value,
                created_at=v.created_at,
                entity_group=groups.get(v.memory_id, 1),
                pinned=v.pinned,
                immutable=v.immutable,
                flashbulb=v.flashbulb,
                retention=retention(v, at, config),
                importance=v.importance,
            )
            decision = tier_change(view, at, tiers)
            if decision is not None:
                moves.append((v.memory_id, *decision))
    return moves


def evaluate_forgetting(eval_set: EvalSet) -> dict[str, Any]:
    """A year of dream cycles over the memories the write path built from the set, nobody
    recalling them: the pure lifecycle rules (core/lifecycle/) and after each cycle the
    tier rules (core/tiers.py), as the worker runs them, with its default settings, one
    cycle a week of event time from the day after the last turn. The memory-log events they
    write (streams/consolidation.py) go to the retrieval store that answers a year on."""
    from dataclasses import replace

    from bench.offline_pipeline import configured_gate_embedder, run_offline
    from memstream.core.lifecycle import MemoryView, apply_actions, plan_cycle, trivia
    from memstream.core.memory_state import fold
    from memstream.core.tiers import TierConfig
    from memstream.infra.settings import Settings
    from memstream.schemas.events import TierChanged
    from memstream.streams.consolidation import action_events, lifecycle_config

    run = run_offline(eval_set.turns)
    states = fold(run.events)
    config = lifecycle_config(Settings())
    tiers = TierConfig()
    embedder = configured_gate_embedder()
    views = tuple(MemoryView.from_state(s) for s in states.values())
    matrix = embedder.embed([v.text for v in views])
    vectors = {v.memory_id: matrix[i] for i, v in enumerate(views)}
    created = {v.memory_id: v for v in views if v.status == "active"}
    start = max(datetime.fromisoformat(t["occurred_at"]) for t in eval_set.turns) + timedelta(
        days=1
    )
    at = start
    rules: dict[str, int] = defaultdict(int)
    rule_of: dict[str, str] = {}
    written: list[Any] = []  # the year's memory-log events, in order
    while at <= start + YEAR:
        report = plan_cycle(views, None, vectors, at, config)
        before = {v.memory_id: v for v in views}
        for a in report.actions:
            if a.kind in ("archive", "supersede", "dormant"):
                rules[a.rule] += 1
                rule_of[a.memory_id] = a.rule
            ns = before[a.memory_id].namespace if a.memory_id in before else None
            ns = ns or (a.created.namespace if a.created is not None else "")
            written.extend(
                make_event(p, namespace=ns, occurred_at=at)
                for p in action_events(a, before, "simulated-year", ns, at)
            )
        views = apply_actions(views, report.actions, at)
        moved = {}
        for mid, to_tier, rule, evidence in _tier_moves(views, at, config, tiers):
            v = next(v for v in views if v.memory_id == mid)
            if to_tier == "peripheral":
                rules[rule] += 1
                rule_of[mid] = rule
            written.append(
                make_event(
                    TierChanged(
                        memory_id=mid,
                        from_tier=v.tier,  # type: ignore[arg-type]
                        to_tier=to_tier,  # type: ignore[arg-type]
                        rule=rule,
                        evidence=evidence,
                    ),
                    namespace=v.namespace,
                    occurred_at=at,
                )
            )
            moved[mid] = to_tier
        views = tuple(
            replace(v, tier=moved[v.memory_id]) if v.memory_id in moved else v for v in views
        )
        at += CYCLE_EVERY
    final = {v.memory_id: v for v in views}
    off, on = build_pipeline(eval_set.turns), build_pipeline(eval_set.turns)
    try:  # recall a year on, the store told what the year's cycles wrote
        QdrantProjection(on.store, _TOPIC, configured_embedder(), BM25Encoder()).apply(
            [
                LogRecord(_TOPIC, 0, _FIRST_OFFSET + i, e.key, encode(e))
                for i, e in enumerate(written)
            ]
        )
        questions = [
            q for q in eval_set.questions if q["kind"] != ABSTENTION and q["evidence_turn_ids"]
        ]
        recall_off = _recall10(off, questions, start + YEAR)
        recall_on = _recall10(on, questions, start + YEAR)
    finally:
        off.store.close()
        on.store.close()
    trivial = [
        m for m in created if trivia(created[m].importance, created[m].kind, created[m].subject)
    ]
    important = [m for m in created if created[m].importance >= IMPORTANT_FROM]
    live = {m for m, v in final.items() if m in created and v.live}
    return {
        "memories": len(created),
        "trivial": len(trivial),
        "important": len(important),
        "trivial_archived": sum(final[m].status == "archived" for m in trivial),
        # consolidated (captured by a strong memory that followed, or said again): kept
        "trivial_consolidated": sum(
            final[m].status != "archived" and final[m].stability > 1.0 for m in trivial
        ),
        "trivial_dormant": sum(
            final[m].status == "active" and final[m].tier == "peripheral" for m in trivial
        ),
        "important_active": sum(m in live for m in important),
        "important_retired_by": dict(
            sorted(Counter(rule_of[m] for m in important if m not in live).items())
        ),
        "active": len(live),
        "rules": dict(sorted(rules.items())),
        "recall@10": {"off": round(recall_off, 4), "on": round(recall_on, 4)},
        "cycles": int(YEAR / CYCLE_EVERY) + 1,
    }


def main() -> int:
    import json

    loaded = load_set("own")
    assert loaded is not None
    print(json.dumps(evaluate_learning(loaded), indent=2))
    print(json.dumps(evaluate_forgetting(loaded), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
