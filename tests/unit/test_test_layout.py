"""The test tree has no package markers, so pytest imports each test module by
its basename: two files with one name break collection of the whole run."""

from collections import Counter
from pathlib import Path


def test_test_module_basenames_are_unique() -> None:
    root = Path(__file__).resolve().parents[1]
    names = Counter(p.name for p in root.rglob("test_*.py") if "__pycache__" not in p.parts)
    assert [n for n, c in names.items() if c > 1] == []
