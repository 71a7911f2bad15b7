"""Unindexed listings through the table's partition digest (store/digests.py): evaluate the
expression and the segment on the digest's column-packed values, then fetch only the matching
partitions by key, in key order. Also keeps the digest small: compaction of many deltas into
base chunks, and a rebuild from the partitions when it is incomplete (a table older than the
digest, an overflowed delta) or when reads keep finding partitions that are gone.
"""

from __future__ import annotations

import bisect
import os
from concurrent.futures import Future
from typing import Any, Iterator, Optional, Sequence

from chalicelib import clock, metrics
from chalicelib.lazy_pool import LazyPool
from chalicelib.domain import expressions
from chalicelib.domain import partition_digest as codec
from chalicelib.domain.partition_keys import partition_sort_key
from chalicelib.service import cleanup
from chalicelib.store import catalog, digests
from chalicelib.store.models import CleanupJobItem, TableItem

# "0": listings read as planned, never through the digest (writes still keep it): the
# benchmark's "before", and a switch should the digest ever misbehave.
ENABLED = os.environ.get("GLUE_PARTITION_DIGEST", "1") != "0"
# More delta items than this and the reader merges them into a new base set (env: tests).
COMPACT_DELTAS = int(os.environ.get("GLUE_DIGEST_COMPACT_DELTAS", "64"))
# A page whose candidates were mostly gone (at least this many) rebuilds the digest.
PRUNE_MISSES = int(os.environ.get("GLUE_DIGEST_PRUNE_MISSES", "256"))
# Matching more than this share of the digest's rows, the plain Query of every partition is
# cheaper than fetching them one key at a time: the listing reads that way instead.
MAX_SHARE = 0.5
_FETCH_AHEAD = 4  # BatchGetItem calls in flight at once
_MAX_BASE_SETS = 4

_executor = LazyPool(_FETCH_AHEAD, "digest-fetch")

# The sorted candidate keys of recent listings, by the digest items they came from (their keys:
# an item is written once under a fresh key and never changed, so the same keys are the same
# rows) and what was asked (key types, bound expression, segment buckets); None: too many match.
# A listing's pages re-read the digest (strongly consistent) but, while it is unchanged, skip
# decoding, evaluating and recomputing every candidate's sort key: a 100k-partition table listed
# in 4 Segments (25 pages each) did all of that on every page, 13x the service CPU of 1 Segment.
_MAX_REMEMBERED_KEYS = 400_000
_remembered: dict[tuple, Optional[list[str]]] = {}
_remembered_keys = 0


def _complete(pieces: Sequence[digests.Piece]) -> bool:
    """Whether the pieces hold one whole base set and no overflowed delta."""
    if any(piece.overflow for piece in pieces):
        return False
    sets: dict[str, set[int]] = {}
    for piece in pieces:
        if piece.kind == digests.BASE and piece.set_id is not None and piece.chunk is not None:
            sets.setdefault(piece.set_id, set()).add(piece.chunk)
    return any(len(chunks) == next(p.chunks for p in pieces if p.set_id == set_id)
               for set_id, chunks in sets.items())


class DigestSource:
    """The matching partitions of one table's listing, from its digest."""

    def __init__(self, table: TableItem, key_types: Sequence[str]) -> None:
        self.table, self.table_uid, self.key_types = table, table.uid, list(key_types)
        self.pieces = digests.read(self.table_uid)
        self.misses = self.fetched = 0
        self.chunks: list[codec.Chunk] = []
        # An incomplete digest (a table older than the digest or created in a transaction, an
        # overflowed delta) is rebuilt in the background, never in a request: a rebuild reads
        # every partition, unbounded by the work budget. Until then the listing reads as planned.
        self.usable = _complete(self.pieces)
        if not self.usable:
            _queue_rebuild(table)
            return
        self.identity = (self.table_uid, tuple(piece.key for piece in self.pieces), tuple(self.key_types))
        deltas = sum(piece.kind == digests.DELTA for piece in self.pieces)
        base_sets = len({piece.set_id for piece in self.pieces if piece.kind == digests.BASE})
        # Several base sets come from readers compacting at once (each replaces what it read);
        # they are merged only once there are a few, so parallel readers do not keep compacting.
        if deltas > COMPACT_DELTAS or base_sets > _MAX_BASE_SETS:
            self._compact()

    def _decoded(self) -> list[codec.Chunk]:
        """The chunks of the pieces read, decoded (once)."""
        if not self.chunks:
            self.chunks = [codec.decode(p.data) for p in self.pieces if p.data is not None]
        return self.chunks

    def _compact(self) -> None:
        rows: set[codec.Row] = set()
        for chunk in self._decoded():
            rows.update(chunk.rows())
        self._replace(codec.encode_chunks(sorted(rows)))

    def _replace(self, encoded: list[bytes]) -> None:
        above = self.pieces[-1].key if self.pieces else None
        digests.write_base(self.table_uid, encoded, above)
        digests.delete(self.table_uid, [piece.key for piece in self.pieces])
        self.pieces = []

    def matching_keys(self, bound: expressions.Node, buckets: Optional[tuple[int, int]],
                      after: Optional[str]) -> Optional[list[str]]:
        """Sort keys of the partitions that may match, after ``after``, in key order; None when
        so many match that a plain read of every partition is cheaper."""
        asked = (*self.identity, bound, buckets)
        try:
            keys = _remembered[asked]
        except KeyError:
            keys = self._candidate_keys(bound, buckets)
            _remember(asked, keys)
        except TypeError:  # a literal that cannot be hashed: not remembered
            keys = self._candidate_keys(bound, buckets)
        if keys is None:
            return None
        return keys[bisect.bisect_right(keys, after):] if after is not None else list(keys)

    def _candidate_keys(self, bound: expressions.Node, buckets: Optional[tuple[int, int]]) -> Optional[list[str]]:
        found, total = codec.matching_rows(self._decoded(), bound, buckets)
        if total and len(found) > MAX_SHARE * total:
            return None
        return sorted({partition_sort_key(values, self.key_types) for values in found})

    def partitions(self, keys: Sequence[str], wanted: int) -> Iterator[Any]:
        """The partition items of ``keys`` that exist, in the order of ``keys``, fetched a
        BatchGetItem at a time: several in flight until ``wanted`` keys are asked for, then one
        at a time as the caller keeps reading (it stops once its page is full)."""
        # The runs end exactly at ``wanted``: a full page never fetches a batch past it.
        runs = list(digests.batches(keys[:wanted])) + list(digests.batches(keys[wanted:]))
        pending: list[Future] = []
        asked = next_run = 0
        try:
            for run in runs:
                while next_run < len(runs) and (not pending or (asked < wanted and len(pending) < _FETCH_AHEAD)):
                    pending.append(_executor().submit(digests.fetch_partitions, self.table_uid, runs[next_run]))
                    asked += len(runs[next_run])
                    next_run += 1
                found = {record.key: record for record in pending.pop(0).result()}
                metrics.count_read(len(run))
                self.fetched += len(run)
                self.misses += len(run) - len(found)
                for key in run:
                    record = found.get(key)
                    if record is not None:
                        yield record
        finally:
            for future in pending:
                future.cancel()

    def prune_if_stale(self) -> None:
        """Have the digest rebuilt (in the background) when this read found mostly partitions
        that are gone."""
        if self.misses >= PRUNE_MISSES and 2 * self.misses > self.fetched:
            _queue_rebuild(self.table)


def _remember(asked: tuple, keys: Optional[list[str]]) -> None:
    global _remembered_keys
    size = len(keys) if keys is not None else 0
    if size > _MAX_REMEMBERED_KEYS // 4:
        return  # one listing's share of the bound: larger ones are computed per page, as before
    if _remembered_keys + size > _MAX_REMEMBERED_KEYS or len(_remembered) >= 64:
        _remembered.clear()
        _remembered_keys = 0
    _remembered[asked] = keys
    _remembered_keys += size


def rebuild(table_uid: str) -> None:
    """A new base set from the partitions themselves (read after the digest items, so it covers
    every partition those items did), replacing exactly the items read. Reads every partition:
    run by the background cleaners (a ``digest`` job), never by a request."""
    pieces = digests.read(table_uid)
    encoded = codec.encode_chunks(sorted(set(digests.partition_rows(table_uid))))
    digests.write_base(table_uid, encoded, pieces[-1].key if pieces else None)
    digests.delete(table_uid, [piece.key for piece in pieces])


# Tables whose rebuild this process queued, and when: one job per table a minute at most.
_queued: dict[str, float] = {}
_QUEUE_AGAIN_SECONDS = 60.0


def _queue_rebuild(table: TableItem) -> None:
    now = clock.monotonic()
    if now - _queued.get(table.uid, -_QUEUE_AGAIN_SECONDS) < _QUEUE_AGAIN_SECONDS:
        return
    if len(_queued) > 1024:
        _queued.clear()
    _queued[table.uid] = now
    cleanup.enqueue(catalog.cleanup_job(REBUILD_JOB, table.uid, db_uid=table.db_uid, name=table.name))


def _rebuild_job(job: CleanupJobItem, deadline: float) -> bool:
    table = catalog.get_table(job.db_uid, job.name)
    if table is not None and table.uid == job.uid:  # else deleted: its purge drops the digest
        rebuild(job.uid)
    return True


REBUILD_JOB = "digest"
cleanup.register_kind(REBUILD_JOB, _rebuild_job)
