"""Knowledge updates through the broker, with the defaults and the rule extractor: a move,
a change of preference, of job and of coach said in a later session supersede what was
said before. The present-tense question gets the new value first; the old memory is
superseded by a MemorySuperseded event with its evidence and causation id, which history
and audit show; a question about the earlier time still finds the old value."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstream.consumers.client import Memory
from memstream.infra.settings import Settings
from tests.harness import WorkerProcess, memstream_json, projected

pytestmark = pytest.mark.integration

JANUARY = datetime(2024, 1, 10, 9, tzinfo=UTC)
MARCH = datetime(2024, 3, 12, 9, tzinfo=UTC)
BEFORE = [
    "I live in Lisbon.",
    "I work at Acme as a data analyst.",
    "I prefer Go for backend work.",
    "I have a cat named Luna.",
    "I love hiking on weekends.",
    "My coach is Sean.",
    "My phone number is 555-1234.",
]
AFTER = [
    "Actually I moved from Lisbon to Porto.",
    "I left Acme and joined Initech as a data engineer.",
    "I prefer Rust over Go now.",
    "Luna loves the new balcony.",
    "Sean is no longer my coach, my new coach is Marta.",
    "My new number is 555-9876.",
]
# (question, the new value first, the memory it supersedes)
CHANGES = [
    ("Where do I live?", "Porto", "Maya lives in Lisbon"),
    ("Where do I work?", "Initech", "Maya works at Acme as a data analyst"),
    ("Which programming language do I prefer?", "Rust", "Maya prefers Go for backend work"),
    # a role one person holds for Maya at a time (core/extract/slots.py role slots)
    ("Who is my coach?", "Marta", "Maya's coach is Sean"),
    # "new number" names no phone: the number's shape does (core/extract/slots.py)
    ("What is my phone number?", "555-9876", "Maya's phone number is 555-1234"),
]


def eventually(fn: Callable[[], Any], ok: Callable[[Any], bool], timeout: float = 45.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


@pytest.fixture(scope="module")
def story(settings: Settings, worker: WorkerProcess) -> tuple[str, dict[str, dict[str, Any]]]:
    """The namespace, and every memory of it (active or not) by text."""
    ns = f"ku-{int(time.time() * 1000) % 10**9}"
    with Memory(settings=settings) as mem:
        for session, start, turns in (("s1", JANUARY, BEFORE), ("s2", MARCH, AFTER)):
            for i, text in enumerate(turns):
                mem.add(
                    [{"role": "user", "content": text, "speaker": "Maya"}],
                    namespace=ns,
                    run_id=session,
                    occurred_at=start + timedelta(minutes=i),
                )

        def superseded() -> list[dict[str, Any]]:
            return mem.get_all(namespace=ns, filters={"status": "superseded"})["results"]

        eventually(superseded, lambda rows: len(rows) >= len(CHANGES))
        rows = mem.get_all(namespace=ns)["results"] + superseded()
    projected(settings)  # get_all read DuckDB; the questions ask Qdrant
    return ns, {r["memory"]: r for r in rows}


@pytest.mark.parametrize(("question", "new", "old"), CHANGES)
def test_the_new_value_answers_first_and_the_old_is_superseded(
    settings: Settings,
    story: tuple[str, dict[str, dict[str, Any]]],
    question: str,
    new: str,
    old: str,
) -> None:
    ns, memories = story
    with Memory(settings=settings) as mem:
        found = mem.recall(question, namespace=ns)
        top = [r["text"] for r in found["results"]]
        assert top and new in top[0], (question, top)
        assert old not in top, top  # superseded: out of present-tense answers
        gone = mem.get(memories[old]["id"], namespace=ns)
        assert gone["status"] == "superseded" and gone["superseded_by"], gone
        # the decision is an event on the log, with its evidence and its cause
        events = mem.history(memories[old]["id"], namespace=ns)
    (ended,) = [e for e in events if e["type"] == "MemorySuperseded"]
    assert ended["causation_id"], ended
    evidence = ended["payload"]["evidence"]
    assert evidence["decision"] == "supersede" and new in evidence["new_text"], evidence
    assert ended["payload"]["superseded_by"] == gone["superseded_by"]
    trail = memstream_json(settings, "audit", memories[old]["id"], "--json", timeout=60)
    steps = [s for s in trail["steps"] if s["kind"] == "MemorySuperseded"]
    assert steps and steps[0]["detail"]["causation_id"] == ended["causation_id"], trail


def test_the_history_stays_reachable_for_a_question_about_then(
    settings: Settings, story: tuple[str, dict[str, dict[str, Any]]]
) -> None:
    ns, _ = story
    with Memory(settings=settings) as mem:
        then = mem.recall("Where did Maya live in January 2024?", namespace=ns)
    top = [r["text"] for r in then["results"]]
    assert top and "Lisbon" in top[0], top


def test_a_move_without_its_origin_answers_where_one_lives(
    settings: Settings, worker: WorkerProcess
) -> None:
    """Tried as a new user would: "I moved to Porto last month" gave only the event, and
    "where does Maya live?" found her sister's "lives two streets away" first."""
    ns = f"ku-move-{int(time.time() * 1000) % 10**9}"
    turns = [
        "I moved to Porto last month, the rent is much lower than in Lisbon.",
        "My sister Ana lives two streets away, she works as a nurse.",
    ]
    with Memory(settings=settings) as mem:
        mem.add(
            [{"role": "user", "content": t, "speaker": "Maya"} for t in turns],
            namespace=ns,
            run_id="s1",
            occurred_at=MARCH,
        )
        texts = eventually(
            lambda: {r["memory"] for r in mem.get_all(namespace=ns)["results"]},
            lambda found: "Maya lives in Porto" in found and any("Ana" in t for t in found),
        )
        assert "Maya lives in Porto" in texts, texts
        assert any(t.startswith("Maya moved to Porto in February 2024") for t in texts), texts
        projected(settings)
        found = mem.recall("Where does Maya live?", namespace=ns)
    top = [r["text"] for r in found["results"]]
    assert top and top[0] == "Maya lives in Porto", top


@pytest.mark.parametrize(
    ("plan", "change", "old", "reason", "named", "question", "answer"),
    [
        (
            "I'm training for the Dublin marathon in October.",
            "My marathon is cancelled; I'm doing the Porto half marathon in November instead.",
            "Maya is training for the Dublin marathon in October",
            "cancelled",
            {"cancelled": ["marathon"]},
            "Which race is Maya training for?",
            "Porto",
        ),
        (
            "I have a dentist appointment on March 20.",
            "My dentist appointment was moved to March 27.",
            "Maya has a dentist appointment on March 20",
            "rescheduled",
            {"moved": ["dentist appointment"]},
            "When is Maya's dentist appointment?",
            "27",
        ),
    ],
)
def test_a_plan_called_off_or_moved_is_superseded(
    settings: Settings,
    worker: WorkerProcess,
    plan: str,
    change: str,
    old: str,
    reason: str,
    named: dict[str, list[str]],
    question: str,
    answer: str,
) -> None:
    """Tried as a new user would: after "my marathon is cancelled; I'm doing the Porto half
    marathon in November instead", "which race is Maya training for?" still found the
    Dublin marathon first, active; a dentist appointment moved kept its old date."""
    ns = f"ku-plan-{reason}-{int(time.time() * 1000) % 10**9}"
    with Memory(settings=settings) as mem:
        for session, at, text in (("s1", JANUARY, plan), ("s2", MARCH, change)):
            mem.add(
                [{"role": "user", "content": text, "speaker": "Maya"}],
                namespace=ns,
                run_id=session,
                occurred_at=at,
            )

        def ended() -> list[dict[str, Any]]:
            return mem.get_all(namespace=ns, filters={"status": "superseded"})["results"]

        gone = eventually(ended, bool)
        assert [r["memory"] for r in gone] == [old], gone
        events = mem.history(gone[0]["id"], namespace=ns)
        (end,) = [e for e in events if e["type"] == "MemorySuperseded"]
        assert end["payload"]["reason"] == reason and end["causation_id"], end
        assert named.items() <= end["payload"]["evidence"].items(), end
        projected(settings)
        found = mem.recall(question, namespace=ns)
    top = [r["text"] for r in found["results"]]
    assert top and answer in top[0] and old not in top, top


def said_in_two_sessions(mem: Memory, ns: str, said: tuple[str, str]) -> None:
    """Maya says ``said[0]`` in a January session of ``ns`` and ``said[1]`` in March."""
    for session, at, text in (("s1", JANUARY, said[0]), ("s2", MARCH, said[1])):
        mem.add(
            [{"role": "user", "content": text, "speaker": "Maya"}],
            namespace=ns,
            run_id=session,
            occurred_at=at,
        )


def _edge_story(
    settings: Settings,
    said: tuple[str, str],
    marks: tuple[str, str],
    rule: str,
    question: str,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``said`` in two sessions of a new namespace, January then March; the memories whose
    texts hold ``marks`` (old, new), the ``rule``'s edge between them, and the answer to
    ``question``. The old memory is still active: the history stays."""
    ns = f"ku-{rule}-{int(time.time() * 1000) % 10**9}"
    with Memory(settings=settings) as mem:
        said_in_two_sessions(mem, ns, said)
        rows = eventually(
            lambda: mem.get_all(namespace=ns)["results"],
            lambda found: any(marks[1] in r["memory"] for r in found),
        )
        (old,) = [r for r in rows if marks[0] in r["memory"]]
        (new,) = [r for r in rows if marks[1] in r["memory"]]
        events = eventually(
            lambda: mem.history(old["id"], namespace=ns),
            lambda found: any(
                e["type"] == "RelationAdded" and e["payload"]["memory_id"] == new["id"]
                for e in found
            ),
        )
        projected(settings)
        found = mem.recall(question, namespace=ns)
        assert mem.get(old["id"], namespace=ns)["status"] == "active"
    (edge,) = [
        e["payload"]
        for e in events
        if e["type"] == "RelationAdded"
        and e["payload"]["rule"] == rule
        and e["payload"]["memory_id"] == new["id"]
    ]
    assert (edge["memory_id"], edge["target_id"], edge["relation"]) == (
        new["id"],
        old["id"],
        "supersedes",
    ), edge
    return old, new, edge, found


# (what the case shows, what was said in January and in March, the texts marking the old
# and the new memory, the rule, the question, the edge's evidence)
EDGE_CASES = [
    ("a change said in passing", ("My manager wants me to migrate our pipelines from Airflow to Dagster by June.", "Quick update: we decided to use Prefect instead of Dagster, the team found it easier."), ("Dagster by June", "Prefect"), "replacement", "Which tool are we migrating the pipelines to?", {"replaced": "Dagster"}),
    ("a quantity that moved", ("I've been drinking way too much coffee lately, like five cups a day.", "Update: I'm down to one cup of coffee a day and I feel much better."), ("five cups", "one cup"), "new_value", "How much coffee does Maya drink?", {"value": "one cup"}),
    ("a thing given up", ("I drive a Honda Civic to work.", "I sold the Civic and bought a Tesla Model 3."), ("Honda Civic", "Tesla"), "replacement", "What car does Maya drive?", {"replaced": "the Civic"}),
    ("an activity ended", ("I'm training for the Lisbon half marathon, my first race.", "I'm no longer training for the Lisbon half marathon, I hurt my knee."), ("first race", "no longer"), "replacement", "Which race is Maya training for?", {"replaced": "the Lisbon half marathon"}),
    ("a measure someone else moved", ("My rent is $1,200 a month.", "The landlord raised my rent to $1,400."), ("$1,200", "$1,400"), "new_value", "How much is Maya's rent?", {"value": "$1,400"}),
    ("a state said again with a change", ("My email is maya@old.com.", "Please use my new email, maya@new.io."), ("old.com", "new.io"), "restatement", "What is Maya's email?", {"cue": "new", "said": ["email"]}),
    ("a thing of the speaker's renamed", ("My cat's name is Mochi.", "We renamed the cat Biscuit, Mochi didn't suit her."), ("name is Mochi", "Biscuit"), "restatement", "What is my cat's name?", {"cue": "renamed", "said": ["cat", "mochi"]}),
    ("a state whose value is a word the old one said otherwise", ("I work night shifts at the hospital.", "I'm on day shifts now, 7 to 3."), ("night shifts", "day shifts"), "restatement", "What shifts does Maya work?", {"cue": "now", "said": ["shift"]}),
    ("a habit said as it has been lately", ("I sleep about six hours a night.", "I've been sleeping eight hours a night lately."), ("six hours", "eight hours"), "new_value", "How much does Maya sleep?", {"value": "eight hour"}),
    ("taken off one thing and put on another", ("I'm working on the billing service.", "I got moved off billing onto the search team."), ("billing service", "search team"), "replacement", "What is Maya working on?", {"replaced": "billing"}),
    ("another of a kind kept one at a time", ("I use an iPhone 12.", "I upgraded to a Pixel 8 last week, loving it."), ("iPhone 12", "Pixel 8"), "same_kind", "What phone do I use?", {"kind": "phone", "was": "iphone", "now": "pixel"}),
    ("a relationship ended, said with both names as the subject", ("I'm dating Alex.", "Alex and I broke up in June."), ("dating Alex", "broke up"), "restatement", "Am I dating anyone?", {"cue": "broke up", "said": ["alex"]}),
    ("a body measure that moved, though nothing names it", ("I weigh 90 kg.", "I'm down to 82 kg after the diet."), ("90 kg", "82 kg"), "new_value", "How much do I weigh?", {"value": "82 kg"}),
    ("the attribute the old memory gave a value of, named with a change", ("My gym is Planet Fitness.", "I joined a climbing gym called Mesa Rim instead."), ("Planet Fitness", "Mesa Rim"), "restatement", "Which gym do I go to?", {"cue": "instead", "said": ["gym"]}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("said", "marks", "rule", "question", "evidence"),
    [pytest.param(*case, id=name) for name, *case in EDGE_CASES],
)
def test_a_change_answers_before_what_it_replaced(
    settings: Settings,
    worker: WorkerProcess,
    said: tuple[str, str],
    marks: tuple[str, str],
    rule: str,
    question: str,
    evidence: dict[str, str],
) -> None:
    """Tried as a new user would: after "we decided to use Prefect instead of Dagster",
    "which tool are we migrating to?" answered the manager's Dagster plan first and the
    change not at all; after "I'm down to one cup of coffee a day", "how much coffee does
    Maya drink?" answered "five cups a day" first. No slot holds a tool or an amount: the
    change supersedes the earlier memory by an edge (core/replacement.py,
    core/new_value.py), the earlier one stays active as the history, and recall puts the
    change right before it, the edge in its explanation."""
    old, new, edge, found = _edge_story(settings, said, marks, rule, question)
    assert edge["evidence"] == evidence, edge
    ids = [r["memory_id"] for r in found["results"]]
    assert ids[:2] == [new["id"], old["id"]], [r["text"] for r in found["results"]]
    if rule in ("replacement", "restatement", "same_kind"):
        (hop,) = found["results"][0]["explain"]["graph"]["path"]
        assert hop == {
            "from": new["id"],
            "relation": "supersedes",
            "to": old["id"],
            "confidence": 0.8 if rule == "replacement" else 0.6,
        }


def test_a_bare_instead_says_what_it_replaced(settings: Settings, worker: WorkerProcess) -> None:
    """Tried as a new user would: "I stopped playing tennis; I swim instead" left the memory
    "Maya swims instead", which says nothing of the sport it replaced, and "what sport do I
    play?" answered tennis with the swimming fourth. The clause is read with the one before
    it (core/extract/claims.py instead_of): "Maya swims instead of tennis", which
    supersedes the tennis memory by the replacement rule and answers above it."""
    old, new, edge, found = _edge_story(
        settings,
        ("I play tennis on weekends.", "I hurt my shoulder, I quit tennis. I swim instead."),
        ("on weekends", "swims"),
        "replacement",
        "What sport does Maya play?",
    )
    assert new["memory"] == "Maya swims instead of tennis", new
    assert edge["evidence"] == {"replaced": "tennis"}, edge
    ids = [r["memory_id"] for r in found["results"]]
    assert ids.index(new["id"]) < ids.index(old["id"]), [r["text"] for r in found["results"]]


def test_a_home_taken_where_one_moved_supersedes_the_old_home(
    settings: Settings, worker: WorkerProcess
) -> None:
    """Tried as a new user would: after "we bought a house in Richmond and moved in last
    weekend", "where do we live?" answered "live in a flat in Camden" first. A home taken
    where one moves is the residence slot (core/extract/slots.py): "Maya and others live
    in Richmond" supersedes the flat in Camden, the evidence in the event."""
    ns = f"ku-home-{int(time.time() * 1000) % 10**9}"
    with Memory(settings=settings) as mem:
        said_in_two_sessions(
            mem,
            ns,
            (
                "We live in a flat in Camden.",
                "We bought a house in Richmond and moved in last weekend.",
            ),
        )
        rows = eventually(
            lambda: mem.get_all(namespace=ns)["results"],
            lambda found: any(r["memory"] == "Maya and others live in Richmond" for r in found),
        )
        (old,) = [r for r in rows if "Camden" in r["memory"]]
        events = eventually(
            lambda: mem.history(old["id"], namespace=ns),
            lambda found: any(e["type"] == "MemorySuperseded" for e in found),
        )
        (ended,) = [e for e in events if e["type"] == "MemorySuperseded"]
        assert ended["payload"]["reason"] == "contradiction", ended
        projected(settings)
        found = mem.recall("Where do we live?", namespace=ns)
    top = [r["text"] for r in found["results"]]
    assert top and top[0] == "Maya and others live in Richmond", top
