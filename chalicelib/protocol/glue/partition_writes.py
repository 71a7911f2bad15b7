"""Partition writes: Create/BatchCreate/Update/BatchUpdate/Delete/BatchDelete Partition. The
rules (index entries in the same transaction, the table-read cache) live in
chalicelib/service/partitions.py; these shape requests and responses."""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import table_ref
from chalicelib.context import RequestContext
from chalicelib.errors import ServiceError
from chalicelib.service import partitions


def _error_detail(error: ServiceError) -> dict[str, str]:
    return {"ErrorCode": error.code, "ErrorMessage": error.message}


def create_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create one partition (with its index entries)."""
    errors = partitions.create_partitions(table_ref(ctx, params), [params["PartitionInput"]])
    if errors:
        raise errors[0]
    return {}


def batch_create_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create up to 100 partitions; each succeeds or fails on its own (Errors lists failures)."""
    inputs = params["PartitionInputList"]
    errors = partitions.create_partitions(table_ref(ctx, params), inputs)
    return {"Errors": [{"PartitionValues": inputs[p].get("Values") or [], "ErrorDetail": _error_detail(e)}
                       for p, e in sorted(errors.items())]}


def update_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace a partition's definition (its values may change: the partition moves)."""
    errors = partitions.update_partitions(table_ref(ctx, params),
                                          [(params["PartitionValueList"], params["PartitionInput"])])
    if errors:
        raise errors[0]
    return {}


def batch_update_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Update up to 100 partitions; failures are reported per entry."""
    entries = [(e["PartitionValueList"], e["PartitionInput"]) for e in params["Entries"]]
    errors = partitions.update_partitions(table_ref(ctx, params), entries)
    return {"Errors": [{"PartitionValueList": entries[p][0], "ErrorDetail": _error_detail(e)}
                       for p, e in sorted(errors.items())]}


def delete_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one partition with its index entries."""
    errors = partitions.delete_partitions(table_ref(ctx, params), [params["PartitionValues"]])
    if errors:
        raise errors[0]
    return {}


def batch_delete_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete up to 25 partitions; failures are reported per partition."""
    value_lists = [p["Values"] for p in params["PartitionsToDelete"]]
    errors = partitions.delete_partitions(table_ref(ctx, params), value_lists)
    return {"Errors": [{"PartitionValues": value_lists[p], "ErrorDetail": _error_detail(e)}
                       for p, e in sorted(errors.items())]}
