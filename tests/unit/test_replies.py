"""The assistant's replies: their gist, the questions about them, and how recall pairs a
request with its reply (core/replies.py); the write plan links a reply to its request."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.embedding import HashingEmbedder
from memstream.core.episodes import episodes_for
from memstream.core.gate import GateConfig
from memstream.core.namespace_memory import NamespaceMemory
from memstream.core.replies import (
    GIST_CHARS,
    REPLY_RELATION,
    REPLY_RULE,
    asks_about_replies,
    is_reply,
    paired,
    reply_gist,
)
from memstream.core.signals import scan
from memstream.core.write_plan import BufferedTurn, Flush, plan_flush
from memstream.schemas.events import MemoryCreated, RelationAdded

T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)
ANSWER = """For a sore knee after running, I recommend a few changes.

## Rest and ice
Take **two rest days** and ice it for 15 minutes.

```python
print("not part of the gist")
```

## Strength
Add **glute bridges** and `clamshells` to your routine."""


def test_the_gist_keeps_the_opening_headings_and_bold_terms_not_code() -> None:
    gist = reply_gist(ANSWER)
    assert gist.startswith("For a sore knee after running, I recommend a few changes.")
    for term in ("Rest and ice", "two rest days", "Strength", "glute bridges"):
        assert term in gist
    assert "print" not in gist and "clamshells" not in gist


def test_an_inline_list_number_ends_no_sentence() -> None:
    # "dinners: 1." was the gist's whole second sentence
    gist = reply_gist("Sure! Here are five dinners: 1. Tofu stir-fry. 2. Lentil curry. 3. Tacos.")
    assert gist == "Sure! Here are five dinners: 1. Tofu stir-fry."


@given(st.text(max_size=4000))
def test_the_gist_is_bounded(text: str) -> None:
    assert len(reply_gist(text)) <= GIST_CHARS + 2


def test_questions_about_what_was_said_are_told_apart_from_asking_for_advice() -> None:
    for q in (
        "What did you recommend for my knee?",
        "Can you summarize our discussion about the move?",
        "What approach did you suggest for the hiring process?",
        "Remind me what we talked about last week",
    ):
        assert asks_about_replies(q), q
    for q in (
        "What would you suggest for my knee?",
        "Can you list the order in which I brought up topics throughout our conversations?",
        "Where do I live?",
    ):
        assert not asks_about_replies(q), q


def test_each_request_is_followed_by_its_reply() -> None:
    ranked = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("r2", 0.6), ("r3", 0.5)]
    links = {"a": [("r1", 0.7)], "c": [("r2", 0.7)], "b": [("r3", 0.7)]}
    out = paired(ranked, links, k=10)
    # a reply ranked lower moves up to what it answers
    assert [m for m, _s, _v in out] == ["a", "r1", "b", "r3", "c", "r2"]
    reply = out[1]
    assert reply[1] == 0.9 and reply[2] is not None and reply[2].anchor == "a"


@given(
    st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8),
    st.dictionaries(
        st.sampled_from("abcdefgh"),
        st.lists(st.sampled_from(["r1", "r2", "r3", "a", "b"]), max_size=3),
    ),
    st.integers(min_value=0, max_value=12),
)
def test_pairing_never_repeats_and_keeps_every_ranked_memory_within_k(
    ids: list[str], links: dict[str, list[str]], k: int
) -> None:
    ranked = [(m, 1.0 - i / 10) for i, m in enumerate(ids)]
    out = paired(ranked, {m: [(r, 0.7) for r in rs] for m, rs in links.items()}, k)
    got = [m for m, _s, _v in out]
    assert len(got) == len(set(got)) <= k
    scores = [s for _m, s, _v in out]
    assert scores == sorted(scores, reverse=True)
    if k >= len(ids) * 4:
        assert set(ids) <= set(got)


def _turn(i: int, role: str, text: str) -> BufferedTurn:
    return BufferedTurn(
        f"e{i}",
        f"t{i}",
        role,  # type: ignore[arg-type]
        "Ana" if role == "user" else "assistant",
        text,
        T0 + timedelta(minutes=i),
        scan(text, role=role),  # type: ignore[arg-type]
    )


def test_the_write_plan_links_a_reply_to_the_memories_of_its_request() -> None:
    turns = (
        _turn(
            1,
            "user",
            "My knee has been hurting after my long runs on the weekend and I am not sure "
            "whether I should stop running for a while",
        ),
        _turn(2, "assistant", ANSWER),
    )
    facts = tuple(episodes_for(turns, []))
    memory = NamespaceMemory("ns", HashingEmbedder())
    events = plan_flush(
        memory,
        Flush(
            namespace="ns",
            session_id="s",
            trigger="buffer_full",
            turns=turns,
            facts=facts,
            extraction=None,
        ),
        GateConfig(),
    )
    created = {
        e.payload.source_turn_ids[0]: e.payload
        for e in events
        if isinstance(e.payload, MemoryCreated)
    }
    reply, request = created["t2"], created["t1"]
    assert is_reply(reply.kind, reply.subject) and not is_reply(request.kind, request.subject)
    (edge,) = [e.payload for e in events if isinstance(e.payload, RelationAdded)]
    assert (edge.memory_id, edge.target_id, edge.relation, edge.rule) == (
        reply.memory_id,
        request.memory_id,
        REPLY_RELATION,
        REPLY_RULE,
    )


def _flush(turns: tuple[BufferedTurn, ...]) -> Flush:
    return Flush(
        namespace="ns",
        session_id="s",
        trigger="buffer_full",
        turns=turns,
        facts=tuple(episodes_for(turns, [])),
        extraction=None,
    )


def test_a_reply_flushed_after_its_request_links_to_the_sessions_latest_request() -> None:
    memory = NamespaceMemory("ns", HashingEmbedder())
    ask = "Could you help me plan the garden beds for spring with tomatoes, beans and herbs near the fence"
    first = plan_flush(memory, _flush((_turn(1, "user", ask),)), GateConfig())
    (request,) = [e.payload.memory_id for e in first if isinstance(e.payload, MemoryCreated)]
    later = "Another question entirely about the tax forms I have to send before the end of the month please"
    second = plan_flush(
        memory, _flush((_turn(2, "assistant", ANSWER), _turn(3, "user", later))), GateConfig()
    )
    edges = [e.payload for e in second if isinstance(e.payload, RelationAdded)]
    assert [(e.target_id, e.rule) for e in edges if e.rule == REPLY_RULE] == [(request, REPLY_RULE)]
