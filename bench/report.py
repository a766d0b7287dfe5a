"""``python -m bench.report``: bench/results.json as a Markdown table (for the README)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.__main__ import fmt


def main() -> None:
    data = json.loads((Path(__file__).parent / "results.json").read_text())
    print("| figure | value | unit | baseline (same run) | baseline value | ratio |")
    print("|---|---|---|---|---|---|")
    for f in data["figures"]:
        print(
            f"| {f['name']} | {fmt(f['value'])} | {f['unit']} | {f['baseline_name'] or '-'} | "
            f"{fmt(f['baseline'])} | {fmt(f['ratio'])} |"
        )


if __name__ == "__main__":
    main()
