"""The benchmark contract: each ``bench/bench_*.py`` module exposes ``run() -> list[Figure]``."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure and the baseline it is judged against (measured in the same run)."""

    name: str
    value: float
    unit: str
    baseline: float | None = None
    baseline_name: str = ""
    better: Literal["higher", "lower"] = "higher"
    notes: str = ""

    @property
    def ratio(self) -> float | None:
        """value / baseline: above 1 means more than the baseline (good when better='higher')."""
        if self.baseline is None or self.baseline == 0:
            return None
        return self.value / self.baseline

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ratio"] = self.ratio
        return out
