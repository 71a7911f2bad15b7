"""Catalog settings API: Get/PutDataCatalogEncryptionSettings, Get/Put/DeleteResourcePolicy,
GetResourcePolicies, GetCatalogImportStatus (stored and returned; ``service.catalog_settings``)."""

from __future__ import annotations

from typing import Any

from chalicelib.context import RequestContext
from chalicelib.service import catalog_settings


def get_data_catalog_encryption_settings(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The catalog's encryption settings (AWS's defaults until some are put)."""
    return {"DataCatalogEncryptionSettings": catalog_settings.get_encryption_settings(ctx.catalog_key(params))}


def put_data_catalog_encryption_settings(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace the catalog's encryption settings."""
    catalog_settings.put_encryption_settings(ctx.catalog_key(params), params["DataCatalogEncryptionSettings"])
    return {}


def get_catalog_import_status(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The catalog's migration status: always completed."""
    return {"ImportStatus": catalog_settings.get_import_status(ctx.catalog_key(params))}


def put_resource_policy(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Set the catalog's resource policy, under the request's PolicyExistsCondition /
    PolicyHashCondition."""
    exists = params.get("PolicyExistsCondition")
    policy_hash = catalog_settings.put_resource_policy(
        ctx, params["PolicyInJson"], params.get("ResourceArn"), params.get("PolicyHashCondition"),
        None if exists == "NONE" else exists)
    return {"PolicyHash": policy_hash}


def get_resource_policy(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The catalog's resource policy."""
    return catalog_settings.get_resource_policy(ctx, params.get("ResourceArn"))


def delete_resource_policy(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Remove the catalog's resource policy, under the PolicyHashCondition."""
    catalog_settings.delete_resource_policy(ctx, params.get("ResourceArn"), params.get("PolicyHashCondition"))
    return {}


def get_resource_policies(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every resource policy of the catalog: its own, if set (one page: there is at most one)."""
    return {"GetResourcePoliciesResponseList": catalog_settings.list_resource_policies(ctx)}
