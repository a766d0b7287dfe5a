"""Rule-based fact extraction: what users get offline, and the LLM extractor's fallback.

The rules live in ``core.extract``, one module per role; this module keeps the names other
code and tests import.
"""

from __future__ import annotations

from memstream.core.extract.claims import display_name
from memstream.core.extract.cues import classify
from memstream.core.extract.dates import Dated, resolve_dates
from memstream.core.extract.entities import find_entities
from memstream.core.extract.filler import is_filler
from memstream.core.extract.person import third_person_verb, to_third_person
from memstream.core.extract.rules import RULES_VERSION, extract_rules
from memstream.core.extract.sentences import split_claims, split_sentences
from memstream.core.extract.slots import detect_slot

__all__ = [
    "RULES_VERSION",
    "Dated",
    "classify",
    "detect_slot",
    "display_name",
    "extract_rules",
    "find_entities",
    "is_filler",
    "resolve_dates",
    "split_claims",
    "split_sentences",
    "third_person_verb",
    "to_third_person",
]
