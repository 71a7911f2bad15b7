"""Catalog-level settings infrastructure tools manage: the encryption settings, resource policies
and the catalog import status. Stored and returned as AWS returns them; nothing here enforces a
policy or encrypts anything (that comes with permissions).

Each is one document in ``store.catalog_documents``: the encryption settings, the import status
(``settings_key``) and the catalog's resource policy (``policy_key("catalog")``; AWS sets no
resource-level ones through this API).
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, Optional

from chalicelib.context import RequestContext
from chalicelib.errors import (ConcurrentModificationException, ConditionCheckFailureException,
                               EntityNotFoundException, InvalidInputException)
from chalicelib.service import tags
from chalicelib.service.databases import now
from chalicelib.store import catalog_documents as documents
from chalicelib.attempts import Policy, attempts

# What GetDataCatalogEncryptionSettings answers for a catalog whose settings were never put.
DEFAULT_ENCRYPTION = {
    "EncryptionAtRest": {"CatalogEncryptionMode": "DISABLED"},
    "ConnectionPasswordEncryption": {"ReturnConnectionPasswordEncrypted": False},
}
# What AWS reports for a catalog that never needed the Athena-to-Glue migration.
IMPORTED_BY_DEFAULT = "StatusSetByDefault"


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
        status = {"ImportCompleted": True, "ImportTime": now(), "ImportedBy": IMPORTED_BY_DEFAULT}
        if documents.put(catalog_key, key, status, None, "import status"):
            return status
    raise ConcurrentModificationException("The import status is being written by another request; retry.")


# ---------------------------------------------------------------------------- resource policies
# AWS refuses PutResourcePolicy with a ResourceArn (the model calls the member "for internal use
# only"); its resource-level policies come from Resource Access Manager grants, not modelled here.
RESOURCE_LEVEL_UNSUPPORTED = "Glue resource level policy is not currently supported"
# AWS's words for GetResourcePolicy / DeleteResourcePolicy when no policy is set.
POLICY_NOT_FOUND = "Policy not found"


def _catalog_policy(ctx: RequestContext, arn: Optional[str]) -> Optional[str]:
    """The catalog key whose own resource policy ``arn`` addresses (the caller's catalog without
    one), or None when ``arn`` names a database or table of it (which has no policy here).
    InvalidInputException / AccessDeniedException / EntityNotFoundException for an ARN that is
    malformed, in another region or account, or names a resource that does not exist."""
    if arn is None:
        return ctx.catalog_key({})
    resolvers: dict[str, tags.Resolver] = {"catalog": lambda *_: "", **tags.POLICY_RESOURCES}
    catalog_key, parsed, _ = tags.locate(ctx, arn, resolvers, what="given a resource policy")
    return catalog_key if parsed.kind == "catalog" else None


def _policy_hash(policy: str) -> str:
    return base64.b64encode(hashlib.sha256(policy.encode("utf-8")).digest()[:18]).decode("ascii")


def _check_policy_document(policy: str) -> None:
    try:
        parsed = json.loads(policy)
    except ValueError as error:
        raise InvalidInputException(f"PolicyInJson is not valid JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise InvalidInputException("PolicyInJson must be a JSON object (an IAM policy document)")


def put_resource_policy(ctx: RequestContext, policy: str, arn: Optional[str] = None,
                        hash_condition: Optional[str] = None, exists_condition: Optional[str] = None) -> str:
    """Set the catalog's resource policy; returns its PolicyHash. ConditionCheckFailureException
    when ``exists_condition`` (MUST_EXIST: a policy must be set; NOT_EXIST: none may be) or
    ``hash_condition`` (the hash of the policy being replaced) does not hold: the checks and the
    write are one compare-and-set. InvalidInputException with a ``arn``, as AWS answers."""
    if arn is not None:
        raise InvalidInputException(RESOURCE_LEVEL_UNSUPPORTED)
    _check_policy_document(policy)
    catalog_key, key = ctx.catalog_key({}), documents.policy_key("catalog")
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
        stamp = now()
        doc = {"PolicyInJson": policy, "PolicyHash": _policy_hash(policy),
               "CreateTime": stored.data["CreateTime"] if stored else stamp, "UpdateTime": stamp}
        if documents.put(catalog_key, key, doc, stored, "resource policy"):
            return str(doc["PolicyHash"])
    raise ConcurrentModificationException("The resource policy is being changed by other requests; retry.")


def _stored_policy(ctx: RequestContext, arn: Optional[str]) -> tuple[str, documents.StoredDocument]:
    catalog_key = _catalog_policy(ctx, arn)
    stored = documents.get(catalog_key, documents.policy_key("catalog")) if catalog_key else None
    if catalog_key is None or stored is None:
        raise EntityNotFoundException(POLICY_NOT_FOUND)
    return catalog_key, stored


def get_resource_policy(ctx: RequestContext, arn: Optional[str] = None) -> dict[str, Any]:
    """The catalog's resource policy: PolicyInJson, PolicyHash, CreateTime, UpdateTime.
    EntityNotFoundException when none is set (always, for a database's or table's ARN)."""
    return dict(_stored_policy(ctx, arn)[1].data)


def delete_resource_policy(ctx: RequestContext, arn: Optional[str] = None,
                           hash_condition: Optional[str] = None) -> None:
    """Remove the catalog's resource policy. EntityNotFoundException when none is set;
    ConditionCheckFailureException when ``hash_condition`` is not the current policy's hash."""
    for _ in attempts(Policy(attempts=8)):
        catalog_key, stored = _stored_policy(ctx, arn)
        if hash_condition is not None and stored.data["PolicyHash"] != hash_condition:
            raise ConditionCheckFailureException(
                f"PolicyHashCondition '{hash_condition}' does not match the hash of the current resource policy")
        if documents.delete(catalog_key, documents.policy_key("catalog"), expected=stored):
            return
    raise ConcurrentModificationException("The resource policy is being changed by other requests; retry.")


def list_resource_policies(ctx: RequestContext) -> list[dict[str, Any]]:
    """GetResourcePolicies: the catalog's resource policy, if one is set (there are no
    resource-level ones)."""
    stored = documents.get(ctx.catalog_key({}), documents.policy_key("catalog"))
    return [dict(stored.data)] if stored else []
