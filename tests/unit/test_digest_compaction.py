"""What a step of the partition digest's background compaction replaces (service.partition_digest):
everything as a base set when that is a bounded number of items, else a bounded slice of the
deltas, never an overflow marker; and when a digest needs compacting at all."""

from __future__ import annotations

import pytest

from chalicelib.domain import partition_digest as codec
from chalicelib.service import partition_digest
from chalicelib.store import digests

DATA = codec.encode([(("eu", "2020"), 1)])


def base(key: str, set_id: str = "s", chunk: int = 0, chunks: int = 1) -> digests.Piece:
    return digests.Piece(key, digests.BASE, DATA, set_id, chunk, chunks, False)


def delta(key: str) -> digests.Piece:
    return digests.Piece(key, digests.DELTA, DATA, None, None, None, False)


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partition_digest, "COMPACT_DELTAS", 3)
    monkeypatch.setattr(partition_digest, "STEP_PIECES", 5)


def test_a_few_deltas_need_no_compaction_many_do() -> None:
    assert not partition_digest.needs_compaction([base("1"), delta("2"), delta("3"), delta("4")])
    assert partition_digest.needs_compaction([base("1")] + [delta(str(k)) for k in range(2, 6)])
    sets = [base(str(k), set_id=f"s{k}") for k in range(5)]  # five base sets: concurrent compactors
    assert partition_digest.needs_compaction(sets)
    assert not partition_digest.needs_compaction(sets[:4])


def test_a_bounded_digest_is_replaced_whole_by_a_base_set() -> None:
    pieces = [base("1", chunk=0, chunks=2), base("2", chunk=1, chunks=2)] + [delta(str(k)) for k in range(3, 6)]
    replaced, as_base = partition_digest.compaction_step(pieces)
    assert as_base and replaced == pieces


def test_a_large_backlog_is_merged_a_slice_of_deltas_at_a_time() -> None:
    overflow = digests.Piece("3", digests.DELTA, None, None, None, None, True)
    pieces = [base("1"), delta("2"), overflow] + [delta(f"{k:02d}") for k in range(10, 20)]
    replaced, as_base = partition_digest.compaction_step(pieces)
    assert not as_base  # merged deltas: the base set stays whole, so completeness is unchanged
    assert [p.key for p in replaced] == ["2", "10", "11", "12", "13"]  # 5, never the overflow marker
    assert partition_digest._complete([p for p in pieces if p not in replaced] + [delta("99")]) is False
    assert partition_digest._complete([base("1")] + [delta("99")])


def test_a_read_past_its_share_of_the_budget_is_late_and_queues_the_compaction(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib import clock
    from chalicelib.domain import expressions
    from chalicelib.store.dynamo.models import TableItem

    queued: list[str] = []
    monkeypatch.setattr(partition_digest, "_queue", lambda kind, table: queued.append(kind))
    monkeypatch.setattr(partition_digest, "_remembered", {})
    monkeypatch.setattr(partition_digest, "_chunks", {})
    pieces = [base("1")] + [delta(str(k)) for k in range(2, 9)]
    monkeypatch.setattr(digests, "read", lambda table_uid, deadline=None, rows=True, pages=None: list(pieces))
    table = TableItem("db", "t")
    table.uid = "uid"
    bound = expressions.bind(expressions.parse_expression("region = 'eu'"), [("region", "string"), ("y", "int")])
    now = clock.monotonic()
    on_time = partition_digest.DigestSource(table, ["string", "int"], now + 60)
    assert on_time.usable and on_time.matching_keys(bound, None, None) is not None
    assert queued == [partition_digest.COMPACT_JOB]  # 7 deltas: more than 3
    partition_digest._remembered.clear()  # else its pages reuse what the first read found
    spent = partition_digest.DigestSource(table, ["string", "int"], now - 60)
    with pytest.raises(partition_digest.Late):
        spent.matching_keys(bound, None, None)  # one chunk, then the deadline is seen
    assert spent.late
    monkeypatch.setattr(digests, "read", lambda table_uid, deadline=None, rows=True, pages=None: None)  # pages outran it
    unread = partition_digest.DigestSource(table, ["string", "int"], now - 60)
    assert not unread.usable and unread.late
