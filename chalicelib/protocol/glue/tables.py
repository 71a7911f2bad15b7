"""Table API: CreateTable, UpdateTable, DeleteTable, BatchDeleteTable, GetTable, GetTables.

The catalog rules (versions, transactions, search postings, statistics of dropped columns) live
in ``service.tables``; these actions read the request and shape Glue's answer.
"""

from __future__ import annotations

from typing import Any

from chalicelib import timestamps
from chalicelib.protocol.aws_json.common import fold, make_token, page_size, read_token
from chalicelib.context import RequestContext
from chalicelib.errors import InvalidInputException
from chalicelib.service import iceberg_tables, tables
from chalicelib.service.governed_partitions import is_governed

_VALID_ATTRIBUTE_SETS = ({"NAME"}, {"NAME", "TABLE_TYPE"})


# What Glue answers for StorageDescriptor members a TableInput left out: Hive-compatible readers
# (the Glue Hive metastore client behind Spark and EMR) unbox them and fail on a missing one.
_STORAGE_DEFAULTS = {"Compressed": False, "NumberOfBuckets": 0, "StoredAsSubDirectories": False}


def render_table(ctx: RequestContext, params: dict[str, Any], doc: dict[str, Any],
                 version: int) -> dict[str, Any]:
    """A stored table document as the API returns it, with the members Glue fills itself:
    Retention 0 and the StorageDescriptor defaults when not given, IsRegisteredWithLakeFormation
    (true for governed tables, the only tables Lake Formation manages here), IsMultiDialectView
    (a Data Catalog view, i.e. one with a ViewDefinition), IsMaterializedView, CatalogId and
    VersionId. Members AWS fills only in features not served here (Status, FederatedTable,
    IcebergTableMetadata, RLSProperties) stay out; tests/integration/unfilled_members.py lists them.

    Timestamps no client can parse (stored before they were refused) are left out: one would
    make the whole GetTables or SearchTables page unreadable.
    """
    table = {"Retention": 0, **timestamps.drop_unreadable(doc)}
    storage = table.get("StorageDescriptor")
    if storage is not None:
        table["StorageDescriptor"] = {**_STORAGE_DEFAULTS, **storage}
    table["IsRegisteredWithLakeFormation"] = is_governed(doc)
    table["IsMultiDialectView"] = "ViewDefinition" in doc
    table["IsMaterializedView"] = False
    table["CatalogId"] = ctx.catalog_id(params)
    table["VersionId"] = str(version)
    return table


def _table_input(params: dict[str, Any]) -> dict[str, Any]:
    table_input = params.get("TableInput")
    if table_input is None:
        raise InvalidInputException("TableInput is required")
    name = params.get("Name")
    if name is not None and fold(name) != fold(table_input["Name"]):
        raise InvalidInputException(
            f"Name '{name}' differs from TableInput.Name '{table_input['Name']}'")
    return table_input


def _table_name(params: dict[str, Any]) -> str:
    """The table an open-table-format request names: TableInput.Name (checked against Name) or
    Name, since TableInput is optional there."""
    if params.get("TableInput") is not None:
        return str(_table_input(params)["Name"])
    if not params.get("Name"):
        raise InvalidInputException("Name is required when TableInput is not given")
    return str(params["Name"])


def create_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a table at VersionId 0; with OpenTableFormatInput.IcebergInput an Iceberg table,
    its first metadata file written under its location."""
    iceberg = (params.get("OpenTableFormatInput") or {}).get("IcebergInput")
    if iceberg is not None:
        iceberg_tables.create_table(ctx, ctx.catalog_key(params), params["DatabaseName"], _table_name(params),
                                    params.get("TableInput"), iceberg, params.get("PartitionIndexes"),
                                    params.get("TransactionId"))
        return {}
    tables.create_table(ctx, ctx.catalog_key(params), params["DatabaseName"], _table_input(params),
                        params.get("PartitionIndexes"), params.get("TransactionId"))
    return {}


def update_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace a table's definition, archiving the previous version unless SkipArchive.

    With VersionId, the update applies only if that is still the current version (optimistic
    locking); of several racing updates from one version exactly one succeeds. With
    UpdateOpenTableFormatInput.UpdateIcebergInput, the Iceberg table's next metadata file is
    written and the table moved to it.
    """
    iceberg = (params.get("UpdateOpenTableFormatInput") or {}).get("UpdateIcebergInput")
    if iceberg is not None:
        iceberg_tables.update_table(ctx, ctx.catalog_key(params), params["DatabaseName"], _table_name(params),
                                    params.get("TableInput"), iceberg["UpdateIcebergTableInput"],
                                    params.get("VersionId"), not params.get("SkipArchive", False),
                                    params.get("TransactionId"))
        return {}
    tables.update_table(ctx, ctx.catalog_key(params), params["DatabaseName"], _table_input(params),
                        params.get("VersionId"), not params.get("SkipArchive", False), params.get("TransactionId"))
    return {}


def delete_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a table with its versions and everything below it."""
    tables.delete_table(ctx, ctx.catalog_key(params), params["DatabaseName"], params["Name"],
                        params.get("TransactionId"))
    return {}


def batch_delete_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete up to 100 tables; each failure is reported in Errors, the rest proceed."""
    failed = tables.delete_tables(ctx, ctx.catalog_key(params), params["DatabaseName"], params["TablesToDelete"],
                                  params.get("TransactionId"))
    return {"Errors": [{"TableName": name, "ErrorDetail": {"ErrorCode": error.code, "ErrorMessage": error.message}}
                       for name, error in failed]}


def get_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The definition of one table: latest, as a transaction sees it, or as of QueryAsOfTime."""
    doc, version = tables.get_table(ctx, ctx.catalog_key(params), params["DatabaseName"], params["Name"],
                                    params.get("TransactionId"), params.get("QueryAsOfTime"))
    return {"Table": render_table(ctx, params, doc, version)}


def get_tables(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Tables of a database in name order, optionally filtered by a name pattern."""
    expression = params.get("Expression") or ""
    as_of = params.get("QueryAsOfTime")
    listing = tables.list_tables(ctx, ctx.catalog_key(params), params["DatabaseName"], expression, as_of,
                                 params.get("TransactionId"))
    attributes = params.get("AttributesToGet")
    if attributes is not None and set(attributes) not in _VALID_ATTRIBUTE_SETS:
        raise InvalidInputException("AttributesToGet must be [NAME] or [NAME, TABLE_TYPE]")
    scope = (*listing.identity, expression, attributes, as_of, params.get("TransactionId"))
    after = read_token(ctx, params, *scope)

    def render(doc: dict[str, Any], version: int) -> dict[str, Any]:
        table = render_table(ctx, params, doc, version)
        if attributes is not None:
            return {"Name": table["Name"], **({"TableType": table["TableType"]}
                                              if "TABLE_TYPE" in attributes and "TableType" in table else {})}
        return table

    page, last = listing.page(after, page_size(params, 100), render)
    token = make_token(ctx, last, *scope)
    return {"TableList": page, **({"NextToken": token} if token else {})}
