"""GetPartitions segments: contiguous bucket runs, disjoint, covering, and even."""

from __future__ import annotations

import pytest

from chalicelib.domain.partition_keys import SEGMENT_MODULUS, segment_buckets, segment_of


@pytest.mark.parametrize("total", range(1, 11))
def test_segments_tile_every_bucket_exactly_once_and_evenly(total: int) -> None:
    runs = [segment_buckets(total, number) for number in range(total)]
    assert runs[0][0] == 0 and runs[-1][1] == SEGMENT_MODULUS - 1
    for (_, high), (low, _) in zip(runs, runs[1:]):
        assert low == high + 1  # contiguous, no gap, no overlap
    assert {high - low + 1 for low, high in runs} == {SEGMENT_MODULUS // total}


def test_buckets_spread_real_keys() -> None:
    keys = [f"US\x01{year}\x01{month:02d}\x01" for year in range(2000, 2025) for month in range(1, 13)]
    counts = [0] * 10
    for key in keys:
        bucket = segment_of(key)
        counts[next(n for n in range(10) if segment_buckets(10, n)[0] <= bucket <= segment_buckets(10, n)[1])] += 1
    assert min(counts) > len(keys) / 10 / 2, counts
