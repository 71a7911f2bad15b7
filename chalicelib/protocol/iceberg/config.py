"""GET /iceberg/v1/config: the prefix every later call carries, and the endpoints served."""

from __future__ import annotations

import re

from chalicelib.protocol.iceberg.wire import IcebergRequest, IcebergResponse, IcebergError

_ACCOUNT = re.compile(r"[0-9]{12}")
DEFAULT_CATALOG = ":"  # Glue's name for the caller's default catalog


def catalog_id(request: IcebergRequest, given: str | None) -> str:
    """The Glue catalog id a warehouse or ``{catalog}`` names: an account id, or ``:`` / nothing
    for the caller's own. Another account's is refused later, as every Glue call refuses it
    without a cross-account grant (RequestContext.catalog_id)."""
    text = (given or "").strip()
    if text in ("", DEFAULT_CATALOG):
        return request.context.account_id
    if text.endswith(":"):
        text = text[:-1]
    if not _ACCOUNT.fullmatch(text):
        raise IcebergError(404, "NoSuchCatalogException",
                           f"Catalog {given[:100] if given else ''!r} not found: this endpoint serves Glue catalogs "
                           "named by account id (warehouse=<account id>, or ':' for the caller's own)")
    return text


def catalog_key(request: IcebergRequest) -> str:
    """The request's catalog (region and catalog id): the path's ``{catalog}``, or the caller's."""
    chosen = catalog_id(request, request.path.get("catalog"))
    return request.context.catalog_key({"CatalogId": chosen})


def get_config(request: IcebergRequest) -> IcebergResponse:
    """ConfigResponse for ``?warehouse=<catalog id>``: Glue's ``defaults.prefix`` ``catalogs/<id>``
    (as given: an account id, or ``:``), and every endpoint this catalog serves."""
    from chalicelib.protocol.iceberg.routes import served_endpoints

    given = request.query.get("warehouse")
    chosen = catalog_id(request, given)
    request.context.catalog_key({"CatalogId": chosen})  # another account's: refused now, not on first use
    prefix = f"catalogs/{(given or '').strip() or chosen}"
    return IcebergResponse({"defaults": {"prefix": prefix}, "overrides": {}, "endpoints": served_endpoints()})
