"""Partitions of governed tables, as the reader sees them: GetPartitions honours TransactionId
and QueryAsOfTime the way GetTableObjects does, because the partitions come from the manifest.

Lake Formation keeps a governed table's partitions with its objects: clients write a governed
table with UpdateTableObjects and do not register its partitions (awswrangler, for one, skips
BatchCreatePartition for GOVERNED tables). So for a reader at snapshot S (its transaction's, a
QueryAsOfTime, or the last commit) a governed table's partitions are:

- every set of partition values with at least one object visible at S, shown with the
  registered partition's document when there is one, else with a document made from the table's
  StorageDescriptor as of S: Location ``<table location>/<key>=<value>/...``, Parameters
  ``numFiles`` / ``totalSize`` of its visible objects (Hive's names), CreationTime when its
  oldest visible object was added;
- every partition registered through the partition calls (CreatePartition, ...) whose
  CreationTime is not after the reader's time (its transaction's start, or QueryAsOfTime).
  Registered partitions are not versioned: an update shows in older snapshots too, and a deleted
  one is gone from them (docs/design.md, "Partitions of governed tables").

Both sources are read over the same key ranges (the planner's ranges on the partition sort key)
and merged in key order. The manifest side reads partition summaries, one item per partition
(store/manifest_partitions.py); partitions the reader's overlay touches, and every partition of
a table whose summaries do not cover all its commits, are counted from their objects.
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

from chalicelib import json_text
from chalicelib.domain import expressions, planner
from chalicelib.domain.partition_keys import segment_of
from chalicelib.service.paging import take_page
from chalicelib.service.partition_text import render_text, render_text_without_columns
from chalicelib.service.partition_indexes import key_types_of
from chalicelib.service.table_objects import OWN, can_seek, overlay_of, visible_objects
from chalicelib.store import manifest_partitions as manifest_store
from chalicelib.store import partitions as partition_store
from chalicelib.store import transactions as tx_store
from chalicelib.store.documents import decode_document
from chalicelib.store.records import Table, Transaction
from chalicelib.store.demand import Demand

def is_governed(table_doc: dict[str, Any]) -> bool:
    """TableType GOVERNED: Lake Formation's manifest holds its objects (and so partitions)."""
    return (table_doc.get("TableType") or "").upper() == "GOVERNED"


@dataclass
class _Partition:
    """One partition found in a key range: from the manifest, the registered ones, or both."""

    key: str
    values: list[str]
    files: int = 0
    size: int = 0
    first_seq: int = OWN  # commit that added its oldest visible object (OWN: the reader's own)
    registered: Any = None  # the stored partition (records.StoredPartition) when registered
    # False: examined and left out (expression, reader's time, empty at the snapshot); passed on
    # all the same so that a page out of work budget can end after it (paging.take_page).
    listed: bool = True


def _from_manifest(table: Table, snapshot: int, overlay: dict, bound: expressions.Node,
                   low: Optional[str], high: Optional[str], after: Optional[str],
                   seek: bool) -> Iterator[_Partition]:
    """Partitions with at least one object visible at the snapshot, in key order."""
    resume = None if after is None else tx_store.after_partition(after)
    current: Optional[_Partition] = None
    for version_key, values, obj in visible_objects(table, snapshot, bound, overlay, low, high, resume, seek):
        if obj is None:
            continue  # a version left out (only with a deadline, which this reader does not pass)
        partition_key, added, _uri = tx_store.split_version_key(version_key)
        if current is not None and current.key != partition_key:
            yield current
            current = None
        if current is None:
            current = _Partition(partition_key, values)
        current.files += 1
        current.size += obj["Size"]
        current.first_seq = min(current.first_seq, added)
    if current is not None:
        yield current


def _from_summaries(table: Table, snapshot: int, bound: expressions.Node, low: Optional[str],
                    high: Optional[str], after: Optional[str], overlay: dict, seek: bool) -> Iterator[_Partition]:
    """Partitions with objects at the snapshot, from the partition summaries (one item each,
    two when the partition changed after the snapshot); the partitions an overlay write touches
    are counted from their objects instead, since their summaries lack those writes."""
    touched = sorted({write.partition_key for _, write, _ in overlay.values()})
    touched = [key for key in touched if (low is None or key >= low) and (high is None or key <= high)
               and (after is None or key > after)]

    def summarized() -> Iterator[_Partition]:
        skip = set(touched)
        for item in manifest_store.partitions_in(table.uid, low, high, after):
            found = None
            if item.key not in skip and expressions.evaluate(bound, item.values):
                found = _summary_at(table, item, snapshot)
            yield found if found is not None else _Partition(item.key, [], listed=False)

    def counted() -> Iterator[_Partition]:
        for key in touched:
            yield from _from_manifest(table, snapshot, overlay, bound, *tx_store.partition_versions(key), None, seek)

    return heapq.merge(summarized(), counted(), key=lambda p: p.key)


def _summary_at(table: Table, item: Any, snapshot: int) -> Optional[_Partition]:
    """The partition a summary item stands for at the snapshot: the summary itself when it
    changed at or before it, else the version visible then (one more Query); None if empty."""
    state = (item if item.files else None) if item.changed_seq <= snapshot else \
        manifest_store.partition_at(table.uid, item.key, snapshot)
    if state is None:
        return None
    return _Partition(item.key, list(item.values), int(state.files), int(state.size), int(state.created_seq))


def _count_objects(table: Table, overlay: dict) -> bool:
    """Whether partitions must be counted from their objects rather than the summaries: the
    table has no complete summaries (objects committed before they existed, or a table its
    reader's transaction created), or an overlaid write is a replace (one uri deleted and added
    again may move between partitions, and its pending write does not say from where)."""
    return any(op == "replace" for op, _, _ in overlay.values()) or not manifest_store.has_summaries(table.uid)


def _registered(table: Table, bound: expressions.Node, low: Optional[str], high: Optional[str],
                after: Optional[str], segments: Optional[tuple[int, int]], demand: Demand,
                reader_time: Optional[float]) -> Iterator[_Partition]:
    """Registered partitions matching the expression, created by the reader's time."""
    for item in partition_store.scan_range(table.uid, low, high, after, None, segments, demand):
        if not expressions.evaluate(bound, item.values) or \
                (reader_time is not None and decode_document(item.doc).get("CreationTime", 0) > reader_time):
            yield _Partition(item.key, [], listed=False)
            continue
        demand.keep()
        yield _Partition(item.key, list(item.values), registered=item)


def _merged(sources: Sequence[Iterator[_Partition]]) -> Iterator[_Partition]:
    """One partition per key: the registered document, the manifest's object counts (listed
    when either source lists it)."""
    for _, group in itertools.groupby(heapq.merge(*sources, key=lambda p: p.key), key=lambda p: p.key):
        every = list(group)
        parts = [part for part in every if part.listed]
        if not parts:
            yield every[0]  # left out by every source: passed on unlisted
            continue
        found = parts[0]
        for other in parts[1:]:
            found.registered = found.registered or other.registered
            found.files += other.files
            found.size += other.size
            found.first_seq = min(found.first_seq, other.first_seq)
        yield found


def made_document(keys: Sequence[tuple[str, str]], table_doc: dict[str, Any], values: Sequence[str],
                  files: int, size: int, created: float) -> dict[str, Any]:
    """The Partition document of a manifest partition that is not registered: the table's storage,
    located under the table by Hive's ``key=value`` path convention."""
    storage = dict(table_doc.get("StorageDescriptor") or {})
    if storage.get("Location"):
        path = "/".join(f"{name}={value}" for (name, _), value in zip(keys, values))
        storage["Location"] = f"{storage['Location'].rstrip('/')}/{path}"
    return {"Values": list(values), "StorageDescriptor": storage, "CreationTime": created,
            "Parameters": {"numFiles": str(files), "totalSize": str(size)}}


def _created(first_seq: int) -> float:
    # Epoch seconds as the JSON protocols carry them; the reader's own objects: added now.
    return round(time.time(), 3) if first_seq >= OWN else first_seq / 1_000_000


@dataclass
class Listing:
    """What GetPartitions asks for, parsed once by the caller."""

    expression: str
    bound: expressions.Node
    keys: list[tuple[str, str]]
    buckets: tuple[int, int]
    segment: Optional[tuple[int, int]]  # (total, number) when a Segment was asked for
    exclude_columns: bool
    limit: int


class ManifestListing:
    """A governed table's partitions matching a listing, as a reader sees them, a page at a time.

    ``table`` and ``table_doc``: the table as the reader sees it; ``snapshot`` and ``reader``:
    the commit number read at and the reading transaction (loaded and checked), or None;
    ``as_of``: the reader's QueryAsOfTime; ``transaction_id`` as the request named it.
    ``scope``: what a resume position is only valid for."""

    def __init__(self, catalog_key: str, table: Table, table_doc: dict[str, Any], names: dict[str, str],
                 listing: Listing, snapshot: int, reader: Optional[Transaction], as_of: Optional[float],
                 transaction_id: Optional[str]) -> None:
        self.catalog_key, self.table, self.table_doc, self.names, self.listing = \
            catalog_key, table, table_doc, names, listing
        self.snapshot, self.reader, self.as_of = snapshot, reader, as_of
        self.plan = planner.choose_plan(listing.bound, listing.keys, key_types_of(table), [])
        total, number = listing.segment or (1, 0)
        self.scope = (table.uid, listing.expression, total, number, listing.exclude_columns, "manifest",
                      round(as_of * 1_000_000) if as_of is not None else None, transaction_id)

    def page(self, position: Any) -> tuple[list[str], Any]:
        """Partition JSON texts after ``position`` (None: from the start), and the position to
        resume after (None: no more)."""
        table, table_doc, names, listing, plan = self.table, self.table_doc, self.names, self.listing, self.plan
        snapshot, reader, as_of = self.snapshot, self.reader, self.as_of
        reader_time = float(reader.start_time) if reader is not None else as_of
        start_range, after = position[:2] if position else (0, None)
        if position and reader is None:
            snapshot = position[2]  # later pages of a read without a transaction: the first page's snapshot
        overlay = overlay_of(table, self.catalog_key, snapshot, reader)
        seek = can_seek(listing.bound, listing.keys, reader is not None or as_of is not None)
        count_objects = _count_objects(table, overlay)
        lo, hi = listing.buckets
        demand = Demand(listing.limit + 1)  # shared by the key ranges: one page in all

        def candidates() -> Iterator[tuple[int, _Partition]]:
            for range_number in range(start_range, len(plan.bounds)):
                low, high = plan.bounds[range_number]
                resume = after if range_number == start_range else None
                manifest = (_from_manifest(table, snapshot, overlay, listing.bound, low, high, resume, seek)
                            if count_objects else
                            _from_summaries(table, snapshot, listing.bound, low, high, resume, overlay, seek))
                sources = (_registered(table, listing.bound, low, high, resume,
                                       listing.buckets if listing.segment else None, demand,
                                       reader_time), manifest)
                for found in _merged(sources):
                    yield range_number, found

        def render(pair: tuple[int, _Partition]) -> Optional[tuple[Any, int]]:
            found = pair[1]
            if not found.listed or not lo <= segment_of(found.key) <= hi:
                return None
            if found.registered is not None:
                if listing.exclude_columns:
                    return render_text_without_columns(names, found.registered.doc)
                return render_text(names, found.registered.doc)
            doc = made_document(listing.keys, table_doc, found.values, found.files, found.size,
                                _created(found.first_seq))
            if listing.exclude_columns and "StorageDescriptor" in doc:
                doc["StorageDescriptor"] = {k: v for k, v in doc["StorageDescriptor"].items() if k != "Columns"}
            text = json_text.dumps({**doc, **names})
            return text, len(text)

        return take_page(candidates(), listing.limit, render,
                         lambda pair: [pair[0], pair[1].key, snapshot], sized=True)


def manifest_partitions(catalog_key: str, table: Table, table_doc: dict[str, Any],
                        keys: Sequence[tuple[str, str]], partition_keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """partition key -> latest Partition document, for those of ``partition_keys`` that hold
    objects (GetPartition, BatchGetPartition of partitions that are not registered): one
    snapshot, one overlay and one batch read of summaries for them all."""
    snapshot = tx_store.read_point(catalog_key)
    overlay = overlay_of(table, catalog_key, snapshot, None)
    touched = set(partition_keys) if _count_objects(table, overlay) else set()
    touched |= {write.object_key for _, write, _ in overlay.values()}
    summaries = manifest_store.get_partitions(table.uid, [k for k in partition_keys if k not in touched])
    found: dict[str, dict[str, Any]] = {}
    for key in partition_keys:
        if key in touched:
            partition = next(_from_manifest(table, snapshot, overlay, expressions.TRUE,
                                            *tx_store.partition_versions(key), None, False), None)
        else:
            partition = _summary_at(table, summaries[key], snapshot) if key in summaries else None
        if partition is not None:
            found[key] = made_document(keys, table_doc, partition.values, partition.files, partition.size,
                                       _created(partition.first_seq))
    return found
