"""``python -m bench [NAME ...]``: run the benchmarks, print one table, write bench/results.json."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.figures import Figure

HERE = Path(__file__).parent


def discover() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))


def fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "names", nargs="*", help="benchmark modules to run (default: all), e.g. signals"
    )
    parser.add_argument("--out", default=str(HERE / "results.json"))
    args = parser.parse_args(argv)
    modules = discover()
    if args.names:
        modules = [m for m in modules if m.removeprefix("bench_") in args.names or m in args.names]
    figures: list[tuple[str, Figure]] = []
    failures: dict[str, str] = {}
    for name in modules:
        started = time.perf_counter()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        try:
            mod = importlib.import_module(f"bench.{name}")
            figures.extend((name, f) for f in mod.run())
        except Exception as e:  # one broken benchmark must not hide the others' figures
            failures[name] = f"{type(e).__name__}: {e}"
            print(f"  FAILED: {failures[name]}", file=sys.stderr)
        print(f"  {time.perf_counter() - started:.1f}s", file=sys.stderr)
    rows = [("figure", "value", "unit", "baseline", "baseline value", "ratio")]
    for _mod, f in figures:
        rows.append(
            (f.name, fmt(f.value), f.unit, f.baseline_name or "-", fmt(f.baseline), fmt(f.ratio))
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    result: dict[str, Any] = {
        "generated_at": datetime.now(UTC).isoformat(),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "figures": [dict(f.as_dict(), module=m) for m, f in figures],
        "failures": failures,
    }
    out = Path(args.out)
    previous = json.loads(out.read_text()) if out.exists() and args.names else None
    if previous:
        # A partial run keeps the other modules' latest figures.
        kept = [f for f in previous.get("figures", []) if f.get("module") not in modules]
        result["figures"] = [*kept, *result["figures"]]
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {out}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
