"""Benchmarks: every figure is reported next to a baseline measured in the same run."""
