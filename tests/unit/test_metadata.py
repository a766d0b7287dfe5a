"""Structured metadata (core/metadata.py): what is pulled out of text, verbatim, and how a
memory keeps it through updates."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.core import metadata
from memstream.core.memory_state import apply
from tests.unit.test_write_plan import SCRIPT, run


def test_kinds_found_in_plain_speech() -> None:
    found = metadata.extract(
        "The runbook is at https://wiki.acme.io/ops/runbook; deploy with `make deploy ENV=prod`,"
        " then run kubectl rollout restart deploy/api -n prod. Logs: /var/log/api/error.log."
        " We run Kafka 3.7 and OPS-1234 tracks it (commit 3f9a2c1b, PR #482)."
    )
    assert found["url"] == ["https://wiki.acme.io/ops/runbook"]
    assert found["command"] == [
        "make deploy ENV=prod",
        "kubectl rollout restart deploy/api -n prod",
    ]
    assert "/var/log/api/error.log" in found["path"]
    assert found["version"] == ["3.7"]
    assert found["id"] == ["OPS-1234", "3f9a2c1b", "#482"]


def test_prose_is_not_metadata() -> None:
    # times, prices, "go home", "make sure", "git" in a sentence about git
    for text in (
        "I like to go home at 5.30 and it costs 4.50.",
        "Make sure you call me.",
        "I went to the store with Tom.",
    ):
        assert metadata.extract(text) == {}, text
    assert metadata.extract("git commit is what I do.") == {"command": ["git commit"]}


def test_a_procedure_without_its_command_is_flagged() -> None:
    lacking = "To deploy the service, ask Tomas."
    assert metadata.lacking_step(lacking, metadata.extract(lacking))
    complete = "To deploy the service, run `make deploy`."
    assert not metadata.lacking_step(complete, metadata.extract(complete))


@given(st.text(max_size=400))
def test_values_are_verbatim_bounded_and_never_raise(text: str) -> None:
    found = metadata.extract(text)
    assert set(found) <= set(metadata.KINDS)
    for values in found.values():
        assert 0 < len(values) <= metadata.MAX_PER_KIND and len(set(values)) == len(values)
        assert all(v in text for v in values)
    assert metadata.decode(metadata.encode(found)) == found


@given(st.lists(st.dictionaries(st.sampled_from(metadata.KINDS), st.lists(st.text(max_size=8)))))
def test_merge_is_a_bounded_union(maps: list[dict[str, list[str]]]) -> None:
    merged = metadata.merge(*maps)
    for kind, values in merged.items():
        every = {v for m in maps for v in m.get(kind, [])}
        assert set(values) <= every and len(values) == min(len(every), metadata.MAX_PER_KIND)
    assert metadata.merge(merged, *maps) == merged


def test_an_update_keeps_what_its_text_no_longer_says() -> None:
    kept = metadata.updated(
        metadata.encode({"url": ["https://wiki/x"], "turn": {"source": "slack"}}),
        "The runbook moved.",
        {},
        replaced=False,
    )
    assert metadata.decode(kept) == {"url": ["https://wiki/x"], "turn": {"source": "slack"}}
    # a user's edit is the memory's whole text: what it holds, nothing older
    edited = metadata.updated(kept, "See https://wiki/y now", {}, replaced=True)
    assert metadata.decode(edited) == {"url": ["https://wiki/y"]}


def test_the_write_plan_and_the_reducer_carry_it() -> None:
    _, log = run([*SCRIPT[:2], "The team wiki is at https://wiki.acme.io/team, bookmark it."])
    created = [e for e in log if e.type == "MemoryCreated" and "wiki" in e.payload.text]
    assert created and created[0].payload.metadata["url"] == ["https://wiki.acme.io/team"]
    state = None
    for env in log:
        if getattr(env.payload, "memory_id", None) == created[0].payload.memory_id:
            state = apply(state, env)
    assert state is not None
    assert metadata.decode(state.metadata)["url"] == ["https://wiki.acme.io/team"]
