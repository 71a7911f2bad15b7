"""Who is calling, and which catalog a request addresses."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from chalicelib import regions, settings
from chalicelib.errors import AccessDeniedException, IncompleteSignatureException, SignatureDoesNotMatchException

DEFAULT_ACCOUNT_ID = settings.current().default_account_id
ALLOW_CROSS_ACCOUNT = settings.current().allow_cross_account
DEFAULT_REGION = settings.current().region

# SigV4: "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/glue/aws4_request, ..."
_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/\d{8}/([^/,\s]+)/")
_ACCOUNT_ID = re.compile(r"\d{12}")
# The open mode's named principals (docs/design.md, "Permissions"): an access key id or bearer
# token "user:alice" / "role:etl" is that IAM principal of the default account, and
# "123456789012:user:alice" of the account named. A SigV4 access key id cannot hold "/", so the
# ARN's "user/alice" is spelled with a colon.
_NAMED_PRINCIPAL = re.compile(r"(?:(\d{12}):)?(user|role):([\w+=,.@-]{1,64})")
# Two Authorization values name two callers. Sent as two header lines, or folded into one line
# by a proxy (RFC 9110 5.3 lets it join repeated lines with commas; AWS's front end reads them so
# joined and refuses the result as an incomplete signature). A SigV4 value's own commas are
# followed by its parameter names, never by a scheme.
_FOLDED_AUTHORIZATION = re.compile(r",\s*(?:AWS4-HMAC-SHA256|Bearer)(?:\s|$)", re.IGNORECASE)


def valid_region(region: str) -> bool:
    """Whether ``region`` is an AWS region (chalicelib.regions): a plain name, as every storage
    key needs, that botocore's partitions know."""
    return regions.is_region(region)


def require_region(region: str, subject: str = "Credential") -> str:
    """``region``, if it is an AWS region; else AWS's refusal of a credential scoped to a region
    that does not exist. The one check of the caller's region, for every protocol and mode: the
    SigV4 scope (open and verified), a Paimon bearer token's region. Each wire answers it as it
    answers an invalid signature (Glue 400, Lake Formation 403, Paimon 401)."""
    if not regions.is_region(region):
        raise SignatureDoesNotMatchException(
            f"{subject} should be scoped to a valid region, not '{region[:64]}'. ")
    return region


def require_one_authorization(headers: dict[str, str], repeated: Collection[str]) -> None:
    """Refuse a request that carries more than one Authorization value, whatever the mode or
    protocol: the header sent twice (``repeated``: the lowercase names of the headers the request
    carried more than once), or two values folded into one line."""
    if "authorization" in repeated or _FOLDED_AUTHORIZATION.search(headers.get("authorization", "")):
        raise IncompleteSignatureException(
            "The request carries more than one 'Authorization' header; exactly one is accepted.")


@dataclass(frozen=True)
class RequestContext:
    """The caller's account and region (a Glue catalog lives in one account and region)."""

    account_id: str
    region: str
    service: str = "glue"
    operation: str = ""
    # The caller's IAM ARN when a verified identity names one (API Gateway's userArn); "" otherwise.
    caller_arn: str = ""

    @property
    def principal_arn(self) -> str:
        """Who is calling, as Glue records it in ``CreatedBy``: the verified IAM ARN, else the
        account's root ARN (locally nothing verifies who signed, only which account)."""
        return self.caller_arn or f"arn:aws:iam::{self.account_id}:root"

    def catalog_id(self, params: dict) -> str:
        """CatalogId from the request, defaulting to the caller's account as AWS does.

        Another account's catalog is refused as AWS refuses it without a cross-account grant
        (grants are not modelled; GLUE_ALLOW_CROSS_ACCOUNT=1 lifts the check).
        """
        catalog_id = params.get("CatalogId") or self.account_id
        if catalog_id != self.account_id and not ALLOW_CROSS_ACCOUNT:
            raise AccessDeniedException(
                f"Account {self.account_id} is not authorized to access catalog {catalog_id} "
                "(CatalogId must be the caller's account)")
        return catalog_id

    def catalog_key(self, params: dict) -> str:
        """Storage partition of one catalog: region and catalog id, so regions never mix."""
        return f"{self.region}\x01{self.catalog_id(params)}"


def _open_caller(credential: str, account_id: str) -> tuple[str, str]:
    """(account id, caller ARN) an open-mode credential names: a 12-digit id is that account's
    root (caller ARN ""), a named principal (``_NAMED_PRINCIPAL``) that IAM user or role, anything
    else the root of ``account_id``."""
    if _ACCOUNT_ID.fullmatch(credential):
        return credential, ""
    named = _NAMED_PRINCIPAL.fullmatch(credential)
    if named:
        account = named.group(1) or account_id
        return account, f"arn:aws:iam::{account}:{named.group(2)}/{named.group(3)}"
    return account_id, ""


def context_from_request(headers: dict[str, str], api_gateway_context: dict | None) -> RequestContext:
    """Derive the caller from API Gateway's verified identity when deployed, else from SigV4.

    Locally nothing verifies signatures, so the access key stands for the caller: a 12-digit
    access key id *is* the account id (as moto does), ``user:alice`` / ``role:etl`` (optionally
    after ``<account>:``) is that IAM principal, for permission tests without issued keys; any
    other key is the default account's root.
    """
    account_id, region, caller_arn = DEFAULT_ACCOUNT_ID, DEFAULT_REGION, ""
    match = _CREDENTIAL.search(headers.get("authorization", ""))
    if match:
        region = require_region(match.group(2))
        account_id, caller_arn = _open_caller(match.group(1), account_id)
    identity = (api_gateway_context or {}).get("identity") or {}
    if identity.get("accountId"):
        account_id, caller_arn = identity["accountId"], identity.get("userArn") or ""
    return RequestContext(account_id=account_id, region=region, caller_arn=caller_arn)


# "Bearer <token>" (pypaimon's token.provider=bear); "<account>" or "<account>/<region>" name a catalog.
_BEARER = re.compile(r"Bearer\s+(\S+)", re.IGNORECASE)


def context_from_bearer(headers: dict[str, str], api_gateway_context: dict | None) -> RequestContext:
    """The caller of a Paimon REST request, the way context_from_request reads a Glue caller.

    In today's open local mode nothing verifies the token: as a 12-digit access key id does for Glue,
    a 12-digit token names the account (``123456789012``), optionally with a region after a slash
    (``123456789012/eu-west-1``, since a bearer token has no credential scope), and a named
    principal (``user:alice``, ``123456789012:role:etl/eu-west-1``) that IAM principal; any other
    token, or none, is the default account's root in the default region. API Gateway's verified
    identity wins.
    """
    account_id, region, caller_arn = DEFAULT_ACCOUNT_ID, DEFAULT_REGION, ""
    match = _BEARER.fullmatch(headers.get("authorization", "").strip())
    if match:
        credential, _, scope = match.group(1).partition("/")
        if _ACCOUNT_ID.fullmatch(credential) or _NAMED_PRINCIPAL.fullmatch(credential):
            account_id, caller_arn = _open_caller(credential, account_id)
            if scope:
                region = require_region(scope, "The bearer token")
    identity = (api_gateway_context or {}).get("identity") or {}
    if identity.get("accountId"):
        account_id, caller_arn = identity["accountId"], identity.get("userArn") or ""
    return RequestContext(account_id=account_id, region=region, service="paimon", caller_arn=caller_arn)
