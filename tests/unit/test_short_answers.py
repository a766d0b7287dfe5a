"""Short answers keep the question they answer (core.extract.answers), through the rule
extractor."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memstream.core.extract.answers import answer_text, choice_in
from memstream.core.extract.rules import extract_rules
from memstream.core.facts import TurnView

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)


def run(*lines: tuple[str, str, str]) -> list[str]:
    turns = [
        TurnView(
            turn_id=f"t{i}",
            role=role,  # type: ignore[arg-type]
            speaker=speaker,
            text=text,
            occurred_at=T0 + timedelta(minutes=i),
        )
        for i, (role, speaker, text) in enumerate(lines)
    ]
    return [f.text for f in extract_rules(turns)]


def test_an_answer_to_the_assistant_keeps_the_question() -> None:
    got = run(
        ("user", "Owen", "My grandson Leo made the travel hockey team."),
        ("assistant", "assistant", "That's wonderful! What position does he play?"),
        ("user", "Owen", "Goalie, like his mother did."),
    )
    # the quote stays as asked; whom its "he" means stands beside it
    assert (
        'Asked "What position does he play?" (about Leo), Owen said: "Goalie, like his mother did."'
        in got
    )
    assert "Goalie, like his mother did" not in got


def test_an_answer_to_another_speaker_keeps_the_question() -> None:
    got = run(
        ("user", "Felix", "Good. Eating anything weird?"),
        ("user", "Nadia", "Pickles with peanut butter. Omar is horrified."),
    )
    assert any(t.startswith('Asked "Eating anything weird?", Nadia said: "Pickles') for t in got)


def test_a_confirmation_keeps_the_question_it_confirms_wherever_it_was_asked() -> None:
    advice = "For a knee replacement? Remove loose rugs and get a shower chair."
    got = run(
        ("user", "Owen", "My knee surgery is November 14. What should I prepare at home?"),
        ("assistant", "assistant", advice),
        ("user", "Owen", "It is a replacement, yes. Left knee."),
    )
    assert (
        'Asked "For a knee replacement?", Owen said: "It is a replacement, yes. Left knee."' in got
    )
    # an answer that does not open by confirming or denying is no answer to an earlier one
    got = run(
        ("user", "Owen", "My knee surgery is November 14."),
        ("assistant", "assistant", advice),
        ("user", "Owen", "Left knee. Thanks for the list."),
    )
    assert not any(t.startswith("Asked") for t in got)


def test_no_answer_without_a_question_or_to_ones_own_question() -> None:
    assert not any(
        t.startswith("Asked")
        for t in run(
            ("user", "Rosa", "Can you give me a packing list?"),
            ("assistant", "assistant", "Tent, sleeping bags, headlamps and snacks."),
            ("user", "Rosa", "Great. We leave October 11."),
        )
    )
    assert not any(
        t.startswith("Asked")
        for t in run(("user", "Rosa", "Any ideas?"), ("user", "Rosa", "Maybe tacos."))
    )


def test_long_turns_questions_back_and_bare_yes_are_no_short_answers() -> None:
    assert answer_text("Want a list?", "Rosa", "Yes, thanks!") is None
    assert answer_text("Want a list?", "Rosa", "Why do you ask?") is None
    assert answer_text("Want a list?", "Rosa", "word " * 40) is None
    assert answer_text("Names?", "Felix", "Iris. Definitely Iris.") == (
        'Asked "Names?", Felix said: "Iris. Definitely Iris."'
    )


@given(st.text(max_size=200), st.text(max_size=80))
def test_answer_text_is_none_or_quotes_the_whole_answer(answer: str, question: str) -> None:
    text = answer_text(question, "Ann", answer)
    assert text is None or text.endswith(f'"{" ".join(answer.split())}"')


def test_an_answer_of_pointers_or_a_question_of_no_words_is_none() -> None:
    assert answer_text("Who?", "Tomas", "He did.") is None
    assert not any(
        t.startswith("Asked") for t in run(("user", "Lena", "?"), ("user", "Tomas", "he"))
    )


def test_a_quoted_question_names_whom_its_pronoun_means() -> None:
    got = run(
        ("user", "Priya", "There's an old greyhound called Pepper who is so gentle."),
        ("user", "Owen", "Aww, she looks so calm. Are you going to adopt her?"),
        ("user", "Priya", "I wish, but my apartment doesn't allow dogs."),
    )
    assert any(
        t.startswith('Asked "Are you going to adopt her?" (about Pepper), Priya') for t in got
    )
    # nothing to point back to: the quote alone
    got = run(
        ("user", "Owen", "We played our first gig on Thursday."),
        ("user", "Priya", "How did it go?"),
        ("user", "Owen", "Pretty good, about 40 people came."),
    )
    assert any(t.startswith('Asked "How did it go?", Owen said') for t in got), got


def test_a_reply_picking_one_of_two_options_says_which_over_which() -> None:
    got = run(
        ("user", "Nadia", "We found out it's a girl! We're thinking Iris or June."),
        ("user", "Felix", "Iris. Definitely Iris."),
        ("assistant", "assistant", "Do you want the red one or the blue one?"),
        ("user", "Felix", "The blue one."),
    )
    assert (
        'Felix prefers Iris over June (of "We\'re thinking Iris or June."): '
        '"Iris. Definitely Iris."' in got
    ), got
    assert any(t.startswith("Felix prefers blue over red") for t in got), got
    # what is said around the option picked is no part of it
    for reply in ("I think Wednesday.", "Wednesday works.", "Wednesday sounds good, thanks"):
        got = run(
            ("user", "Nadia", "Should we meet Tuesday or Wednesday?"), ("user", "Omar", reply)
        )
        assert any(t.startswith("Omar prefers Wednesday over Tuesday") for t in got), got


def test_no_choice_without_two_options_or_from_ones_own_offer() -> None:
    for lines in (
        (("user", "Nadia", "It went more or less fine."), ("user", "Felix", "Fine.")),
        (("user", "Felix", "Iris or June?"), ("user", "Felix", "Iris.")),
        (("user", "Nadia", "Iris or June?"), ("user", "Felix", "Both are lovely names honestly.")),
        (("user", "Nadia", "Iris or June?"), ("user", "Felix", "Iris or June?")),
        (("assistant", "assistant", "Shall I explain this or that?"), ("user", "Felix", "That.")),
    ):
        assert not [t for t in run(*lines) if " prefers " in t], lines


@given(st.text(max_size=60), st.text(max_size=60))
def test_a_choice_is_only_ever_between_words_of_the_offer(offer: str, reply: str) -> None:
    picked = {w.lower() for w in reply.split() if w.isalpha()}
    found = choice_in(offer, picked)
    if found is not None:
        words = offer.lower()
        assert found.chosen.lower() in words and found.other.lower() in words
        assert found.chosen.lower() != found.other.lower()
