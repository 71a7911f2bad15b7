"""Unindexed listings through the table's partition digest (store/digests.py): evaluate the
expression and the segment on the digest's column-packed values, then fetch only the matching
partitions by key, in key order, all within the request's work budget. Also keeps the digest
small, in the background (cleanup jobs, never in a request): compaction of many deltas into base
chunks (queued by readers that meet many, and by bulk writers), and a rebuild from the partitions
when it is incomplete (a table older than the digest, an overflowed delta) or when reads keep
finding partitions that are gone.
"""

from __future__ import annotations

import bisect
import logging
from concurrent.futures import Future
from typing import Any, Generator, Iterator, Optional, Sequence

from chalicelib import clock, metrics, settings, work_budget
from chalicelib.lazy_pool import LazyPool
from chalicelib.domain import expressions
from chalicelib.domain import partition_digest as codec
from chalicelib.domain.partition_keys import partition_sort_key
from chalicelib.service import cleanup, partition_cache
from chalicelib.store import catalog, digests
from chalicelib.store.records import CleanupJob, Table

# "0": listings read as planned, never through the digest (writes still keep it): the
# benchmark's "before", and a switch should the digest ever misbehave.
ENABLED = settings.current().partition_digest
# More delta items than this and a compaction is queued: by a reader that meets them, by a
# writer of this process that wrote them (env: tests).
COMPACT_DELTAS = settings.current().digest_compact_deltas
# One compaction step replaces at most this many items (its deletes are the cost: DynamoDB Local
# deletes ~1,000 items a second); a backlog larger than that is merged a slice at a time.
STEP_PIECES = settings.current().digest_step_pieces
# The share of a request's work budget the digest may take (its Query pages, decoding and
# evaluating); past it the page is read as planned for the rest of the budget.
DIGEST_SHARE = 0.5
# A page whose candidates were mostly gone (at least this many) rebuilds the digest.
PRUNE_MISSES = settings.current().digest_prune_misses
# Matching more than this share of the digest's rows, the plain Query of every partition is
# cheaper than fetching them one key at a time: the listing reads that way instead.
MAX_SHARE = 0.5
_FETCH_AHEAD = 4  # BatchGetItem calls in flight at once
_MAX_BASE_SETS = 4

log = logging.getLogger(__name__)
_executor = LazyPool(_FETCH_AHEAD, "digest-fetch")

# The sorted candidate keys of recent listings and the value tuples that matched, by the digest
# items they came from (their keys: an item is written once under a fresh key and never changed,
# so the same keys are the same rows) and what was asked (key types, bound expression, segment buckets); None: too many match.
# A listing's pages re-read the digest (strongly consistent) but, while it is unchanged, skip
# decoding, evaluating and recomputing every candidate's sort key: a 100k-partition table listed
# in 4 Segments (25 pages each) did all of that on every page, 13x the service CPU of 1 Segment.
_MAX_REMEMBERED_KEYS = 400_000
_remembered: dict[tuple, Optional[tuple[list[str], frozenset[tuple[str, ...]]]]] = {}
_remembered_keys = 0


# How many items each table's digest had when this process last read its rows: a table's
# next listing reads the outline first when they were at most _OUTLINE_FIRST_PIECES (the rows of
# a 100k-partition digest are 170 KB; a compacted digest of a million partitions is 7 items).
_OUTLINE_FIRST_PIECES = 16
_evaluated_pieces: dict[str, int] = {}


def _note_evaluated(table_uid: str, pieces: int) -> None:
    if len(_evaluated_pieces) >= 4096:
        _evaluated_pieces.clear()
    _evaluated_pieces[table_uid] = pieces


# Decoded digest chunks by (table uid, item key): an item is written once under a fresh key and
# never changed, so a listing whose outline names only items decoded here before needs neither
# their rows (170 KB a read at 100k partitions) nor decoding them again (~7 ms at 100k): only the
# evaluation, which is per distinct text and per row in C. Bounded by the rows held.
_MAX_CACHED_ROWS = 2_000_000
_chunks: dict[tuple[str, str], codec.Chunk] = {}
_chunk_rows = 0


def _decoded(table_uid: str, piece: digests.Piece) -> codec.Chunk:
    """The decoded chunk of ``piece`` (its rows read, or decoded before by this process)."""
    global _chunk_rows
    cached = _chunks.get((table_uid, piece.key))
    if cached is not None:
        return cached
    if piece.data is None:
        raise Late()  # not read and no longer cached (another listing's chunks pushed it out)
    chunk = codec.decode(piece.data)
    if chunk.size <= _MAX_CACHED_ROWS // 4:
        if _chunk_rows + chunk.size > _MAX_CACHED_ROWS or len(_chunks) >= 4096:
            _chunks.clear()
            _chunk_rows = 0
        _chunks[(table_uid, piece.key)] = chunk
        _chunk_rows += chunk.size
    return chunk


class Late(Exception):
    """The digest could not be read and evaluated by the listing's deadline."""


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
    """The matching partitions of one table's listing, from its digest. ``deadline``: the
    listing's work deadline (``clock.monotonic``; None: unbounded), of which the digest may take
    DIGEST_SHARE of the budget."""

    def __init__(self, table: Table, key_types: Sequence[str], deadline: Optional[float] = None) -> None:
        self.table, self.table_uid, self.key_types = table, table.uid, list(key_types)
        self.deadline = None if deadline is None else deadline - (1 - DIGEST_SHARE) * work_budget.seconds()
        self.misses = self.fetched = 0
        self.late = False  # the deadline came before the digest was read and evaluated
        # Of a table whose digest this process evaluated before, in few items, the outline first
        # (no rows): a listing asked before of these very items (the pages of one listing, a
        # repeated query) needs nothing more, and on a miss the rows are read (those few items
        # again). A digest of many items (a backlog of deltas) changes with every write: read whole.
        self.rows_read = _evaluated_pieces.get(self.table_uid, _OUTLINE_FIRST_PIECES + 1) > _OUTLINE_FIRST_PIECES
        self.read_deadline = deadline
        pages: list[int] = []
        pieces = digests.read(self.table_uid, deadline, rows=self.rows_read, pages=pages)
        # Read in one Query page, the digest's item keys are one consistent view of every
        # partition write before the read: only then may the cache of rendered partitions serve
        # (service/partition_cache.py; across pages a write in flight may be passed).
        self.one_read = pages == [1]
        if pieces is not None and self.rows_read:
            _note_evaluated(self.table_uid, len(pieces))
        if pieces is None:
            self.pieces: list[digests.Piece] = []
            self.usable, self.late = False, True
            _queue(COMPACT_JOB, table)  # so many items are a backlog of deltas
            return
        self.pieces = pieces
        # An incomplete digest (a table older than the digest or created in a transaction, an
        # overflowed delta) is rebuilt in the background, never in a request: a rebuild reads
        # every partition, unbounded by the work budget. Until then the listing reads as planned.
        self.usable = _complete(self.pieces)
        if not self.usable:
            _queue(REBUILD_JOB, table)
            return
        self.identity = (self.table_uid, tuple(piece.key for piece in self.pieces), tuple(self.key_types))
        # Merging is a background job's (its writes and deletes grow with the backlog: a million
        # partitions loaded are 20,000 deltas); this read evaluates the pieces as they are.
        if needs_compaction(self.pieces):
            _queue(COMPACT_JOB, table)

    def matching_keys(self, bound: expressions.Node, buckets: Optional[tuple[int, int]],
                      after: Optional[str]) -> Optional[list[str]]:
        """Sort keys of the partitions that may match, after ``after``, in key order; None when
        so many match that a plain read of every partition is cheaper. Raises Late when the
        deadline passes first (the evaluation stops between chunks). Afterwards
        ``matched_values`` holds the value tuples that matched (see :meth:`evaluated`)."""
        asked = (*self.identity, bound, buckets)
        try:
            try:
                found = _remembered[asked]
            except KeyError:
                found = self._candidates(bound, buckets)
                _remember((*self.identity, bound, buckets), found)  # the identity of the rows read
            except TypeError:  # a literal that cannot be hashed: not remembered
                found = self._candidates(bound, buckets)
        except Late:
            self.late = True
            _queue(COMPACT_JOB, self.table)
            raise
        if found is None:
            return None
        keys, self.matched_values = found
        return keys[bisect.bisect_right(keys, after):] if after is not None else list(keys)

    def evaluated(self, values: Sequence[str]) -> bool:
        """Whether the digest found exactly these partition values matching the bound (the
        listing then need not evaluate it again on the partition fetched; the segment it
        still checks). A partition whose values differ from its digest row (a key's encoding
        folds some values together, e.g. ``017`` and ``17`` of an int key) is evaluated."""
        return tuple(values) in self.matched_values

    def _candidates(self, bound: expressions.Node, buckets: Optional[tuple[int, int]]
                    ) -> Optional[tuple[list[str], frozenset[tuple[str, ...]]]]:
        if not self.rows_read and not all((self.table_uid, piece.key) in _chunks for piece in self.pieces):
            self._read_rows()
        matches = codec.Matches(bound, buckets)
        for number, piece in enumerate(self.pieces):
            if number and self.deadline is not None and clock.monotonic() >= self.deadline:
                raise Late()
            matches.add(_decoded(self.table_uid, piece))
        if matches.total and len(matches.found) > MAX_SHARE * matches.total:
            return None
        keys = sorted({partition_sort_key(values, self.key_types) for values in matches.found})
        return keys, frozenset(matches.found)

    def _read_rows(self) -> None:
        """The pieces again, with their rows. Compaction may have replaced items since the
        outline was read: then these are evaluated (every live partition is in them too), and
        if they are not a complete digest Late sends the listing to its plain read."""
        pages: list[int] = []
        pieces = digests.read(self.table_uid, self.read_deadline, pages=pages)
        self.one_read = pages == [1]
        self.rows_read = True
        if pieces is None or not _complete(pieces):
            raise Late()
        _note_evaluated(self.table_uid, len(pieces))
        self.pieces = pieces
        self.identity = (self.table_uid, tuple(piece.key for piece in pieces), tuple(self.key_types))

    def partitions(self, keys: Sequence[str], wanted: int, flavour: Optional[tuple] = None) -> Iterator[Any]:
        """The partition items of ``keys`` that exist, in the order of ``keys``, fetched a
        BatchGetItem at a time: several in flight until ``wanted`` keys are asked for, then one
        at a time as the caller keeps reading (it stops once its page is full). With
        ``flavour`` (the Glue listing's rendering, see service/partition_cache.py): what the
        cache holds for these very digest items is yielded from it (``partition_cache.Cached``)
        instead of fetched, and keys found missing are remembered there."""
        if not self.one_read:
            flavour = None
        hits = partition_cache.lookup(self.table_uid, self.identity, flavour, keys) if flavour is not None else {}
        missing = [key for key in keys if key not in hits] if hits else keys
        wanted_missing = wanted - sum(key in hits for key in keys[:wanted]) if hits else wanted
        runs = self._fetched(missing, wanted_missing)
        found: dict[str, Any] = {}
        fetched_keys: set[str] = set()
        try:
            for key in keys:
                hit = hits.get(key)
                if hit is not None:
                    self.fetched += 1
                    if hit.text is None:
                        self.misses += 1
                    else:
                        yield hit
                    continue
                while key not in fetched_keys:
                    run, records = next(runs)
                    fetched_keys.update(run)
                    found.update(records)
                record = found.pop(key, None)
                if record is not None:
                    yield record
                elif flavour is not None:
                    partition_cache.store(self.table_uid, self.identity, flavour,
                                          partition_cache.Cached(key, None, 0, None, 0))
        finally:
            runs.close()

    def _fetched(self, keys: Sequence[str], wanted: int) -> Generator[tuple[list[str], dict[str, Any]], None, None]:
        """(run of keys, their items found by key), a BatchGetItem a run, in order."""
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
                yield run, found
        finally:
            for future in pending:
                future.cancel()

    def prune_if_stale(self) -> None:
        """Have the digest rebuilt (in the background) when this read found mostly partitions
        that are gone."""
        if self.misses >= PRUNE_MISSES and 2 * self.misses > self.fetched:
            _queue(REBUILD_JOB, self.table)


def _remember(asked: tuple, found: Optional[tuple[list[str], frozenset[tuple[str, ...]]]]) -> None:
    global _remembered_keys
    size = len(found[0]) + len(found[1]) if found is not None else 0  # keys and value tuples
    if size > _MAX_REMEMBERED_KEYS // 4:
        return  # one listing's share of the bound: larger ones are computed per page, as before
    if _remembered_keys + size > _MAX_REMEMBERED_KEYS or len(_remembered) >= 64:
        _remembered.clear()
        _remembered_keys = 0
    _remembered[asked] = found
    _remembered_keys += size


def rebuild(table_uid: str) -> None:
    """A new base set from the partitions themselves (read after the digest items, so it covers
    every partition those items did), replacing exactly the items read. Reads every partition:
    run by the background cleaners (a ``digest`` job), never by a request."""
    pieces = digests.read(table_uid) or []
    encoded = codec.encode_chunks(sorted(set(digests.partition_rows(table_uid))))
    digests.write_base(table_uid, encoded, pieces[-1].key if pieces else None)
    digests.delete(table_uid, [piece.key for piece in pieces])


# ---------------------------------------------------------------------------- compaction
def needs_compaction(pieces: Sequence[digests.Piece]) -> bool:
    """More than COMPACT_DELTAS deltas, or more than _MAX_BASE_SETS base sets (several come
    from compactions running at once: each replaces what it read; they are merged only once
    there are a few, so parallel compactors do not keep compacting)."""
    deltas = sum(piece.kind == digests.DELTA for piece in pieces)
    base_sets = len({piece.set_id for piece in pieces if piece.kind == digests.BASE})
    return deltas > COMPACT_DELTAS or base_sets > _MAX_BASE_SETS


def compaction_step(pieces: Sequence[digests.Piece]) -> tuple[list[digests.Piece], bool]:
    """What one compaction step of a complete digest replaces, and whether it writes them as a
    base set (else as merged deltas): everything, as a base set, when that is at most
    STEP_PIECES items; otherwise the first STEP_PIECES deltas, merged into a few deltas, so
    each step's deletes stay bounded however large the backlog. Either way the new items go
    above every key read and exactly the items replaced are deleted, so a reader paging through
    the digest meanwhile still sees every row (store/digests.py), and a whole base set stays."""
    if len(pieces) <= STEP_PIECES:
        return list(pieces), True
    return [piece for piece in pieces if piece.kind == digests.DELTA and piece.data is not None][:STEP_PIECES], False


def compact(table_uid: str, deadline: float) -> bool:
    """Compact the table's digest a step at a time until it needs no more (True) or
    ``deadline`` (``clock.monotonic``) has passed after a step (False: call again). A digest
    that is not complete is left to its rebuild."""
    while True:
        pieces = digests.read(table_uid) or []
        if not _complete(pieces) or not needs_compaction(pieces):
            return True
        replaced, as_base = compaction_step(pieces)
        rows: set[codec.Row] = set()
        for piece in replaced:
            if piece.data is not None:
                rows.update(codec.decode(piece.data).rows())
        encoded = codec.encode_chunks(sorted(rows))
        (digests.write_base if as_base else digests.write_deltas)(table_uid, encoded, pieces[-1].key)
        digests.delete(table_uid, [piece.key for piece in replaced])
        if clock.monotonic() >= deadline:
            return False


# Jobs this process queued, by (kind, table uid, who), and when: one job per table a minute at
# most, for readers and for writers each.
_queued: dict[tuple[str, str, str], float] = {}
_QUEUE_AGAIN_SECONDS = 60.0


def _queue(kind: str, table: Table, who: str = "reader") -> None:
    now = clock.monotonic()
    if now - _queued.get((kind, table.uid, who), -_QUEUE_AGAIN_SECONDS) < _QUEUE_AGAIN_SECONDS:
        return
    if len(_queued) > 1024:
        _queued.clear()
    _queued[(kind, table.uid, who)] = now
    cleanup.enqueue(catalog.cleanup_job(kind, table.uid, db_uid=table.db_uid, name=table.name))


# Deltas this process built per table uid since it last queued that table's compaction.
_written: dict[str, int] = {}


def _delta_built(table: Table) -> None:
    """A writer of this process built a delta for ``table``: past COMPACT_DELTAS of them (a bulk
    load: BatchCreatePartition writes 2 per 100 partitions), queue a compaction, at most once a
    minute per table, so the first reader after the load does not meet the whole backlog."""
    count = _written.get(table.uid, 0) + 1
    if count <= COMPACT_DELTAS:
        if len(_written) > 1024:
            _written.clear()
        _written[table.uid] = count
        return
    _written.pop(table.uid, None)
    try:
        # Limited apart from the readers' queueing: a read right after the load queues its own.
        _queue(COMPACT_JOB, table, "writer")
    except Exception:  # noqa: BLE001 - the write must not fail for its digest's housekeeping
        log.exception("queueing a digest compaction failed; the next reader queues it")


def _live(job: CleanupJob) -> bool:
    table = catalog.get_table(job.member("db_uid"), job.member("name"))
    return table is not None and table.uid == job.uid  # else deleted: its purge drops the digest


def _rebuild_job(job: CleanupJob, deadline: float) -> bool:
    if _live(job):
        rebuild(job.uid)
    return True


def _compact_job(job: CleanupJob, deadline: float) -> bool:
    return compact(job.uid, deadline) if _live(job) else True


REBUILD_JOB = "digest"
COMPACT_JOB = "digest-compact"
cleanup.register_kind(REBUILD_JOB, _rebuild_job)
# A step's merge and deletes may take seconds; each chunk starts by reading the digest afresh.
cleanup.register_kind(COMPACT_JOB, _compact_job, chunk_seconds=10.0)
digests.on_delta(_delta_built)
