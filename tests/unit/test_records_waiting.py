"""The write path's idle rule waits while input records are queued past the last one read:
a busy worker is behind, its tenants are not quiet."""

from __future__ import annotations

from typing import NamedTuple

from memstream.streams.write_path import records_waiting


class TP(NamedTuple):
    topic: str
    partition: int


def test_queued_records_of_the_partition_mean_it_is_not_quiet() -> None:
    read_to = {TP("turns", 0): 41, TP("turns", 1): 9}
    ends = {TP("turns", 0): 100, TP("turns", 1): 10}
    assert records_waiting(read_to, 0, ends.get)  # 58 records after offset 41
    assert not records_waiting(read_to, 1, ends.get)  # offset 9 was the last one
    assert not records_waiting(read_to, 2, ends.get)  # nothing read there


def test_an_unknown_log_end_is_not_a_reason_to_wait() -> None:
    # not fetched yet, or the partition went to another worker: the idle rule applies
    assert not records_waiting({TP("turns", 0): 3}, 0, lambda tp: None)
