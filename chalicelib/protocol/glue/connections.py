"""Connection API: CreateConnection, GetConnection, UpdateConnection, DeleteConnection,
GetConnections, BatchDeleteConnection.

The catalog rules live in ``service.connections``; these actions read the request and shape
Glue's answer.
"""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import make_token, page_size, read_token
from chalicelib.context import RequestContext
from chalicelib.service import connections


def create_connection(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a connection; AlreadyExistsException if the name is taken. Connections are
    stored definitions here (nothing is reached over the network), so they are READY at once."""
    connections.create_connection(ctx.catalog_key(params), params["ConnectionInput"], params.get("Tags"))
    return {"CreateConnectionStatus": "READY"}


def get_connection(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One connection's definition; with HidePassword, without its secret properties."""
    doc = connections.get_connection(ctx.catalog_key(params), params["Name"], bool(params.get("HidePassword")))
    return {"Connection": doc}


def update_connection(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace a connection's definition (a different ConnectionInput.Name renames it)."""
    connections.update_connection(ctx.catalog_key(params), params["Name"], params["ConnectionInput"])
    return {}


def delete_connection(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a connection."""
    connections.delete_connection(ctx.catalog_key(params), params["ConnectionName"])
    return {}


def batch_delete_connection(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete up to 25 connections; each name lands in Succeeded or in Errors with its reason."""
    succeeded, errors = connections.delete_connections(ctx.catalog_key(params), params["ConnectionNameList"])
    return {"Succeeded": succeeded,
            "Errors": {name: {"ErrorCode": error.code, "ErrorMessage": error.message}
                       for name, error in errors.items()}}


def get_connections(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Connections in name order, filtered by Filter (MatchCriteria, ConnectionType,
    ConnectionSchemaVersion), paged by MaxResults / NextToken; HidePassword withholds secrets."""
    criteria = params.get("Filter") or {}
    hide = bool(params.get("HidePassword"))
    scope = (ctx.catalog_key(params), sorted(criteria.get("MatchCriteria") or ()), criteria.get("ConnectionType"),
             criteria.get("ConnectionSchemaVersion"), hide)
    after = read_token(ctx, params, *scope)
    page, last = connections.list_connections(ctx.catalog_key(params), criteria.get("MatchCriteria"),
                                              criteria.get("ConnectionType"), criteria.get("ConnectionSchemaVersion"),
                                              hide, after, page_size(params, 100))
    token = make_token(ctx, last, *scope)
    return {"ConnectionList": page, **({"NextToken": token} if token else {})}
