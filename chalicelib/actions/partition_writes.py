"""Partition writes: Create/BatchCreate/Update/BatchUpdate/Delete/BatchDelete Partition (plus
``rewrite_partition_document`` for column statistics), each partition written with its index
entries in one transaction."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from chalicelib import clock
from chalicelib.actions import action
from chalicelib.actions.common import fold, now
from chalicelib.actions.partition_table import (PartitionTableView, check_values, partition_key,
                                                read_partition_table, reread_partition_table)
from chalicelib.context import RequestContext
from chalicelib.domain.partition_keys import IndexValueError, index_entry_key, segment_of
from chalicelib.errors import (ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, ServiceError, partition_already_exists,
                               partition_not_found)
from chalicelib.store import catalog
from chalicelib.store import partitions as store
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.retry import Policy, attempts


_PARTITION_INPUT_MEMBERS = ("StorageDescriptor", "Parameters", "LastAccessTime", "LastAnalyzedTime")
_TABLE_RETRIES = 5


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


def _partition_document(partition_input: dict[str, Any], creation_time: float,
                        values: Sequence[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {"Values": list(values)}
    doc.update({k: partition_input[k] for k in _PARTITION_INPUT_MEMBERS if k in partition_input})
    doc["CreationTime"] = creation_time
    return doc


def _error_detail(error: ServiceError) -> dict[str, str]:
    return {"ErrorCode": error.code, "ErrorMessage": error.message}


# Partition *writes* reuse a table read for a moment: safe because every write transaction
# checks that the table item still has the uid, version and index epoch of the view it was
# built from (store.partitions), and a failed check means a fresh read and a rebuild. Saves
# the two GetItems (database, table) of back-to-back BatchCreatePartition calls. Reads never
# use it: a read must see a deleted or changed table at once.
_VIEW_SECONDS = 2.0
_MAX_VIEWS = 1024
_views: dict[tuple, tuple[float, PartitionTableView]] = {}


def _view_key(ctx: RequestContext, params: dict[str, Any]) -> tuple:
    return (ctx.account_id, ctx.region, ctx.catalog_id(params), fold(params["DatabaseName"]),
            fold(params["TableName"]))


def _remember(key: tuple, view: PartitionTableView) -> PartitionTableView:
    if len(_views) >= _MAX_VIEWS:
        _views.clear()
    _views[key] = (clock.monotonic() + _VIEW_SECONDS, view)
    return view


def _write_view(ctx: RequestContext, params: dict[str, Any], key: tuple) -> tuple[PartitionTableView, bool]:
    """(view, whether it came from the cache)."""
    hit = _views.get(key)
    if hit is not None and hit[0] > clock.monotonic():
        return hit[1], True
    return _remember(key, read_partition_table(ctx, params)), False


def _apply(ctx: RequestContext, params: dict[str, Any],
           build: Callable[[PartitionTableView], tuple[list[store.PartitionWrite], list[int], dict[int, ServiceError]]],
           failure: Callable[[int, str], ServiceError]) -> dict[int, ServiceError]:
    """Build writes against the current table and apply them, re-reading the table and
    rebuilding when its indexes changed underneath. Returns errors by request position."""
    key = _view_key(ctx, params)
    view, cached = _write_view(ctx, params, key)
    # A retry re-reads what changed (often only a cached view gone stale): no pause before it.
    for _ in attempts(Policy(attempts=_TABLE_RETRIES, base_delay=0.0)):
        writes, positions, errors = build(view)
        if cached and not writes:
            # Nothing to write means no transaction to check the cached table: confirm it.
            view, cached = _remember(key, read_partition_table(ctx, params)), False
            continue
        try:
            failed = store.apply_writes(view.item, writes)
        except store.TableChanged:
            _views.pop(key, None)
            # A cached view may predate a re-creation of the table: read it afresh by name.
            view = read_partition_table(ctx, params) if cached else reread_partition_table(view)
            view, cached = _remember(key, view), False
            continue
        for write_index, reason in failed.items():
            errors[positions[write_index]] = failure(positions[write_index], reason)
        return errors
    raise ConcurrentModificationException("The table changed repeatedly while writing partitions; retry")


# ----------------------------------------------------------------------------------- create
def _create_builder(inputs: Sequence[dict[str, Any]]):
    def build(view: PartitionTableView):
        writes, positions, errors = [], [], {}
        seen: set[str] = set()
        created = now()
        for position, partition_input in enumerate(inputs):
            try:
                values = _input_values(partition_input)
                check_values(view, values)
                key = partition_key(view, values)
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
    def build(view: PartitionTableView):
        writes, positions, errors = [], [], {}
        keys = []
        for values, partition_input in entries:
            keys.append(partition_key(view, values) if len(values) == len(view.keys) else None)
        current = store.get_partitions(view.item.uid, [k for k in keys if k])
        touched: set[str] = set()
        for position, ((values, partition_input), old_key) in enumerate(zip(entries, keys)):
            try:
                check_values(view, values, "PartitionValueList")
                new_values = _input_values(partition_input)
                check_values(view, new_values, "PartitionInput.Values")
                old = current.get(old_key)
                if old is None:
                    raise partition_not_found()
                new_key = partition_key(view, new_values)
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


def _entries_or_none(view: PartitionTableView, values: Sequence[str]) -> list[tuple[str, str]]:
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
    def build(view: PartitionTableView):
        writes, positions, errors = [], [], {}
        keys = [partition_key(view, v) if len(v) == len(view.keys) else None for v in value_lists]
        current = store.get_partitions(view.item.uid, [k for k in keys if k])
        touched: set[str] = set()
        for position, (values, key) in enumerate(zip(value_lists, keys)):
            try:
                check_values(view, values)
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


# ------------------------------------------------------------- used by column statistics
def rewrite_partition_document(ctx: RequestContext, params: dict[str, Any], values: Sequence[str],
                               change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Apply ``change`` to a partition's document (and its index entries' copies), atomically;
    retried from a fresh read if the partition changes meanwhile."""
    def build(view: PartitionTableView):
        key = partition_key(view, values)
        item = store.get_partitions(view.item.uid, [key]).get(key)
        if item is None:
            return [], [], {0: partition_not_found()}
        doc = encode_document(change(decode_document(item.doc)), "partition")
        entries = _entries_or_none(view, item.values)
        return [store.PartitionWrite("replace", key=key, values=list(item.values), doc=doc,
                                     segment=item.segment, entries=entries, old_key=key,
                                     old_revision=item.revision, old_entries=entries,
                                     uid=item.uid)], [0], {}

    for _ in attempts(Policy(attempts=_TABLE_RETRIES)):
        errors = _apply(ctx, params, build, lambda position, reason: ConcurrentModificationException(reason))
        if not errors:
            return
        if isinstance(errors[0], EntityNotFoundException):
            raise errors[0]
    raise ConcurrentModificationException("The partition changed repeatedly; retry")
