"""Lake Formation's registered locations: RegisterResource, DeregisterResource, UpdateResource,
DescribeResource, ListResources. Stored and answered as AWS answers them; nothing here reaches
S3 (no credentials are vended).

Who may: the IAM administrator (``lake_permissions.is_iam_admin``) and the data lake
administrators register, change and deregister; read-only administrators also read.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Optional

from chalicelib import clock
from chalicelib.attempts import Policy, attempts
from chalicelib.context import RequestContext
from chalicelib.errors import (AccessDeniedException, AlreadyExistsException, ConcurrentModificationException,
                               EntityNotFoundException, InvalidInputException)
from chalicelib.service import lake_permissions
from chalicelib.store import grants as store

# AWS's words: moto's RegisterResource answer, checked against the AWS CLI (getmoto/moto#7052);
# "Unsupported resource ARN Format" as CloudTrail shows it (data-lakes-on-aws#76).
ALREADY_REGISTERED = "Resource is already registered"
NOT_FOUND = "Entity not found"
UNSUPPORTED_ARN = "Unsupported resource ARN Format"
_S3_ARN = re.compile(r"arn:aws(?:-cn|-us-gov|-iso(?:-[bef])?)?:s3:::[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](?:/.*)?",
                     re.DOTALL)
_SERVICE_LINKED_ROLE = "role/aws-service-role/lakeformation.amazonaws.com/AWSServiceRoleForLakeFormationDataAccess"
_FLAGS = ("WithFederation", "HybridAccessEnabled", "WithPrivilegedAccess")
_RETRY = Policy(attempts=5)


def _may(ctx: RequestContext, catalog_key: str, catalog_id: str, read: bool = False) -> None:
    """The caller administers the data lake (``read``: or reads it as a read-only administrator)."""
    held = store.lookup(catalog_key, [lake_permissions.caller(ctx)], None)
    allowed = held.admins | (held.read_only_admins if read else frozenset())
    if lake_permissions.caller(ctx) in allowed or lake_permissions.is_iam_admin(ctx):
        return
    raise AccessDeniedException(
        f"User: {lake_permissions.caller(ctx)} is not authorized to perform: lakeformation:{ctx.operation} on "
        f"resource: arn:aws:lakeformation:{ctx.region}:{catalog_id}:catalog:{catalog_id}")


def _check_arn(arn: str) -> str:
    if not _S3_ARN.fullmatch(arn):
        raise InvalidInputException(UNSUPPORTED_ARN)
    return arn


def describe(location: store.Location) -> dict[str, Any]:
    """A ResourceInfo."""
    info = {"ResourceArn": location.arn, **location.info}
    return info


def register(ctx: RequestContext, catalog_key: str, catalog_id: str, params: dict[str, Any]) -> None:
    """RegisterResource: an S3 location, with the role Lake Formation would use to reach it."""
    arn = _check_arn(params["ResourceArn"])
    _may(ctx, catalog_key, catalog_id)
    role = params.get("RoleArn")
    if params.get("UseServiceLinkedRole"):
        role = f"arn:aws:iam::{ctx.account_id}:{_SERVICE_LINKED_ROLE}"
    if not role:
        raise InvalidInputException("Either RoleArn or UseServiceLinkedRole must be given.")
    info: dict[str, Any] = {"RoleArn": role, "LastModified": clock.now()}
    for flag in _FLAGS:
        info[flag] = bool(params.get(flag))
    if params.get("ExpectedResourceOwnerAccount"):
        info["ExpectedResourceOwnerAccount"] = params["ExpectedResourceOwnerAccount"]
    if not store.put_location(catalog_key, arn, info, None):
        raise AlreadyExistsException(ALREADY_REGISTERED)


def _require(catalog_key: str, arn: str) -> store.Location:
    location = store.get_location(catalog_key, arn)
    if location is None:
        raise EntityNotFoundException(NOT_FOUND)
    return location


def update(ctx: RequestContext, catalog_key: str, catalog_id: str, params: dict[str, Any]) -> None:
    """UpdateResource: another role (and flags) for a registered location."""
    arn = _check_arn(params["ResourceArn"])
    _may(ctx, catalog_key, catalog_id)
    for _ in attempts(_RETRY):
        location = _require(catalog_key, arn)
        info = {**location.info, "RoleArn": params["RoleArn"], "LastModified": clock.now()}
        for flag in ("WithFederation", "HybridAccessEnabled"):
            if params.get(flag) is not None:
                info[flag] = bool(params[flag])
        if params.get("ExpectedResourceOwnerAccount"):
            info["ExpectedResourceOwnerAccount"] = params["ExpectedResourceOwnerAccount"]
        if store.put_location(catalog_key, arn, info, location):
            return
    raise ConcurrentModificationException("The resource is being changed by another request; retry.")


def deregister(ctx: RequestContext, catalog_key: str, catalog_id: str, arn: str) -> None:
    """DeregisterResource (EntityNotFoundException when it is not registered)."""
    _check_arn(arn)
    _may(ctx, catalog_key, catalog_id)
    if not store.delete_location(catalog_key, arn):
        raise EntityNotFoundException(NOT_FOUND)


def describe_resource(ctx: RequestContext, catalog_key: str, catalog_id: str, arn: str) -> dict[str, Any]:
    """DescribeResource: the ResourceInfo of a registered location."""
    _check_arn(arn)
    _may(ctx, catalog_key, catalog_id, read=True)
    return describe(_require(catalog_key, arn))


_FIELDS = {"RESOURCE_ARN": "ResourceArn", "ROLE_ARN": "RoleArn", "LAST_MODIFIED": "LastModified"}


def _matches(info: dict[str, Any], condition: dict[str, Any]) -> bool:
    field, operator = condition.get("Field"), condition.get("ComparisonOperator")
    values = condition.get("StringValueList") or []
    if field not in _FIELDS or not operator:
        raise InvalidInputException("A FilterCondition needs a Field and a ComparisonOperator.")
    value = info.get(_FIELDS[field])
    if field == "LAST_MODIFIED":
        try:
            numbers = [float(v) for v in values]
        except ValueError:
            raise InvalidInputException("LAST_MODIFIED is compared with epoch seconds.") from None
        return _compare(float(value or 0), operator, numbers)
    return _compare(str(value or ""), operator, values)


def _compare(value: Any, operator: str, values: list[Any]) -> bool:
    if operator == "IN":
        return value in values
    if operator == "BETWEEN":
        if len(values) != 2:
            raise InvalidInputException("BETWEEN needs two values.")
        return values[0] <= value <= values[1]
    if len(values) != 1:
        raise InvalidInputException(f"{operator} needs one value.")
    other = values[0]
    checks = {"EQ": lambda: value == other, "NE": lambda: value != other, "LT": lambda: value < other,
              "LE": lambda: value <= other, "GT": lambda: value > other, "GE": lambda: value >= other,
              "CONTAINS": lambda: str(other) in str(value), "NOT_CONTAINS": lambda: str(other) not in str(value),
              "BEGINS_WITH": lambda: str(value).startswith(str(other))}
    if operator not in checks:
        raise InvalidInputException(f"ComparisonOperator {operator} is not supported.")
    return checks[operator]()


def list_resources(ctx: RequestContext, catalog_key: str, catalog_id: str, conditions: list[dict[str, Any]],
                   after: Optional[str]) -> Iterator[tuple[Optional[dict[str, Any]], str]]:
    """ListResources: (ResourceInfo or None when the filter leaves it out, its ARN) in ARN order."""
    _may(ctx, catalog_key, catalog_id, read=True)
    for location in store.list_locations(catalog_key, after):
        info = describe(location)
        yield (info if all(_matches(info, c) for c in conditions) else None), location.arn
