"""Structured metadata in what was said: URLs, shell commands, file paths, versions and
ids, pulled out verbatim so a memory keeps them even where its text is a paraphrase
("Maya keeps the runbook on the wiki" from "the runbook is at https://wiki/ops/runbook").

``extract(text) -> dict[kind, list[str]]``: each value is a substring of ``text``, in the
order first seen, without repeats; kinds with nothing are left out. ``merge(*maps)``
joins such maps (the union, order kept): what a memory, its updates and merges carry.
``lacking_step(text, found)``: a note about a procedure that names no command or next step.
Pure functions of their input; one compiled pass per kind.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import orjson

KINDS = ("url", "command", "path", "version", "id")

#: at most this many values per kind and memory: a pasted log must not become the memory
MAX_PER_KIND = 20

_URL = re.compile(
    r"\b(?:https?|ftp|s3|gs|file)://[^\s<>\"'`)\]]+|\bwww\.[a-z0-9-]+\.[^\s<>\"'`)\]]+", re.I
)
# `inline code` that reads like a command, a "$ " prompt line, or a known tool with arguments
_TOOLS = (
    "git|pip|pipx|uv|python3?|npm|npx|yarn|pnpm|node|docker|kubectl|helm|make|cargo|go|"
    "curl|wget|ssh|scp|rsync|terraform|ansible|brew|apt(?:-get)?|systemctl|journalctl|psql|"
    "duckdb|memstream|pytest|ruff|mypy|bash|sh|sudo|aws|gcloud|az|mvn|gradle|dotnet"
)
_BACKTICK = re.compile(r"`([^`\n]{2,200})`")
_PROMPT = re.compile(r"(?m)^\s*\$\s+(\S[^\n]{1,200})")
_TOOL = re.compile(rf"(?<![\w/.-])(?:sudo\s+)?(?:{_TOOLS})(?=\s)")
# tools whose name alone, in prose, is no command ("go home", "make sure"): they need an
# argument that looks like one (a flag, a path, a key=value)
_AMBIGUOUS = frozenset(
    [
        "go",
        "make",
        "sh",
        "bash",
        "node",
        "python",
        "python3",
        "brew",
        "apt",
        "apt-get",
        "uv",
        "az",
        "sudo",
    ]
)
_ARG = re.compile(
    r"-{1,2}[\w][\w=./:-]*|[\w.~@+-]*[/=:][\w./:=@+~-]*|[\w-]+\.[a-z0-9]{1,6}|\.[\w.\[\],/-]*"
)
_PLAIN = re.compile(r"[a-z][\w-]*")
_PROSE = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "and",
        "or",
        "but",
        "it",
        "is",
        "was",
        "are",
        "be",
        "i",
        "you",
        "we",
        "they",
        "he",
        "she",
        "my",
        "your",
        "our",
        "this",
        "that",
        "then",
        "so",
        "if",
        "for",
        "of",
        "in",
        "on",
        "at",
        "with",
        "by",
        "from",
        "as",
    ]
)
_PATH = re.compile(
    r"(?<![\w:/.-])(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?|(?<![\w/.-])[\w-]+(?:/[\w.@+-]+)+\.[a-z0-9]{1,6}\b"
)
_VERSION = re.compile(
    r"(?<![\w.])v?\d+\.\d+(?:\.\d+)?(?:[-+][0-9a-z.]+)?(?![\w.]*\d)\b|(?<![\w.])v\d+\b", re.I
)
_UUID_OR_TICKET = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"  # uuid
    r"|\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b",  # ticket: OPS-1234
    re.I,
)
_ISSUE = re.compile(r"(?<![\w#])#\d{1,7}\b")  # issue or PR number: #482
_HEX_RUN = re.compile(r"[0-9a-fA-F]{7}")
_HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b", re.I)  # a commit
_STEP_WORDS = re.compile(
    r"\b(?:to (?:deploy|install|release|restore|roll ?back|migrate|rotate|set up|upgrade)|"
    r"the (?:steps?|procedure|runbook|process) (?:is|are|for)|how to)\b",
    re.I,
)
_NEXT = re.compile(r"\b(?:then|next|after that|first|finally|run|step \d)\b", re.I)


_NONSPACE = re.compile(r"\S+")  # what str.split() yields: re's \s is str.isspace()


def _clean(value: str) -> str:
    return value.strip().rstrip(".,;:!?")


def _tool_runs(text: str) -> Iterable[str]:
    """A known tool and the words after it that read as its arguments: up to two plain
    subcommand words ("rollout restart"), then flags, paths and key=values; a word of
    prose or the end of a sentence stops it."""
    for m in _TOOL.finditer(text):
        tool = m.group(0).split()[-1]
        parts, plain, args, value_next = [m.group(0)], 0, 0, False
        # the words after it one by one (the loop stops within a few): not a split of the
        # whole rest of the text for every tool named in it
        for found in _NONSPACE.finditer(text, m.end()):
            raw = found.group()
            word = raw.rstrip(".,;:!?)")
            if _ARG.fullmatch(word):
                args += 1
                value_next = word.startswith("-") and "=" not in word
            elif value_next and _PLAIN.fullmatch(word) and word not in _PROSE:
                value_next = False  # a flag's value: "-n prod"
            elif _PLAIN.fullmatch(word) and plain < 2 and args == 0 and word not in _PROSE:
                plain += 1
            else:
                break
            parts.append(word)
            if word != raw:  # punctuation ends the command
                break
        if len(parts) >= 2 and (args or tool not in _AMBIGUOUS):
            yield " ".join(parts)


def _commands(text: str) -> Iterable[str]:
    for m in _BACKTICK.finditer(text):
        inner = m.group(1).strip()
        if re.match(rf"(?:sudo\s+)?(?:{_TOOLS})\b|\./|\S+\s+-", inner):
            yield inner
    for m in _PROMPT.finditer(text):
        yield m.group(1)
    yield from _tool_runs(_BACKTICK.sub(" ", text))


def _versions(text: str) -> Iterable[str]:
    """ "Kafka 3.7", "v2", "1.4.2", "version 3.1": a number after a name or with a v, not a
    time or a price ("at 5.30", "costs 4.50")."""
    for m in _VERSION.finditer(text):
        value = m.group(0)
        before = text[: m.start()].split()
        word = before[-1] if before else ""
        if (
            value[0] in "vV"
            or value.count(".") >= 2
            or word.lower() in ("version", "release", "v", "ver")
            or (word[:1].isupper() and word.isalpha() and len(word) > 1)
        ):
            yield value


def extract(text: str) -> dict[str, list[str]]:
    """The metadata in ``text`` (see the module's docstring)."""
    return {kind: list(values) for kind, values in _extract(text)}


_TOOL_NAMES = frozenset(_TOOLS.replace("(?:-get)?", "").replace("3?", "").split("|")) | {
    "apt-get",
    "python3",
}
_NUMBERED = re.compile(r"\d\.\d|\bv\d")
_ASCII_DIGIT = re.compile(r"[0-9]")
# what every ticket ("OPS-12") or uuid holds, led by a literal dash (fast to search): the
# full pattern tries every word of a text, these find most texts without any at once
_TICKET_DASH = re.compile(r"-\d")
_UUID_DASH = re.compile(r"-[0-9a-f]{4}-", re.I)
# _NUMBERED's two cases from their literal character, the one before checked by hand
_DOT_DIGIT = re.compile(r"\.\d")
_V_DIGIT = re.compile(r"v\d")


@lru_cache(maxsize=1)
def _any_digit() -> re.Pattern[str]:
    r"""What str.isdigit() holds for: \d (Unicode Nd) and the other digits (superscripts,
    circled ones), listed once on first use (~0.1 s) rather than at import."""
    others = (c for c in map(chr, range(sys.maxunicode + 1)) if c.isdigit() and not c.isdecimal())
    return re.compile(r"\d|[" + re.escape("".join(others)) + "]")


def _numbered(text: str) -> bool:
    """``_NUMBERED.search(text) is not None``, several times faster on long texts."""
    for m in _DOT_DIGIT.finditer(text):
        at = m.start()
        if at and text[at - 1].isdecimal():  # \d is the Unicode category Nd: isdecimal
            return True
    for m in _V_DIGIT.finditer(text):
        at = m.start()
        if not at or not (text[at - 1].isalnum() or text[at - 1] == "_"):  # \b before v
            return True
    return False


@lru_cache(maxsize=4096)
def _extract(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    # Cheap character tests first: most of what people say holds none of these, and the
    # write path calls this for every memory and each of its source turns (cached: the
    # same turn feeds several memories).
    found: dict[str, list[str]] = {}

    def add(kind: str, values: Iterable[str]) -> None:
        for raw in values:
            value = _clean(raw)
            if len(value) < 2:
                continue
            seen = found.setdefault(kind, [])
            if value not in seen and len(seen) < MAX_PER_KIND:
                seen.append(value)

    rest = text
    if "://" in text or "www." in text:
        urls = [m.group(0) for m in _URL.finditer(text)]
        add("url", urls)
        for url in urls:  # a URL's path and version-like parts are the URL's
            rest = rest.replace(url, " ")
    words = rest.split()
    if "`" in rest or "$ " in rest or not _TOOL_NAMES.isdisjoint(words):
        add("command", _commands(rest))
    if "/" in rest:
        add("path", (m.group(0) for m in _PATH.finditer(rest)))
    # str.isdigit, not \d: superscript digits count too, as they always did
    has_digit = _ASCII_DIGIT.search(rest) is not None or (
        not rest.isascii() and _any_digit().search(rest) is not None
    )
    if has_digit and _numbered(rest):
        add("version", _versions(rest))
    if has_digit:
        ids = (
            [m.group(0) for m in _UUID_OR_TICKET.finditer(rest)]
            if _TICKET_DASH.search(rest) or _UUID_DASH.search(rest)
            else []
        )
        if "#" in rest:
            ids += [m.group(0) for m in _ISSUE.finditer(rest)]
        if _HEX_RUN.search(rest):
            ids += [m.group(0) for m in _HASH.finditer(rest)]
        add("id", sorted(ids, key=rest.find))  # in the order said
    return tuple((k, tuple(found[k])) for k in KINDS if found.get(k))


def merge(*maps: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """The union of metadata maps, first-seen order, at most MAX_PER_KIND per kind."""
    out: dict[str, list[str]] = {}
    for m in maps:
        for kind, values in m.items():
            if kind not in KINDS:
                continue
            seen = out.setdefault(kind, [])
            for v in values:
                if isinstance(v, str) and v not in seen and len(seen) < MAX_PER_KIND:
                    seen.append(v)
    return {k: out[k] for k in KINDS if out.get(k)}


def lacking_step(text: str, found: Mapping[str, Iterable[str]]) -> bool:
    """A note about how to do something that names neither a command nor a next step."""
    return bool(_STEP_WORDS.search(text)) and not found.get("command") and not _NEXT.search(text)


def encode(metadata: Mapping[str, Any]) -> str:
    """The canonical text of a memory's metadata ("" for none): kinds in KINDS order,
    then the producer's 'turn' map with sorted keys."""
    if not metadata:
        return ""
    out: dict[str, Any] = merge(metadata)
    if metadata.get("turn"):
        out["turn"] = metadata["turn"]
    return orjson.dumps(out, option=orjson.OPT_SORT_KEYS).decode() if out else ""


def decode(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    value = orjson.loads(text)
    return value if isinstance(value, dict) else {}


def updated(old: str, new_text: str, carried: Mapping[str, Any], replaced: bool) -> str:
    """A memory's metadata after an update: what it had (unless a user's edit replaced the
    text), what the update carried, and what its new text holds -- an update that drops a
    URL from the text does not drop it from the memory."""
    before = {} if replaced else decode(old)
    merged: dict[str, Any] = merge(before, carried, extract(new_text))
    turn = {**(before.get("turn") or {}), **(carried.get("turn") or {})}
    if turn:
        merged["turn"] = turn
    return encode(merged)
