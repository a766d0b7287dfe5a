"""The recall service: gate, intent, hybrid search in the store, rescoring, MMR, confidence.

The store does the tenant filtering (every search is scoped to one namespace by the
store itself) and picks the candidates (dense + BM25, rank-fused); the pure core decides
the order and explains it: ``core.fusion`` turns the two channels' scores into one
relevance, ``core.scoring`` weighs it with the other components, ``core.rescoring`` adjusts
the scores for what the question says (replies below, preferences lifted for a request for
help, a slot's holders lifted), ``core.mmr`` keeps the top k diverse (memories of one
conversation turn count as repeats; close in time too for a question across the history,
``core.query_frame``). Every recall publishes ``MemoryAccessed`` so access tracking,
Q-learning and gap reports see it.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import mul
from typing import Any, Protocol

import numpy as np

from memstream.consumers.after_answer import AfterAnswer
from memstream.consumers.recall_pool import RecallPool
from memstream.core.advice import CATEGORIES as ADVICE_CATEGORIES
from memstream.core.advice import LIFT, lifted
from memstream.core.answer_types import instances_query
from memstream.core.category_tree import CategoryTree
from memstream.core.cosine import Normed, cosine_normed, normed
from memstream.core.decompose import decompose
from memstream.core.embedding import Embedder
from memstream.core.expiry import reachable
from memstream.core.fusion import Part, fuse_parts
from memstream.core.graph_walk import ANCHORS, FOLLOW, Reached, links_between, placed, walk
from memstream.core.group_words import members_query
from memstream.core.intent import classify
from memstream.core.memory_state import MemoryState, from_json
from memstream.core.mmr import folded, mmr, spread_scale
from memstream.core.query_frame import spans_conversations, strip_frame
from memstream.core.recall_filters import RecallFilters
from memstream.core.recall_gate import (
    MATCH_DEPTH,
    Confidence,
    Match,
    abbreviated_explain,
    abbreviated_text,
    abbreviates,
    asked_names,
    confidence,
    coverage,
    nothing_relevant,
    should_retrieve,
    unknown_names,
    withholds,
)
from memstream.core.relation_alias import aliases, names_relation, rewrites
from memstream.core.relations import edges_of
from memstream.core.replacement import current_first, newer_of
from memstream.core.replies import REPLY_FACTOR, REPLY_RELATION, is_reply, paired
from memstream.core.rescoring import (
    ARCHIVED_FACTOR,
    a_reply,
    archived,
    known_and_not_over,
    rescored,
    scaled,
    when,
    with_rule,
)
from memstream.core.retention import RetentionModel
from memstream.core.scoped_feedback import factor as scoped_factor
from memstream.core.scoped_feedback import query_key
from memstream.core.scoring import Candidate, Scored, ScoringContext, score_all
from memstream.core.sibling_order import by_own_words, own_match
from memstream.core.slot_questions import LIFT as SLOT_LIFT
from memstream.core.sparse import BM25Encoder
from memstream.core.standing_instructions import (
    MIN_MATCH,
    POSITION,
    PREFERENCE_MATCH,
    Applicable,
    best_applicable,
    condition_of,
    is_lookup,
    preference_of,
)
from memstream.core.tokens import tokenize
from memstream.core.whose import about_named, asked_about, holds_for
from memstream.core.whose import factor as whose_factor
from memstream.infra.by_identity import ByIdentity
from memstream.projections.retrieval import Hit, RetrievalStore
from memstream.schemas._fields import utc_now
from memstream.schemas.errors import EventValidationError


class TreeLookup(Protocol):
    """The namespace's category tree (projections/tree_queries.py): each result's tree path,
    and the ``tree`` filter resolved to the memories under a node."""

    def tree(self, namespace: str) -> CategoryTree: ...

    def members(self, tree: CategoryTree, prefix: str, statuses: Sequence[str]) -> list[str]: ...


UsageLookup = Callable[[str, Sequence[str]], dict[str, tuple[int, datetime | None]]]
PairLookup = Callable[[str, Sequence[str]], dict[tuple[str, str], int]]


@dataclass(frozen=True, slots=True)
class RecallHitView:
    memory_id: str
    text: str
    score: float
    explain: dict[str, Any]
    source_turn_ids: list[str]
    category: str
    status: str
    created_at: str
    session_id: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "text": self.text,
            "score": self.score,
            "explain": self.explain,
            "source_turn_ids": self.source_turn_ids,
            "category": self.category,
            "status": self.status,
            "created_at": self.created_at,
            "session_id": self.session_id,
        }


@dataclass(frozen=True, slots=True)
class RecallResult:
    query_id: str
    namespace: str
    query: str
    results: list[RecallHitView]
    confidence: str
    intent: str
    skipped_reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "namespace": self.namespace,
            "query": self.query,
            "confidence": self.confidence,
            "intent": self.intent,
            "skipped_reason": self.skipped_reason,
            "results": [r.as_dict() for r in self.results],
            # what the answer was limited to, so a caller sees its filters were applied
            **({"filters": self.details["filters"]} if "filters" in self.details else {}),
            # how a compound question was asked, part by part (core.decompose)
            **(
                {"subqueries": self.details["subqueries"]}
                if len(self.details.get("subqueries", ())) > 1
                else {}
            ),
            # the question without its frame, as searched, and whether the picks were spread
            # over the history (core.query_frame, core.mmr)
            **({"searched": self.details["searched"]} if "searched" in self.details else {}),
            **({"spread": True} if self.details.get("spread") else {}),
            # relations the question named, searched for by name too (core.relation_alias)
            **({"renamed": self.details["renamed"]} if "renamed" in self.details else {}),
            # names the question asked about that no memory holds (core.recall_gate)
            **(
                {"unknown_names": self.details["unknown_names"]}
                if "unknown_names" in self.details
                else {}
            ),
            # a low-confidence answer held back (core.recall_gate): how many results it had
            **({"withheld": self.details["withheld"]} if "withheld" in self.details else {}),
            **({"abbreviated": True} if self.details.get("abbreviated") else {}),
        }


#: sends a recall's ``MemoryAccessed``: called when the answer is ready (what must be known
#: before the caller has the answer, such as the query id feedback may name, is done in the
#: call), the sending it returns is awaited after the answer
Publisher = Callable[[str, str, str, list[tuple[str, float]], datetime, float], Awaitable[object]]


class RecallService:
    def __init__(
        self,
        store: RetrievalStore,
        embedder: Embedder,
        sparse: BM25Encoder,
        *,
        usage: UsageLookup | None = None,
        pairs: PairLookup | None = None,
        publish: Publisher | None = None,
        pool: RecallPool | None = None,
        follow: Mapping[str, tuple[frozenset[str], int]] = FOLLOW,
        trees: TreeLookup | None = None,
        retention_model: RetentionModel = "weibull",
    ) -> None:
        """``follow``: intent kind -> (relations, hops) the answer walks (``core.graph_walk``);
        empty, recall ignores the graph (the benchmark's baseline)."""
        self.follow = follow
        self.store = store
        self.pool = pool or RecallPool()
        self.embedder = embedder
        self.sparse = sparse
        self.usage = usage
        self.pairs = pairs
        self.publish = publish
        self.access = AfterAnswer("a recall's MemoryAccessed")  # failures on /metrics
        self.trees = trees
        self.retention_model = retention_model  # the retention_model setting, as the cycle's
        self._cache: dict[str, Any] = {}
        # a cached vector's float64 form and norm, for the cosine comparisons
        self._normed: ByIdentity[Any, Normed] = ByIdentity(normed, MAX_VECTORS)
        # a payload's parsed state (the store keeps payloads between recalls, so the same
        # object comes back): parsing was a tenth of a recall; as many as the store keeps
        self._state: ByIdentity[Any, MemoryState] = ByIdentity(from_json, 10_000)

    def _vectors(self, texts: list[str], ids: list[str]) -> dict[str, Any]:
        """Candidate vectors for MMR; memory texts repeat across recalls, so they are cached."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > MAX_VECTORS:
                self._cache.clear()
                self._normed.clear()
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._cache[text] = np.asarray(vector)
        return {mid: self._cache[text] for mid, text in zip(ids, texts, strict=True)}

    async def recall(
        self,
        namespace: str,
        query: str,
        *,
        k: int = 10,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        session_id: str | None = None,
        query_id: str | None = None,
        now: datetime | None = None,
        record: bool = True,
        wait: bool = False,
        filters: RecallFilters | None = None,
        include_archived: bool = False,
        include_low_confidence: bool = False,
    ) -> RecallResult:
        """Runs on the bounded recall pool: RecallBusy when it is full (unless ``wait``)."""
        result = await self.pool.run(
            lambda: self.recall_sync(
                namespace,
                query,
                k=k,
                as_of=as_of,
                include_superseded=include_superseded,
                session_id=session_id,
                query_id=query_id,
                now=now,
                filters=filters,
                include_archived=include_archived,
                include_low_confidence=include_low_confidence,
            ),
            wait=wait,
        )
        if record and self.publish is not None and result.intent != "none":
            # Searches that found nothing are recorded too: they are what gap reports are made
            # of. Sent after the answer: the broker's acknowledgement cost the caller ~13 ms of
            # ~38 ms p50 over HTTP (python -m bench recall_http).
            self.access.send(
                self.publish(
                    namespace,
                    result.query_id,
                    query,
                    [(r.memory_id, r.score) for r in result.results],
                    now or utc_now(),
                    result.details.get("top_relevance", 0.0),
                )
            )
        return result

    def recall_sync(
        self,
        namespace: str,
        query: str,
        *,
        k: int = 10,
        as_of: datetime | None = None,
        include_superseded: bool = False,
        session_id: str | None = None,
        query_id: str | None = None,
        now: datetime | None = None,
        filters: RecallFilters | None = None,
        include_archived: bool = False,
        include_low_confidence: bool = False,
    ) -> RecallResult:
        """``include_low_confidence``: the whole answer whatever its confidence (a "skipped"
        one is otherwise withheld, an "abbreviated" one shortened: ``core.recall_gate``)."""
        qid = query_id or f"q-{uuid.uuid4().hex}"
        only = filters if filters is not None and not filters.empty else None
        now = now or as_of or utc_now()
        gate = should_retrieve(query)
        if not gate.retrieve:
            return RecallResult(qid, namespace, query, [], "skipped", "none", gate.reason)
        intent = classify(query, now=now)
        profile = intent.profile
        # An explicit as_of is a hard cut: what was known then (written by then) and not over
        # by then (superseded since is included). A memory about something later (a plan,
        # "the defence is on June 20") was known all the same, so its start bound does not
        # cut it: that is for the validity score, like a time named in the query, which
        # only informs the score (extracted validity dates are too rough to filter on).
        superseded = include_superseded or intent.include_superseded or as_of is not None
        statuses: tuple[str, ...] = ("active", "superseded") if superseded else ("active",)
        if include_archived:  # forgotten, not gone: reachable when asked, below the rest
            statuses = (*statuses, "archived")
        # A memory that expired with nothing to replace it (a plan gone stale, a state past
        # its end) is still the latest known about its subject: a question in the present
        # reaches it too, below what holds now (its validity is 0); one a newer memory
        # replaced stays for history questions (core/expiry.py)
        searched = statuses if superseded else (*statuses, "superseded")
        point_in_time = as_of or intent.at
        tree = self.trees.tree(namespace) if self.trees is not None else None
        allowed = self._tree_members(namespace, tree, only, searched)
        if allowed is not None and not allowed:
            return _nothing_found(
                qid, namespace, query, intent.kind, {"filters": only.as_dict() if only else {}}
            )
        # searched without the question's frame ("can you list the order in which I brought
        # up ... throughout our conversations?"): core/query_frame.py
        content = strip_frame(query)
        subqueries = decompose(content) or [content]
        depth = max(profile.limit, k * 4)
        parts: list[Part] = []
        hits: dict[str, Hit] = {}
        query_vectors = []

        def search(
            sub: str, vector: Any, said: tuple[float | None, float | None] = (None, None)
        ) -> None:
            found = self.store.search(
                namespace,
                vector,
                self.sparse.encode_query(sub),
                limit=depth,
                statuses=searched,
                said_from=said[0],
                said_until=said[1],
                # the store filters inside its search: both channels read only these
                categories=sorted(only.categories) if only and only.categories else None,
                tiers=sorted(only.tiers) if only and only.tiers else None,
                memory_ids=sorted(allowed) if allowed is not None else None,
            )
            # The store's rank fusion picks the candidates; their order comes from the scores.
            parts.append(
                Part(
                    [h.memory_id for h in found],
                    {h.memory_id: h.dense.score for h in found if h.dense is not None},
                    {h.memory_id: h.sparse.score for h in found if h.sparse is not None},
                )
            )
            for h in found:
                hits.setdefault(h.memory_id, h)

        for sub in subqueries:
            query_vectors.append(np.asarray(self.embedder.embed([sub])[0], dtype=np.float64))
            search(sub, query_vectors[-1])
        if intent.time is not None:
            # the memories said in the span the question names, best by its words first:
            # "what did I do in March?" shares no word with "picnic at Golden Gate Park"
            search(content, query_vectors[0], intent.time.bounds)
        # "Rosa's husband" -> "Marcus" when a candidate says so: one more search with the
        # name in the relation's place (core/relation_alias.py)
        renamed = (
            rewrites(query, aliases(h.payload.extra["state"]["text"] for h in hits.values()))
            if names_relation(query)
            else []
        )
        for rewrite in renamed:
            search(rewrite.query, self.embedder.embed([rewrite.query])[0])
        # the question with a group's members ("Kim's family": her sister, her parents...;
        # core/group_words.py) or a kind's instances ("which instrument": guitar, piano...;
        # core/answer_types.py) in the place of the word that names them
        for widened in (members_query(content), instances_query(content)):
            if widened is not None:
                search(widened, self.embedder.embed([widened])[0])
        fused = fuse_parts(parts)
        ids = [mid for mid, _ in fused]
        if not ids:
            return _nothing_found(qid, namespace, query, intent.kind, {"subqueries": subqueries})
        states = {mid: self._state(hits[mid].payload.extra["state"]) for mid in ids}
        if searched != statuses:
            fused = [(mid, r) for mid, r in fused if reachable(states[mid], statuses)]
            ids = [mid for mid, _ in fused]
        if as_of is not None:
            fused = [(mid, r) for mid, r in fused if known_and_not_over(states[mid], as_of)]
            ids = [mid for mid, _ in fused]
        if only is not None:
            fused = [
                (mid, r) for mid, r in fused if only.allows(states[mid].category, states[mid].tier)
            ]
            ids = [mid for mid, _ in fused]
        # usage and co-activation of the candidates left, not of the ones filtered out
        usage = self.usage(namespace, ids) if self.usage else {}
        co_activation = self.pairs(namespace, ids) if self.pairs else {}
        candidates = []
        for mid, relevance in fused:
            hit = hits[mid]
            count, last = usage.get(mid, (0, None))
            candidates.append(
                Candidate.from_state(
                    states[mid],
                    relevance=relevance,
                    dense_rank=hit.dense.rank if hit.dense else None,
                    sparse_rank=hit.sparse.rank if hit.sparse else None,
                    last_access=last,
                    access_count=count,
                )
            )
        context = ScoringContext(
            now=now,
            query_entities=frozenset(intent.entities),
            session_id=session_id,
            coactivation=co_activation,
            at=point_in_time,
            include_superseded="superseded" in statuses,
            time=intent.time,
            time_only=intent.time_only,
            retention_model=self.retention_model,
        )
        scored = score_all(candidates, context, profile)
        if not intent.about_replies:
            # the assistant's replies below what the user said (core.replies.REPLY_FACTOR)
            scored = rescored(scored, states, when(a_reply, REPLY_FACTOR), mul, "reply")
        if include_archived:
            scored = rescored(scored, states, when(archived, ARCHIVED_FACTOR), mul, "archived")
        if intent.advice:  # a request for help: the user's preferences first (core/advice.py)
            advice = when(lambda st: st.category in ADVICE_CATEGORIES, LIFT)
            scored = rescored(scored, states, advice, lifted, "advice")
        # "where do I live?" is not about the sister who lives in Berlin (core/whose.py)
        whose = asked_about(query)
        if whose is not None:
            named = intent.entities
            scored = scaled(scored, states, lambda st: whose_factor(whose, st.text, named), "whose")
        if intent.slots:  # "where does she live?": the slot's holders (core/slot_questions)
            slots = intent.slots
            # of the person asked about: a name the question says, or one it was renamed to
            people = {n.casefold() for n in asked_names(intent.entities)} | {
                r.name.casefold() for r in renamed
            }
            holders = when(
                lambda st: (
                    st.slot in slots
                    and holds_for(whose, st.text)
                    and about_named(st.text, st.subject, people)
                ),
                SLOT_LIFT,
            )
            scored = rescored(scored, states, holders, lifted, "slot")
        asked = query_key(query)  # negatives given on this very question (core/scoped_feedback)
        scored = scaled(
            scored, states, lambda st: scoped_factor(st.unhelpful_for, asked), "unhelpful_here"
        )
        vectors = self._vectors([states[mid].text for mid in ids], ids)
        sources = {mid: states[mid].source_turn_ids for mid in ids}
        derived = {mid for mid in ids if states[mid].category == "summary"}
        times: dict[str, float] = {}
        if spans_conversations(query):  # across the history: picks spread over it (core/mmr)
            times = {mid: states[mid].created_at.timestamp() for mid in ids}
        scale = spread_scale(times)
        top = mmr(
            scored,
            vectors,
            lambda_=0.7,
            k=k,
            sources=sources,
            derived=derived,
            times=times,
            time_scale=scale,
        )
        top = self._own_order(query, query_vectors[0], top, vectors, sources, states)

        def admit(mid: str) -> bool:
            st = states.get(mid)
            return (
                st is not None
                and reachable(st, statuses)
                # marked unhelpful for this very question: no rule or preference placing
                # brings it back (the ranking already scaled it down)
                and scoped_factor(st.unhelpful_for, asked) == 1.0
                and (as_of is None or known_and_not_over(st, as_of))
                and (only is None or only.allows(st.category, st.tier))
                and (allowed is None or mid in allowed)
            )

        if intent.about_replies:
            answer, graph = self._replies(namespace, top, states, admit, k)
        else:
            answer, graph = self._graph(namespace, intent.kind, top, states, admit, k)
            if point_in_time is None and "superseded" not in statuses:
                # the present asked about: a change first; a question about a time (or the
                # history) keeps what held then where it ranked
                answer = self._current_first(namespace, answer, states, admit, k, intent.entities)
        explains = {s.memory_id: s.explain for s in top}
        whole = (
            query_vectors[0]
            if subqueries == [query]
            else np.asarray(self.embedder.embed([query])[0], dtype=np.float64)
        )
        rules = self._standing(namespace, query, whole, states, hits, admit)
        for n, rule in enumerate(rules):
            answer = with_rule(answer, rule, k, POSITION + n)
        applied = {r.memory_id: r for r in rules}
        answered = [mid for mid, _s, _r in answer]
        links = links_between(answered, {m: states[m].relations for m in answered})
        results = [
            RecallHitView(
                memory_id=mid,
                text=states[mid].text,
                score=score,
                explain={
                    **(explains.get(mid) or {}),
                    **(
                        {f"store.{key}": v for key, v in hits[mid].explain().items()}
                        if mid in hits
                        else {}
                    ),
                    **(
                        {
                            "graph": {
                                "anchor": via.anchor,
                                "hops": len(via.path),
                                "path": [h.as_dict() for h in via.path],
                            }
                        }
                        if via is not None
                        else {}
                    ),
                    **({"edges": links[mid]} if mid in links else {}),
                    **(
                        {
                            "standing_instruction": {
                                "condition": applied[mid].condition,
                                "match": round(applied[mid].match, 6),
                            }
                        }
                        if mid in applied
                        else {}
                    ),
                    **(
                        {
                            "tree_path": tree.place(
                                states[mid].category, states[mid].subject, states[mid].entities
                            )
                        }
                        if tree is not None
                        else {}
                    ),
                },
                source_turn_ids=list(states[mid].source_turn_ids),
                category=states[mid].category,
                status=states[mid].status,
                created_at=states[mid].created_at.isoformat(),
                session_id=states[mid].session_id,
            )
            for mid, score, via in answer
        ]
        match = self._match(query, query_vectors, top, vectors, states, hits)
        # a question only about names no candidate holds asks about what was never said
        # (under a filter the candidates are a subset: a name outside it may be known)
        names = asked_names(intent.entities) if only is None and allowed is None else ()
        unknown = unknown_names(names, _said_by(ids, states, hits)) if names else ()
        # a question about a time alone matches by the time: memories said then are known
        said_then = intent.time_only and any(t.explain.get("event_time") == 1.0 for t in top)
        # a question for a profile slot ("what was my profession?") is answered by its holder
        # whatever words each uses: known, though they share none
        held = bool(intent.slots) and any("slot" in t.explain for t in top[:1])
        gated = (nothing_relevant(match) and not said_then and not held) or (
            bool(names) and len(unknown) == len(names)
        )
        label = "skipped" if gated else confidence(top)
        return _shaped(
            label,
            results,
            include_low_confidence,
            qid,
            namespace,
            query,
            intent.kind,
            "nothing relevant" if gated else ("low score" if label == "skipped" else None),
            {
                "match": {"cosine": round(match.cosine, 6), "coverage": round(match.coverage, 6)},
                **({"unknown_names": list(unknown)} if unknown else {}),
                "subqueries": subqueries,
                **({"searched": content} if content != query else {}),
                **({"spread": True} if scale > 0.0 else {}),
                **(
                    {"renamed": [{"mention": r.mention, "name": r.name} for r in renamed]}
                    if renamed
                    else {}
                ),
                "candidates": len(candidates),
                **({"filters": only.as_dict()} if only else {}),
                "folded": folded(ids, derived, sources),
                "cues": list(intent.cues),
                **({("replies" if intent.about_replies else "graph"): graph} if graph else {}),
                # An absolute measure of how well the best answer matches (ranking scores are
                # relative to the candidate set): the top result's dense cosine similarity.
                "top_relevance": _dense_score(hits[top[0].memory_id]) if top else 0.0,
            },
        )

    def _standing(
        self,
        namespace: str,
        query: str,
        qv: Any,
        states: dict[str, MemoryState],
        hits: dict[str, Hit],
        admit: Callable[[str], bool],
    ) -> list[Applicable]:
        """The standing instruction and the stated preference the request falls under
        (``core.standing_instructions``): the user's rules matched by their condition, the
        preferences by what they are about. ``states`` and ``hits`` gain them."""
        if is_lookup(query):
            return []
        found = self.store.search(
            namespace,
            qv,
            self.sparse.encode_query(query),
            limit=RULES_SEARCHED,
            # each channel read only as deep as the answer: the category filter already
            # narrows it to rules and preferences (the store's default, 4x, cost ~1 ms p50 in
            # process at 10k memories with the same answers on the development sets)
            candidates=RULES_SEARCHED,
            statuses=("active",),
            categories=["principle", "preference"],
        )
        rules: dict[str, tuple[MemoryState, Hit, str]] = {}
        prefs: dict[str, tuple[MemoryState, Hit, str]] = {}
        for h in found:
            st = states.get(h.memory_id) or self._state(h.payload.extra["state"])
            cond = condition_of(st.text)
            what = preference_of(st.text) if cond is None and st.category == "preference" else None
            if cond is not None:
                rules[h.memory_id] = (st, h, cond)
            elif what is not None:
                prefs[h.memory_id] = (st, h, what)
            else:
                continue
            states.setdefault(h.memory_id, st)  # admit() reads the state
        out = []
        for group, floor in ((rules, MIN_MATCH), (prefs, PREFERENCE_MATCH)):
            group = {mid: r for mid, r in group.items() if admit(mid)}
            if not group:
                continue
            vectors = self._vectors([c for _s, _h, c in group.values()], list(group))
            asked = normed(qv)
            best = best_applicable(
                [
                    (mid, c, cosine_normed(*asked, *self._normed(vectors[mid])))
                    for mid, (_s, _h, c) in group.items()
                ],
                floor,
            )
            if best is not None:
                hits.setdefault(best.memory_id, group[best.memory_id][1])
                out.append(best)
        return out

    def _tree_members(
        self,
        namespace: str,
        tree: CategoryTree | None,
        only: RecallFilters | None,
        statuses: Sequence[str],
    ) -> frozenset[str] | None:
        """The memories the ``tree`` filter admits (None: no such filter); a node the
        namespace's tree does not have is the caller's error, naming the filter."""
        if only is None or only.tree is None:
            return None
        if tree is None or self.trees is None:
            raise EventValidationError(
                "unsupported", "this worker keeps no category tree", "filters.tree"
            )
        if only.tree not in tree.paths:
            raise EventValidationError(
                "out_of_range",
                f"no node {only.tree!r} in the category tree of {namespace!r} "
                "(see memstream tree show)",
                "filters.tree",
            )
        return frozenset(self.trees.members(tree, only.tree, statuses))

    def _graph(
        self,
        namespace: str,
        kind: str,
        top: Sequence[Any],
        states: dict[str, MemoryState],
        admit: Callable[[str], bool],
        k: int,
    ) -> tuple[list[tuple[str, float, Reached | None]], dict[str, Any]]:
        """The ranked answer with the memories the question's edges reach placed after the
        memory they hang from (``core.graph_walk``); ``states`` gains the reached ones."""
        ranked = [(s.memory_id, round(s.score, 6)) for s in top]
        rule = self.follow.get(kind)
        if rule is None or not top:
            return [(mid, score, None) for mid, score in ranked], {}
        follow, hops = rule

        def relations_of(ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
            self._load(namespace, ids, states)
            return {m: states[m].relations for m in ids if m in states}

        reached = walk([mid for mid, _ in ranked[:ANCHORS]], follow, hops, relations_of, admit)
        answer = placed(ranked, reached, k)
        return answer, {
            "followed": sorted(follow),
            "hops": hops,
            "reached": [r.memory_id for r in reached],
        }

    def _current_first(
        self,
        namespace: str,
        answer: list[tuple[str, float, Reached | None]],
        states: dict[str, MemoryState],
        admit: Callable[[str], bool],
        k: int,
        names: Sequence[str],
    ) -> list[tuple[str, float, Reached | None]]:
        """A memory that a change said later supersedes ("... instead of Dagster") comes
        right after the change (``core.replacement``), or right before it when the question
        names someone or something only that memory says ("who is Tomas?" is not about the
        tool Tomas chose); ``states`` gains the changes."""
        ids = [mid for mid, _s, _r in answer if mid in states and states[mid].status == "active"]
        newer = newer_of(ids, {m: states[m].relations for m in ids})
        if not newer:
            return answer
        self._load(namespace, [n for ns in newer.values() for n, _c in ns], states)
        via = {mid: r for mid, _s, r in answer}
        asked = [n.casefold() for n in names]

        def first(new: str, old: str) -> bool:
            said, was = states[new].text.casefold(), states[old].text.casefold()
            return not any(n in was and n not in said for n in asked)

        placed = current_first(
            [(mid, score) for mid, score, _r in answer],
            newer,
            lambda mid: mid in states and admit(mid),
            first,
        )
        return [
            (
                mid,
                score,
                via.get(mid) if hop is None else Reached(mid, hop.target, (hop,), hop.confidence),
            )
            for mid, score, hop in placed
        ][:k]

    def _load(self, namespace: str, ids: Sequence[str], states: dict[str, MemoryState]) -> None:
        """``states`` gains the memories of ``ids`` it lacks, read from the store."""
        missing = [m for m in ids if m not in states]
        if missing:
            for point in self.store.get(namespace, missing, with_vectors=False):
                states[point.memory_id] = self._state(point.payload.extra["state"])

    def _replies(
        self,
        namespace: str,
        top: Sequence[Any],
        states: dict[str, MemoryState],
        admit: Callable[[str], bool],
        k: int,
    ) -> tuple[list[tuple[str, float, Reached | None]], dict[str, Any]]:
        """A question about the replies: each ranked memory followed by the assistant's
        replies to it (``core.replies.paired``); ``states`` gains them."""
        ranked = [(s.memory_id, round(s.score, 6)) for s in top]
        linked = {
            mid: [
                (e.other, e.confidence)
                for e in edges_of(states[mid].relations)
                if e.relation == REPLY_RELATION and e.direction == "in"
            ]
            for mid, _ in ranked
        }
        self._load(namespace, sorted({r for rs in linked.values() for r, _ in rs}), states)
        replies_of = {
            mid: [
                (r, c)
                for r, c in rs
                if r in states and is_reply(states[r].kind, states[r].subject) and admit(r)
            ]
            for mid, rs in linked.items()
        }
        answer = paired(ranked, replies_of, k)
        added = [mid for mid, _s, via in answer if via is not None]
        return answer, ({"relation": REPLY_RELATION, "added": added} if added else {})

    def _own_order(
        self,
        query: str,
        qv: Any,
        top: list[Scored],
        vectors: dict[str, Any],
        sources: dict[str, tuple[str, ...]],
        states: dict[str, MemoryState],
    ) -> list[Scored]:
        """The memories of one turn in the order their own words answer
        (``core.sibling_order``): a turn's context is in every one's match."""
        ids = [s.memory_id for s in top]
        turns = {mid: frozenset(sources.get(mid, ())) for mid in ids}
        count = Counter(turns.values())
        shared = {mid for mid, t in turns.items() if t and count[t] > 1}
        if not shared:
            return top
        asked = normed(qv)
        words = tokenize(query, stem=True)
        match = {
            mid: own_match(
                words,
                tokenize(states[mid].text, stem=True),
                cosine_normed(*asked, *self._normed(vectors[mid])) if mid in vectors else 0.0,
            )
            for mid in shared
        }
        return by_own_words(top, ids, {m: sources[m] for m in shared}, match)

    def _match(
        self,
        query: str,
        query_vectors: Sequence[Any],
        top: Sequence[Any],
        vectors: dict[str, Any],
        states: dict[str, MemoryState],
        hits: dict[str, Hit],
    ) -> Match:
        """The absolute match of the top results (``core.recall_gate.nothing_relevant``)."""
        shown = [s.memory_id for s in top[:MATCH_DEPTH]]
        asked = [normed(q) for q in query_vectors]
        cosine = max(
            (
                cosine_normed(*q, *self._normed(vectors[mid]))
                for q in asked
                for mid in shown
                if mid in vectors
            ),
            default=0.0,
        )
        documents = [states[mid].text for mid in shown] + [
            str(hits[mid].payload.extra.get("source_text", "")) for mid in shown
        ]
        return Match(cosine, coverage(query, documents))


def _said_by(ids: Sequence[str], states: dict[str, MemoryState], hits: dict[str, Hit]) -> list[str]:
    """What the candidates say: their texts, source turns and entities."""
    return [
        text
        for mid in ids
        for text in (
            states[mid].text,
            str(hits[mid].payload.extra.get("source_text", "")),
            *states[mid].entities,
        )
    ]


def _shaped(
    label: Confidence,
    results: list[RecallHitView],
    include_low_confidence: bool,
    qid: str,
    namespace: str,
    query: str,
    kind: str,
    reason: str | None,
    details: dict[str, Any],
) -> RecallResult:
    """The answer as its confidence allows (``core.recall_gate``: a skipped one withheld, an
    abbreviated one with less detail), unless the caller asked for all of it."""
    if withholds(label, reason, include_low_confidence):
        details = {**details, "withheld": len(results)}
        results = []
    elif abbreviates(label, reason, include_low_confidence):
        details = {**details, "abbreviated": True}
        results = [
            replace(r, text=abbreviated_text(r.text), explain=abbreviated_explain(r.explain))
            for r in results
        ]
    return RecallResult(qid, namespace, query, results, label, kind, reason, details=details)


def _nothing_found(
    qid: str, namespace: str, query: str, kind: str, details: dict[str, Any]
) -> RecallResult:
    return RecallResult(
        qid, namespace, query, [], "skipped", kind, "nothing found", details=details
    )


#: candidates (principles and preferences) a recall reads for standing instructions
RULES_SEARCHED = 60
#: candidate vectors recall keeps by text (and their norms)
MAX_VECTORS = 50_000


def _dense_score(hit: Hit) -> float:
    return float(hit.dense.score) if hit.dense is not None else 0.0
