"""BEAM's 100K tier as an external retrieval-evaluation set, read where it lies.

BEAM ("Beyond a Million Tokens", arXiv 2510.27246) is public data nobody on this project
wrote: 20 conversations between a user and an assistant over weeks, 400 probing questions
in ten abilities, each with the ids of the messages that hold its evidence. It is *not*
part of the project: it is read from ``MEMSTREAM_BEAM_DIR`` or from
``shared/datasets/beam-100k`` in a parent of the repository (``../shared/...`` from a
checkout next to it), and every caller skips cleanly when it is absent
(:func:`find_beam` returns None).

``MEMSTREAM_BEAM_DIR`` may also name a tier folder in the layout of BEAM's own repository
(``chats/500K``: each conversation's questions in ``probing_questions/probing_questions.json``
instead of ``pq.json``); a conversation folder without both files is skipped. The longer
tiers are what the 100K tier cannot show: how recall holds as one user's history grows.

Conversion to the ingest format, deterministic:

* namespace ``beam-<n>`` per conversation, turn id ``b<n>-m<id>`` (message ids are unique
  within a conversation), session id ``b<n>-<batch>-<session>``;
* each batch carries one time anchor ("March-15-2024") on a user message: its sessions
  start that day at 08:00 UTC, 30 minutes apart, messages one minute apart;
* the ``->-> 1,1`` markers at the end of some user messages are stripped.

Questions: evidence is ``source_chat_ids`` flattened (a list, nested lists, or a dict such
as ``{"original_info": [86], "updated_info": [114]}``); abstention questions have none (the
right answer is that nothing is known). Split by conversation: odd-numbered conversations
are the development part (choose every setting there), even-numbered the test part.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

REPO_ROOT = Path(__file__).resolve().parent.parent
ENV_VAR = "MEMSTREAM_BEAM_DIR"
RELATIVE = Path("shared") / "datasets" / "beam-100k"
ABILITIES = (
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
)
Split = Literal["dev", "test"]
SESSION_GAP = timedelta(minutes=30)
MESSAGE_GAP = timedelta(minutes=1)
_MARKER = re.compile(r"\s*->->\s*\d+\s*,\s*\d+\s*$")


def find_beam(env: dict[str, str] | None = None) -> Path | None:
    """The BEAM 100K folder: ``$MEMSTREAM_BEAM_DIR``, else ``shared/datasets/beam-100k`` in
    the nearest parent of the repository that has one; None when absent."""
    env = dict(os.environ) if env is None else env
    if env.get(ENV_VAR):
        path = Path(env[ENV_VAR])
        return path if _looks_like_beam(path) else None
    for parent in REPO_ROOT.parents:
        if _looks_like_beam(parent / RELATIVE):
            return parent / RELATIVE
    return None


#: where a conversation's questions are: the shared copy's name, then BEAM's own
QUESTION_FILES = (Path("pq.json"), Path("probing_questions") / "probing_questions.json")


def _questions_file(folder: Path) -> Path | None:
    return next((folder / q for q in QUESTION_FILES if (folder / q).is_file()), None)


def _complete(folder: Path) -> bool:
    return (folder / "chat.json").is_file() and _questions_file(folder) is not None


def _looks_like_beam(path: Path) -> bool:
    return path.is_dir() and bool(conversations(path))


def conversations(root: Path) -> list[int]:
    """The numbered conversation folders with a chat and its questions."""
    return sorted(
        int(p.name) for p in root.iterdir() if p.name.isdigit() and p.is_dir() and _complete(p)
    )


def split_of(conversation: int) -> Split:
    return "dev" if conversation % 2 == 1 else "test"


def namespace_of(conversation: int) -> str:
    return f"beam-{conversation}"


def turn_id(conversation: int, message_id: int | str) -> str:
    return f"b{conversation}-m{message_id}"


def _anchor(text: str) -> datetime:
    return datetime.strptime(text, "%B-%d-%Y").replace(tzinfo=UTC)


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _batches(root: Path, conversation: int) -> list[dict[str, Any]]:
    with (root / str(conversation) / "chat.json").open(encoding="utf-8") as fh:
        data: list[dict[str, Any]] = json.load(fh)
    return data


def load_turns(root: Path, conversation: int) -> list[dict[str, Any]]:
    """One conversation's messages as ingest-format dicts, in time order."""
    out: list[dict[str, Any]] = []
    day: datetime | None = None
    for b, batch in enumerate(_batches(root, conversation), start=1):
        anchors = [m["time_anchor"] for s in batch["turns"] for m in s if m.get("time_anchor")] or (
            [batch["time_anchor"]] if batch.get("time_anchor") else []
        )
        if anchors:
            day = _anchor(anchors[0]).replace(hour=8)
        elif day is None:
            raise ValueError(f"conversation {conversation} batch {b} has no time anchor")
        else:
            day = day + timedelta(days=1)  # no anchor: the day after the previous batch
        for s, session in enumerate(batch["turns"], start=1):
            start = day + (s - 1) * SESSION_GAP
            for i, message in enumerate(session):
                role = str(message["role"])
                out.append(
                    {
                        "namespace": namespace_of(conversation),
                        "session_id": f"b{conversation}-{b}-{s}",
                        "turn_id": turn_id(conversation, message["id"]),
                        "role": role,
                        "speaker": "user" if role == "user" else "assistant",
                        "text": _MARKER.sub("", str(message["content"])).strip(),
                        "occurred_at": _iso(start + i * MESSAGE_GAP),
                    }
                )
    return out


def _flatten(ids: Any) -> Iterator[int | str]:
    if ids is None:
        return
    if isinstance(ids, int | str):
        yield ids
    elif isinstance(ids, dict):
        for value in ids.values():
            yield from _flatten(value)
    else:
        for value in ids:
            yield from _flatten(value)


def load_questions(root: Path, conversation: int) -> list[dict[str, Any]]:
    """One conversation's probing questions; ``kind`` is the ability, ``evidence_turn_ids``
    empty for abstention (and for the few questions BEAM gives no evidence)."""
    path = _questions_file(root / str(conversation))
    if path is None:
        raise FileNotFoundError(f"conversation {conversation} has no questions in {root}")
    with path.open(encoding="utf-8") as fh:
        by_ability: dict[str, list[dict[str, Any]]] = json.load(fh)
    out = []
    for ability in sorted(by_ability):
        for i, q in enumerate(by_ability[ability], start=1):
            evidence = list(dict.fromkeys(_flatten(q.get("source_chat_ids"))))
            out.append(
                {
                    "id": f"b{conversation}-{ability}-{i}",
                    "namespace": namespace_of(conversation),
                    "query": str(q["question"]),
                    "kind": ability,
                    "evidence_turn_ids": [turn_id(conversation, e) for e in evidence],
                    "as_of": None,
                }
            )
    return out


def load_split(
    split: Split, root: Path | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(turns, questions) of one split, or None when the dataset is not there."""
    root = root or find_beam()
    if root is None:
        return None
    turns: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for n in conversations(root):
        if split_of(n) == split:
            turns.extend(load_turns(root, n))
            questions.extend(load_questions(root, n))
    return turns, questions
