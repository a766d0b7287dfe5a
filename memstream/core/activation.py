"""Activation: how "warm" a memory is from its use, and from what it is used with.

Base-level activation (ACT-R). A memory used ``n`` times over a lifetime of ``L`` days,
most recently ``t`` days ago, has activation ``B = ln(sum_j t_j ** -d)`` over its uses
``t_j``. Access times are not kept, only the count and the last one, so the sum uses
Petrov's hybrid approximation: the last use exactly, the other ``n - 1`` spread evenly
over the lifetime::

    B = ln( t**-d + (n - 1) * (L**(1-d) - t**(1-d)) / ((1 - d) * (L - t)) )

With ``n = 1`` this is ``-d * ln(t)``, the ``ln(n) - d*ln(age)`` shape. ``d = 0.5`` is
ACT-R's default decay. ``B`` is squashed to [0, 1] with a logistic ``1 / (1 + exp(-(B -
tau) / s))``: ``tau = 0`` puts one use a day ago at 0.5, ten uses over a month with the
last yesterday near 0.8, one use a year ago near 0.05.

Hebbian co-activation. Memories retrieved together repeatedly are wired together: a
candidate that was co-retrieved at least ``min_count`` (3) times with another of this
query's top candidates gets ``c / (c + 3)`` for its strongest such link ``c`` (0.5 at 3,
saturating towards 1), else 0. Counts are keyed by :func:`pair` (the sorted id pair); a
count stored under the reversed pair is added in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

MIN_AGE_DAYS: Final = 1.0 / 1440.0  # one minute: ln(0) is undefined and "just now" is enough


@dataclass(frozen=True, slots=True)
class ActivationParams:
    decay: float = 0.5  # ACT-R d
    tau: float = 0.0  # activation squashed to 0.5
    s: float = 1.0  # logistic temperature
    hebbian_min_count: int = 3
    hebbian_half: float = 3.0  # c / (c + half)

    def __post_init__(self) -> None:
        if not 0.0 < self.decay < 1.0:
            raise ValueError("decay must be in (0, 1)")
        if not (self.s > 0.0 and self.hebbian_half > 0.0):
            raise ValueError("s and hebbian_half must be positive")


DEFAULT_ACTIVATION: Final = ActivationParams()


def base_level(uses: int, age_days: float, since_last_days: float, *, decay: float = 0.5) -> float:
    """ACT-R base-level activation ``B`` (unbounded). ``uses`` counts the creation too;
    fewer than one is read as one. Ages are floored at a minute."""
    n = max(uses, 1)
    # NaN ages (NaN != NaN) read as "a day"; the floor keeps ln away from 0
    t = max(since_last_days, MIN_AGE_DAYS) if since_last_days == since_last_days else 1.0
    life = max(age_days, t) if age_days == age_days else t
    total = t**-decay
    if n > 1:
        if not math.isfinite(life):
            spread = 0.0  # uses spread over an unbounded lifetime weigh nothing
        elif life > t:
            # (life^(1-d) - t^(1-d)) / ((1-d)(life - t)), written without the cancellation
            # of two near-equal powers when the last use is close to the creation
            x = math.log1p((t - life) / life)  # ln(t / life) < 0
            spread = life**-decay * math.expm1((1.0 - decay) * x) / ((1.0 - decay) * math.expm1(x))
        else:  # all uses at about the same moment
            spread = t**-decay
        total += (n - 1) * spread
    return math.log(total) if total > 0.0 else -math.inf


def squash(b: float, *, tau: float = 0.0, s: float = 1.0) -> float:
    """Logistic map of an activation to [0, 1]; overflow-safe at both ends."""
    z = (b - tau) / s
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)  # z < 0: no overflow
    return e / (1.0 + e)


def activation(
    access_count: int,
    age_days: float,
    since_last_days: float,
    params: ActivationParams = DEFAULT_ACTIVATION,
) -> float:
    """Squashed base-level activation in [0, 1]; ``access_count`` excludes the creation."""
    b = base_level(access_count + 1, age_days, since_last_days, decay=params.decay)
    return squash(b, tau=params.tau, s=params.s)


def pair(a: str, b: str) -> tuple[str, str]:
    """The order-free key of a co-activation count."""
    return (a, b) if a <= b else (b, a)


def hebbian(
    memory_id: str,
    peers: Iterable[str],
    counts: Mapping[tuple[str, str], int],
    params: ActivationParams = DEFAULT_ACTIVATION,
) -> float:
    """Co-activation boost in [0, 1) from the strongest qualifying link to a peer."""
    best = 0
    for peer in peers:
        if peer != memory_id:
            n = counts.get((memory_id, peer), 0) + counts.get((peer, memory_id), 0)
            best = max(best, n)
    if best < params.hebbian_min_count:
        return 0.0
    return best / (best + params.hebbian_half)
