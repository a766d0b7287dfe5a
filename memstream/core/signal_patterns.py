"""Pattern tables for the signal scanner and the one regex they compile into.

Why this shape: ~30 separate ``re.search`` calls cost ~150 µs per turn on the target machine,
because each call walks the whole text. Here every literal phrase (signal cues, emotion words
with their negated/intensified forms, calendar words, tech/organisation names, injection
triggers) is expanded into its accepted spellings and put into one character trie, rendered as
one regex that starts with a literal space. ``re`` jumps from space to space with its
literal-prefix fast path and walks the trie only there. Names, all-caps words and numbers
(including dates, times, durations) are extra branches of the same regex.

Each spelling maps to a prebuilt, immutable :class:`Hit`, so the scanner classifies a match
with one dict lookup and folds the hits in C. Building the table and compiling the regex take
~0.5-1 s at import; matching then costs a few µs per turn.

All tables are plain data in :mod:`core.signal_tables`, one module per role, re-exported
here; the scanner in :mod:`core.signals` owns the logic.
"""

from __future__ import annotations

from memstream.core.signal_tables.filters import (
    CODE_LINE_END_RE,
    CODE_LINE_RE,
    CODE_LINE_START_RE,
    EMOJI_RE,
    INJECTION_RE,
    MARKDOWN_LINE_RE,
    SLASH_COMMAND_RE,
    SYSTEM_TAGS,
    TAG_NAME_RE,
    TAG_RE,
    TRIVIAL_RE,
)
from memstream.core.signal_tables.hits import (
    ATTENTION_CUE,
    COMMITMENT,
    CORRECTION,
    DECISION,
    EMOJI_HITS,
    EMOTION,
    ENTITY,
    FACT,
    HITS,
    INJECTION_TRIGGER,
    NO_HIT,
    SPELLING_RECIPES,
    STRONG_PREFERENCE,
    TEMPORAL,
    WEAK_PREFERENCE,
    Entity,
    Evidence,
    Hit,
    Recipe,
)
from memstream.core.signal_tables.lexer import (
    LEX_RE,
    LEX_SEPARATORS,
    NOT_NAMES_CAPITALISED,
    TIME_UNITS,
)
from memstream.core.signal_tables.names import CASED_ENTITIES, NOT_NAMES, ORGS, SHOUT_WORDS, TECH
from memstream.core.signal_tables.phrases import (
    ATTENTION_PHRASES,
    COMMITMENT_PHRASES,
    CORRECTION_PHRASES,
    DECISION_PHRASES,
    FACT_PHRASES,
    INJECTION_TRIGGERS,
    NEUTRAL_PHRASES,
    PREFERENCE_PHRASES,
    STRONG_PREFERENCES,
)
from memstream.core.signal_tables.temporal import (
    AMBIGUOUS_MONTHS,
    DEADLINE_PREFIXES,
    DEADLINE_TARGETS,
    TEMPORAL_PHRASES,
    UNAMBIGUOUS_MONTHS,
)
from memstream.core.signal_tables.words import (
    COMMON_WEIGHT,
    COMMON_WORDS,
    SHOUTS,
    STOP_WEIGHT,
    STOPWORDS,
    WORD_WEIGHT,
)

__all__ = [
    "AMBIGUOUS_MONTHS",
    "ATTENTION_CUE",
    "ATTENTION_PHRASES",
    "CASED_ENTITIES",
    "CODE_LINE_END_RE",
    "CODE_LINE_RE",
    "CODE_LINE_START_RE",
    "COMMITMENT",
    "COMMITMENT_PHRASES",
    "COMMON_WEIGHT",
    "COMMON_WORDS",
    "CORRECTION",
    "CORRECTION_PHRASES",
    "DEADLINE_PREFIXES",
    "DEADLINE_TARGETS",
    "DECISION",
    "DECISION_PHRASES",
    "EMOJI_HITS",
    "EMOJI_RE",
    "EMOTION",
    "ENTITY",
    "FACT",
    "FACT_PHRASES",
    "HITS",
    "INJECTION_RE",
    "INJECTION_TRIGGER",
    "INJECTION_TRIGGERS",
    "LEX_RE",
    "LEX_SEPARATORS",
    "MARKDOWN_LINE_RE",
    "NEUTRAL_PHRASES",
    "NOT_NAMES",
    "NOT_NAMES_CAPITALISED",
    "NO_HIT",
    "ORGS",
    "PREFERENCE_PHRASES",
    "SHOUTS",
    "SHOUT_WORDS",
    "SLASH_COMMAND_RE",
    "SPELLING_RECIPES",
    "STOPWORDS",
    "STOP_WEIGHT",
    "STRONG_PREFERENCE",
    "STRONG_PREFERENCES",
    "SYSTEM_TAGS",
    "TAG_NAME_RE",
    "TAG_RE",
    "TECH",
    "TEMPORAL",
    "TEMPORAL_PHRASES",
    "TIME_UNITS",
    "TRIVIAL_RE",
    "UNAMBIGUOUS_MONTHS",
    "WEAK_PREFERENCE",
    "WORD_WEIGHT",
    "Entity",
    "Evidence",
    "Hit",
    "Recipe",
]
