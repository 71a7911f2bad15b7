"""Column statistics: Get/Update/DeleteColumnStatisticsFor{Table,Partition}.

The rules (column epochs, type compatibility, LastAnalyzedTime) are chalicelib.service.statistics';
these handlers name the table or partition and shape Glue's responses.
"""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import table_ref
from chalicelib.context import RequestContext
from chalicelib.service import statistics


def get_column_statistics_for_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Statistics of up to 100 columns of a table (one store round trip)."""
    read = statistics.table_statistics(table_ref(ctx, params), params["ColumnNames"])
    return {"ColumnStatisticsList": read.found, "Errors": read.errors}


def update_column_statistics_for_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create or replace statistics of up to 25 columns; bad entries are reported one by one."""
    return {"Errors": statistics.update_table_statistics(table_ref(ctx, params), params["ColumnStatisticsList"])}


def delete_column_statistics_for_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one column's table statistics."""
    statistics.delete_table_statistics(table_ref(ctx, params), params["ColumnName"])
    return {}


def get_column_statistics_for_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Statistics of up to 100 columns of one partition (one store round trip)."""
    read = statistics.partition_statistics(table_ref(ctx, params), params["PartitionValues"], params["ColumnNames"])
    return {"ColumnStatisticsList": read.found, "Errors": read.errors}


def update_column_statistics_for_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create or replace statistics of up to 25 columns of one partition."""
    errors = statistics.update_partition_statistics(table_ref(ctx, params), params["PartitionValues"],
                                                    params["ColumnStatisticsList"])
    return {"Errors": errors}


def delete_column_statistics_for_partition(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one column's statistics of one partition."""
    statistics.delete_partition_statistics(table_ref(ctx, params), params["PartitionValues"], params["ColumnName"])
    return {}
