"""The partition digest of a table: a compact, column-packed projection of its partitions'
values that an unindexed listing evaluates first, fetching only the matching partitions by key
(docs/design.md, "Partitions and indexes"; the format is ``domain.partition_digest``).

The digest is a *superset*: every live partition's values are in it (maybe next to stale rows
of partitions deleted or changed since), because every transaction that creates a partition or
changes its values also puts one delta item with them (``delta_action``). Readers fetch each
candidate by key and re-check it, so a stale row costs a miss, never a wrong answer.

Items are keyed by time-ordered ids. Compaction and rebuild write their base set under keys
greater than every item they read, *before* deleting exactly those items. So a reader paging
through the digest in key order never loses rows: an item deleted before the reader reached it
had its rows copied, before the delete, into items further ahead. Deltas written meanwhile by
concurrent writers were not read, so they are not deleted.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from chalicelib import clock, metrics
from chalicelib.domain import partition_digest as codec
from chalicelib.store.dynamo import dynamo_json as dj
from chalicelib.store.dynamo.config import table_connection
from chalicelib.store.dynamo.models import PartitionDigestItem, PartitionItem
from chalicelib.store.records import Table
from chalicelib.store.dynamo.ranges import Record, record_type

DELTA, BASE = "delta", "base"
_DIGESTS = PartitionDigestItem.Meta.table_name
_PARTITIONS = PartitionItem.Meta.table_name
_TS_DIGITS = 20


def new_key(above: Optional[str] = None) -> str:
    """A fresh item key: the time in nanoseconds (20 digits), then randomness; with ``above``,
    greater than that key whatever the clocks say."""
    stamp = time.time_ns()
    if above is not None:
        stamp = max(stamp, int(above[:_TS_DIGITS]) + 1)
    return f"{stamp:0{_TS_DIGITS}d}{uuid.uuid4().hex[:12]}"


# Told of every delta built (the table it is for): service.partition_digest counts them, so that
# a bulk writer has the digest compacted in the background instead of by its first reader.
_delta_listeners: list[Callable[[Table], None]] = []


def on_delta(listener: Callable[[Table], None]) -> None:
    """Call ``listener(table)`` for every delta ``delta_action`` builds (it must not raise)."""
    _delta_listeners.append(listener)


def delta_action(table: Table, rows: Sequence[codec.Row]) -> dict[str, Any]:
    """The Put of one delta item holding ``rows`` (values, segment), for the transaction that
    writes those partitions of ``table``. Rows too large for one item become an overflow marker."""
    for listener in _delta_listeners:
        listener(table)
    data = codec.encode(rows)
    item = {"table_uid": dj.s(table.uid), "key": dj.s(new_key()), "kind": dj.s(DELTA)}
    if len(data) > codec.MAX_CHUNK_BYTES:
        item["overflow"] = dj.n(1)
    else:
        item["data"] = dj.b(data)
    return dj.put(_DIGESTS, item)


def empty_base(table_uid: str) -> PartitionDigestItem:
    """The digest of a table just created: an empty, complete base set (saved with the table)."""
    return PartitionDigestItem(table_uid, new_key(), kind=BASE, data=codec.encode([]),
                               set_id=uuid.uuid4().hex, chunk=0, chunks=1)


@dataclass
class Piece:
    """One digest item as read."""

    key: str
    kind: str
    data: Optional[bytes]
    set_id: Optional[str]
    chunk: Optional[int]
    chunks: Optional[int]
    overflow: bool


# What an outline reads: everything but the packed rows.
_OUTLINE = ["table_uid", "key", "kind", "set_id", "chunk", "chunks", "overflow"]


def read(table_uid: str, deadline: Optional[float] = None, rows: bool = True,
         pages: Optional[list[int]] = None) -> Optional[list[Piece]]:
    """Every digest item of the table, in key order (strongly consistent; counted as read).
    With ``deadline`` (``clock.monotonic``): None when it passes before the last page is read
    (a digest of thousands of deltas takes several 1 MB pages). ``rows=False``: the outline
    only, every piece's ``data`` None (a reader that already evaluated these very items, which
    never change under one key, needs no more; at 100k partitions the rows are 170 KB a read).
    ``pages``: gets the number of Query pages read appended (one page is one consistent read of
    every item; across pages a write in flight may be passed, see docs/design.md)."""
    table = table_connection(PartitionDigestItem)
    pieces: list[Piece] = []
    start = None
    read_pages = 0
    while True:
        if start and deadline is not None and clock.monotonic() >= deadline:
            return None
        page = table.query(table_uid, consistent_read=True, exclusive_start_key=start,
                           attributes_to_get=None if rows else _OUTLINE)
        metrics.count_read(page.get("ScannedCount", 0))
        for raw in page.get("Items", []):
            pieces.append(Piece(
                raw["key"]["S"], raw["kind"]["S"], raw["data"]["B"] if "data" in raw else None,
                raw["set_id"]["S"] if "set_id" in raw else None,
                int(raw["chunk"]["N"]) if "chunk" in raw else None,
                int(raw["chunks"]["N"]) if "chunks" in raw else None, "overflow" in raw))
        start = page.get("LastEvaluatedKey")
        read_pages += 1
        if not start:
            if pages is not None:
                pages.append(read_pages)
            return pieces


def partition_rows(table_uid: str) -> list[codec.Row]:
    """The (values, segment) of every partition of the table, from the partitions themselves
    (a Query projecting just those two attributes; strongly consistent)."""
    table = table_connection(PartitionItem)
    rows: list[codec.Row] = []
    start = None
    while True:
        page = table.query(table_uid, consistent_read=True, exclusive_start_key=start,
                           attributes_to_get=["values", "segment"])
        metrics.count_read(page.get("ScannedCount", 0))
        for raw in page.get("Items", []):
            rows.append((tuple(v["S"] for v in raw["values"]["L"]), int(raw["segment"]["N"])))
        start = page.get("LastEvaluatedKey")
        if not start:
            return rows


def write_base(table_uid: str, chunks: Sequence[bytes], above: Optional[str]) -> None:
    """Store ``chunks`` as one base set, every key greater than ``above``."""
    set_id = uuid.uuid4().hex
    first = new_key(above)
    with PartitionDigestItem.batch_write() as batch:
        for number, data in enumerate(chunks):
            # One time-ordered prefix for the set, the chunk number after it: all above ``above``.
            batch.save(PartitionDigestItem(table_uid, f"{first}{number:05d}", kind=BASE, data=data,
                                           set_id=set_id, chunk=number, chunks=len(chunks)))


def write_deltas(table_uid: str, chunks: Sequence[bytes], above: Optional[str]) -> None:
    """Store ``chunks`` as delta items (merged deltas: no base set), every key greater than
    ``above``."""
    first = new_key(above)
    with PartitionDigestItem.batch_write() as batch:
        for number, data in enumerate(chunks):
            batch.save(PartitionDigestItem(table_uid, f"{first}{number:05d}", kind=DELTA, data=data))


def delete(table_uid: str, keys: Sequence[str]) -> None:
    """Delete exactly these digest items."""
    with PartitionDigestItem.batch_write() as batch:
        for key in keys:
            batch.delete(PartitionDigestItem(table_uid, key))


_PARTITION_RECORD = record_type(PartitionItem)
_BATCH = 100  # BatchGetItem's limit


def fetch_partitions(table_uid: str, keys: Sequence[str]) -> list[Record]:
    """The partition items with these sort keys (at most 100; missing ones absent), as records
    like ``ranges.query_key_range`` yields (not counted: callers on other threads count them)."""
    assert len(keys) <= _BATCH
    found = dj.batch_get({_PARTITIONS: [{"table_uid": {"S": table_uid}, "key": {"S": key}} for key in keys]})
    return [_PARTITION_RECORD(raw) for raw in found[_PARTITIONS]]


def batches(keys: Sequence[str]) -> Iterator[list[str]]:
    """``keys`` in BatchGetItem-sized runs."""
    for start in range(0, len(keys), _BATCH):
        yield list(keys[start:start + _BATCH])

