"""Signal scanner speed: ``core.signals.scan`` vs a naive loop of ~30 ``re.search`` calls.

Both run over the same few hundred generated ~300-character turns. Each turn's time is the
minimum of 15 consecutive calls (its least-disturbed measurement); the figures are the median
and p99 across turns.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable

from bench.figures import Figure
from memstream.core.signals import scan

# --- a deterministic generator of realistic turns --------------------------------------------

_PEOPLE = ("Ana", "Marcus", "Priya", "Tom", "Li Wei", "Sofia", "Jonas", "Fatima")
_PLACES = ("Lisbon", "Berlin", "Toronto", "Nairobi", "Osaka", "Austin", "Madrid")
_TECH = (
    "Kafka",
    "PostgreSQL",
    "Python",
    "React",
    "Redis",
    "Docker",
    "Kubernetes",
    "DuckDB",
    "Qdrant",
)
_ORGS = ("Google", "Spotify", "Stripe", "Shopify", "Netflix")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_WHEN = (
    "tomorrow",
    "next week",
    "yesterday",
    "last Tuesday",
    "in 3 days",
    "on May 5",
    "by Friday",
    "on 2024-06-12",
    "at 5pm",
    "this weekend",
)

_TEMPLATES: dict[str, tuple[str, ...]] = {
    "correction": (
        "Actually, the meeting is on {day}, not {day2}.",
        "No, it's {tech} we use, not {tech2}.",
        "Sorry, I meant the staging cluster, not production.",
        "Correction: the budget should be {n}k, the earlier number was wrong.",
        "That's not right, the timeout should be {n} seconds.",
    ),
    "preference": (
        "I prefer {tech} over {tech2} for this kind of work.",
        "I'd rather keep the tests small and fast.",
        "My favorite editor is still Vim, honestly.",
        "I hate long meetings that could have been an email.",
        "I like short answers with a code example.",
    ),
    "decision": (
        "We decided to go with {tech} for the event store.",
        "Let's go with the simpler design for now.",
        "I chose the managed service to save time.",
        "We agreed to ship the beta {when}.",
    ),
    "commitment": (
        "I will send the draft to {person} {when}.",
        "Remind me to renew the certificate {when}.",
        "The deadline for the report is {when}.",
        "I'm going to refactor the consumer {when}.",
    ),
    "fact": (
        "My name is {person} and I work at {org}.",
        "I live in {place} with my partner and two cats.",
        "The current version is {n}.{n2}, deployed last month.",
        "Our office is located in {place}, near the station.",
    ),
    "emotion": (
        "I'm really frustrated that the build keeps failing!",
        "This is amazing, thank you so much!",
        "Honestly I'm a bit worried about the migration.",
        "I'm not happy with how the review went.",
        "Wow, I did not expect that to work so well!!",
    ),
    "filler": (
        "Could you explain how consumer group rebalancing works in practice?",
        "I was reading about vector databases and how they index embeddings.",
        "What would be a good way to structure the tests for this module?",
        "The logs show a few warnings during startup but nothing critical.",
        "Can you summarise the main tradeoffs between the two approaches?",
        "It seems the second run took longer than the first one did.",
        "I looked at the dashboard and the numbers are roughly the same as before.",
    ),
}
_KINDS = tuple(_TEMPLATES)
# Filler is weighted up: most real turns are mostly ordinary prose.
_WEIGHTS = (1, 1, 1, 1, 1, 1, 4)


def _sentence(rng: random.Random) -> str:
    kind = rng.choices(_KINDS, _WEIGHTS)[0]
    day, day2 = rng.sample(_DAYS, 2)
    tech, tech2 = rng.sample(_TECH, 2)
    return rng.choice(_TEMPLATES[kind]).format(
        day=day,
        day2=day2,
        tech=tech,
        tech2=tech2,
        n=rng.randint(2, 90),
        n2=rng.randint(0, 12),
        person=rng.choice(_PEOPLE),
        place=rng.choice(_PLACES),
        org=rng.choice(_ORGS),
        when=rng.choice(_WHEN),
    )


def make_turns(count: int = 300, seed: int = 7, target: int = 300) -> list[str]:
    """``count`` turns of about ``target`` characters, mixing the signal kinds with filler."""
    rng = random.Random(seed)
    turns = []
    for _ in range(count):
        parts: list[str] = []
        size = 0
        while size < target - 40:
            s = _sentence(rng)
            parts.append(s)
            size += len(s) + 1
        turns.append(" ".join(parts))
    return turns


# --- the naive baseline: one re.search per pattern ---------------------------------------------

NAIVE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bactually\b",
        r"\bshould be\b",
        r"\b(?:was|is) wrong\b",
        r"\bno,? it'?s\b",
        r"\bi meant\b",
        r"\bcorrection:",
        r"\bi prefer\b",
        r"\bi (?:like|love)\b",
        r"\bi hate\b",
        r"\bmy favou?rite\b",
        r"\bi'?d rather\b",
        r"\bwe decided\b",
        r"\blet'?s go with\b",
        r"\bi chose\b",
        r"\bi will\b",
        r"\bi'?m going to\b",
        r"\bremind me\b",
        r"\bdeadline\b",
        r"\bby (?:monday|tuesday|wednesday|thursday|friday)\b",
        r"\bmy name is\b",
        r"\bi live in\b",
        r"\bi work at\b",
        r"\bversion is\b",
        r"\bis located\b",
        r"\b(?:yesterday|today|tomorrow)\b",
        r"\b(?:next|last) (?:week|month|monday|tuesday|friday)\b",
        r"\b\d{4}-\d{2}-\d{2}\b",
        r"\bin \d+ (?:days?|weeks?|hours?)\b",
        r"\bignore (?:all )?(?:previous|prior) instructions\b",
        r"\b(?:python|kafka|postgresql|react|docker)\b",
    )
)


def naive_scan(text: str) -> list[re.Match[str] | None]:
    return [p.search(text) for p in NAIVE_PATTERNS]


# --- measurement -----------------------------------------------------------------------------

REPS = 15


def _percentile(sorted_ns: list[int], q: float) -> float:
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))] / 1000.0


def _best_of(fn: Callable[[str], object], text: str, reps: int) -> int:
    clock = time.perf_counter_ns
    best = 1 << 62
    for _ in range(reps):
        start = clock()
        fn(text)
        best = min(best, clock() - start)
    return best


def measure(turns: list[str], reps: int = REPS) -> tuple[list[int], list[int]]:
    """Per-turn best-of-``reps`` consecutive calls, in nanoseconds, for (scan, naive), sorted.

    Consecutive calls (timeit style) time each function with its own tables in cache; which of
    the two goes first alternates turn by turn, and both run within milliseconds of each other,
    so background load (other work shares the cores) lands on them alike. The minimum is each
    turn's least-disturbed time.
    """
    for t in turns:  # warm-up: lazy allocations, first-touch page faults
        scan(t)
        naive_scan(t)
    ours: list[int] = []
    naive: list[int] = []
    for i, t in enumerate(turns):
        if i % 2:
            naive.append(_best_of(naive_scan, t, reps))
            ours.append(_best_of(scan, t, reps))
        else:
            ours.append(_best_of(scan, t, reps))
            naive.append(_best_of(naive_scan, t, reps))
    return sorted(ours), sorted(naive)


def run() -> list[Figure]:
    turns = make_turns()
    ours, naive = measure(turns)
    mean_len = sum(map(len, turns)) / len(turns)
    notes = f"{len(turns)} generated turns, mean {mean_len:.0f} chars, best of {REPS} consecutive calls per turn"
    return [
        Figure(
            "signal scan median",
            _percentile(ours, 0.5),
            "µs/turn",
            baseline=_percentile(naive, 0.5),
            baseline_name="naive 30x re.search loop",
            better="lower",
            notes=notes,
        ),
        Figure(
            "signal scan p99",
            _percentile(ours, 0.99),
            "µs/turn",
            baseline=_percentile(naive, 0.99),
            baseline_name="naive 30x re.search loop p99",
            better="lower",
            notes=notes,
        ),
    ]
