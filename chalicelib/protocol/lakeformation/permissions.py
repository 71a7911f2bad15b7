"""Lake Formation permissions: data lake settings, grants, listings of grants, registered
locations.

Each action reads the validated request, calls the permissions core
(``chalicelib.service.lake_permissions``, ``chalicelib.service.lake_locations``: every rule is
there) and shapes the answer.
"""

from __future__ import annotations

from typing import Any, Optional

from chalicelib.context import RequestContext
from chalicelib.protocol.aws_json.common import make_token, page_size, read_token, take_page
from chalicelib.service import lake_locations as locations
from chalicelib.service import lake_permissions as service
from chalicelib.service import paging


def _catalog(ctx: RequestContext, params: dict[str, Any]) -> tuple[str, str]:
    return ctx.catalog_key(params), ctx.catalog_id(params)


# ------------------------------------------------------------------------------ settings
def get_data_lake_settings(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The catalog's data lake settings (AWS's defaults until they are put)."""
    return {"DataLakeSettings": service.get_data_lake_settings(ctx, *_catalog(ctx, params))}


def put_data_lake_settings(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace the catalog's data lake settings."""
    service.put_data_lake_settings(ctx, *_catalog(ctx, params), params["DataLakeSettings"])
    return {}


def get_data_lake_principal(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The caller's identity as a data lake principal."""
    return {"Identity": service.caller(ctx)}


# ------------------------------------------------------------------------------ grants
def grant_permissions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Grant permissions on one resource to one principal."""
    service.grant(ctx, *_catalog(ctx, params), params)
    return {}


def revoke_permissions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Revoke permissions on one resource from one principal."""
    service.revoke(ctx, *_catalog(ctx, params), params)
    return {}


def batch_grant_permissions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Grant each entry on its own; the entries that failed, with their errors."""
    return {"Failures": service.batch(ctx, *_catalog(ctx, params), params["Entries"], service.grant)}


def batch_revoke_permissions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Revoke each entry on its own; the entries that failed, with their errors."""
    return {"Failures": service.batch(ctx, *_catalog(ctx, params), params["Entries"], service.revoke)}


def _page(ctx: RequestContext, params: dict[str, Any], listed: Any, member: str, *scope: Any) -> dict[str, Any]:
    deadline = paging.work_deadline()
    found, last = take_page(listed, page_size(params, 100), lambda item: item.entry, lambda item: item.key,
                            deadline=deadline)
    token = make_token(ctx, last, *scope)
    return {member: found, **({"NextToken": token} if token else {})}


def list_permissions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The catalog's grants the caller may see, filtered by principal, resource or resource type; paged."""
    catalog_key, catalog_id = _catalog(ctx, params)
    scope = (catalog_key, service.list_scope(params))
    after: Optional[str] = read_token(ctx, params, *scope)
    return _page(ctx, params, service.list_permissions(ctx, catalog_key, catalog_id, params, after),
                 "PrincipalResourcePermissions", *scope)


def get_effective_permissions_for_path(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The grants on the database, table or S3 location an ARN names; paged."""
    catalog_key, catalog_id = _catalog(ctx, params)
    scope = (catalog_key, params["ResourceArn"])
    after: Optional[str] = read_token(ctx, params, *scope)
    return _page(ctx, params, service.effective_for_path(ctx, catalog_key, catalog_id, params["ResourceArn"], after),
                 "Permissions", *scope)


# ------------------------------------------------------------------------------ locations
def register_resource(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Register an S3 location with the data lake."""
    locations.register(ctx, *_catalog(ctx, {}), params)
    return {}


def deregister_resource(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Deregister an S3 location."""
    locations.deregister(ctx, *_catalog(ctx, {}), params["ResourceArn"])
    return {}


def update_resource(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Change the role (and flags) of a registered location."""
    locations.update(ctx, *_catalog(ctx, {}), params)
    return {}


def describe_resource(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """A registered location's ResourceInfo."""
    return {"ResourceInfo": locations.describe_resource(ctx, *_catalog(ctx, {}), params["ResourceArn"])}


def list_resources(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The registered locations, filtered; paged."""
    catalog_key, catalog_id = _catalog(ctx, {})
    conditions = params.get("FilterConditionList") or []
    scope = (catalog_key, repr(conditions))
    after: Optional[str] = read_token(ctx, params, *scope)
    deadline = paging.work_deadline()
    found, last = take_page(locations.list_resources(ctx, catalog_key, catalog_id, conditions, after),
                            page_size(params, 100), lambda item: item[0], lambda item: item[1], deadline=deadline)
    token = make_token(ctx, last, *scope)
    return {"ResourceInfoList": found, **({"NextToken": token} if token else {})}
