"""Tagging API: TagResource, UntagResource, GetTags (the rules live in ``service.tags``)."""

from __future__ import annotations

from typing import Any

from chalicelib.context import RequestContext
from chalicelib.service import tags


def tag_resource(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Add tags to a database or connection (keys it has get the new values)."""
    tags.tag_resource(ctx, params["ResourceArn"], params["TagsToAdd"])
    return {}


def untag_resource(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Remove tags from a database or connection by key."""
    tags.untag_resource(ctx, params["ResourceArn"], params["TagsToRemove"])
    return {}


def get_tags(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The tags of a database or connection."""
    return {"Tags": tags.get_tags(ctx, params["ResourceArn"])}
