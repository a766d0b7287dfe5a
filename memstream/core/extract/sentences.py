"""Cleaning a turn and cutting it into sentences and atomic claims."""

from __future__ import annotations

import re
import unicodedata

from memstream.core.extract.gates import words_of, wordset

# --- text cleaning and sentence splitting ------------------------------------------

_QUOTES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "“": '"', "”": '"'})
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_URL = re.compile(r"https?://\S+")
_SPACES = re.compile(r"[ \t\f\v]+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_BOUNDARY = re.compile(r"([.!?…]+)([\"')\]]*)(?=\s|$)")
_ABBREVIATIONS = wordset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie inc ltd co corp approx dept est fig no mt ft"
)


class _Blanks(dict[int, int | str]):
    """``str.translate`` table turning emoji (So) and control characters (C*) other than the
    newline into spaces. Filled in as characters turn up, so lookups mostly stay in C."""

    def __missing__(self, code: int) -> int | str:
        cat = unicodedata.category(chr(code))
        value: int | str = " " if code != 10 and (cat == "So" or cat.startswith("C")) else code
        if len(self) < 8192:  # bounded: text can hold any of ~1.1M code points
            self[code] = value
        return value


_BLANKS = _Blanks()
# Both at once: no quote is blanked and no blanked character is a quote.
_QUOTES_AND_BLANKS = _Blanks(_QUOTES)


def _clean(text: str) -> str:
    if "```" in text:
        text = _CODE_BLOCK.sub(" ", text)
    # emoji and control characters carry no claims; control chars are also our sentinels
    if text.isascii() and text.isprintable() and "`" not in text:
        return text  # nothing here to change
    if "://" not in text:
        return text.translate(_QUOTES_AND_BLANKS)
    return _URL.sub(" ", text.translate(_QUOTES)).translate(_BLANKS)


def _last_word(line: str, start: int, end: int) -> str:
    """The last word of ``line[start:end]`` ("" if none), read from a short window before
    ``end`` when the word starts inside it (long sentences are not copied for their last
    word). Only the word: the window's text before it may be cut."""
    low = end - 48
    if low > start:
        words = line[low:end].rsplit(None, 1)
        if len(words) == 2:
            return words[1]
    words = line[start:end].rsplit(None, 1)
    return words[-1] if words else ""


def _factorial(line: str, at: int, end: int) -> bool:
    """A "!" right after a digit with no capital after it is a factorial ("3! equals 6",
    "5! / (2! * 3!)"), not the end of a sentence."""
    if at == 0 or not line[at - 1].isdecimal():
        return False
    after = line[end:].lstrip()[:1]
    return after != "" and not after.isupper()


def _trails_on(line: str, mark: str, end: int) -> bool:
    """An ellipsis the sentence goes on after ("I was thinking... maybe Lisbon", "the
    sequence 5, 8, 11, ... using the formula"): a lower-case letter, a closing bracket, a
    backslash or a comma, semicolon or colon next."""
    if not (mark.startswith("..") or "…" in mark):
        return False
    after = line[end:].lstrip()[:1]
    return after != "" and (after.islower() or after in ")]}\\,;:")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``; newlines always end one, abbreviations and initials do not."""
    out: list[str] = []
    for line in _clean(text).split("\n"):
        lead = line.lstrip()[:1]
        if not lead:
            continue  # a blank line
        if lead in ("-", "*", "•") or lead.isdecimal():
            line = _BULLET.sub("", line)
        if "  " in line or "\t" in line or "\f" in line or "\v" in line:
            line = _SPACES.sub(" ", line)
        line = line.strip()
        if "." not in line and "!" not in line and "?" not in line and "…" not in line:
            if line:  # no sentence ends inside (a heading, a list item): the line is one
                out.append(line)
            continue
        start = 0
        for m in _BOUNDARY.finditer(line):
            if m.group(1) == ".":
                token = _last_word(line, start, m.start()).lower().strip("(\"'")
                initials = "." in token and all(
                    len(p) <= 2 and p.isalpha() for p in token.split(".")
                )
                if (
                    token in _ABBREVIATIONS
                    or initials
                    or (len(token) == 1 and token.isalpha() and token != "i")
                ):
                    continue
            elif m.group(1) == "!" and _factorial(line, m.start(), m.end()):
                continue
            if _trails_on(line, m.group(1), m.end()):
                continue
            piece = line[start : m.end()].strip()
            if piece:
                out.append(piece)
            start = m.end()
        rest = line[start:].strip()
        if rest:
            out.append(rest)
    return out


# A clause boundary only where the right side starts with its own pronoun subject and the
# left side already has one ("I love cats and I hate dogs", not "my sister and I went").
_CLAUSE_SPLIT = re.compile(
    # every alternative starts at a space, comma or semicolon: saying so first is much quicker
    r"(?=[\s,;])(?:"
    r"\s*;\s*|,?\s+(?:and|but|so|plus|and then|then|while|whereas)\s+(?=(?:I|i|[Ww]e)\b)|,\s*now\s+(?=(?:I|i|[Ww]e)\b)|,\s*but\s+|,\s*and\s+(?=(?:[Mm]y|[Oo]ur)\b)"
    # a trailing verdict ("..., it was amazing") is its own (usually contentless) claim
    r"|,\s*(?=(?:[Ii]t|[Tt]hat|[Tt]his)(?:'s|\s+(?:is|was|has|had|felt|feels|looks|looked|sounds|sounded))\b)"
    # "my email is X and my phone is Y": the right side is plainly a clause of its own
    r"|(?P<free>,?\s+and\s+(?=(?:[Mm]y|[Oo]ur)(?:\s+[\w'-]+){1,3}\s+(?:is|are|was|were)\b))"
    r")"
)
# _CLAUSE_SPLIT cannot match without a semicolon, a comma or one of these words.
_CLAUSE_WORDS = wordset("and but so plus then while whereas now")
_HAS_SUBJECT = re.compile(r"\b(?:I|i|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|[Ii]t|[Yy]ou)\b")


def split_claims(sentence: str) -> list[str]:
    """Atomic claims of one sentence (conjoined independent clauses become separate claims)."""
    if ";" not in sentence and "," not in sentence and _CLAUSE_WORDS.isdisjoint(words_of(sentence)):
        return [sentence.strip()] if sentence.strip() else []
    claims: list[str] = []
    start = 0
    for m in _CLAUSE_SPLIT.finditer(sentence):
        left = sentence[start : m.start()]
        if m.group(0).strip() != ";" and m.group("free") is None and not _HAS_SUBJECT.search(left):
            continue
        claims.append(left)
        start = m.end()
    claims.append(sentence[start:])
    return [c.strip() for c in claims if c.strip()]
