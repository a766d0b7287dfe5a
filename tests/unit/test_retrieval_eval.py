"""The retrieval evaluation: the turn-budgeted metric, the BEAM loader (on a tiny copy of
its format written here, so the test needs no dataset), set selection, and one small set
evaluated end to end through the offline write path and the recall service."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import beam_data
from bench.retrieval_eval import (
    EvalSet,
    evaluate_set,
    load_set,
    plain,
    recall_at,
    starts_with_unresolved_pronoun,
    turn_budget,
    wanted_sets,
)


def test_turn_budget_counts_distinct_turns_in_rank_order() -> None:
    groups = [["t1", "t2", "t3"], ["t2", "t4"], ["t5"]]
    assert turn_budget(groups, 2) == ["t1", "t2"]
    assert turn_budget(groups, 4) == ["t1", "t2", "t3", "t4"]
    assert turn_budget(groups, 10) == ["t1", "t2", "t3", "t4", "t5"]
    assert turn_budget([], 5) == []


def test_a_memory_citing_many_turns_cannot_inflate_the_budgeted_figure() -> None:
    summary = [f"t{i}" for i in range(30)]  # one derived memory citing 30 turns
    evidence = {"t25"}
    assert plain(evidence, [summary])[5] == 1.0  # memory-level: the summary counts whole
    assert recall_at(evidence, turn_budget([summary], 5)) == 0.0


def test_recall_at_is_the_share_of_evidence_found() -> None:
    assert recall_at(["a", "b"], ["b", "c"]) == 0.5
    assert recall_at([], ["a"]) == 0.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It was great", True),
        ("they moved to Porto in May", True),
        ("This is the plan", True),
        ("Maya moved to Porto", False),
        ("User prefers tea", False),
        ("Italy was great", False),  # 'It' only as a whole word
        ("", False),
    ],
)
def test_unresolved_pronoun(text: str, expected: bool) -> None:
    assert starts_with_unresolved_pronoun(text) is expected


def _write_beam(root: Path, n: int, *, questions: dict[str, list[dict[str, Any]]]) -> None:
    folder = root / str(n)
    folder.mkdir(parents=True)
    chat = [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                [
                    {
                        "role": "user",
                        "id": 0,
                        "time_anchor": "March-15-2024",
                        "content": "I adopted a beagle named Biscuit last week. ->-> 1,1",
                    },
                    {"role": "assistant", "id": 1, "content": "Congratulations on Biscuit!"},
                ],
                [
                    {"role": "user", "id": 2, "content": "I work as a nurse at the city hospital."},
                    {"role": "assistant", "id": 3, "content": "That sounds demanding."},
                ],
            ],
        },
        {
            "batch_number": 2,
            "time_anchor": None,
            "turns": [
                [
                    {
                        "role": "user",
                        "id": 4,
                        "time_anchor": "April-05-2024",
                        "content": "I moved from Lisbon to Porto in April.",
                    },
                    {"role": "assistant", "id": 5, "content": "Porto is lovely."},
                ]
            ],
        },
    ]
    (folder / "chat.json").write_text(json.dumps(chat))
    (folder / "pq.json").write_text(json.dumps(questions))


QUESTIONS = {
    "information_extraction": [
        {"question": "What is the name of my dog?", "source_chat_ids": [0]},
        {"question": "Where do I work?", "source_chat_ids": [[2], [3]]},
    ],
    "knowledge_update": [
        {
            "question": "Where do I live now?",
            "source_chat_ids": {"original_info": [0], "updated_info": [4]},
        }
    ],
    "abstention": [{"question": "What colour is my bicycle?"}],
}


def test_beam_loader_converts_turns_questions_and_splits(tmp_path: Path) -> None:
    for n in (1, 2):
        _write_beam(tmp_path, n, questions=QUESTIONS)
    assert beam_data.find_beam({beam_data.ENV_VAR: str(tmp_path)}) == tmp_path
    assert beam_data.find_beam({beam_data.ENV_VAR: str(tmp_path / "nowhere")}) is None

    turns = beam_data.load_turns(tmp_path, 1)
    assert [t["turn_id"] for t in turns] == [f"b1-m{i}" for i in range(6)]
    assert turns[0]["text"] == "I adopted a beagle named Biscuit last week."  # marker gone
    assert turns[0]["occurred_at"] == "2024-03-15T08:00:00Z"
    assert turns[1]["occurred_at"] == "2024-03-15T08:01:00Z"
    assert turns[2]["occurred_at"] == "2024-03-15T08:30:00Z"  # next session
    assert turns[4]["occurred_at"] == "2024-04-05T08:00:00Z"  # next batch, its anchor
    assert {t["namespace"] for t in turns} == {"beam-1"}
    assert turns[0]["session_id"] != turns[2]["session_id"]

    questions = {q["query"]: q for q in beam_data.load_questions(tmp_path, 1)}
    assert questions["Where do I work?"]["evidence_turn_ids"] == ["b1-m2", "b1-m3"]
    assert questions["Where do I live now?"]["evidence_turn_ids"] == ["b1-m0", "b1-m4"]
    assert questions["What colour is my bicycle?"]["evidence_turn_ids"] == []
    assert questions["What colour is my bicycle?"]["kind"] == "abstention"

    dev = beam_data.load_split("dev", tmp_path)
    test = beam_data.load_split("test", tmp_path)
    assert dev is not None and test is not None
    assert {t["namespace"] for t in dev[0]} == {"beam-1"}  # odd conversations: dev
    assert {t["namespace"] for t in test[0]} == {"beam-2"}  # even: test


def test_beam_reads_the_upstream_layout_and_skips_incomplete_folders(tmp_path: Path) -> None:
    """A tier folder as BEAM's repository lays it out (chats/500K): the questions in
    probing_questions/probing_questions.json; a folder without a chat is no conversation."""
    for n in (1, 2):
        _write_beam(tmp_path, n, questions=QUESTIONS)
    upstream = tmp_path / "1" / "probing_questions"
    upstream.mkdir()
    (tmp_path / "1" / "pq.json").rename(upstream / "probing_questions.json")
    (tmp_path / "2" / "chat.json").unlink()
    (tmp_path / "3").mkdir()
    assert beam_data.find_beam({beam_data.ENV_VAR: str(tmp_path)}) == tmp_path
    assert beam_data.conversations(tmp_path) == [1]
    questions = {q["query"]: q for q in beam_data.load_questions(tmp_path, 1)}
    assert questions["Where do I work?"]["evidence_turn_ids"] == ["b1-m2", "b1-m3"]
    test = beam_data.load_split("test", tmp_path)
    assert test == ([], [])


def test_beam_absent_means_no_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(beam_data.ENV_VAR, str(tmp_path / "absent"))
    assert beam_data.load_split("test") is None


def test_eval_sets_from_the_environment() -> None:
    assert wanted_sets({}) == [
        "own",
        "own_haystack",
        "dev",
        "test",
        "dev_haystack",
        "test_haystack",
    ]
    assert wanted_sets({"MEMSTREAM_EVAL_SETS": "own, dev"}) == ["own", "dev"]
    with pytest.raises(ValueError, match="unknown set"):
        wanted_sets({"MEMSTREAM_EVAL_SETS": "own,train"})


def test_a_haystack_asks_every_question_of_one_namespace_holding_the_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in (1, 2, 3):
        _write_beam(tmp_path, n, questions=QUESTIONS)
    monkeypatch.setenv(beam_data.ENV_VAR, str(tmp_path))
    alone, haystack = load_set("dev"), load_set("dev_haystack")
    assert alone is not None and haystack is not None
    assert haystack.name == "BEAM dev haystack"
    assert {t["namespace"] for t in alone.turns} == {"beam-1", "beam-3"}  # odd: dev
    assert {t["namespace"] for t in haystack.turns} == {q["namespace"] for q in haystack.questions}
    assert len({t["namespace"] for t in haystack.turns}) == 1
    # the same turns and questions, evidence ids unchanged (turn ids are unique in a split)
    assert [t["turn_id"] for t in haystack.turns] == [t["turn_id"] for t in alone.turns]
    assert [q["evidence_turn_ids"] for q in haystack.questions] == [
        q["evidence_turn_ids"] for q in alone.questions
    ]


def test_a_small_set_end_to_end(tmp_path: Path) -> None:
    _write_beam(tmp_path, 1, questions=QUESTIONS)
    turns = beam_data.load_turns(tmp_path, 1)
    questions = beam_data.load_questions(tmp_path, 1)
    result = evaluate_set(EvalSet("tiny", turns, questions))
    assert result["questions"] == 4 and result["with_evidence"] == 3
    assert result["abstention"]["questions"] == 1
    assert result["memories"] >= 2
    ours = result["recall"]["memstream"]
    assert 0.0 <= ours["@5"] <= ours["@10"] <= ours["@20"] <= 1.0
    # the dog's name is in one memory of one turn: found at the top
    assert result["by_kind"]["memstream"]["information_extraction"]["@5"] >= 0.5
