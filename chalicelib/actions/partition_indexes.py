"""Partition indexes: CreatePartitionIndex, DeletePartitionIndex, GetPartitionIndexes, and the
index rules other actions follow (CreateTable's PartitionIndexes, UpdateTable's key checks).

Definitions live on the table item as JSON: ``[{uid, name, keys, status, backfill_errors}]``.
Entries are keyed by the index *uid*, so entries of a deleted index can never reappear under a
re-created index of the same name.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Sequence

from pynamodb.exceptions import UpdateError

from chalicelib.actions import action
from chalicelib.actions.common import require_database, require_table
from chalicelib.context import RequestContext
from chalicelib.domain.partition_keys import IndexSpec, IndexValueError, index_entry_key
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException,
                               EntityNotFoundException, InvalidInputException,
                               ResourceNumberLimitExceededException)
from chalicelib.store import catalog, keycodec
from chalicelib.store import partitions as store
from chalicelib.store.models import TableItem

MAX_INDEXES = 3
MAX_FAILED_KEPT = 10  # Glue keeps the last 10 failed indexes of a table
INDEXABLE_TYPES = {"string", "char", "varchar", "int", "integer", "bigint", "long", "tinyint",
                   "smallint", "date"}
LIVE = ("CREATING", "ACTIVE")
_BACKFILL_CHUNK = 500
_ERROR_PARTITIONS_SHOWN = 100


def partition_keys_of(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The table's partition keys as (name, type)."""
    return [(key["Name"], key.get("Type", "string")) for key in doc.get("PartitionKeys") or []]


def load_indexes(table: TableItem) -> list[dict[str, Any]]:
    """The table's index definitions."""
    return json.loads(table.indexes or "[]")


def index_specs(table: TableItem, partition_keys: Sequence[tuple[str, str]],
                statuses: Sequence[str] = LIVE) -> list[IndexSpec]:
    """Indexes in the given statuses, resolved against the current partition keys."""
    positions = {name.lower(): (i, glue_type) for i, (name, glue_type) in enumerate(partition_keys)}
    specs = []
    for index in load_indexes(table):
        if index["status"] in statuses:
            found = [positions[k.lower()] for k in index["keys"]]
            specs.append(IndexSpec(index["uid"], index["name"], tuple(index["keys"]),
                                   tuple(t for _, t in found), tuple(p for p, _ in found)))
    return specs


def new_index_definition(index_input: dict[str, Any], partition_keys: Sequence[tuple[str, str]],
                         existing: Sequence[dict[str, Any]], status: str) -> dict[str, Any]:
    """Validate a PartitionIndex input against the table; the definition to store."""
    name = index_input["IndexName"]
    keys = index_input["Keys"]
    if any(i["name"] == name for i in existing if i["status"] != "FAILED"):
        raise AlreadyExistsException(f"Partition index {name} already exists")
    if sum(1 for i in existing if i["status"] != "FAILED") >= MAX_INDEXES:
        raise ResourceNumberLimitExceededException(f"A table can have at most {MAX_INDEXES} partition indexes")
    types = {n.lower(): (n, t) for n, t in partition_keys}
    if len({k.lower() for k in keys}) != len(keys):
        raise InvalidInputException(f"Partition index {name} lists a key twice: {keys}")
    canonical = []
    for key in keys:
        if key.lower() not in types:
            raise InvalidInputException(
                f"Partition index {name}: '{key}' is not a partition key of the table "
                f"(partition keys: {', '.join(n for n, _ in partition_keys) or 'none'})")
        key_name, glue_type = types[key.lower()]
        if keycodec.base_type(glue_type) not in INDEXABLE_TYPES:
            raise InvalidInputException(
                f"Partition index {name}: key '{key_name}' has type {glue_type}; indexes support "
                "string, char, varchar, int, bigint, long, smallint, tinyint and date keys")
        canonical.append(key_name)
    return {"uid": catalog.new_uid(), "name": name, "keys": canonical, "status": status,
            "backfill_errors": []}


def indexes_for_new_table(indexes_input: Sequence[dict[str, Any]] | None,
                          partition_keys: Sequence[tuple[str, str]]) -> str | None:
    """CreateTable's PartitionIndexes as stored JSON (ACTIVE at once: nothing to backfill)."""
    if not indexes_input:
        return None
    defined: list[dict[str, Any]] = []
    for index_input in indexes_input:
        defined.append(new_index_definition(index_input, partition_keys, defined, "ACTIVE"))
    return json.dumps(defined)


def check_partition_key_change(table: TableItem, old_keys: Sequence[tuple[str, str]],
                               new_keys: Sequence[tuple[str, str]]) -> None:
    """Once a table has an index, existing partition keys keep their names, and indexed keys
    keep their type and position (Glue's rule for UpdateTable)."""
    live = [i for i in load_indexes(table) if i["status"] != "FAILED"]
    if not live:
        return
    for position, (name, glue_type) in enumerate(old_keys):
        if position >= len(new_keys) or new_keys[position][0].lower() != name.lower():
            raise InvalidInputException(
                f"Partition key '{name}' cannot be renamed, removed or reordered: the table has partition indexes")
    indexed = {k.lower() for i in live for k in i["keys"]}
    for position, (name, glue_type) in enumerate(old_keys):
        if name.lower() in indexed and keycodec.base_type(new_keys[position][1]) != keycodec.base_type(glue_type):
            raise InvalidInputException(
                f"The type of indexed partition key '{name}' cannot change from {glue_type} to {new_keys[position][1]}")


def _save_indexes(table: TableItem, indexes: list[dict[str, Any]]) -> TableItem:
    try:
        return store.update_table_indexes(table, json.dumps(indexes))
    except UpdateError:
        raise ConcurrentModificationException(
            "The table's partition indexes changed concurrently; retry") from None


def _backfill(table: TableItem, spec: IndexSpec) -> dict[str, list[list[str]]]:
    """Enter every existing partition into a new index; returns failures by BackfillErrorCode."""
    errors: dict[str, list[list[str]]] = defaultdict(list)
    chunk: list[tuple[Any, str, str]] = []
    for item in store.scan_range(table.uid, None, None):
        try:
            chunk.append((item, spec.uid, index_entry_key(item.values, spec)))
        except IndexValueError as error:
            errors[error.code].append(list(item.values))
        if len(chunk) >= _BACKFILL_CHUNK and not errors:
            store.write_entries_checked(table.uid, chunk)
            chunk = []
    if chunk and not errors:
        store.write_entries_checked(table.uid, chunk)
    return errors


@action("glue", "CreatePartitionIndex")
def create_partition_index(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Add an index and backfill it: CREATING, then ACTIVE, or FAILED with BackfillErrors."""
    table = require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])
    keys = partition_keys_of(catalog.load(table))
    indexes = load_indexes(table)
    definition = new_index_definition(params["PartitionIndex"], keys, indexes, "CREATING")
    table = _save_indexes(table, indexes + [definition])
    spec = next(s for s in index_specs(table, keys) if s.uid == definition["uid"])
    try:
        errors = _backfill(table, spec)
    except store.TableChanged:
        errors = {"INTERNAL_ERROR": []}
    table = require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])
    indexes = load_indexes(table)
    for index in indexes:
        if index["uid"] == definition["uid"]:
            index["status"] = "FAILED" if errors else "ACTIVE"
            index["backfill_errors"] = [{"Code": code, "Partitions": [{"Values": v} for v in values[:_ERROR_PARTITIONS_SHOWN]]}
                                        for code, values in errors.items()]
    failed = [i for i in indexes if i["status"] == "FAILED"]
    indexes = [i for i in indexes if i["status"] != "FAILED"] + failed[-MAX_FAILED_KEPT:]
    _save_indexes(table, indexes)
    if errors:
        store.delete_index_entries(definition["uid"])
    return {}


@action("glue", "DeletePartitionIndex")
def delete_partition_index(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Remove an index; its entries become unreachable at once and are then deleted."""
    table = require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])
    indexes = load_indexes(table)
    doomed = [i for i in indexes if i["name"] == params["IndexName"]]
    if not doomed:
        raise EntityNotFoundException(f"Partition index {params['IndexName']} not found.")
    _save_indexes(table, [i for i in indexes if i["name"] != params["IndexName"]])
    for index in doomed:
        store.delete_index_entries(index["uid"])
    return {}


@action("glue", "GetPartitionIndexes")
def get_partition_indexes(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every index of the table with its keys (name and type), status and backfill errors."""
    table = require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])
    types = {n.lower(): (n, t) for n, t in partition_keys_of(catalog.load(table))}
    descriptors = []
    for index in load_indexes(table):
        descriptor = {
            "IndexName": index["name"],
            "Keys": [{"Name": types.get(k.lower(), (k, ""))[0], "Type": types.get(k.lower(), (k, "string"))[1]}
                     for k in index["keys"]],
            "IndexStatus": index["status"],
        }
        if index.get("backfill_errors"):
            descriptor["BackfillErrors"] = index["backfill_errors"]
        descriptors.append(descriptor)
    return {"PartitionIndexDescriptorList": descriptors}
