"""Forgetting curves: how much of a memory survives ``t`` days without use.

Two pure models, selectable by name:

``weibull``     ``exp(-(t / (lam * stability)) ** k)``; ``lam=120`` days, ``k=1.5``. With
                ``k > 1`` forgetting starts slowly and then accelerates (a fresh memory is
                not lost overnight). Stability stretches the time scale.
``fsrs``        FSRS-style power law ``(1 + t / (9 * S)) ** -1`` with ``S`` in days: retention
                is 0.9 after ``S`` days and falls off with a long tail, not exponentially.

:func:`retention` reads the power law's ``S`` as ``stability * fsrs_days``. The default
``fsrs_days = 1`` is the formula as written (a new memory's stability of 1 is one day,
half-life nine days); the forgetting rules on the write side read stability the same way,
so both sides agree on what a memory retains. Weibull's half-life at stability 1 is ~94
days: the power law forgets new, unreinforced memories much faster.

The exponent stays -1 (FSRS v4's curve) rather than the -2 a design sketch had: with the
factor 1/9, -1 is what makes ``S`` the interval at which retention is 0.9 (-2 would give
0.81 there, so ``S`` would stop meaning what FSRS means by it); later FSRS versions went
the other way (-0.5, a flatter tail), not steeper.

Every function returns a value in [0, 1] and is monotone non-increasing in ``t``; a
negative ``t`` (an access recorded after "now" by a skewed clock) counts as 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

RetentionModel = Literal["weibull", "fsrs"]
RETENTION_MODELS: Final[tuple[RetentionModel, ...]] = ("weibull", "fsrs")

_MIN_STABILITY: Final = 1e-6  # a zero or negative stability would divide by zero
_MAX_EXP: Final = 700.0  # exp() of more overflows; exp(-exp(700)) is 0.0 anyway


@dataclass(frozen=True, slots=True)
class RetentionParams:
    lam: float = 120.0  # Weibull scale in days at stability 1
    k: float = 1.5  # Weibull shape
    fsrs_days: float = 1.0  # days of power-law S per unit of stability

    def __post_init__(self) -> None:
        if not (self.lam > 0.0 and self.k > 0.0 and self.fsrs_days > 0.0):
            raise ValueError("retention parameters must be positive")


DEFAULT_RETENTION: Final = RetentionParams()


def _elapsed(t_days: float) -> float:
    if math.isnan(t_days):
        raise ValueError("t_days is NaN")
    return t_days if t_days > 0.0 else 0.0


def _stability(stability: float) -> float:
    # NaN compares false, so it also lands on the floor
    return stability if stability > _MIN_STABILITY else _MIN_STABILITY


def weibull(t_days: float, *, stability: float = 1.0, lam: float = 120.0, k: float = 1.5) -> float:
    """``exp(-(t / (lam * stability)) ** k)``."""
    if not (lam > 0.0 and k > 0.0):
        raise ValueError("lam and k must be positive")
    ratio = _elapsed(t_days) / (lam * _stability(stability))
    if ratio == 0.0:
        return 1.0
    # ratio ** k through logs: a float power can overflow, exp of a large exponent is just 0
    exponent = k * math.log(ratio)
    return 0.0 if exponent > _MAX_EXP else math.exp(-math.exp(exponent))


def power_law(t_days: float, *, stability: float = 1.0) -> float:
    """FSRS-style ``(1 + t / (9 * S)) ** -1``, ``S`` in days."""
    t = _elapsed(t_days)
    return 1.0 / (1.0 + t / (9.0 * _stability(stability))) if math.isfinite(t) else 0.0


def retention(
    t_days: float,
    *,
    stability: float = 1.0,
    model: RetentionModel = "weibull",
    params: RetentionParams = DEFAULT_RETENTION,
) -> float:
    """Retention after ``t_days`` for a memory of ``stability`` under ``model``."""
    if model == "weibull":
        return weibull(t_days, stability=stability, lam=params.lam, k=params.k)
    if model == "fsrs":
        return power_law(t_days, stability=_stability(stability) * params.fsrs_days)
    raise ValueError(f"unknown retention model {model!r}")
