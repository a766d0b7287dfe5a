"""How cost grows with size: one figure per measurement taken at sizes 10x apart.

The value is the cost per unit (a latency, or the inverse of a throughput) at the largest
size divided by the cost per unit at the smallest: 1.0 is flat, 100 would be linear in the
size for a per-item cost. The baseline is the same factor for the baseline measured at the
same sizes in the same run.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.figures import Figure


def short(n: int) -> str:
    """1000 -> '1k', 200000 -> '200k', 1000000 -> '1M'."""
    for div, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= div and n % div == 0:
            return f"{n // div}{suffix}"
    return str(n)


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def growth_figure(
    name: str,
    what: str,
    sizes: Sequence[int],
    values: Sequence[float],
    unit: str,
    baseline: Sequence[float],
    baseline_name: str,
    *,
    rate: bool,
    notes: str = "",
) -> Figure:
    """``values`` and ``baseline`` per size (a count of ``what``), in ``unit``; ``rate``: they are throughputs (the
    cost per unit is their inverse), else costs per unit (latencies)."""

    def factor(xs: Sequence[float]) -> float:
        return xs[0] / xs[-1] if rate else xs[-1] / xs[0]

    per_size = ", ".join(f"{short(n)}: {_fmt(v)}" for n, v in zip(sizes, values, strict=True))
    base = ", ".join(f"{short(n)}: {_fmt(v)}" for n, v in zip(sizes, baseline, strict=True))
    text = f"{unit} by size: {per_size}; baseline {base}"
    return Figure(
        f"{name} growth {short(sizes[0])}->{short(sizes[-1])} {what}",
        factor(values),
        "x cost/unit",
        factor(baseline),
        f"{baseline_name}, same sizes",
        better="lower",
        notes=f"{text}; {notes}" if notes else text,
    )
