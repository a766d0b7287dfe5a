"""The shipped retrieval-evaluation set: it parses, its labels point at real turns that hold
the answer, and the generator reproduces the committed files byte for byte."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bench import eval_data
from bench.eval_data import (
    DATA_DIR,
    EvalQuestion,
    EvalTurn,
    load_conversations,
    load_eval_questions,
    load_questions,
    load_turns,
)
from memstream.consumers.ingest import parse_line
from memstream.infra.settings import Settings

KINDS = ("single_hop", "multi_hop", "temporal", "open_domain")
TURN_KEYS = ["namespace", "session_id", "turn_id", "role", "speaker", "text", "occurred_at"]
QUESTION_KEYS = ["id", "namespace", "query", "kind", "answer", "evidence_turn_ids", "as_of"]
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

# Words an answer may use without the evidence saying them: function words, and the verdict
# of an open-domain answer ("likely yes: ..."), which is inferred rather than quoted.
_STOPWORDS_TEXT = """a an the and or but nor of in on at to for from by with as is are was were be been being
    it its it's this that these those he she they them him her his their there here i me my we
    our you your s d ll re ve t not no yes likely unlikely probably maybe somewhat each up
    about after before then yet so while who whom which what when where why how than too also
    has have had do does did will would can could should"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
DATE_WINDOW_DAYS = 14  # "last Sunday", "on Friday": a relative date resolves near the turn


@pytest.fixture(scope="module")
def turns() -> list[dict[str, Any]]:
    return load_conversations()


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    return load_questions()


@pytest.fixture(scope="module")
def by_id(turns: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["turn_id"]: t for t in turns}


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def answer_terms(answer: str) -> list[str]:
    return [w for w in words(answer) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def haystack(evidence: list[dict[str, Any]]) -> set[str]:
    """Words of the evidence turns, their speakers, and calendar words (month, day, year)
    for dates near each turn, so a resolved relative date counts as supported."""
    out: set[str] = set()
    for turn in evidence:
        out.update(words(turn["text"]))
        out.update(words(turn["speaker"]))
        day = datetime.fromisoformat(turn["occurred_at"]).date()
        for delta in range(-DATE_WINDOW_DAYS, DATE_WINDOW_DAYS + 1):
            d = day + timedelta(days=delta)
            out.update((MONTHS[d.month - 1], str(d.day), str(d.year)))
    return out


def supported(term: str, hay: set[str]) -> bool:
    forms = {term, term + "s", term + "es", term + "th", term + "st", term + "nd", term + "rd"}
    if term.endswith("s"):
        forms.add(term[:-1])
    return not forms.isdisjoint(hay)


# --- conversations ------------------------------------------------------------------------


def test_every_turn_line_is_the_ingest_format(turns: list[dict[str, Any]]) -> None:
    raw = (DATA_DIR / eval_data.CONVERSATIONS_FILE).read_bytes().splitlines()
    assert len(raw) == len(turns)
    settings = Settings()
    for line, turn in zip(raw, turns, strict=True):
        keys = list(turn)
        assert keys in (TURN_KEYS, [*TURN_KEYS, "metadata"]), keys
        assert ISO_Z.match(turn["occurred_at"]), turn
        assert turn["text"].strip() and "{" not in turn["text"], turn
        env = parse_line(line, "eval", settings)  # the real ingest validator accepts it
        assert env.namespace == turn["namespace"]


def test_conversation_shape(turns: list[dict[str, Any]]) -> None:
    assert 500 <= len(turns) <= 800
    assert len({t["turn_id"] for t in turns}) == len(turns)
    namespaces = sorted({t["namespace"] for t in turns})
    assert 4 <= len(namespaces) <= 5
    for ns in namespaces:
        mine = [t for t in turns if t["namespace"] == ns]
        sessions = {t["session_id"] for t in mine}
        assert 8 <= len(sessions) <= 12, ns
        speakers = {(t["speaker"], t["role"]) for t in mine}
        assert len(speakers) == 2, speakers
        assert {r for _s, r in speakers} <= {"user", "assistant"}
        times = [datetime.fromisoformat(t["occurred_at"]) for t in mine]
        assert times == sorted(times) and len(set(times)) == len(times), ns
        assert times[-1] - times[0] >= timedelta(days=90), "sessions span several months"
        for sid in sessions:
            st = [datetime.fromisoformat(t["occurred_at"]) for t in mine if t["session_id"] == sid]
            assert all(
                timedelta(0) < b - a <= timedelta(minutes=5) for a, b in itertools.pairwise(st)
            )


# --- questions ----------------------------------------------------------------------------


def test_question_format_and_counts(questions: list[dict[str, Any]]) -> None:
    assert len(questions) >= 150
    assert len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        assert list(q) == QUESTION_KEYS, q
        assert q["kind"] in KINDS
        assert q["query"].endswith("?") and q["answer"].strip()
        assert q["evidence_turn_ids"] and all(isinstance(e, str) for e in q["evidence_turn_ids"])
        assert q["as_of"] is None or ISO_Z.match(q["as_of"]), q
    counts = Counter(q["kind"] for q in questions)
    assert all(counts[k] >= 25 for k in KINDS), counts
    assert any(q["as_of"] for q in questions if q["kind"] == "temporal")


def test_evidence_ids_exist_in_the_question_namespace(
    questions: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    for q in questions:
        for tid in q["evidence_turn_ids"]:
            assert tid in by_id, (q["id"], tid)
            assert by_id[tid]["namespace"] == q["namespace"], (q["id"], tid)
        assert len(set(q["evidence_turn_ids"])) == len(q["evidence_turn_ids"]), q["id"]


def test_multi_hop_needs_several_turns(
    questions: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    multi = [q for q in questions if q["kind"] == "multi_hop"]
    assert all(len(q["evidence_turn_ids"]) >= 2 for q in multi)
    cross = [q for q in multi if len({by_id[t]["session_id"] for t in q["evidence_turn_ids"]}) > 1]
    assert len(cross) >= len(multi) // 2, "most multi-hop questions span sessions"


def test_as_of_is_after_the_evidence(
    questions: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    for q in questions:
        if q["as_of"] is None:
            continue
        as_of = datetime.fromisoformat(q["as_of"])
        for tid in q["evidence_turn_ids"]:
            assert datetime.fromisoformat(by_id[tid]["occurred_at"]) <= as_of, (q["id"], tid)


def test_evidence_turns_contain_the_answer_words(
    questions: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    problems = []
    for q in questions:
        hay = haystack([by_id[t] for t in q["evidence_turn_ids"]])
        terms = answer_terms(q["answer"])
        assert terms, q["id"]
        missing = [w for w in terms if not supported(w, hay)]
        if missing:
            problems.append((q["id"], q["answer"], missing))
    assert not problems, problems


def test_every_evidence_turn_is_needed(
    questions: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    """Each evidence turn shares a content word with the query or the answer."""
    for q in questions:
        wanted = set(answer_terms(q["answer"])) | set(answer_terms(q["query"]))
        for tid in q["evidence_turn_ids"]:
            turn = by_id[tid]
            have = set(words(turn["text"])) | set(words(turn["speaker"]))
            assert any(supported(w, have) for w in wanted), (q["id"], tid)


def test_queries_paraphrase_rather_than_copy(
    questions: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    """Few queries have every content word in their evidence: retrieval must not be a
    keyword lookup."""
    names = {w for t in by_id.values() for w in words(t["speaker"])}
    copied = 0
    for q in questions:
        hay = set()
        for tid in q["evidence_turn_ids"]:
            hay.update(words(by_id[tid]["text"]))
        terms = [w for w in answer_terms(q["query"]) if w not in names]
        copied += all(supported(w, hay) for w in terms)
    assert copied <= len(questions) // 10, copied


# --- loaders and regeneration ---------------------------------------------------------------


def test_typed_loaders_round_trip(
    turns: list[dict[str, Any]], questions: list[dict[str, Any]]
) -> None:
    typed_turns = load_turns()
    typed_questions = load_eval_questions()
    assert [t.to_dict() for t in typed_turns] == turns
    assert [q.to_dict() for q in typed_questions] == questions
    assert isinstance(typed_turns[0], EvalTurn) and typed_turns[0].at.tzinfo is not None
    assert isinstance(typed_questions[0], EvalQuestion)
    with pytest.raises(AttributeError):
        typed_questions[0].answer = "x"  # type: ignore[misc]
    dated = next(q for q in typed_questions if q.as_of)
    assert dated.as_of_at is not None and dated.as_of_at.tzinfo == UTC


def test_generator_reproduces_the_shipped_files() -> None:
    for name, data in eval_data.render().items():
        assert (DATA_DIR / name).read_bytes() == data, f"{name}: run python -m bench.eval_data"
    assert eval_data.render() == eval_data.render()


def test_cli_regenerates_identically_under_another_hash_seed(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    root = Path(eval_data.__file__).resolve().parent.parent
    subprocess.run(
        [sys.executable, "-m", "bench.eval_data", "--out", str(tmp_path)],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    for name in (eval_data.CONVERSATIONS_FILE, eval_data.QUESTIONS_FILE):
        assert (tmp_path / name).read_bytes() == (DATA_DIR / name).read_bytes(), name
    check = subprocess.run(
        [sys.executable, "-m", "bench.eval_data", "--check", "--out", str(tmp_path)],
        cwd=root,
        env=env,
        capture_output=True,
    )
    assert check.returncode == 0, check.stderr


def test_jsonl_lines_are_plain_json() -> None:
    for name in (eval_data.CONVERSATIONS_FILE, eval_data.QUESTIONS_FILE):
        text = (DATA_DIR / name).read_text(encoding="utf-8")
        assert text.endswith("\n") and "\r" not in text
        for line in text.splitlines():
            assert isinstance(json.loads(line), dict)
