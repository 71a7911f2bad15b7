"""Table versions: GetTableVersion, GetTableVersions, DeleteTableVersion, BatchDeleteTableVersion.

The versions themselves (current in the table item, older ones archived) are ``service.table_versions``'
business; these actions read the request and shape Glue's answer.
"""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import fold, make_token, page_size, read_token
from chalicelib.protocol.glue.tables import render_table
from chalicelib.context import RequestContext
from chalicelib.service import table_versions


def _version(ctx: RequestContext, params: dict[str, Any], doc: dict[str, Any], version: int) -> dict[str, Any]:
    return {"Table": render_table(ctx, params, doc, version), "VersionId": str(version)}


def get_table_version(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One version of a table (the current one when VersionId is absent)."""
    doc, version = table_versions.get_table_version(ctx.catalog_key(params), params["DatabaseName"],
                                                    params["TableName"], params.get("VersionId"))
    return {"TableVersion": _version(ctx, params, doc, version)}


def get_table_versions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every available version, newest (the current one) first, paged."""
    listing = table_versions.list_table_versions(ctx.catalog_key(params), params["DatabaseName"],
                                                 params["TableName"])
    scope = listing.identity
    below = read_token(ctx, params, *scope)
    page, last = listing.page(below, page_size(params, 100), lambda doc, version: _version(ctx, params, doc, version))
    token = make_token(ctx, last, *scope)
    return {"TableVersions": page, **({"NextToken": token} if token else {})}


def delete_table_version(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete one archived version."""
    table_versions.delete_table_version(ctx.catalog_key(params), params["DatabaseName"], params["TableName"],
                                        params["VersionId"])
    return {}


def batch_delete_table_version(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete up to 100 archived versions; failures are reported per version."""
    failed = table_versions.delete_table_versions(ctx.catalog_key(params), params["DatabaseName"],
                                                  params["TableName"], params["VersionIds"])
    # The service looked the table up by its folded name, which is the name it has.
    table_name = fold(params["TableName"])
    return {"Errors": [{"TableName": table_name, "VersionId": version_id,
                        "ErrorDetail": {"ErrorCode": error.code, "ErrorMessage": error.message}}
                       for version_id, error in failed]}
