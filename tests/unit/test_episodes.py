"""Episodes: a user's turn that no fact covers, or whose facts hold little of it, is kept as
said, an assistant's as a reply to the turn before it; chit-chat and covered turns are not;
episodes skip the similarity gate but not exact repeats."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.episodes import EPISODE_CHARS, MIN_COVERAGE, coverage, episodes_for
from memstream.core.facts import Fact
from memstream.core.signals import scan
from memstream.core.write_plan import BufferedTurn

T0 = datetime(2024, 5, 1, 9, tzinfo=UTC)
LONG = (
    "I'm trying to set up the Flask project with SQLite on port 5000 and the migrations "
    "keep failing when I add the budget table with the category column"
)


def turn(i: int, text: str, role: str = "user") -> BufferedTurn:
    return BufferedTurn(
        f"e{i}",
        f"t{i}",
        role,
        "Craig",
        text,
        T0 + timedelta(minutes=i),
        scan(text, role=role),  # type: ignore[arg-type]
    )


def test_an_uncovered_user_turn_becomes_an_episode() -> None:
    turns = [
        turn(1, LONG),
        turn(2, "ok thanks, sounds good"),
        turn(3, LONG + " again", "assistant"),
    ]
    episode, reply = episodes_for(turns, [])
    assert episode.kind == "episode" and episode.source_turn_ids == ("t1",)
    assert episode.text.startswith("Craig said: I'm trying to set up the Flask project")
    assert episode.valid_from == turns[0].occurred_at
    # the assistant's turn answers the user's turn before it ("ok thanks" is too short to
    # be an episode, yet it is what the reply follows)
    assert reply.subject == "assistant" and reply.source_turn_ids == ("t3",)
    assert reply.text.startswith("The assistant replied: ") and reply.reply_to == "t2"
    assert reply.importance < episode.importance


def fact(text: str, turn_id: str = "t1") -> Fact:
    return Fact(category="fact", text=text, confidence=0.9, source_turn_ids=(turn_id,))


def test_a_covered_turn_gets_no_episode() -> None:
    said = fact(
        "Craig is trying to set up the Flask project with SQLite on port 5000; the migrations "
        "keep failing when Craig adds the budget table"
    )
    assert coverage(LONG, [said.text]) >= MIN_COVERAGE
    assert episodes_for([turn(1, LONG)], [said]) == []


def test_a_turn_its_facts_hold_little_of_is_kept_as_an_episode_too() -> None:
    """One stray fact ("Craig uses Flask") does not stand for the whole message: the
    deadline, the port and the failing migration would be nowhere."""
    thin = fact("Craig uses Flask")
    assert coverage(LONG, [thin.text]) < MIN_COVERAGE
    (episode,) = episodes_for([turn(1, LONG)], [thin])
    assert episode.kind == "episode" and episode.source_turn_ids == ("t1",)
    # an assistant's turn with a fact of its own gets no reply besides it
    assert episodes_for([turn(2, LONG, "assistant")], [fact("Craig uses Flask", "t2")]) == []


def test_coverage_leaves_code_and_stopwords_out() -> None:
    text = "I keep the budget in SQLite:\n```sql\nCREATE TABLE budget (id INTEGER);\n```"
    assert coverage(text, ["Craig keeps the budget in SQLite"]) == 1.0
    assert coverage("and the of it", []) == 1.0  # nothing to hold


@given(st.text(max_size=400), st.lists(st.text(max_size=200), max_size=3))
def test_coverage_is_a_share(text: str, facts: list[str]) -> None:
    share = coverage(text, facts)
    assert 0.0 <= share <= 1.0
    assert coverage(text, [*facts, text]) == 1.0  # the text holds all of itself


@given(st.text(min_size=1, max_size=3000))
def test_episodes_are_bounded_and_cite_their_turn(text: str) -> None:
    for episode in episodes_for([turn(1, text)], []):
        assert len(episode.text) <= len("Craig said: ") + EPISODE_CHARS + 2
        assert episode.source_turn_ids == ("t1",)
