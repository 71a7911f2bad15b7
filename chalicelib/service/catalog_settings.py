"""Catalog-level settings infrastructure tools manage: the encryption settings, resource policies
and the catalog import status. Stored and returned as AWS returns them; nothing here enforces a
policy or encrypts anything (that comes with permissions).

Each is one document in ``store.catalog_documents``: ``settings SEP encryption``,
``settings SEP import``, and one ``policy SEP <kind> SEP <identity>`` per resource policy (the
catalog's own under kind ``catalog``; a database's or table's under its uid, so a re-created
resource has none).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any, Optional

from chalicelib.context import RequestContext
from chalicelib.domain import arns
from chalicelib.errors import (ConcurrentModificationException, ConditionCheckFailureException,
                               EntityNotFoundException, InvalidInputException)
from chalicelib.service import tags
from chalicelib.service.paging import take_page
from chalicelib.store import catalog_documents as documents
from chalicelib.store.retry import Policy, attempts

# What GetDataCatalogEncryptionSettings answers for a catalog whose settings were never put.
DEFAULT_ENCRYPTION = {
    "EncryptionAtRest": {"CatalogEncryptionMode": "DISABLED"},
    "ConnectionPasswordEncryption": {"ReturnConnectionPasswordEncrypted": False},
}
# What AWS reports for a catalog that never needed the Athena-to-Glue migration.
IMPORTED_BY_DEFAULT = "StatusSetByDefault"


def _now() -> float:
    return round(time.time(), 3)


# ---------------------------------------------------------------------------- encryption settings
def get_encryption_settings(catalog_key: str) -> dict[str, Any]:
    """The catalog's DataCatalogEncryptionSettings: as last put, with AWS's defaults for the
    members never set (encryption at rest DISABLED, passwords returned in clear)."""
    stored = documents.get(catalog_key, documents.settings_key("encryption"))
    settings = dict(DEFAULT_ENCRYPTION)
    if stored:
        settings.update(stored.data)
    return settings


def put_encryption_settings(catalog_key: str, settings: dict[str, Any]) -> None:
    """Replace the catalog's DataCatalogEncryptionSettings (a member left out goes back to its
    default). InvalidInputException if SSE-KMS-WITH-SERVICE-ROLE comes without the role."""
    at_rest = settings.get("EncryptionAtRest") or {}
    if (at_rest.get("CatalogEncryptionMode") == "SSE-KMS-WITH-SERVICE-ROLE"
            and not at_rest.get("CatalogEncryptionServiceRole")):
        raise InvalidInputException(
            "DataCatalogEncryptionSettings.EncryptionAtRest.CatalogEncryptionServiceRole is required when "
            "CatalogEncryptionMode is SSE-KMS-WITH-SERVICE-ROLE")
    documents.overwrite(catalog_key, documents.settings_key("encryption"), settings, "encryption settings")


# ------------------------------------------------------------------------------ import status
def get_import_status(catalog_key: str) -> dict[str, Any]:
    """The catalog's CatalogImportStatus: completed, as for any catalog that needs no migration
    from Athena's own catalog; its ImportTime is when the catalog was first asked (then kept)."""
    key = documents.settings_key("import")
    for _ in attempts(Policy(attempts=3)):
        stored = documents.get(catalog_key, key)
        if stored:
            return dict(stored.data)
        status = {"ImportCompleted": True, "ImportTime": _now(), "ImportedBy": IMPORTED_BY_DEFAULT}
        if documents.put(catalog_key, key, status, None, "import status"):
            return status
    raise ConcurrentModificationException("The import status is being written by another request; retry.")


# ---------------------------------------------------------------------------- resource policies
def _policy_target(ctx: RequestContext, arn: Optional[str]) -> tuple[str, str, Optional[arns.GlueArn]]:
    """(catalog key, document key, parsed ARN or None) of the policy ``arn`` addresses: the
    catalog's own without one."""
    if arn is None:
        return ctx.catalog_key({}), documents.policy_key("catalog"), None
    parsed = arns.parse(arn)
    if parsed.kind == "catalog":
        if parsed.region != ctx.region:
            raise InvalidInputException(
                f"ResourceArn '{arn[:200]}' is in region {parsed.region[:64]}, but this request is for "
                f"region {ctx.region}: a resource is addressed in its own region")
        return ctx.catalog_key({"CatalogId": parsed.account}), documents.policy_key("catalog"), parsed
    catalog_key, parsed, identity = tags.locate(ctx, arn, {"catalog": lambda *_: "", **tags.POLICY_RESOURCES},
                                                what="given a resource policy")
    return catalog_key, documents.policy_key(parsed.kind, identity), parsed


def _policy_hash(policy: str) -> str:
    return base64.b64encode(hashlib.sha256(policy.encode("utf-8")).digest()[:18]).decode("ascii")


def _check_policy_document(policy: str) -> None:
    try:
        parsed = json.loads(policy)
    except ValueError as error:
        raise InvalidInputException(f"PolicyInJson is not valid JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise InvalidInputException("PolicyInJson must be a JSON object (an IAM policy document)")


def _rendered(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: doc[k] for k in ("PolicyInJson", "PolicyHash", "CreateTime", "UpdateTime")}


def put_resource_policy(ctx: RequestContext, policy: str, arn: Optional[str] = None,
                        hash_condition: Optional[str] = None, exists_condition: Optional[str] = None) -> str:
    """Set the catalog's resource policy (or a database's or table's, with ``arn``); returns its
    PolicyHash. ConditionCheckFailureException when ``exists_condition`` (MUST_EXIST: a policy
    must be set; NOT_EXIST: none may be) or ``hash_condition`` (the hash of the policy being
    replaced) does not hold; the check and the write are one compare-and-set."""
    _check_policy_document(policy)
    catalog_key, key, parsed = _policy_target(ctx, arn)
    for _ in attempts(Policy(attempts=8)):
        stored = documents.get(catalog_key, key)
        if exists_condition == "MUST_EXIST" and stored is None:
            raise ConditionCheckFailureException(
                "PolicyExistsCondition is MUST_EXIST, but no resource policy is set")
        if exists_condition == "NOT_EXIST" and stored is not None:
            raise ConditionCheckFailureException(
                "PolicyExistsCondition is NOT_EXIST, but a resource policy is already set")
        if hash_condition is not None and (stored is None or stored.data["PolicyHash"] != hash_condition):
            raise ConditionCheckFailureException(
                f"PolicyHashCondition '{hash_condition}' does not match the hash of the current resource "
                "policy" + ("" if stored else " (no resource policy is set)"))
        now = _now()
        doc = {"PolicyInJson": policy, "PolicyHash": _policy_hash(policy),
               "CreateTime": stored.data["CreateTime"] if stored else now, "UpdateTime": now,
               "Kind": parsed.kind if parsed else "catalog", "Names": list(parsed.names) if parsed else []}
        if documents.put(catalog_key, key, doc, stored, "resource policy"):
            return str(doc["PolicyHash"])
    raise ConcurrentModificationException("The resource policy is being changed by other requests; retry.")


def _policy_not_found(arn: Optional[str]) -> EntityNotFoundException:
    return EntityNotFoundException(f"Policy not found for {arn}." if arn else "Policy not found.")


def get_resource_policy(ctx: RequestContext, arn: Optional[str] = None) -> dict[str, Any]:
    """The resource policy of the catalog (or of ``arn``'s resource): PolicyInJson, PolicyHash,
    CreateTime, UpdateTime. EntityNotFoundException when none is set."""
    catalog_key, key, _ = _policy_target(ctx, arn)
    stored = documents.get(catalog_key, key)
    if stored is None:
        raise _policy_not_found(arn)
    return _rendered(stored.data)


def delete_resource_policy(ctx: RequestContext, arn: Optional[str] = None,
                           hash_condition: Optional[str] = None) -> None:
    """Remove the catalog's resource policy (or ``arn``'s). EntityNotFoundException when none is
    set; ConditionCheckFailureException when ``hash_condition`` is not the current policy's hash."""
    catalog_key, key, _ = _policy_target(ctx, arn)
    for _ in attempts(Policy(attempts=8)):
        stored = documents.get(catalog_key, key)
        if stored is None:
            raise _policy_not_found(arn)
        if hash_condition is not None and stored.data["PolicyHash"] != hash_condition:
            raise ConditionCheckFailureException(
                f"PolicyHashCondition '{hash_condition}' does not match the hash of the current resource policy")
        if documents.delete(catalog_key, key, expected=stored):
            return
    raise ConcurrentModificationException("The resource policy is being changed by other requests; retry.")


def _live(catalog_key: str, stored: documents.StoredDocument) -> bool:
    """Whether a policy still belongs to a resource that exists (the catalog's always does): a
    policy of a table whose database was dropped is unreachable and is not listed."""
    kind, names = stored.data.get("Kind", "catalog"), tuple(stored.data.get("Names") or ())
    if kind == "catalog":
        return True
    try:
        identity = tags.POLICY_RESOURCES[kind](catalog_key, names)
    except EntityNotFoundException:
        return False
    return documents.policy_key(kind, identity) == stored.key


def list_resource_policies(ctx: RequestContext, after: Optional[str], limit: int) -> tuple[list[dict[str, Any]], Optional[str]]:
    """The catalog's resource policy and those of its resources (GetResourcePolicies), in key
    order (the catalog's first), up to ``limit`` after position ``after`` (a document key).
    Returns the page and the position to resume after, None after the last."""
    catalog_key = ctx.catalog_key({})
    items = (stored for stored in documents.query(catalog_key, documents.POLICY_PREFIX, after, page_size=limit + 1)
             if _live(catalog_key, stored))
    return take_page(items, limit, lambda stored: _rendered(stored.data), lambda stored: stored.key)
