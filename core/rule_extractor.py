"""Rule-based fact extraction: what users get offline, and the LLM extractor's fallback.

The rules live in ``core.extract``, one module per role; this module keeps the names other
code and tests import.
"""

from __future__ import annotations

from core.extract.claims import display_name
from core.extract.cues import classify
from core.extract.dates import Dated, resolve_dates
from core.extract.entities import find_entities
from core.extract.filler import is_filler
from core.extract.person import third_person_verb, to_third_person
from core.extract.rules import RULES_VERSION, extract_rules
from core.extract.sentences import split_claims, split_sentences
from core.extract.slots import detect_slot

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
