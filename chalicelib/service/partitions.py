"""Partitions of a table: the table as partition calls see it, the checks and keys they share,
writes (each partition with its index entries in one transaction), reads and planner-driven
listings. Protocol-free: callers pass names and values, and get documents, document texts,
errors by request position and plain resume positions back."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Callable, Iterator, Optional, Sequence

from chalicelib import clock, timestamps
from chalicelib.context import RequestContext
from chalicelib.domain import expressions, planner
from chalicelib.domain.partition_keys import (IndexSpec, IndexValueError, index_entry_key, partition_sort_key,
                                              segment_buckets, segment_of)
from chalicelib.errors import (ConcurrentModificationException, EntityNotFoundException, InvalidInputException,
                               ServiceError, ThrottlingException, database_not_found, partition_already_exists,
                               partition_not_found, table_not_found)
from chalicelib.json_text import Members
from chalicelib.service import access, governed_partitions as governed
from chalicelib.service import prefetch
from chalicelib.service.lookups import fold, require_database, require_table
from chalicelib.service.partition_indexes import LIVE, index_specs, key_types_of, partition_keys_of, resume_backfills
from chalicelib.service.paging import MAX_PAGE_BYTES, take_page, work_deadline
from chalicelib.service import partition_cache, partition_digest
from chalicelib.service.partition_digest import DigestSource
from chalicelib.service.partition_text import render_text, render_text_without_columns
from chalicelib.service.snapshots import database_snapshot, require_table_as_of
from chalicelib.service.table_objects import snapshot_of
from chalicelib.service.table_ref import TableRef
from chalicelib.store import catalog
from chalicelib.store import partitions as store
from chalicelib.store.documents import (decode_document, decode_document_sized, encode_document)
from chalicelib.store.records import Database, StoredPartition, Table, Transaction
from chalicelib.store.demand import Demand
from chalicelib.attempts import Policy, attempts

log = logging.getLogger(__name__)


def _now() -> float:
    # A timestamp as the JSON protocols carry it: epoch seconds, milliseconds at most.
    return round(time.time(), 3)


# ------------------------------------------------------------------------------ the table
@dataclass
class PartitionTableView:
    """What partition calls need to know about a table, read once per request."""

    database: Database
    item: Table
    keys: list[tuple[str, str]]
    key_types: list[str]
    indexes: list[IndexSpec]  # CREATING and ACTIVE: every write maintains both
    doc: dict[str, Any]  # the Table document

    @property
    def governed(self) -> bool:
        """TableType GOVERNED: its manifest holds partitions too."""
        return governed.is_governed(self.doc)


def view_of(database: Database, item: Table) -> PartitionTableView:
    """The view of a table item just read (under ``database``)."""
    item = resume_backfills(item)  # an abandoned backfill must not hold its index CREATING
    doc = catalog.load(item)
    keys = partition_keys_of(doc)
    return PartitionTableView(database, item, keys, key_types_of(item), index_specs(item, keys, LIVE), doc)




# The view each table was last read with, by this process: a hint for the next read of the
# same names (see read_partition_table and list_partitions), never an answer by itself. Kept
# without the decoded table document (only its TableType), which can be large.
_MAX_HINTS = 256
_read_hints: dict[tuple, PartitionTableView] = {}


def _hinted_view(ref: TableRef, hint: PartitionTableView) -> Optional[PartitionTableView]:
    """The table read with ONE BatchGetItem of the database and table items, under the database
    uid of ``hint``; None when the database is no longer that incarnation (read by name then)."""
    database, item, _ = catalog.get_path(ref.catalog_key, fold(ref.database), hint.database.uid, fold(ref.table))
    if database is None:
        raise database_not_found(fold(ref.database))
    if database.uid != hint.database.uid:
        return None  # the table item read belongs to an older incarnation of the database
    if item is None:
        raise table_not_found(fold(ref.table))
    return view_of(database, item)


def read_partition_table(ref: TableRef) -> PartitionTableView:
    """The table ``ref`` names, or EntityNotFoundException. Always a fresh (strongly
    consistent) read; when this process read the table before, in one round trip instead of two."""
    key = _view_key(ref)
    hint = _read_hints.get(key)
    view = _hinted_view(ref, hint) if hint is not None else None
    if view is None:
        database = require_database(ref.catalog_key, ref.database)
        view = view_of(database, require_table(database, ref.table))
    if len(_read_hints) >= _MAX_HINTS:
        _read_hints.clear()
    _read_hints[key] = replace(view, doc={"TableType": view.doc.get("TableType")})
    return view


def check_values(view: PartitionTableView, values: Sequence[str], member: str = "Values") -> None:
    """InvalidInputException unless ``values`` has one value per partition key."""
    if not view.keys:
        raise InvalidInputException(f"Table {view.item.name} is not partitioned: it has no partition keys")
    if len(values) != len(view.keys):
        raise InvalidInputException(
            f"{member} has {len(values)} value(s) but table {view.item.name} has {len(view.keys)} "
            f"partition key(s): {', '.join(n for n, _ in view.keys)}")


def partition_key(view: PartitionTableView, values: Sequence[str]) -> str:
    """The partitions table's sort key for these values."""
    return partition_sort_key(values, view.key_types)


def table_names(catalog_id: str, database: Database, table: Table) -> dict[str, str]:
    """The members a partition document gets in a response: where it belongs."""
    return Members(DatabaseName=database.name, TableName=table.name, CatalogId=catalog_id)


# ------------------------------------------------------------------------------ writes
_PARTITION_INPUT_MEMBERS = ("StorageDescriptor", "Parameters", "LastAccessTime", "LastAnalyzedTime")
_TABLE_RETRIES = 5

Errors = dict[int, ServiceError]  # by position in the request
# A builder makes the writes of the request positions it is given (None: all of them) against a
# table view: (writes, the request position of each write, errors by request position).
Build = Callable[[PartitionTableView, Optional[Sequence[int]]], tuple[list[store.PartitionWrite], list[int], Errors]]
# What a write's failed condition (store.EXISTS, MISSING, CHANGED) means for its position; None:
# build that position again from a fresh read and send it again.
Failure = Callable[[int, str], Optional[ServiceError]]


def _positions(count: int, wanted: Optional[Sequence[int]]) -> Sequence[int]:
    return range(count) if wanted is None else wanted


def _input_values(partition_input: dict[str, Any], member: str = "PartitionInput.Values") -> list[str]:
    """A PartitionInput's Values, which botocore's model leaves optional but a partition needs."""
    values = partition_input.get("Values")
    if values is None:
        raise InvalidInputException(f"{member} is required: the partition's values, one per partition key")
    return values


def _entries(view: PartitionTableView, values: Sequence[str]) -> list[tuple[str, str]]:
    """Index entries for a partition; InvalidInputException when an indexed value is unfit."""
    entries = []
    for spec in view.indexes:
        try:
            entries.append((spec.uid, index_entry_key(values, spec)))
        except IndexValueError as error:
            raise InvalidInputException(f"{error.message} (partition index {spec.name})") from None
    return entries


def _stored(item: StoredPartition) -> tuple[list[str], int, int]:
    """A stored partition's values, segment and revision."""
    return item.values, item.segment, item.revision


def _entries_or_none(view: PartitionTableView, values: Sequence[str]) -> list[tuple[str, str]]:
    """Entries an existing partition has (a CREATING index may not have one yet: harmless)."""
    entries = []
    for spec in view.indexes:
        try:
            entries.append((spec.uid, index_entry_key(values, spec)))
        except IndexValueError:
            pass
    return entries


def _partition_document(partition_input: dict[str, Any], creation_time: float,
                        values: Sequence[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {"Values": list(values)}
    doc.update({k: partition_input[k] for k in _PARTITION_INPUT_MEMBERS if k in partition_input})
    doc["CreationTime"] = creation_time
    return doc


# Partition *writes* reuse a table read for a moment: safe because every write transaction
# checks that the table item still has the uid, version and index epoch of the view it was
# built from (store.partitions), and a failed check means a fresh read and a rebuild. Saves
# the two GetItems (database, table) of back-to-back BatchCreatePartition calls. Reads never
# use it: a read must see a deleted or changed table at once.
_VIEW_SECONDS = 2.0
_MAX_VIEWS = 1024
_views: dict[tuple, tuple[float, PartitionTableView]] = {}


def _view_key(ref: TableRef) -> tuple:
    return (ref.catalog_key, fold(ref.database), fold(ref.table))


def _remember(key: tuple, view: PartitionTableView) -> PartitionTableView:
    if len(_views) >= _MAX_VIEWS:
        _views.clear()
    _views[key] = (clock.monotonic() + _VIEW_SECONDS, view)
    return view


def _write_view(ref: TableRef, key: tuple) -> tuple[PartitionTableView, bool]:
    """(view, whether it came from the cache)."""
    hit = _views.get(key)
    if hit is not None and hit[0] > clock.monotonic():
        return hit[1], True
    return _remember(key, read_partition_table(ref)), False


def _apply(ref: TableRef, build: Build, failure: Failure) -> Errors:
    """Build writes against the current table and apply them; returns errors by request position.

    A batch is several DynamoDB transactions, some of which may land while another fails: a
    write whose transaction did not land because the table changed underneath (its indexes, its
    version, a re-creation) is rebuilt from a fresh read of the table and sent again, and only
    it. The writes that landed are this call's successes: sent again they would meet themselves
    and be reported AlreadyExists or EntityNotFound (issue #46)."""
    key = _view_key(ref)
    view, cached = _write_view(ref, key)
    todo: Optional[list[int]] = None  # the positions still to write (None: every one)
    errors: Errors = {}
    applied = stale = False  # some write of this call landed; the view is out of date
    # A retry re-reads what changed (often only a cached view gone stale): no pause before it.
    for _ in attempts(Policy(attempts=_TABLE_RETRIES, base_delay=0.0)):
        if stale:
            _views.pop(key, None)
            # The database or table may have been deleted or re-created: read both afresh by name.
            view, cached = _remember(key, read_partition_table(ref)), False
        writes, positions, built_errors = build(view, todo)
        if cached and not writes:
            # Nothing to write means no transaction to check the cached table: confirm it.
            stale = True
            continue
        try:
            failed = store.apply_writes(view.database, view.item, writes)
        except store.TableChanged:  # none of these writes landed
            # What the stale view refused is judged again too (its keys may have changed).
            todo, stale = sorted([*positions, *built_errors]), True
            continue
        except ThrottlingException:  # none of these landed: the caller may send them again
            if not applied:
                raise
            failed = dict.fromkeys(range(len(writes)), store.THROTTLED)
        applied = applied or len(failed) < len(writes)
        todo, stale = [], False
        for write_index, reason in failed.items():
            position = positions[write_index]
            if reason == store.STALE:
                todo.append(position)
                stale = True
            elif reason == store.THROTTLED:
                errors[position] = ThrottlingException("Rate exceeded: the catalog's store is throttling "
                                                       "requests; retry")
            elif (error := failure(position, reason)) is not None:
                errors[position] = error
            else:
                todo.append(position)
        if stale:
            todo = sorted([*todo, *built_errors])
        else:
            errors.update(built_errors)
        if not todo:
            return errors
    if not applied:
        raise ConcurrentModificationException("The table changed repeatedly while writing partitions; retry")
    for position in todo or ():
        errors[position] = ConcurrentModificationException(
            "The table changed repeatedly while writing this partition; retry")
    return errors


def _create_builder(inputs: Sequence[dict[str, Any]], carry: Optional[Sequence[dict[str, int]]] = None) -> Build:
    uids = catalog.new_uids(len(inputs))  # a partition's identity, the same if it is built again

    def build(view: PartitionTableView, wanted: Optional[Sequence[int]]):
        writes, positions, errors = [], [], {}
        seen: set[str] = set()
        created = _now()
        for position in _positions(len(inputs), wanted):
            partition_input = inputs[position]
            try:
                values = _input_values(partition_input)
                check_values(view, values)
                key = partition_key(view, values)
                if key in seen:
                    raise partition_already_exists()
                doc = encode_document(_partition_document(partition_input, created, values), "partition")
                writes.append(store.PartitionWrite("create", key=key, values=list(values), doc=doc,
                                                   segment=segment_of(key), entries=_entries(view, values),
                                                   uid=uids[position], carry=carry[position] if carry else {}))
                positions.append(position)
                seen.add(key)
            except ServiceError as error:
                errors[position] = error
        return writes, positions, errors
    return build


def _create_failure(position: int, reason: str) -> Optional[ServiceError]:
    return partition_already_exists()


def create_partitions(ref: TableRef, inputs: Sequence[dict[str, Any]],
                      carry: Optional[Sequence[dict[str, int]]] = None) -> Errors:
    """Create partitions from PartitionInput documents, each with its index entries; each
    succeeds or fails on its own. Returns the failures by position in ``inputs``. ``carry``:
    per input, Paimon statistics the partition is born with (``store.paimon.stats_attributes``)."""
    access.require("BatchCreatePartition", ref.catalog_key, ref.database, ref.table)
    return _apply(ref, _create_builder(inputs, carry), _create_failure)


def _update_builder(entries: Sequence[tuple[list[str], dict[str, Any]]]) -> Build:
    def build(view: PartitionTableView, wanted: Optional[Sequence[int]]):
        writes, positions, errors = [], [], {}
        chosen = _positions(len(entries), wanted)
        keys = {position: partition_key(view, entries[position][0])
                if len(entries[position][0]) == len(view.keys) else None for position in chosen}
        current = store.get_partitions(view.item.uid, [k for k in keys.values() if k])
        touched: set[str] = set()
        for position in chosen:
            (values, partition_input), old_key = entries[position], keys[position]
            try:
                check_values(view, values, "PartitionValueList")
                new_values = _input_values(partition_input)
                check_values(view, new_values, "PartitionInput.Values")
                old = current.get(old_key) if old_key is not None else None
                if old is None or old_key is None:
                    raise partition_not_found()
                old_values, _, old_revision = _stored(old)
                new_key = partition_key(view, new_values)
                if old_key in touched or new_key in touched:
                    raise ConcurrentModificationException("The batch changes this partition twice")
                old_doc = decode_document(old.doc)
                doc = _partition_document(partition_input, old_doc.get("CreationTime", _now()), new_values)
                writes.append(store.PartitionWrite(
                    "replace", key=new_key, values=list(new_values),
                    doc=encode_document(doc, "partition"), segment=segment_of(new_key),
                    entries=_entries(view, new_values), old_key=old_key, old_revision=old_revision,
                    old_entries=_entries_or_none(view, old_values), uid=old.uid or catalog.new_uid(),
                    carry=store.paimon_stats(old) if new_key == old_key else {}, old_values=list(old_values)))
                positions.append(position)
                touched |= {old_key, new_key}
            except ServiceError as error:
                errors[position] = error
        return writes, positions, errors
    return build


def _update_failure(position: int, reason: str) -> Optional[ServiceError]:
    if reason == store.EXISTS:
        return partition_already_exists()
    return ConcurrentModificationException("Partition was changed or deleted concurrently; retry.")


def update_partitions(ref: TableRef, entries: Sequence[tuple[list[str], dict[str, Any]]]) -> Errors:
    """Replace partitions' definitions, given (current values, PartitionInput) pairs (the values
    may change: the partition moves). Returns the failures by position in ``entries``."""
    access.require("BatchUpdatePartition", ref.catalog_key, ref.database, ref.table)
    return _apply(ref, _update_builder(entries), _update_failure)


def _delete_builder(value_lists: Sequence[list[str]]) -> Build:
    def build(view: PartitionTableView, wanted: Optional[Sequence[int]]):
        writes, positions, errors = [], [], {}
        chosen = _positions(len(value_lists), wanted)
        keys = {position: partition_key(view, value_lists[position])
                if len(value_lists[position]) == len(view.keys) else None for position in chosen}
        current = store.get_partitions(view.item.uid, [k for k in keys.values() if k])
        touched: set[str] = set()
        for position in chosen:
            values, key = value_lists[position], keys[position]
            try:
                check_values(view, values)
                old = current.get(key) if key is not None else None
                if old is None or key is None or key in touched:
                    raise partition_not_found()
                old_values, _, old_revision = _stored(old)
                writes.append(store.PartitionWrite("delete", old_key=key, old_revision=old_revision,
                                                   old_entries=_entries_or_none(view, old_values)))
                positions.append(position)
                touched.add(key)
            except ServiceError as error:
                errors[position] = error
        return writes, positions, errors
    return build


def _delete_failure(position: int, reason: str) -> Optional[ServiceError]:
    # Gone, or changed since it was read (updated): a fresh read tells which, and deletes the latter.
    return None


def delete_partitions(ref: TableRef, value_lists: Sequence[list[str]]) -> Errors:
    """Delete partitions with their index entries. Returns the failures by position."""
    access.require("BatchDeletePartition", ref.catalog_key, ref.database, ref.table)
    return _apply(ref, _delete_builder(value_lists), _delete_failure)


def rewrite_partition_document(ref: TableRef, values: Sequence[str],
                               change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Apply ``change`` to a partition's document (and its index entries' copies), atomically;
    retried from a fresh read if the partition changes meanwhile."""
    def build(view: PartitionTableView, wanted: Optional[Sequence[int]]):
        key = partition_key(view, values)
        item = store.get_partitions(view.item.uid, [key]).get(key)
        if item is None:
            return [], [], {0: partition_not_found()}
        doc = encode_document(change(decode_document(item.doc)), "partition")
        stored_values, segment, revision = _stored(item)
        entries = _entries_or_none(view, stored_values)
        return [store.PartitionWrite("replace", key=key, values=list(stored_values), doc=doc,
                                     segment=segment, entries=entries, old_key=key,
                                     old_revision=revision, old_entries=entries,
                                     uid=item.uid, carry=store.paimon_stats(item),
                                     old_values=list(stored_values))], [0], {}

    for _ in attempts(Policy(attempts=_TABLE_RETRIES)):
        errors = _apply(ref, build, lambda position, reason: ConcurrentModificationException(reason))
        if not errors:
            return
        if isinstance(errors[0], EntityNotFoundException):
            raise errors[0]
    raise ConcurrentModificationException("The partition changed repeatedly; retry")


# ------------------------------------------------------------------------------ reads
def _render_sized(names: dict[str, str], view: PartitionTableView, doc_bytes: bytes) -> tuple[dict[str, Any], int]:
    """A stored partition as the API returns it, and (an upper bound of) its JSON size."""
    doc, size = decode_document_sized(doc_bytes)
    doc = timestamps.drop_unreadable(doc)  # stored before they were refused: would break the page
    rendered = {**doc, **names}
    return rendered, size + len(view.database.name) + len(view.item.name) + 80


def _manifest_partitions(ref: TableRef, view: PartitionTableView, names: dict[str, str],
                         keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Partitions of a governed table that hold objects without being registered, by key."""
    if not view.governed or not keys:
        return {}
    made = governed.manifest_partitions(ref.catalog_key, view.item, view.doc, view.keys, keys)
    return {key: {**doc, **names} for key, doc in made.items()}


def get_partition(ref: TableRef, values: Sequence[str]) -> dict[str, Any]:
    """One partition by its values, as the API returns it; EntityNotFoundException if none."""
    access.require("GetPartition", ref.catalog_key, ref.database, ref.table)
    view = read_partition_table(ref)
    check_values(view, values, "PartitionValues")
    key = partition_key(view, values)
    names = table_names(ref.catalog_id, view.database, view.item)
    item = store.get_partition(view.item.uid, key)
    if item is None:
        made = _manifest_partitions(ref, view, names, [key])
        if key not in made:
            raise partition_not_found()
        return made[key]
    return _render_sized(names, view, item.doc)[0]


def batch_get_partitions(ref: TableRef, wanted: Sequence[list[str]]) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """The partitions with these values that exist, and the values of those that did not fit
    in one response (to be asked for again)."""
    access.require("BatchGetPartition", ref.catalog_key, ref.database, ref.table)
    view = read_partition_table(ref)
    for values in wanted:
        check_values(view, values, "PartitionsToGet.Values")
    keys = [partition_key(view, values) for values in wanted]
    names = table_names(ref.catalog_id, view.database, view.item)
    found = store.get_partitions(view.item.uid, keys)
    made = _manifest_partitions(ref, view, names, [key for key in keys if key not in found])
    partitions, unprocessed, size = [], [], 0
    for values, key in zip(wanted, keys):
        item = found.get(key)
        if item is None and key not in made:
            continue
        if size > MAX_PAGE_BYTES:
            unprocessed.append(values)
            continue
        rendered = _render_sized(names, view, item.doc)[0] if item else made[key]
        size += len(json.dumps(rendered, default=str))
        partitions.append(rendered)
    return partitions, unprocessed


def find_partition(ref: TableRef, values: Sequence[str]) -> tuple[Table, Any]:
    """The table item and the partition item with these values, or EntityNotFoundException."""
    view = read_partition_table(ref)
    check_values(view, values, "PartitionValues")
    item = store.get_partition(view.item.uid, partition_key(view, values))
    if item is None:
        raise partition_not_found()
    return view.item, item


def listing(keys: list[tuple[str, str]], expression: Optional[str], segment: Optional[tuple[int, int]],
            exclude_columns: bool, limit: Optional[int]) -> governed.Listing:
    """What a listing asks for, checked: the expression bound to the partition keys, and the
    segment (total, number) as a run of buckets."""
    expression = (expression or "").strip()
    bound = expressions.bind(expressions.parse_expression(expression), keys)
    total, number = segment or (1, 0)
    if number >= total:
        raise InvalidInputException(
            f"Segment.SegmentNumber ({number}) must be less than Segment.TotalSegments ({total})")
    # A segment is a contiguous run of buckets, filtered by DynamoDB (see segment_buckets).
    return governed.Listing(expression, bound, keys, segment_buckets(total, number),
                            (total, number) if segment else None, bool(exclude_columns), limit or 1000)


# Plans chosen, by what decides them: the expression's text (its bound form follows from it and
# the keys), the partition keys and the types their sort keys were encoded with, and the ACTIVE
# indexes. A warm GetPartitions plans twice (the guess read ahead, then the fresh read), and
# the guess's planning is on the way to its Query. Plans are frozen and never changed.
_MAX_PLANS = 256
_plans: dict[tuple, planner.Plan] = {}


def _plan(view: PartitionTableView, wanted: governed.Listing) -> planner.Plan:
    active = index_specs(view.item, view.keys, ("ACTIVE",))
    key = (wanted.expression, tuple(view.keys), tuple(view.key_types), tuple(active))
    plan = _plans.get(key)
    if plan is None:
        plan = planner.choose_plan(wanted.bound, view.keys, view.key_types, active)
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        _plans[key] = plan
    return plan


class StoredListing:
    """The registered partitions of a table matching a listing, in key order of the plan's
    source, a page at a time. ``scope``: what a resume position is only valid for."""

    # Partitions fetched through the digest are rendered through service/partition_cache.py:
    # only for a rendering that reads nothing of the item but its document.
    caches_renders = True

    def __init__(self, view: PartitionTableView, names: dict[str, str], wanted: governed.Listing) -> None:
        self.view, self.names, self.wanted = view, names, wanted
        self.plan = _plan(view, wanted)
        self._matches = expressions.matcher(wanted.bound)
        total, number = wanted.segment or (1, 0)
        self.scope = (view.item.uid, wanted.expression, total, number, wanted.exclude_columns, self.plan.source)

    def page(self, position: Any) -> tuple[list[str], Any]:
        """Partition JSON texts after ``position`` (None: from the start), and the position to
        resume after (None: no more)."""
        view, plan, wanted = self.view, self.plan, self.wanted
        limit = wanted.limit
        segments_filter = wanted.buckets if wanted.segment else None
        start_range, after = position if position else (0, None)
        # A page returns at most limit + 1 items (the one after says whether a token is due).
        demand = Demand(limit + 1)
        # The work budget counts from here: reading and evaluating the digest is work too.
        deadline = work_deadline()

        digest = self._digest_keys(after, deadline) if start_range == 0 else None
        if digest is not None:
            source, keys = digest
            flavour = self._flavour() if self.caches_renders and partition_cache.enabled() else None
            rendering = partial(self._render, digest=source) if flavour is None else \
                partial(self._render_cached, source=source, flavour=flavour)
            page = take_page(((0, item) for item in source.partitions(keys, limit + 1, flavour)), limit,
                             rendering, lambda pair: [pair[0], pair[1].key], sized=True, deadline=deadline)
            source.prune_if_stale()
            return page

        def candidates() -> Iterator[tuple[int, Any]]:
            index_uid = plan.index.uid if plan.index else None
            for number_of_range in range(start_range, len(plan.bounds)):
                low, high = plan.bounds[number_of_range]
                resume = after if number_of_range == start_range else None
                for item in store.scan_range(view.item.uid, low, high, resume, index_uid, segments_filter, demand):
                    yield number_of_range, item

        def render(pair: tuple[int, Any]) -> tuple[Any, int] | None:
            rendered = self._render(pair)
            if rendered is not None:
                demand.keep()  # the scan's next DynamoDB pages are sized from what is kept
            return rendered

        return take_page(candidates(), limit, render, lambda pair: [pair[0], pair[1].key], sized=True,
                         deadline=deadline)

    def _flavour(self) -> tuple:
        """What the rendered text depends on besides the partition's document."""
        return (*sorted(self.names.items()), self.wanted.exclude_columns)

    def _render_cached(self, pair: tuple[int, Any], source: DigestSource, flavour: tuple) -> tuple[Any, int] | None:
        """As ``_render`` for a partition fetched through the digest, through the cache of
        rendered partitions: a cached one is not rendered again, a fetched one is kept."""
        item, wanted = pair[1], self.wanted
        if isinstance(item, partition_cache.Cached):
            assert item.values is not None  # a missing key is never yielded
            if not wanted.buckets[0] <= item.segment <= wanted.buckets[1]:
                return None
            if not source.evaluated(item.values) and not self._matches(item.values):
                return None
            return item.text, item.size
        rendered = self._render(pair, source)
        if rendered is not None:
            partition_cache.store(source.table_uid, source.identity, flavour, partition_cache.Cached(
                item.key, tuple(item.values), item.segment, rendered[0], rendered[1]))
        return rendered

    def _render(self, pair: tuple[int, Any], digest: Optional[DigestSource] = None) -> tuple[Any, int] | None:
        """A candidate as response JSON text and its size; None when it does not match. With
        the ``digest`` it was fetched from, values the digest evaluated are not evaluated again."""
        item, wanted = pair[1], self.wanted
        if not wanted.buckets[0] <= item.segment <= wanted.buckets[1]:
            return None
        if not (digest is not None and digest.evaluated(item.values)) and not self._matches(item.values):
            return None
        if wanted.exclude_columns:
            return render_text_without_columns(self.names, item.doc)
        return render_text(self.names, item.doc)

    def _digest_keys(self, after: Optional[str], deadline: float) -> Optional[tuple[DigestSource, list[str]]]:
        """With a plan that would read every partition, for an expression or a segment: the
        table's digest and the keys it says may match, after ``after``. None: read as planned
        (an empty listing asks for everything; nearly everything matching is cheaper so; and a
        digest not read and evaluated within its share of the work budget, e.g. the backlog of
        deltas a bulk load leaves before its compaction: the plain read then examines partitions
        from ``after`` until ``deadline``, and the next page tries the digest again)."""
        wanted, plan = self.wanted, self.plan
        if not partition_digest.ENABLED or plan.index is not None or plan.bounds != [(None, None)]:
            return None
        segmented = wanted.segment is not None and wanted.segment[0] > 1
        if isinstance(wanted.bound, expressions.TrueExpr) and not segmented:
            return None
        source = DigestSource(self.view.item, self.view.key_types, deadline)
        if not source.usable:
            return None
        buckets = wanted.buckets if segmented else None
        try:
            keys = source.matching_keys(wanted.bound, buckets, after)
        except partition_digest.Late:
            return None
        return None if keys is None else (source, keys)


@dataclass
class _TableAsRead:
    """With a TransactionId or QueryAsOfTime, the table as that reader sees it."""

    database: Database
    item: Table
    doc: dict[str, Any]
    stored: bool  # False: created by the reading transaction, not committed yet
    transaction: Optional[Transaction]  # the reading transaction, loaded and checked


def _table_as_read(ctx: RequestContext, ref: TableRef, transaction_id: Optional[str],
                   as_of: Optional[float]) -> _TableAsRead:
    """EntityNotFoundException if the reader does not see the table."""
    database = require_database(ref.catalog_key, ref.database)
    name = fold(ref.table)
    if as_of is not None:
        item = require_table(database, name)
        return _TableAsRead(database, item, require_table_as_of(item, as_of)[0], True, None)
    view = database_snapshot(ctx, transaction_id, database, name)
    seen = view.get(name)
    if seen is None:
        raise table_not_found(name)
    stored = catalog.get_table(database.uid, name)
    return _TableAsRead(database, seen[0], seen[1], stored is not None and stored.uid == seen[0].uid,
                        view.transaction)


def _manifest_listing(ctx: RequestContext, ref: TableRef, transaction_id: Optional[str], as_of: Optional[float],
                      table: Table, table_doc: dict[str, Any], names: dict[str, str],
                      wanted: governed.Listing, reader: Optional[Transaction] = None) -> governed.ManifestListing:
    """A governed table's listing at the reader's snapshot (``reader``: the request's
    transaction, when loaded and checked already)."""
    snapshot, reader = (reader.snapshot_seq, reader) if reader is not None else \
        snapshot_of(ctx, ref.catalog_key, transaction_id, as_of)
    return governed.ManifestListing(ref.catalog_key, table, table_doc, names, wanted, snapshot, reader,
                                    as_of, transaction_id)


def list_partitions(ctx: RequestContext, ref: TableRef, transaction_id: Optional[str], as_of: Optional[float],
                    expression: Optional[str], segment: Optional[tuple[int, int]], exclude_columns: bool,
                    limit: Optional[int], read_position: Optional[Callable[[tuple], Any]] = None
                    ) -> StoredListing | governed.ManifestListing | prefetch.ConfirmedListing | None:
    """The partitions of ``ref`` matching ``expression`` (in ``segment`` (total, number) when
    given) as a reader in ``transaction_id`` or at ``as_of`` (or the latest state) sees them,
    ready to page in key order of the plan's source. Governed tables: the partitions their
    manifest holds at the reader's snapshot. None: a table the reader's own transaction created,
    which has no partitions yet. Raises, before any page is read, what a missing table, a bad
    transaction or a bad expression or segment deserves. ``read_position(scope)``: the position
    the request resumes from, for a listing of that scope (lets the first page be read ahead)."""
    access.require("GetPartitions", ref.catalog_key, ref.database, ref.table)
    if transaction_id or as_of is not None:
        read = _table_as_read(ctx, ref, transaction_id, as_of)
        if governed.is_governed(read.doc):
            names = table_names(ref.catalog_id, read.database, read.item)
            return _manifest_listing(ctx, ref, transaction_id, as_of, read.item, read.doc, names,
                                     listing(partition_keys_of(read.doc), expression, segment, exclude_columns, limit),
                                     read.transaction)
        if not read.stored:
            return None
    guess = None
    if not transaction_id and as_of is None and read_position is not None:
        guess = _guess(ref, expression, segment, exclude_columns, limit, read_position)
    if guess is None:
        return _latest_listing(ctx, ref, transaction_id, as_of, expression, segment, exclude_columns, limit)
    guessed, position = guess
    fresh = prefetch.Background(
        lambda: _latest_listing(ctx, ref, transaction_id, as_of, expression, segment, exclude_columns, limit))
    early = prefetch.ReadAhead(guessed.page, position)  # the index Query, while a worker reads the table
    lister = fresh.result()
    if isinstance(lister, StoredListing) and _same_reads(guessed, lister):
        return prefetch.ConfirmedListing(lister, early)
    return lister


def _latest_listing(ctx: RequestContext, ref: TableRef, transaction_id: Optional[str], as_of: Optional[float],
                    expression: Optional[str], segment: Optional[tuple[int, int]], exclude_columns: bool,
                    limit: Optional[int]) -> StoredListing | governed.ManifestListing:
    """The listing of the table as it is now (read afresh); a governed one's manifest as the
    reader (``transaction_id``, ``as_of``) sees it."""
    view = read_partition_table(ref)
    wanted = listing(view.keys, expression, segment, exclude_columns, limit)
    names = table_names(ref.catalog_id, view.database, view.item)
    if view.governed:
        return _manifest_listing(ctx, ref, transaction_id, as_of, view.item, view.doc, names, wanted)
    return StoredListing(view, names, wanted)


def _guess(ref: TableRef, expression: Optional[str], segment: Optional[tuple[int, int]],
           exclude_columns: bool, limit: Optional[int],
           read_position: Callable[[tuple], Any]) -> Optional[tuple[StoredListing, Any]]:
    """The listing as the table was when this process last read it, and the position to read
    its page from (see chalicelib.service.prefetch); None when there is no such guess or it
    would not read an index (a scan's latency is not in the round trips, and a wrong guess must
    stay cheap)."""
    hint = _read_hints.get(_view_key(ref))
    if hint is None or hint.governed:
        return None
    try:
        wanted = listing(hint.keys, expression, segment, exclude_columns, limit)
        guess = StoredListing(hint, table_names(ref.catalog_id, hint.database, hint.item), wanted)
        if guess.plan.index is None:
            return None
        return guess, read_position(guess.scope)
    except ServiceError:
        return None  # a bad expression or token: the fresh read's listing says so (or not)
    except Exception:  # noqa: BLE001 - a guess from a stale view must never fail the request
        log.exception("read-ahead guess failed; reading as planned")
        return None


def _same_reads(guess: StoredListing, fresh: StoredListing) -> bool:
    """Whether ``guess`` reads and renders exactly what ``fresh`` does: the same table incarnation
    (its uid is in the scope), partition keys and types, the same index and key ranges (so the
    same ACTIVE index definitions), the same names in the answer."""
    return (guess.scope == fresh.scope and guess.plan.index == fresh.plan.index
            and guess.plan.bounds == fresh.plan.bounds and guess.names == fresh.names
            and guess.view.keys == fresh.view.keys and guess.view.key_types == fresh.view.key_types)
