"""Table versions: GetTableVersion, GetTableVersions, DeleteTableVersion, BatchDeleteTableVersion.

The current version lives in the table item itself; older versions are archived items. A table
starts at VersionId 0 and every UpdateTable adds 1 (AWS numbering).
"""

from __future__ import annotations

from typing import Any, Iterator

from chalicelib.actions import action
from chalicelib.actions.common import (make_token, page_size, parse_version, read_token,
                                       require_database, require_table, take_page)
from chalicelib.actions.tables import render_table
from chalicelib.context import RequestContext
from chalicelib.errors import (EntityNotFoundException, InvalidInputException, ServiceError,
                               table_version_not_found)
from chalicelib.store import catalog
from chalicelib.store.models import TableItem


def _version(ctx: RequestContext, params: dict[str, Any], item, version: int) -> dict[str, Any]:
    return {"Table": render_table(ctx, params, catalog.load(item), version), "VersionId": str(version)}


def _not_found(table: TableItem, version: int) -> EntityNotFoundException:
    return table_version_not_found(version, table.name)


@action("glue", "GetTableVersion")
def get_table_version(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One version of a table (the current one when VersionId is absent)."""
    table = require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])
    wanted = params.get("VersionId")
    version = table.version if wanted is None else parse_version(wanted)
    if version == table.version:
        return {"TableVersion": _version(ctx, params, table, version)}
    archived = catalog.get_archived_version(table.uid, version)
    if archived is None:
        raise _not_found(table, version)
    return {"TableVersion": _version(ctx, params, archived, version)}


@action("glue", "GetTableVersions")
def get_table_versions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every available version, newest (the current one) first, paged."""
    table = require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])
    scope = (table.uid,)
    below = read_token(ctx, params, *scope)
    limit = page_size(params, 100)

    def versions() -> Iterator[tuple[int, Any]]:
        if below is None:
            yield table.version, table
        archived = catalog.query_archived_versions(table.uid, below if below is not None else table.version,
                                                   min(limit + 1, 100))
        yield from ((item.version, item) for item in archived)

    page, last = take_page(versions(), limit, lambda pair: _version(ctx, params, pair[1], pair[0]),
                           lambda pair: int(pair[0]))
    token = make_token(ctx, last, *scope)
    return {"TableVersions": page, **({"NextToken": token} if token else {})}


def _delete_version(table: TableItem, version_id: str) -> None:
    version = parse_version(version_id)
    if version == table.version:
        raise InvalidInputException(
            f"Version {version} is the current version of table {table.name} and cannot be deleted")
    if not catalog.delete_archived_version(table.uid, version):
        raise _not_found(table, version)


@action("glue", "DeleteTableVersion")
def delete_table_version(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one archived version."""
    table = require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])
    _delete_version(table, params["VersionId"])
    return {}


@action("glue", "BatchDeleteTableVersion")
def batch_delete_table_version(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete up to 100 archived versions; failures are reported per version."""
    table = require_table(require_database(ctx, params, params["DatabaseName"]), params["TableName"])
    errors = []
    for version_id in params["VersionIds"]:
        try:
            _delete_version(table, version_id)
        except ServiceError as error:
            errors.append({"TableName": table.name, "VersionId": version_id,
                           "ErrorDetail": {"ErrorCode": error.code, "ErrorMessage": error.message}})
    return {"Errors": errors}
