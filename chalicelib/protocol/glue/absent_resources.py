"""Listings of Glue resources this service never holds (``service.absent_resources``): each answers
an empty list, as AWS answers an account that has none. The request is validated against the model
first (MaxResults ranges, Tags sizes, filters) as for every operation; a NextToken can never be
valid, since none is ever issued, and is refused as a token not issued for the request."""

from __future__ import annotations

from typing import Any

from chalicelib.context import RequestContext
from chalicelib.protocol.aws_json.common import read_token
from chalicelib.service.absent_resources import list_never_held


def _empty(ctx: RequestContext, params: dict[str, Any], *members: str) -> dict[str, Any]:
    read_token(ctx, params, ctx.account_id)  # never issued: always InvalidInputException
    items = list_never_held(ctx.operation)
    return {member: list(items) for member in members}


def get_jobs(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No jobs: ``Jobs`` is empty."""
    return _empty(ctx, params, "Jobs")


def list_jobs(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No jobs: ``JobNames`` is empty (whatever Tags filter)."""
    return _empty(ctx, params, "JobNames")


def get_triggers(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No triggers: ``Triggers`` is empty (for any DependentJobName)."""
    return _empty(ctx, params, "Triggers")


def list_triggers(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No triggers: ``TriggerNames`` is empty."""
    return _empty(ctx, params, "TriggerNames")


def list_workflows(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No workflows: ``Workflows`` is empty."""
    return _empty(ctx, params, "Workflows")


def get_dev_endpoints(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No development endpoints: ``DevEndpoints`` is empty."""
    return _empty(ctx, params, "DevEndpoints")


def list_dev_endpoints(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No development endpoints: ``DevEndpointNames`` is empty."""
    return _empty(ctx, params, "DevEndpointNames")


def get_m_l_transforms(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No ML transforms: ``Transforms`` is empty (for any Filter and Sort)."""
    return _empty(ctx, params, "Transforms")


def list_m_l_transforms(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No ML transforms: ``TransformIds`` is empty."""
    return _empty(ctx, params, "TransformIds")


def get_security_configurations(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No security configurations: ``SecurityConfigurations`` is empty."""
    return _empty(ctx, params, "SecurityConfigurations")


def list_sessions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No interactive sessions: ``Ids`` and ``Sessions`` are empty."""
    return _empty(ctx, params, "Ids", "Sessions")


def list_blueprints(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No blueprints: ``Blueprints`` is empty."""
    return _empty(ctx, params, "Blueprints")


def list_data_quality_rulesets(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No data quality rulesets: ``Rulesets`` is empty."""
    return _empty(ctx, params, "Rulesets")


def list_custom_entity_types(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No custom entity types: ``CustomEntityTypes`` is empty."""
    return _empty(ctx, params, "CustomEntityTypes")


def list_usage_profiles(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """No usage profiles: ``Profiles`` is empty."""
    return _empty(ctx, params, "Profiles")
