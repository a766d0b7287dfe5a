"""The dream cycle: periodic upkeep of a namespace's memories, as pure planning rules.

Each step is a pure function of memory views, event time ``at`` and a config, returning
planned ``Action``s (each with a ``rule`` and a JSON-ready ``evidence`` dict) and how many
it deferred because of the per-cycle cap. ``plan_cycle`` runs the steps in order on a
working copy (``apply_actions``), so a later step sees what an earlier one decided, and
repeats the pass while it plans something (at most ``max_passes``): a merge can make an
earlier rule apply (the merged text now names what a near-duplicate names), and settling
that now is what makes planning again after applying the plan come back empty.

Caps: at most ``max_actions_per_step`` actions per step and cycle (``max_rehearsals`` for
rehearsal); the rest is reported in ``deferred`` and comes back next cycle. A merge, and a
summary with the summary it replaces, are planned whole; the first one even when larger
than the cap, so a big cluster is never stuck.

Exempt from every rule: memories that are not ``active``, and pinned, immutable or
flashbulb ones (they appear in no action). Only "live" memories (active, tier not
``peripheral``) take part in forgetting and consolidation.

Public API
----------
``MemoryView`` (+ ``MemoryView.from_state(state, usage, ...)``), ``Usage``,
``LifecycleConfig``, ``Action``, ``StepResult``, ``CycleReport``, ``STEPS``.

``plan_cycle(memories, usage, vectors, at, config=LifecycleConfig()) -> CycleReport``
    ``CycleReport(at, actions, counts, deferred, passes)``: counts and deferred per step.
    ``usage`` (memory id -> ``Usage``) overrides the views' access fields; ``vectors``
    (memory id -> embedding) feeds the similarity rules, memories without one skip them.
``apply_actions(memories, actions, at) -> tuple[MemoryView, ...]``
    The views after the actions (created memories appended). Applying a cycle's plan and
    planning again at the same ``at`` plans nothing, unless a cap deferred work.
``plan_step(step, memories, vectors, at, config) -> StepResult``: one step alone; also
``plan_decay``, ``plan_rehearsal``, ``plan_expiry`` (memories, at, config) and
``plan_forgetting``, ``plan_consolidation`` (memories, vectors, at, config),
``plan_summaries``, ``plan_archival`` (memories, at, config).
``retention(memory, at, config) -> float`` (on the tier's clock), ``tier_rate(memory, config)``

Steps, with action ``kind`` and the event the shell writes for it:

1. ``plan_decay``: Q drifts toward 0.5 (``core.qlearning.utility_decay``) over the days
   since the later of last access, last Q update and creation; retention is recomputed:
   Weibull ``exp(-(t / (120 S))^1.5)`` or FSRS ``(1 + t / (9 S))^-1`` (``retention_model``,
   the ``retention_model`` setting), S = stability, t = days since last access (or
   creation) times the tier's rate (``tier_rate``): the design's working 10x, episodic 3x,
   semantic 1x, dormant frozen, mapped as trivia (importance < 0.3) in the working tier
   10x, the rest of the working tier 3x, core 1x, peripheral frozen (no decay, no
   rehearsal). FSRS keeps the exponent -1 (FSRS v4): with the factor 1/9 it is what makes
   S the days until retention 0.9; -2 with the same factor would give 0.81 there.
   kind ``decay`` (``q_after`` when Q moved by at least ``min_change``: ``QValueUpdated``;
   ``retention_after``: the shell's projection).
2. ``plan_rehearsal``: retention < 0.3 (on the tier's clock) and worth keeping: feedback
   found it useful (Q > 0.5; every memory starts at 0.5 and unrated ones drift back
   there, so 0.5 says nothing) or importance >= 0.6 (the rest fade: ``core.tiers``,
   rule ``faded``): stability x1.5, or enough to bring retention back to 0.8 if more, at
   most ``max_stability`` (spaced repetition: each next rehearsal ~3x later than the
   last); at most ``max_rehearsals`` per cycle, most useful first. kind ``reinforce``
   (``MemoryReinforced``, reason ``rehearsal``).
3. ``plan_expiry``: ``valid_until`` passed -> ``supersede`` (``MemorySuperseded``);
   confidence < 0.40, never reinforced, 30+ days old -> ``archive``; a commitment
   resolved 90+ days ago (``resolved_at``) -> ``archive`` (``MemoryArchived``). An open
   commitment's ``valid_until`` is its due date: overdue it stays pending, 90+ days past
   due -> ``supersede`` (``stale_commitment``, ending at the cycle's time, not the due
   date), so history questions still reach it.
4. ``plan_forgetting`` (kind ``dormant``: ``TierChanged`` to peripheral), in order:
   ``contradiction``: same subject and slot and neither text's words contain the
   other's, or a ``contradicts`` link: the older side;
   ``utility_floor``: Q < 0.15 and 30+ days unused;
   ``redundancy``: cosine > 0.9 within namespace and category, not append categories,
   not about distinct items (see step 5): the lower-utility side;
   ``capacity``: live memories of a namespace above ``capacity_of(namespace)``
   (summaries not counted; the ``memory_capacity`` setting, 10,000 by default, 0 for no
   limit): the lowest utility first.
5. ``plan_consolidation``: merge categories (preference, entity, principle, and facts
   with the same subject) cluster by cosine > 0.85 within namespace and category, around
   the most useful memory, joining only if compatible with every member (same subject
   and slot when both set; entity sets and capitalised-name sets nested, so "Nike Air
   Max" and "Nike Pegasus" stay apart); the leader gets the merged text (clauses
   deduplicated, covered clauses dropped) -> ``rewrite`` (``MemoryUpdated``); the others
   ``archive`` with ``merged_into``. Repeated until no cluster forms. Append categories
   (moment, decision, any ``episode``) only lose exact duplicates (normalized text): the
   later ones ``archive`` into the earliest.
6. ``plan_summaries``: a category (not ``summary``) with more than 10 live memories
   gets a summary memory -> ``create`` (``MemoryCreated``, category ``summary``,
   subject = the category); made again only when the category grew by a fifth since the
   last summary, or 30 days later with any new member (``summary_refresh_growth``,
   ``summary_refresh_after``); an older summary is superseded by the new one.
7. ``plan_archival``: older than 90 days, importance < 0.3 (trivia on the extractor's
   spectrum, ``core.importance``), accessed <= 2 times, never consolidated (stability
   <= 1.0: not captured by a strong memory that followed it, not said again), and
   the category not commitment, preference, decision, principle, correction or
   summary, and no reply of the assistant's (its importance only ranks it below what the
   user said; archived as trivia, 536 of BEAM dev's 600 archivals were replies, the
   evidence of its summary questions) -> ``archive``.

Utility, wherever "lowest utility" decides, is Q, then importance, access count,
creation time and id (ascending = forgotten first).
"""

from __future__ import annotations

from memstream.core.lifecycle._actions import (
    apply_actions as apply_actions,
)
from memstream.core.lifecycle._consolidation import (
    plan_consolidation as plan_consolidation,
)
from memstream.core.lifecycle._consolidation import (
    plan_summaries as plan_summaries,
)
from memstream.core.lifecycle._consolidation import (
    summary_id as summary_id,
)
from memstream.core.lifecycle._cycle import (
    plan_cycle as plan_cycle,
)
from memstream.core.lifecycle._cycle import (
    plan_step as plan_step,
)
from memstream.core.lifecycle._cycle import (
    with_usage as with_usage,
)
from memstream.core.lifecycle._decay import (
    plan_decay as plan_decay,
)
from memstream.core.lifecycle._decay import (
    plan_expiry as plan_expiry,
)
from memstream.core.lifecycle._decay import (
    plan_rehearsal as plan_rehearsal,
)
from memstream.core.lifecycle._forgetting import (
    plan_archival as plan_archival,
)
from memstream.core.lifecycle._forgetting import (
    plan_forgetting as plan_forgetting,
)
from memstream.core.lifecycle._model import (
    DEFAULT_CONFIG as DEFAULT_CONFIG,
)
from memstream.core.lifecycle._model import (
    FLASHBULB_AROUSAL as FLASHBULB_AROUSAL,
)
from memstream.core.lifecycle._model import (
    STEPS as STEPS,
)
from memstream.core.lifecycle._model import (
    Action as Action,
)
from memstream.core.lifecycle._model import (
    ActionKind as ActionKind,
)
from memstream.core.lifecycle._model import (
    CycleReport as CycleReport,
)
from memstream.core.lifecycle._model import (
    LifecycleConfig as LifecycleConfig,
)
from memstream.core.lifecycle._model import (
    MemoryView as MemoryView,
)
from memstream.core.lifecycle._model import (
    Step as Step,
)
from memstream.core.lifecycle._model import (
    StepResult as StepResult,
)
from memstream.core.lifecycle._model import (
    Usage as Usage,
)
from memstream.core.lifecycle._model import (
    Vectors as Vectors,
)
from memstream.core.lifecycle._model import (
    trivia as trivia,
)
from memstream.core.lifecycle._model import (
    utility_key as utility_key,
)
from memstream.core.lifecycle._retention import (
    retention as retention,
)
from memstream.core.lifecycle._retention import (
    retention_for as retention_for,
)
from memstream.core.lifecycle._retention import (
    stability_for as stability_for,
)
from memstream.core.lifecycle._retention import (
    tier_rate as tier_rate,
)
from memstream.core.lifecycle._text import (
    Item as Item,
)
from memstream.core.lifecycle._text import (
    clauses as clauses,
)
from memstream.core.lifecycle._text import (
    compatible as compatible,
)
from memstream.core.lifecycle._text import (
    distinct_items as distinct_items,
)
from memstream.core.lifecycle._text import (
    merge_clauses as merge_clauses,
)
from memstream.core.lifecycle._text import (
    merged_text as merged_text,
)
from memstream.core.lifecycle._text import (
    names as names,
)
