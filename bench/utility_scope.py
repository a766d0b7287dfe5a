"""``python -m bench.utility_scope``: would Q conditioned on the query beat one Q per memory?

An offline estimate on ``bench learning``'s split of the own set, not a figure of ``make
bench``: each training question's top 10 (learning off) is judged against its evidence
turns, as the simulated agent does, and that feedback is turned into Q by the q-learner's
rule (core/qlearning.py), ``ROUNDS`` times. Each question's top 40 is then re-ranked by
the learned-utility factor of recall's score (core/scoring.with_utility) under:

- ``global``: Q per memory from every training question of the namespace (what the
  worker keeps);
- ``near >= t``: Q per memory and query, from the training questions whose query embeds
  within cosine ``t`` of this one (a query cluster);
- ``positives only``: global Q from positive feedback alone.

Re-ranking the returned list by score is not recall's own order (diversity and the
turn budget reorder it), so compare the variants with each other and with ``off`` of the
same run, not with ``bench learning``'s figures. Deterministic: no wall clock, no
randomness.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from bench.learning import ROUNDS, TOP, _ask, split
from bench.offline_pipeline import configured_embedder
from bench.retrieval_eval import Pipeline, budgeted, build_pipeline, load_set
from memstream.core.qlearning import FeedbackView, QState, plan_q_updates
from memstream.core.scoring import with_utility

Verdicts = dict[str, list[tuple[str, bool]]]
THRESHOLDS = (0.3, 0.5, 0.6, 0.7, 0.8)


def learned(questions: Sequence[Mapping[str, Any]], verdicts: Verdicts, at: datetime,
            keep: Callable[[bool], bool] = lambda useful: True) -> dict[str, float]:  # fmt: skip
    q: dict[str, QState] = {}
    for _round in range(ROUNDS):
        for question in questions:
            for mid, useful in verdicts[question["query"]]:
                if not keep(useful):
                    continue
                view = FeedbackView(memory_ids=(mid,), outcome="positive" if useful else "negative")
                for change in plan_q_updates({mid: q.get(mid, QState(0.5))}, view, None, at):
                    q[mid] = QState(change.new_q, at)
    return {mid: s.q for mid, s in q.items()}


def recall10(pipeline: Pipeline, questions: Sequence[Mapping[str, Any]], at: datetime,
             q_for: Callable[[Mapping[str, Any]], Mapping[str, float]]) -> float:  # fmt: skip
    total = 0.0
    for question in questions:
        q = q_for(question)
        ranked = sorted(
            _ask(pipeline, question, at),
            key=lambda r: -with_utility(r.score, q.get(r.memory_id, 0.5), 0.5),
        )
        total += budgeted(set(question["evidence_turn_ids"]), [r.source_turn_ids for r in ranked])[
            10
        ]
    return round(total / max(len(questions), 1), 4)


def main() -> int:
    loaded = load_set("own")
    assert loaded is not None
    train, held = split(loaded.questions)
    at = max(datetime.fromisoformat(t["occurred_at"]) for t in loaded.turns) + timedelta(days=1)
    pipeline = build_pipeline(loaded.turns)
    embedder = configured_embedder()
    try:
        verdicts: Verdicts = {}
        for question in train:
            evidence = set(question["evidence_turn_ids"])
            verdicts[question["query"]] = [
                (r.memory_id, bool(evidence & set(r.source_turn_ids)))
                for r in _ask(pipeline, question, at)[:TOP]
            ]
        by_ns: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for question in train:
            by_ns[question["namespace"]].append(question)
        unit = {}
        for question in [*train, *held]:
            v = embedder.embed([question["query"]])[0]
            unit[question["query"]] = v / (np.linalg.norm(v) or 1.0)
        per_ns = {ns: learned(qs, verdicts, at) for ns, qs in by_ns.items()}
        positive = {ns: learned(qs, verdicts, at, bool) for ns, qs in by_ns.items()}

        def near(t: float) -> Callable[[Mapping[str, Any]], Mapping[str, float]]:
            def q_for(question: Mapping[str, Any]) -> Mapping[str, float]:
                v = unit[question["query"]]
                close = [x for x in by_ns[question["namespace"]] if unit[x["query"]] @ v >= t]
                return learned(close, verdicts, at)

            return q_for

        variants: dict[str, Callable[[Mapping[str, Any]], Mapping[str, float]]] = {
            "off": lambda q: {},
            "global": lambda q: per_ns.get(q["namespace"], {}),
            "positives only": lambda q: positive.get(q["namespace"], {}),
            **{f"near >= {t}": near(t) for t in THRESHOLDS},
        }
        out = {
            name: {
                "held_out": recall10(pipeline, held, at, q_for),
                "train": recall10(pipeline, train, at, q_for),
            }
            for name, q_for in variants.items()
        }
    finally:
        pipeline.store.close()
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
