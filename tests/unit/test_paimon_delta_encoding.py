"""How a stats operation's deltas are stored (store/paimon.py): by column when every spec has the
same keys, else as PartitionStatistics objects; both read back as they were, and items written as
objects before stay readable."""

from __future__ import annotations

import pytest

from chalicelib.domain.paimon.snapshots import PartitionDelta
from chalicelib.errors import InvalidInputException
from chalicelib.store import paimon
from chalicelib.store.documents import decode_document, encode_document


def _three_keys(count: int) -> list[PartitionDelta]:
    return [PartitionDelta({"dt": f"2024-{1 + n // 720 % 12:02d}-{1 + n // 24 % 28:02d}", "hr": f"{n % 24:02d}",
                            "src": f"app{n % 7}"}, 1234 + n * 7 % 1000, 567890 + n * 13 % 99999, 3 - n % 5,
                           1732000000000 + n * 1000, n % 3) for n in range(count)]


def test_deltas_with_the_same_keys_are_stored_by_column_and_read_back_in_order() -> None:
    deltas = _three_keys(500)
    stored = paimon._encode_deltas(deltas)
    assert isinstance(decode_document(stored), dict)
    assert paimon._deltas(stored) == deltas


@pytest.mark.parametrize("deltas", [
    [],
    [PartitionDelta({})],
    [PartitionDelta({"a": "1"}, 1), PartitionDelta({"b": "2"}, 2)],
    [PartitionDelta({"a": "1"}, 1), PartitionDelta({"a": "1", "b": "2"}, 2)],
])
def test_other_deltas_read_back_as_they_were(deltas: list[PartitionDelta]) -> None:
    assert paimon._deltas(paimon._encode_deltas(deltas)) == deltas


def test_deltas_stored_as_objects_before_stay_readable() -> None:
    deltas = _three_keys(3)
    old = encode_document([d.to_json() for d in deltas], "commit statistics")
    assert paimon._deltas(old) == deltas


def test_a_commit_may_name_about_48000_partitions_of_three_keys_and_more_is_refused_by_name() -> None:
    assert len(paimon._encode_deltas(_three_keys(45_000))) < 380_000
    with pytest.raises(InvalidInputException, match="commit statistics definition is too large"):
        paimon._encode_deltas(_three_keys(70_000))
