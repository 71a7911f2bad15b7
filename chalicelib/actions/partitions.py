"""Partition API: Create/BatchCreate/Update/BatchUpdate/Delete/BatchDelete/Get/BatchGet
Partition(s), and GetPartitions with the expression planner."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from chalicelib import json_text, timestamps
from chalicelib.actions import action
from chalicelib.actions import governed_partitions as governed
from chalicelib.actions.common import (MAX_PAGE_BYTES, fold, make_token, now, read_token,
                                       require_database, require_table, take_page)
from chalicelib.actions.glue_transactions import require_table_as_of, table_view
from chalicelib.actions.partition_indexes import LIVE, index_specs, partition_keys_of, resume_backfills
from chalicelib.context import RequestContext
from chalicelib.domain import expressions, planner
from chalicelib.domain.partition_keys import (IndexSpec, IndexValueError, index_entry_key,
                                              partition_sort_key, segment_buckets, segment_of)
from chalicelib.errors import (ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, ServiceError, partition_already_exists,
                               partition_not_found, table_not_found)
from chalicelib.store import catalog
from chalicelib.store import partitions as store
from chalicelib.json_text import JsonFragments, with_members
from chalicelib.store.documents import decode_document, decode_document_sized, document_text, encode_document
from chalicelib.store.models import DatabaseItem, TableItem, TransactionItem

_PARTITION_INPUT_MEMBERS = ("StorageDescriptor", "Parameters", "LastAccessTime", "LastAnalyzedTime")
_TABLE_RETRIES = 5


@dataclass
class TableView:
    """What partition actions need to know about a table, read once per request."""

    database: DatabaseItem
    item: TableItem
    keys: list[tuple[str, str]]
    key_types: list[str]
    indexes: list[IndexSpec]  # CREATING and ACTIVE: every write maintains both
    doc: dict[str, Any]  # the Table document

    @property
    def governed(self) -> bool:
        """TableType GOVERNED: its manifest holds partitions too."""
        return governed.is_governed(self.doc)


def _view_of(database: DatabaseItem, item: TableItem) -> TableView:
    item = resume_backfills(item)  # an abandoned backfill must not hold its index CREATING
    doc = catalog.load(item)
    keys = partition_keys_of(doc)
    return TableView(database, item, keys, list(item.key_types or []), index_specs(item, keys, LIVE), doc)


def _table_view(ctx: RequestContext, params: dict[str, Any]) -> TableView:
    database = require_database(ctx, params, params["DatabaseName"])
    return _view_of(database, require_table(database, params["TableName"]))


def _reread(view: TableView) -> TableView:
    item = catalog.get_table(view.database.uid, view.item.name)
    if item is None or item.uid != view.item.uid:
        raise table_not_found(view.item.name)
    return _view_of(view.database, item)


def _check_values(view: TableView, values: Sequence[str], member: str = "Values") -> None:
    if not view.keys:
        raise InvalidInputException(f"Table {view.item.name} is not partitioned: it has no partition keys")
    if len(values) != len(view.keys):
        raise InvalidInputException(
            f"{member} has {len(values)} value(s) but table {view.item.name} has {len(view.keys)} "
            f"partition key(s): {', '.join(n for n, _ in view.keys)}")


def _input_values(partition_input: dict[str, Any], member: str = "PartitionInput.Values") -> list[str]:
    """A PartitionInput's Values, which botocore's model leaves optional but a partition needs."""
    values = partition_input.get("Values")
    if values is None:
        raise InvalidInputException(f"{member} is required: the partition's values, one per partition key")
    return values


def _key(view: TableView, values: Sequence[str]) -> str:
    return partition_sort_key(values, view.key_types)


def _entries(view: TableView, values: Sequence[str]) -> list[tuple[str, str]]:
    """Index entries for a partition; InvalidInputException when an indexed value is unfit."""
    entries = []
    for spec in view.indexes:
        try:
            entries.append((spec.uid, index_entry_key(values, spec)))
        except IndexValueError as error:
            raise InvalidInputException(f"{error.message} (partition index {spec.name})") from None
    return entries


def _partition_document(partition_input: dict[str, Any], creation_time: float,
                        values: Sequence[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {"Values": list(values)}
    doc.update({k: partition_input[k] for k in _PARTITION_INPUT_MEMBERS if k in partition_input})
    doc["CreationTime"] = creation_time
    return doc


def _render(ctx: RequestContext, params: dict[str, Any], view: TableView, doc_bytes: bytes,
            exclude_columns: bool = False) -> dict[str, Any]:
    return _render_sized(ctx, params, view, doc_bytes, exclude_columns)[0]


def _render_sized(ctx: RequestContext, params: dict[str, Any], view: TableView, doc_bytes: bytes,
                  exclude_columns: bool = False) -> tuple[dict[str, Any], int]:
    """A stored partition as the API returns it, and (an upper bound of) its JSON size."""
    doc, size = decode_document_sized(doc_bytes)
    doc = timestamps.drop_unreadable(doc)  # stored before they were refused: would break the page
    if exclude_columns and "StorageDescriptor" in doc:
        doc["StorageDescriptor"] = {k: v for k, v in doc["StorageDescriptor"].items() if k != "Columns"}
    rendered = {**doc, **_names(ctx, params, view)}
    return rendered, size + len(view.database.name) + len(view.item.name) + 80


def _names(ctx: RequestContext, params: dict[str, Any], view: TableView) -> dict[str, str]:
    """The members a response adds to a stored partition document."""
    return _table_names(ctx, params, view.database, view.item)


def _table_names(ctx: RequestContext, params: dict[str, Any], database: DatabaseItem, table: TableItem) -> dict[str, str]:
    return {"DatabaseName": database.name, "TableName": table.name, "CatalogId": ctx.catalog_id(params)}


def _render_text(names: dict[str, str], doc_bytes: bytes) -> tuple[str, int]:
    """A stored partition as response JSON text, spliced from the stored text (decoded only in
    the rare case it may hold a timestamp no client can parse, which is then left out)."""
    text = with_members(timestamps.readable_text(document_text(doc_bytes)), names)
    return text, len(text)


def _error_detail(error: ServiceError) -> dict[str, str]:
    return {"ErrorCode": error.code, "ErrorMessage": error.message}


# Partition *writes* reuse a table read for a moment: safe because every write transaction
# checks that the table item still has the uid, version and index epoch of the view it was
# built from (store.partitions), and a failed check means a fresh read and a rebuild. Saves
# the two GetItems (database, table) of back-to-back BatchCreatePartition calls. Reads never
# use it: a read must see a deleted or changed table at once.
_VIEW_SECONDS = 2.0
_MAX_VIEWS = 1024
_views: dict[tuple, tuple[float, TableView]] = {}


def _view_key(ctx: RequestContext, params: dict[str, Any]) -> tuple:
    return (ctx.account_id, ctx.region, ctx.catalog_id(params), fold(params["DatabaseName"]),
            fold(params["TableName"]))


def _remember(key: tuple, view: TableView) -> TableView:
    if len(_views) >= _MAX_VIEWS:
        _views.clear()
    _views[key] = (time.monotonic() + _VIEW_SECONDS, view)
    return view


def _write_view(ctx: RequestContext, params: dict[str, Any], key: tuple) -> tuple[TableView, bool]:
    """(view, whether it came from the cache)."""
    hit = _views.get(key)
    if hit is not None and hit[0] > time.monotonic():
        return hit[1], True
    return _remember(key, _table_view(ctx, params)), False


def _apply(ctx: RequestContext, params: dict[str, Any],
           build: Callable[[TableView], tuple[list[store.PartitionWrite], list[int], dict[int, ServiceError]]],
           failure: Callable[[int, str], ServiceError]) -> dict[int, ServiceError]:
    """Build writes against the current table and apply them, re-reading the table and
    rebuilding when its indexes changed underneath. Returns errors by request position."""
    key = _view_key(ctx, params)
    view, cached = _write_view(ctx, params, key)
    for _ in range(_TABLE_RETRIES):
        writes, positions, errors = build(view)
        if cached and not writes:
            # Nothing to write means no transaction to check the cached table: confirm it.
            view, cached = _remember(key, _table_view(ctx, params)), False
            continue
        try:
            failed = store.apply_writes(view.item, writes)
        except store.TableChanged:
            _views.pop(key, None)
            # A cached view may predate a re-creation of the table: read it afresh by name.
            view = _table_view(ctx, params) if cached else _reread(view)
            view, cached = _remember(key, view), False
            continue
        for write_index, reason in failed.items():
            errors[positions[write_index]] = failure(positions[write_index], reason)
        return errors
    raise ConcurrentModificationException("The table changed repeatedly while writing partitions; retry")


# ----------------------------------------------------------------------------------- create
def _create_builder(inputs: Sequence[dict[str, Any]]):
    def build(view: TableView):
        writes, positions, errors = [], [], {}
        seen: set[str] = set()
        created = now()
        for position, partition_input in enumerate(inputs):
            try:
                values = _input_values(partition_input)
                _check_values(view, values)
                key = _key(view, values)
                if key in seen:
                    raise partition_already_exists()
                doc = encode_document(_partition_document(partition_input, created, values), "partition")
                writes.append(store.PartitionWrite("create", key=key, values=list(values), doc=doc,
                                                   segment=segment_of(key), entries=_entries(view, values),
                                                   uid=catalog.new_uid()))
                positions.append(position)
                seen.add(key)
            except ServiceError as error:
                errors[position] = error
        return writes, positions, errors
    return build


def _create_failure(position: int, reason: str) -> ServiceError:
    return partition_already_exists()


@action("glue", "CreatePartition")
def create_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create one partition (with its index entries)."""
    errors = _apply(ctx, params, _create_builder([params["PartitionInput"]]), _create_failure)
    if errors:
        raise errors[0]
    return {}


@action("glue", "BatchCreatePartition")
def batch_create_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create up to 100 partitions; each succeeds or fails on its own (Errors lists failures)."""
    inputs = params["PartitionInputList"]
    errors = _apply(ctx, params, _create_builder(inputs), _create_failure)
    return {"Errors": [{"PartitionValues": inputs[p].get("Values") or [], "ErrorDetail": _error_detail(e)}
                       for p, e in sorted(errors.items())]}


# ----------------------------------------------------------------------------------- update
def _update_builder(entries: Sequence[tuple[list[str], dict[str, Any]]]):
    def build(view: TableView):
        writes, positions, errors = [], [], {}
        keys = []
        for values, partition_input in entries:
            keys.append(_key(view, values) if len(values) == len(view.keys) else None)
        current = store.get_partitions(view.item.uid, [k for k in keys if k])
        touched: set[str] = set()
        for position, ((values, partition_input), old_key) in enumerate(zip(entries, keys)):
            try:
                _check_values(view, values, "PartitionValueList")
                new_values = _input_values(partition_input)
                _check_values(view, new_values, "PartitionInput.Values")
                old = current.get(old_key)
                if old is None:
                    raise partition_not_found()
                new_key = _key(view, new_values)
                if old_key in touched or new_key in touched:
                    raise ConcurrentModificationException("The batch changes this partition twice")
                old_doc = decode_document(old.doc)
                doc = _partition_document(partition_input, old_doc.get("CreationTime", now()), new_values)
                writes.append(store.PartitionWrite(
                    "replace", key=new_key, values=list(new_values),
                    doc=encode_document(doc, "partition"), segment=segment_of(new_key),
                    entries=_entries(view, new_values), old_key=old_key, old_revision=old.revision,
                    old_entries=_entries_or_none(view, old.values), uid=old.uid or catalog.new_uid()))
                positions.append(position)
                touched |= {old_key, new_key}
            except ServiceError as error:
                errors[position] = error
        return writes, positions, errors
    return build


def _entries_or_none(view: TableView, values: Sequence[str]) -> list[tuple[str, str]]:
    """Entries an existing partition has (a CREATING index may not have one yet: harmless)."""
    entries = []
    for spec in view.indexes:
        try:
            entries.append((spec.uid, index_entry_key(values, spec)))
        except IndexValueError:
            pass
    return entries


def _update_failure(position: int, reason: str) -> ServiceError:
    if reason == store.EXISTS:
        return partition_already_exists()
    return ConcurrentModificationException("Partition was changed or deleted concurrently; retry.")


@action("glue", "UpdatePartition")
def update_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace a partition's definition (its values may change: the partition moves)."""
    errors = _apply(ctx, params, _update_builder([(params["PartitionValueList"], params["PartitionInput"])]),
                    _update_failure)
    if errors:
        raise errors[0]
    return {}


@action("glue", "BatchUpdatePartition")
def batch_update_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Update up to 100 partitions; failures are reported per entry."""
    entries = [(e["PartitionValueList"], e["PartitionInput"]) for e in params["Entries"]]
    errors = _apply(ctx, params, _update_builder(entries), _update_failure)
    return {"Errors": [{"PartitionValueList": entries[p][0], "ErrorDetail": _error_detail(e)}
                       for p, e in sorted(errors.items())]}


# ----------------------------------------------------------------------------------- delete
def _delete_builder(value_lists: Sequence[list[str]]):
    def build(view: TableView):
        writes, positions, errors = [], [], {}
        keys = [_key(view, v) if len(v) == len(view.keys) else None for v in value_lists]
        current = store.get_partitions(view.item.uid, [k for k in keys if k])
        touched: set[str] = set()
        for position, (values, key) in enumerate(zip(value_lists, keys)):
            try:
                _check_values(view, values)
                old = current.get(key)
                if old is None or key in touched:
                    raise partition_not_found()
                writes.append(store.PartitionWrite("delete", old_key=key, old_revision=old.revision,
                                                   old_entries=_entries_or_none(view, old.values)))
                positions.append(position)
                touched.add(key)
            except ServiceError as error:
                errors[position] = error
        return writes, positions, errors
    return build


def _delete_failure(position: int, reason: str) -> ServiceError:
    return partition_not_found()


@action("glue", "DeletePartition")
def delete_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one partition with its index entries."""
    errors = _apply(ctx, params, _delete_builder([params["PartitionValues"]]), _delete_failure)
    if errors:
        raise errors[0]
    return {}


@action("glue", "BatchDeletePartition")
def batch_delete_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete up to 25 partitions; failures are reported per partition."""
    value_lists = [p["Values"] for p in params["PartitionsToDelete"]]
    errors = _apply(ctx, params, _delete_builder(value_lists), _delete_failure)
    return {"Errors": [{"PartitionValues": value_lists[p], "ErrorDetail": _error_detail(e)}
                       for p, e in sorted(errors.items())]}


# ------------------------------------------------------------------------------------- read
@action("glue", "GetPartition")
def get_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One partition by its values."""
    view = _table_view(ctx, params)
    values = params["PartitionValues"]
    _check_values(view, values, "PartitionValues")
    key = _key(view, values)
    item = store.get_partition(view.item.uid, key)
    if item is None:
        made = _manifest_partitions(ctx, params, view, [key])
        if key not in made:
            raise partition_not_found()
        return {"Partition": made[key]}
    return {"Partition": _render(ctx, params, view, item.doc)}


def _manifest_partitions(ctx: RequestContext, params: dict[str, Any], view: TableView,
                         keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Partitions of a governed table that hold objects without being registered, by key."""
    if not view.governed or not keys:
        return {}
    made = governed.manifest_partitions(ctx, params, view.item, view.doc, view.keys, keys)
    names = _names(ctx, params, view)
    return {key: {**doc, **names} for key, doc in made.items()}


@action("glue", "BatchGetPartition")
def batch_get_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Up to 1,000 partitions by values; what does not fit in one response is UnprocessedKeys."""
    view = _table_view(ctx, params)
    wanted = [p["Values"] for p in params["PartitionsToGet"]]
    for values in wanted:
        _check_values(view, values, "PartitionsToGet.Values")
    keys = [_key(view, values) for values in wanted]
    found = store.get_partitions(view.item.uid, keys)
    made = _manifest_partitions(ctx, params, view, [key for key in keys if key not in found])
    partitions, unprocessed, size = [], [], 0
    for values, key in zip(wanted, keys):
        item = found.get(key)
        if item is None and key not in made:
            continue
        if size > MAX_PAGE_BYTES:
            unprocessed.append({"Values": values})
            continue
        rendered = _render(ctx, params, view, item.doc) if item else made[key]
        size += len(json.dumps(rendered, default=str))
        partitions.append(rendered)
    return {"Partitions": partitions, "UnprocessedKeys": unprocessed}


@dataclass
class _TableAsRead:
    """With a TransactionId or QueryAsOfTime, the table as that reader sees it."""

    database: DatabaseItem
    item: TableItem
    doc: dict[str, Any]
    stored: bool  # False: created by the reading transaction, not committed yet
    transaction: Optional[TransactionItem]  # the reading transaction, loaded and checked


def _table_as_read(ctx: RequestContext, params: dict[str, Any]) -> _TableAsRead:
    """EntityNotFoundException if the reader does not see the table."""
    database = require_database(ctx, params, params["DatabaseName"])
    name = fold(params["TableName"])
    if params.get("QueryAsOfTime") is not None:
        item = require_table(database, name)
        return _TableAsRead(database, item, require_table_as_of(item, params["QueryAsOfTime"])[0], True, None)
    view = table_view(ctx, params, database, name)
    seen = view.get(name)
    if seen is None:
        raise table_not_found(name)
    stored = catalog.get_table(database.uid, name)
    return _TableAsRead(database, seen[0], seen[1], stored is not None and stored.uid == seen[0].uid,
                        view.transaction)


def _listing(params: dict[str, Any], keys: list[tuple[str, str]]) -> governed.Listing:
    expression = (params.get("Expression") or "").strip()
    bound = expressions.bind(expressions.parse_expression(expression), keys)
    segment = params.get("Segment")
    total, number = (segment["TotalSegments"], segment["SegmentNumber"]) if segment else (1, 0)
    if number >= total:
        raise InvalidInputException(
            f"Segment.SegmentNumber ({number}) must be less than Segment.TotalSegments ({total})")
    # A segment is a contiguous run of buckets, filtered by DynamoDB (see segment_buckets).
    return governed.Listing(expression, bound, keys, segment_buckets(total, number),
                            (total, number) if segment else None, bool(params.get("ExcludeColumnSchema")),
                            params.get("MaxResults") or 1000)


@action("glue", "GetPartitions")
def get_partitions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Partitions matching an expression, in key order of the plan's source, paged; with
    Segment, only the partitions of that segment (segments are disjoint and cover all).
    Governed tables: the partitions their manifest holds as the reader sees it."""
    if params.get("TransactionId") or params.get("QueryAsOfTime") is not None:
        read = _table_as_read(ctx, params)
        if governed.is_governed(read.doc):
            return governed.get_partitions(ctx, params, read.item, read.doc,
                                           _table_names(ctx, params, read.database, read.item),
                                           _listing(params, partition_keys_of(read.doc)), read.transaction)
        if not read.stored:
            return {"Partitions": []}  # created by its own transaction: no partitions yet
    view = _table_view(ctx, params)
    listing = _listing(params, view.keys)
    if view.governed:
        return governed.get_partitions(ctx, params, view.item, view.doc, _names(ctx, params, view), listing)
    bound, buckets, expression = listing.bound, listing.buckets, listing.expression
    active = index_specs(view.item, view.keys, ("ACTIVE",))
    plan = planner.choose_plan(bound, view.keys, view.key_types, active)
    total, number = listing.segment or (1, 0)
    segments_filter = buckets if listing.segment else None
    exclude, limit = listing.exclude_columns, listing.limit
    scope = (view.item.uid, expression, total, number, exclude, plan.source)
    position = read_token(ctx, params, *scope)
    start_range, after = position if position else (0, None)

    def candidates() -> Iterator[tuple[int, Any]]:
        index_uid = plan.index.uid if plan.index else None
        for number_of_range in range(start_range, len(plan.bounds)):
            low, high = plan.bounds[number_of_range]
            resume = after if number_of_range == start_range else None
            # A page needs at most limit + 1 items (the one after says whether a token is due).
            for item in store.scan_range(view.item.uid, low, high, resume, index_uid, segments_filter, limit + 1):
                yield number_of_range, item

    names = _names(ctx, params, view)

    def render(pair: tuple[int, Any]) -> tuple[Any, int] | None:
        item = pair[1]
        if not buckets[0] <= item.segment <= buckets[1] or not expressions.evaluate(bound, item.values):
            return None
        if exclude:  # rare: the document must be edited, so decode it
            rendered, size = _render_sized(ctx, params, view, item.doc, exclude)
            return json_text.dumps(rendered), size
        return _render_text(names, item.doc)

    page, last = take_page(candidates(), limit, render, lambda pair: [pair[0], pair[1].key], sized=True)
    token = make_token(ctx, last, *scope)
    return {"Partitions": JsonFragments(page), **({"NextToken": token} if token else {})}


# ------------------------------------------------------------- used by column statistics
def find_partition(ctx: RequestContext, params: dict[str, Any], values: Sequence[str]) -> tuple[TableItem, Any]:
    """The table item and the partition item with these values, or EntityNotFoundException."""
    view = _table_view(ctx, params)
    _check_values(view, values, "PartitionValues")
    item = store.get_partition(view.item.uid, _key(view, values))
    if item is None:
        raise partition_not_found()
    return view.item, item


def rewrite_partition_document(ctx: RequestContext, params: dict[str, Any], values: Sequence[str],
                               change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Apply ``change`` to a partition's document (and its index entries' copies), atomically;
    retried from a fresh read if the partition changes meanwhile."""
    def build(view: TableView):
        key = _key(view, values)
        item = store.get_partitions(view.item.uid, [key]).get(key)
        if item is None:
            return [], [], {0: partition_not_found()}
        doc = encode_document(change(decode_document(item.doc)), "partition")
        entries = _entries_or_none(view, item.values)
        return [store.PartitionWrite("replace", key=key, values=list(item.values), doc=doc,
                                     segment=item.segment, entries=entries, old_key=key,
                                     old_revision=item.revision, old_entries=entries,
                                     uid=item.uid)], [0], {}

    for _ in range(_TABLE_RETRIES):
        errors = _apply(ctx, params, build, lambda position, reason: ConcurrentModificationException(reason))
        if not errors:
            return
        if isinstance(errors[0], EntityNotFoundException):
            raise errors[0]
    raise ConcurrentModificationException("The partition changed repeatedly; retry")
