"""Retention on each tier's clock: how much of a memory is left after the days since its last use."""

from __future__ import annotations

import math
from datetime import datetime

from memstream.core.lifecycle._model import (
    DEFAULT_CONFIG,
    LifecycleConfig,
    MemoryView,
)
from memstream.core.qlearning import days_between as _days


def _since_use(m: MemoryView) -> datetime:
    return (
        m.last_access
        if m.last_access is not None and m.last_access > m.created_at
        else m.created_at
    )


def tier_rate(m: MemoryView, config: LifecycleConfig = DEFAULT_CONFIG) -> float:
    """How fast ``m`` forgets, by the design's four tiers mapped onto this project's
    (``core.tiers.SCHEME``): peripheral is dormant (frozen), core is semantic (1x), the
    working tier is episodic (3x), and trivia in it (importance under the archival
    threshold: small talk) is the design's working memory (10x)."""
    if m.tier == "peripheral":
        return config.rate_dormant
    if m.tier == "core":
        return config.rate_semantic
    if m.importance < config.archive_importance_below:
        return config.rate_working
    return config.rate_episodic


def _forgetting_days(m: MemoryView, at: datetime, config: LifecycleConfig) -> float:
    return _days(_since_use(m), at) * max(tier_rate(m, config), 0.0)


def retention(m: MemoryView, at: datetime, config: LifecycleConfig = DEFAULT_CONFIG) -> float:
    """Retention at ``at`` on the tier's clock; a frozen (dormant) memory keeps the value it
    was last given, or its semantic-rate value when it never had one."""
    if tier_rate(m, config) <= 0.0:
        if m.retention is not None:
            return m.retention
        return retention_for(m.stability, _days(_since_use(m), at) * config.rate_semantic, config)
    return retention_for(m.stability, _forgetting_days(m, at, config), config)


def retention_for(stability: float, days: float, config: LifecycleConfig) -> float:
    s = max(stability, 1e-9)
    if config.retention_model == "fsrs":
        return 1.0 / (1.0 + days / (config.fsrs_scale_days * s))
    return math.exp(-((days / (config.weibull_scale_days * s)) ** config.weibull_shape))


def stability_for(target: float, days: float, config: LifecycleConfig) -> float:
    """The stability at which retention after ``days`` is ``target`` (inverse of the curve)."""
    if days <= 0.0:
        return 0.0
    if config.retention_model == "fsrs":
        return days / (config.fsrs_scale_days * (1.0 / target - 1.0))
    scale = float((-math.log(target)) ** (1.0 / config.weibull_shape))
    return days / (config.weibull_scale_days * scale)
