"""Evidence recall@k: memstream's recall over memories built by the write path, against
plain BM25 (and dense-only search) over the raw turns, on the project's own set and on
BEAM's 100K tier (public data nobody here wrote; ``bench/beam_data.py``), split by
conversation into a development part (settings are chosen there) and a test part
(reported).

Per question, with ``evidence`` the turns that hold its answer:

* **turn-budgeted recall@k** (the headline): the ranked memories' source turns,
  de-duplicated in rank order, first k; the share of the evidence among them. A memory
  citing many turns (a summary, a merge) cannot inflate it: k turns is k turns.
* **plain recall@k**: the share of the evidence among the source turns of the top k
  memories (what the project reported before; a many-turn memory counts whole).
* baselines: the top k turns of Okapi BM25 (k1 1.2, b 0.75) and of dense-only search
  (hashing embedder) over the namespace's raw turns, in the same run.

The haystack sets (``BEAM dev haystack``, ``BEAM test haystack``, ``own haystack``) ask the
same questions of one namespace that holds every conversation of the split (or of the own
set, six conversations sent one after another, so each but the first is older than the
namespace's clock): each question's own conversation is a tenth (a sixth) of the history,
the rest distractors, as LongMemEval builds its haystacks; each is asked a day after the
haystack's last turn. How much recall loses there is how it copes
with a long history.

Abstention questions (BEAM: nothing in the conversation answers them) count how often the
recall's confidence gate answers "skipped": nothing relevant is known.

No LLM is in the loop: the rule extractor and the offline hashing embedder, defaults
everywhere. ``MEMSTREAM_EVAL_SETS=own,dev,dev_haystack`` (or ``python -m
bench.retrieval_eval --own --dev --dev_haystack``) runs only those sets: tuning runs never
look at the test part.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

import numpy as np

from bench import beam_data
from bench.eval_data import load_conversations, load_questions
from bench.offline_pipeline import configured_embedder, run_offline
from memstream.consumers.recall import RecallResult, RecallService
from memstream.core.embedding import Embedder
from memstream.core.recall_gate import NOTHING_RELEVANT
from memstream.core.sparse import BM25Encoder
from memstream.core.tokens import tokenize
from memstream.projections.port import LogRecord
from memstream.projections.qdrant_projection import QdrantProjection, collection_spec
from memstream.projections.retrieval import EdgeRetrievalStore
from memstream.schemas.envelope import encode

KS = (5, 10, 20)
DEPTH = 40  # memories asked for per question: enough for 20 distinct turns
#: a haystack set's name: its split's name and this (``bench_retrieval_eval`` reads it)
HAYSTACK = " haystack"
SET_NAMES = {
    "own": "own",
    "own_haystack": "own" + HAYSTACK,
    "dev": "BEAM dev",
    "test": "BEAM test",
    "dev_haystack": "BEAM dev" + HAYSTACK,
    "test_haystack": "BEAM test" + HAYSTACK,
}
#: one namespace holds every conversation of a split: each question's own conversation is
#: then a tenth of what it is asked of (the others are distractors, as LongMemEval builds
#: its haystacks), which is what a long history looks like to recall
HAYSTACK_NAMESPACE = "haystack"
ENV_SETS = "MEMSTREAM_EVAL_SETS"
ABSTENTION = "abstention"
# A memory that opens with one of these leans on context it does not carry ("It was
# great", "They moved in May"); first-person words are resolved to the speaker at write.
UNRESOLVED_PRONOUNS = frozenset(
    [
        "it",
        "its",
        "it's",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "there",
        "such",
    ]
)
_FIRST_WORD = re.compile(r"[A-Za-z']+")


# --- metrics (pure) ------------------------------------------------------------------------


def turn_budget(groups: Iterable[Sequence[str]], k: int) -> list[str]:
    """The first ``k`` distinct turns of ranked groups (a memory's source turns, in rank
    order): a memory citing many turns spends as much of the budget as it cites."""
    out: list[str] = []
    seen: set[str] = set()
    for group in groups:
        for turn in group:
            if turn not in seen:
                seen.add(turn)
                out.append(turn)
                if len(out) == k:
                    return out
    return out


def recall_at(evidence: Iterable[str], found: Iterable[str]) -> float:
    wanted = set(evidence)
    return len(wanted & set(found)) / len(wanted) if wanted else 0.0


def starts_with_unresolved_pronoun(text: str) -> bool:
    m = _FIRST_WORD.search(text)
    return m is not None and m.group().lower() in UNRESOLVED_PRONOUNS


@dataclass
class Scores:
    """Per-question values of one ranker, by k and by question kind."""

    per_k: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    per_kind: dict[str, dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def add(self, kind: str, values: Mapping[int, float]) -> None:
        for k, value in values.items():
            self.per_k[k].append(value)
            self.per_kind[kind][k].append(value)

    def mean(self, k: int, kind: str | None = None) -> float:
        values = self.per_k[k] if kind is None else self.per_kind[kind][k]
        return float(np.mean(values)) if values else 0.0


def budgeted(evidence: set[str], groups: Sequence[Sequence[str]]) -> dict[int, float]:
    return {k: recall_at(evidence, turn_budget(groups, k)) for k in KS}


def plain(evidence: set[str], groups: Sequence[Sequence[str]]) -> dict[int, float]:
    return {k: recall_at(evidence, (t for g in groups[:k] for t in g)) for k in KS}


# --- baselines over raw turns -------------------------------------------------------------


class BM25Turns:
    """Plain Okapi BM25 (k1 1.2, b 0.75) over one namespace's raw turns."""

    def __init__(self, turns: Sequence[Mapping[str, Any]]) -> None:
        self.ids = [t["turn_id"] for t in turns]
        self.docs = [Counter(tokenize(t["text"])) for t in turns]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(len(self.lengths), 1)
        df: Counter[str] = Counter(term for d in self.docs for term in d)
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def rank(self, query: str, k: int) -> list[str]:
        terms = tokenize(query)
        scores = []
        for i, doc in enumerate(self.docs):
            s = 0.0
            norm = 1.2 * (1 - 0.75 + 0.75 * self.lengths[i] / self.avg)
            for term in terms:
                tf = doc.get(term, 0)
                if tf:
                    s += self.idf[term] * tf * 2.2 / (tf + norm)
            scores.append((-s, i))
        return [self.ids[i] for s, i in sorted(scores)[:k] if s < 0]


class DenseTurns:
    def __init__(self, turns: Sequence[Mapping[str, Any]], embedder: Embedder) -> None:
        self.ids = [t["turn_id"] for t in turns]
        self.matrix = embedder.embed([t["text"] for t in turns])
        self.embedder = embedder

    def rank(self, query: str, k: int) -> list[str]:
        scores = self.matrix @ self.embedder.embed([query])[0]
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.ids[i] for i in order]


# --- one set ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalSet:
    name: str  # "own", "BEAM dev", "BEAM test", "BEAM test haystack", ...
    turns: list[dict[str, Any]]
    questions: list[dict[str, Any]]


@dataclass
class Pipeline:
    """The write path run over a set's turns, projected into a store, with a recall service."""

    service: RecallService
    store: EdgeRetrievalStore
    memories: list[str]  # texts of the created memories
    last_turn: dict[str, datetime]

    def ask(self, q: Mapping[str, Any], k: int = DEPTH, *, graph: bool = True) -> RecallResult:
        as_of = datetime.fromisoformat(q["as_of"]) if q.get("as_of") else None
        when = asked_at(q, self.last_turn)
        service = self.service if graph else self.without_graph
        # the whole ranking, whatever the confidence gate says (it would withhold a skipped
        # answer): the abstention figure reads the label, which the flag leaves as it is
        return service.recall_sync(
            q["namespace"], q["query"], k=k, now=when, as_of=as_of, include_low_confidence=True
        )

    @cached_property
    def without_graph(self) -> RecallService:
        """The same recall that ignores the relation graph (the graph figures' baseline)."""
        s = self.service
        return RecallService(s.store, s.embedder, s.sparse, follow={})


def last_turns(turns: Iterable[Mapping[str, Any]]) -> dict[str, datetime]:
    """Each namespace's last turn time."""
    last: dict[str, datetime] = {}
    for t in turns:
        at = datetime.fromisoformat(t["occurred_at"])
        last[t["namespace"]] = max(last.get(t["namespace"], at), at)
    return last


def asked_at(q: Mapping[str, Any], last_turn: Mapping[str, datetime]) -> datetime:
    """When a question is asked: its ``as_of``, else a day after its conversation's last turn."""
    if q.get("as_of"):
        return datetime.fromisoformat(q["as_of"])
    return last_turn[q["namespace"]] + timedelta(days=1)


def build_pipeline(turns: Sequence[dict[str, Any]]) -> Pipeline:
    last_turn = last_turns(turns)
    run = run_offline(turns)
    embedder, sparse = configured_embedder(), BM25Encoder()
    store = EdgeRetrievalStore(
        tempfile.mkdtemp(prefix="memstream-eval-"),
        collection_spec(embedder, sparse),
    )
    projection = QdrantProjection(store, "eval.memory.log", embedder, sparse)
    projection.apply(
        [LogRecord("eval.memory.log", 0, i, e.key, encode(e)) for i, e in enumerate(run.events)]
    )
    memories = [e.payload.text for e in run.events if e.type == "MemoryCreated"]
    return Pipeline(RecallService(store, embedder, sparse), store, memories, last_turn)


def evaluate_set(
    eval_set: EvalSet, *, on_question: Callable[[dict[str, Any], RecallResult], None] | None = None
) -> dict[str, Any]:
    by_ns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in eval_set.turns:
        by_ns[t["namespace"]].append(t)
    pipeline = build_pipeline(eval_set.turns)
    embedder = configured_embedder()
    bm25 = {ns: BM25Turns(ts) for ns, ts in by_ns.items()}
    dense = {ns: DenseTurns(ts, embedder) for ns, ts in by_ns.items()}
    scores = {
        name: Scores()
        for name in (
            "memstream",
            "memstream_plain",
            "memstream_no_graph",
            "bm25_turns",
            "dense_turns",
        )
    }
    walked = {"questions": 0, "reached": 0}
    abstention = {"questions": 0, "skipped": 0}
    # answerable questions answered "nothing relevant" in their own conversation (a miss),
    # and asked of the next conversation instead (off-topic probes: there it is right)
    gated = {"answerable": 0, "nothing_relevant": 0, "probes": 0, "probes_nothing_relevant": 0}
    spaces = sorted({q["namespace"] for q in eval_set.questions})
    try:
        for q in eval_set.questions:
            result = pipeline.ask(q)
            if on_question is not None:
                on_question(q, result)
            evidence = set(q["evidence_turn_ids"])
            if q["kind"] == ABSTENTION:
                abstention["questions"] += 1
                abstention["skipped"] += result.confidence == "skipped"
            if not evidence:
                continue
            gated["answerable"] += 1
            gated["nothing_relevant"] += result.skipped_reason == NOTHING_RELEVANT
            if len(spaces) > 1:
                other = spaces[(spaces.index(q["namespace"]) + 1) % len(spaces)]
                probe = pipeline.ask({**q, "namespace": other, "as_of": None}, k=10)
                gated["probes"] += 1
                gated["probes_nothing_relevant"] += probe.skipped_reason == NOTHING_RELEVANT
            groups = [r.source_turn_ids for r in result.results]
            scores["memstream"].add(q["kind"], budgeted(evidence, groups))
            graph = result.details.get("graph")
            walked["questions"] += graph is not None
            if graph and graph["reached"]:
                # the graph changed the answer: the same question without it, for the baseline
                walked["reached"] += 1
                alone = pipeline.ask(q, graph=False)
                groups_alone = [r.source_turn_ids for r in alone.results]
                scores["memstream_no_graph"].add(q["kind"], budgeted(evidence, groups_alone))
            else:
                scores["memstream_no_graph"].add(q["kind"], budgeted(evidence, groups))
            scores["memstream_plain"].add(q["kind"], plain(evidence, groups))
            for name, ranker in (("bm25_turns", bm25), ("dense_turns", dense)):
                ranked = [[t] for t in ranker[q["namespace"]].rank(q["query"], max(KS))]
                scores[name].add(q["kind"], plain(evidence, ranked))
    finally:
        pipeline.store.close()
    kinds = sorted({q["kind"] for q in eval_set.questions if q["evidence_turn_ids"]})
    return {
        "questions": len(eval_set.questions),
        "with_evidence": len(scores["memstream"].per_k[KS[0]]),
        "turns": len(eval_set.turns),
        "memories": len(pipeline.memories),
        "pronoun_memories": sum(map(starts_with_unresolved_pronoun, pipeline.memories)),
        "abstention": abstention,
        "gate": gated,
        "graph": walked,
        "recall": {n: {f"@{k}": round(s.mean(k), 4) for k in KS} for n, s in scores.items()},
        "by_kind": {
            n: {kind: {f"@{k}": round(s.mean(k, kind), 4) for k in KS} for kind in kinds}
            for n, s in scores.items()
        },
    }


# --- the sets -----------------------------------------------------------------------------


def wanted_sets(env: Mapping[str, str] | None = None) -> list[str]:
    """Keys of SET_NAMES to run: ``$MEMSTREAM_EVAL_SETS`` (comma-separated), else all."""
    raw = (os.environ if env is None else env).get(ENV_SETS, "")
    chosen = [s.strip() for s in raw.split(",") if s.strip()] or list(SET_NAMES)
    unknown = [s for s in chosen if s not in SET_NAMES]
    if unknown:
        raise ValueError(f"{ENV_SETS}: unknown set(s) {unknown}; known: {list(SET_NAMES)}")
    return chosen


def load_set(key: str) -> EvalSet | None:
    """One set by key; None for a BEAM split when the dataset is not on this machine."""
    if key.startswith("own"):
        loaded: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = (
            list(load_conversations()),
            list(load_questions()),
        )
    else:
        loaded = beam_data.load_split("dev" if key.startswith("dev") else "test")
    if loaded is None:
        return None
    turns, questions = loaded
    if key.endswith("_haystack"):
        turns = [{**t, "namespace": HAYSTACK_NAMESPACE} for t in turns]
        questions = [{**q, "namespace": HAYSTACK_NAMESPACE} for q in questions]
    return EvalSet(SET_NAMES[key], turns, questions)


def evaluate(sets: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"sets": {name: result}, "missing": [names not on this machine]}``."""
    out: dict[str, Any] = {"sets": {}, "missing": []}
    for key in sets or wanted_sets():
        loaded = load_set(key)
        if loaded is None:
            out["missing"].append(SET_NAMES[key])
            continue
        out["sets"][loaded.name] = evaluate_set(loaded)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    import json

    parser = argparse.ArgumentParser(prog="python -m bench.retrieval_eval")
    for key in SET_NAMES:
        parser.add_argument(f"--{key}", action="store_true", help=f"run the {SET_NAMES[key]} set")
    args = parser.parse_args(argv)
    chosen = [key for key in SET_NAMES if getattr(args, key)] or wanted_sets()
    result = evaluate(chosen)
    print(json.dumps(result, indent=2))
    for name, r in result["sets"].items():
        ours, bm25 = r["recall"]["memstream"], r["recall"]["bm25_turns"]
        line = "  ".join(f"@{k} {ours[f'@{k}']:.3f} (bm25 {bm25[f'@{k}']:.3f})" for k in KS)
        print(f"{name:10s} {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
