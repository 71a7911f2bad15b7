"""Partition indexes: CreatePartitionIndex, DeletePartitionIndex, GetPartitionIndexes. The rules
(definitions, the resumable backfill) live in chalicelib/service/partition_indexes.py."""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import table_ref
from chalicelib.context import RequestContext
from chalicelib.service import partition_indexes as service


def create_partition_index(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Add an index and backfill it: CREATING, then ACTIVE, or FAILED with BackfillErrors."""
    service.create_partition_index(table_ref(ctx, params), params["PartitionIndex"])
    return {}


def delete_partition_index(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Remove an index; its entries become unreachable at once and are then deleted."""
    service.delete_partition_index(table_ref(ctx, params), params["IndexName"])
    return {}


def get_partition_indexes(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every index of the table with its keys (name and type), status and backfill errors."""
    descriptors = []
    for index in service.describe_partition_indexes(table_ref(ctx, params)):
        descriptor: dict[str, Any] = {"IndexName": index.name,
                                      "Keys": [{"Name": name, "Type": glue_type} for name, glue_type in index.keys],
                                      "IndexStatus": index.status}
        if index.backfill_errors:
            descriptor["BackfillErrors"] = index.backfill_errors
        descriptors.append(descriptor)
    return {"PartitionIndexDescriptorList": descriptors}
