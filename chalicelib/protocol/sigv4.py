"""Who may call: SigV4 verification of Glue and Lake Formation requests, bearer tokens for Paimon.

Deployed (``AWS_LAMBDA_FUNCTION_NAME`` set) every request must be signed with an access key the
service issued (store/identities.py); off Lambda ``GLUE_AUTH=sigv4`` turns the same check on and
``GLUE_AUTH`` unset or ``open`` keeps the open local mode (the access key id names the account,
context.py). Any other GLUE_AUTH value also means sigv4: a typo must not open the catalog.

Verification recomputes the signature with botocore's own SigV4 signer over the request as the
client built it: method, the path the client called (behind API Gateway the stage path, which the
request context's ``path`` carries), the headers it listed in SignedHeaders (``host`` is the
original host: API Gateway passes it through) and the SHA-256 of the body; then compares in
constant time. Errors are AWS's: codes botocore maps to ``client.exceptions.<code>``.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import re
import time
from dataclasses import dataclass
from typing import Any, Sequence

from chalicelib import clock, settings
from chalicelib.context import RequestContext, require_region, valid_region
from chalicelib.errors import (IncompleteSignatureException, MissingAuthenticationTokenException,
                               SignatureDoesNotMatchException, UnrecognizedClientException)

ALGORITHM = "AWS4-HMAC-SHA256"
MAX_SKEW_SECONDS = 15 * 60
_AMZ_DATE = "%Y%m%dT%H%M%SZ"
_INVALID_TOKEN = "The security token included in the request is invalid."
_MISMATCH = ("The request signature we calculated does not match the signature you provided. Check your AWS "
             "Secret Access Key and signing method. Consult the service documentation for details.")
_PARAM = re.compile(r"([A-Za-z]+)=([^,\s]*)")
_AMZ_DATE_PARTS = re.compile(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z")


def required() -> bool:
    """Whether requests must be authenticated: always on Lambda, else unless GLUE_AUTH is open."""
    configured = settings.current()
    if configured.on_lambda:
        return True
    return configured.auth.strip().lower() != "open"


@dataclass(frozen=True)
class Authorization:
    """The parts of a SigV4 ``Authorization`` header."""

    key_id: str
    date: str
    region: str
    service: str
    terminator: str
    signed_headers: tuple[str, ...]
    signature: str


def parse_authorization(value: str) -> Authorization:
    """Split an ``AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`` header.

    IncompleteSignatureException (AWS's wording) for anything that is not such a header.
    """
    algorithm, _, rest = value.strip().partition(" ")
    if algorithm != ALGORITHM:
        raise IncompleteSignatureException(
            f"Unsupported AWS 'algorithm': '{algorithm[:40]}' (only {ALGORITHM} is accepted)")
    params: dict[str, str] = {}
    for name, text in _PARAM.findall(rest):
        params.setdefault(name, text)
    missing = [name for name in ("Credential", "Signature", "SignedHeaders") if not params.get(name)]
    if missing:
        raise IncompleteSignatureException(" ".join(
            f"Authorization header requires '{name}' parameter." for name in missing))
    credential = params["Credential"].split("/")
    if len(credential) != 5:
        raise IncompleteSignatureException(
            "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, "
            f"got '{params['Credential'][:200]}'")
    key_id, date, region, service, terminator = credential
    signed = tuple(params["SignedHeaders"].lower().split(";"))
    return Authorization(key_id, date, region, service, terminator, signed, params["Signature"])


def _request_time(headers: dict[str, str]) -> tuple[str, float]:
    amz_date = headers.get("x-amz-date")
    if not amz_date:
        raise IncompleteSignatureException(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
    match = _AMZ_DATE_PARTS.fullmatch(amz_date)
    try:
        if match is None:
            raise ValueError(amz_date)
        # datetime() checks the fields; strptime would too, at ten times the cost per request.
        year, month, day, hour, minute, second = map(int, match.groups())
        moment = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.timezone.utc)
    except ValueError:
        raise IncompleteSignatureException(
            f"Date must be in ISO-8601 'basic format'. Got '{amz_date[:40]}'. See "
            "http://en.wikipedia.org/wiki/ISO_8601") from None
    return amz_date, moment.timestamp()


def _stamp(seconds: float) -> str:
    return time.strftime(_AMZ_DATE, time.gmtime(seconds))


# Headers a front end adds after the client signed: CloudFront's request id in front of an
# edge-optimized API Gateway endpoint. Every other x-amz-* header must be signed, as AWS requires.
_ADDED_IN_TRANSIT = frozenset({"x-amz-cf-id"})


def _check_signed_headers(auth: Authorization, headers: dict[str, str]) -> None:
    """Every ``x-amz-*`` header the request carries must be signed: X-Amz-Target names the Glue
    operation, so a signature over ``host;x-amz-date`` alone could be replayed as another one."""
    signed = set(auth.signed_headers)
    unsigned = sorted(name for name in headers
                      if name.startswith("x-amz-") and name not in signed and name not in _ADDED_IN_TRANSIT)
    if unsigned:
        raise SignatureDoesNotMatchException(
            f"Header '{unsigned[0][:60]}' is present in the request but is not a 'SignedHeader' in the AWS "
            "Authorization: every x-amz-* header must be signed.")


def _check_scope(auth: Authorization, amz_date: str, signed_at: float, service: str) -> None:
    if auth.terminator != "aws4_request":
        raise SignatureDoesNotMatchException(
            f"Credential should be scoped with a valid terminator: 'aws4_request', not '{auth.terminator[:40]}'.")
    if auth.service != service:
        raise SignatureDoesNotMatchException(f"Credential should be scoped to correct service: '{service}'. ")
    require_region(auth.region)
    if auth.date != amz_date[:8]:
        raise SignatureDoesNotMatchException(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
            f"'{auth.date[:20]}' != '{amz_date[:8]}', from '{amz_date}'.")
    if "host" not in auth.signed_headers:
        raise SignatureDoesNotMatchException("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
    now = clock.now()
    if signed_at < now - MAX_SKEW_SECONDS:
        raise SignatureDoesNotMatchException(
            f"Signature expired: {amz_date} is now earlier than {_stamp(now - MAX_SKEW_SECONDS)} "
            f"({_stamp(now)} - 15 min.)")
    if signed_at > now + MAX_SKEW_SECONDS:
        raise SignatureDoesNotMatchException(
            f"Signature not yet current: {amz_date} is still later than {_stamp(now + MAX_SKEW_SECONDS)} "
            f"({_stamp(now)} + 15 min.)")


def expected_signature(auth: Authorization, secret: str, method: str, path: str, headers: dict[str, str],
                       body: bytes, amz_date: str, query: Sequence[tuple[str, str]] = ()) -> str:
    """The signature botocore's signer makes for this request with ``secret``.

    The request is rebuilt from exactly the headers the client signed (botocore's own signer would
    otherwise add or skip some), with the body's SHA-256 as the payload hash. ``query`` holds the
    decoded query parameters (API Gateway passes no raw query string); the signer encodes them
    into the canonical query string as the client's signer did.
    """
    from botocore.awsrequest import AWSRequest  # the first signed request pays these imports, app import does not
    from botocore.credentials import Credentials

    signed = auth.signed_headers
    request = AWSRequest(method=method.upper(), url=f"https://{headers.get('host', '')}{path}",
                         headers={name: headers.get(name, "") for name in signed}, data=body,
                         params=list(query))
    request.context["timestamp"] = amz_date
    signer = _verifier_class()(Credentials(auth.key_id, secret), auth.service, auth.region)
    signer.signed = signed
    return signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)


_VERIFIER: Any = None


def _verifier_class() -> Any:
    """botocore's SigV4Auth, told which headers the client signed (made once, on first use)."""
    global _VERIFIER
    if _VERIFIER is None:
        from botocore.auth import SigV4Auth
        from botocore.compat import HTTPHeaders

        class Verifier(SigV4Auth):
            signed: tuple[str, ...] = ()

            def headers_to_sign(self, request: Any) -> Any:
                # Exactly the client's list: SigV4Auth's own choice adds host and skips user-agent.
                chosen = HTTPHeaders()
                for name in self.signed:
                    chosen[name] = request.headers.get(name, "")
                return chosen

        _VERIFIER = Verifier
    return _VERIFIER


def signed_path(gateway_context: dict | None, default: str) -> str:
    """The path the client called and signed: API Gateway's ``requestContext.path`` holds the
    stage (``/prod/``) or a custom domain's base path; chalice local's holds the plain path."""
    path = (gateway_context or {}).get("path")
    return path if isinstance(path, str) and path.startswith("/") else default


def authenticate(service: str, method: str, path: str, headers: dict[str, str], body: bytes | None,
                 query: Sequence[tuple[str, str]] = ()) -> RequestContext:
    """The verified caller of a SigV4-signed request (headers lowercase, query decoded), or an
    AuthenticationError."""
    from chalicelib.store.identities import lookup_key  # the store loads with the first request

    header = headers.get("authorization")
    if not header:
        raise MissingAuthenticationTokenException("Request is missing Authentication Token")
    auth = parse_authorization(header)
    amz_date, signed_at = _request_time(headers)
    _check_scope(auth, amz_date, signed_at, service)
    if headers.get("x-amz-security-token"):
        raise UnrecognizedClientException(_INVALID_TOKEN)  # this service issues no session credentials
    _check_signed_headers(auth, headers)
    payload = body or b""
    content_hash = headers.get("x-amz-content-sha256")
    if content_hash is not None and content_hash != hashlib.sha256(payload).hexdigest():
        raise SignatureDoesNotMatchException(_MISMATCH)  # an altered body under a signed hash, or unsigned
    key = lookup_key(auth.key_id)
    if key is None:
        raise UnrecognizedClientException(_INVALID_TOKEN)
    try:
        expected = expected_signature(auth, key.secret, method, path, headers, payload, amz_date, query)
    except ValueError:  # urlsplit's answer to a Host such as '[x' (an unclosed IPv6 literal)
        raise SignatureDoesNotMatchException(
            f"{_MISMATCH} The Host header {headers.get('host', '')[:100]!r} is not a valid host.") from None
    if not hmac.compare_digest(expected.encode(), auth.signature.encode()):
        raise SignatureDoesNotMatchException(_MISMATCH)
    return RequestContext(account_id=key.account_id, region=auth.region, service=service, caller_arn=key.principal)


# -- Paimon bearer tokens -----------------------------------------------------------------------
# "gc1.<access key id>.<region>.<expiry, epoch seconds>.<hex HMAC-SHA256>": the HMAC key is derived
# from the key's secret, so a token needs no storage of its own, and disabling or deleting the key
# revokes every token made with it (within identities.CACHE_SECONDS).
TOKEN_PREFIX = "gc1"
_EXPIRES = re.compile(r"[0-9]{1,12}")


def _token_mac(secret: str, key_id: str, region: str, expires: int) -> str:
    signing_key = hmac.new(f"AWS4{secret}".encode(), b"paimon-bearer-token", hashlib.sha256).digest()
    message = f"{TOKEN_PREFIX}\n{key_id}\n{region}\n{expires}".encode()
    return hmac.new(signing_key, message, hashlib.sha256).hexdigest()


def make_token(key_id: str, secret: str, region: str, expires: int) -> str:
    """A bearer token for ``key_id`` in ``region``, valid until ``expires`` (epoch seconds)."""
    if not valid_region(region):
        raise ValueError(f"region must be a valid AWS region (one of botocore's partitions), not {region!r}")
    return f"{TOKEN_PREFIX}.{key_id}.{region}.{expires}.{_token_mac(secret, key_id, region, expires)}"


def authenticate_bearer(headers: dict[str, str]) -> RequestContext:
    """The verified caller of a Paimon request (``Authorization: Bearer <token>``)."""
    from chalicelib.store.identities import lookup_key

    header = headers.get("authorization", "").strip()
    scheme, _, token = header.partition(" ")
    if not header or scheme.lower() != "bearer" or not token.strip():
        raise MissingAuthenticationTokenException("Request is missing a bearer token (Authorization: Bearer <token>)")
    parts = token.strip().split(".")
    # ASCII digits only, at most 12 (epoch seconds to the year 33000): isdigit() also passes '²',
    # which int() refuses, and int() refuses over 4300 digits; either would be a 500.
    if len(parts) != 5 or parts[0] != TOKEN_PREFIX or not _EXPIRES.fullmatch(parts[3]):
        raise UnrecognizedClientException("The bearer token is not a token this catalog issued.")
    _, key_id, region, expires_text, mac = parts
    expires = int(expires_text)
    if expires < clock.now():
        raise UnrecognizedClientException("The bearer token has expired.")
    require_region(region, "The bearer token")
    key = lookup_key(key_id)
    if key is None or not hmac.compare_digest(
            _token_mac(key.secret, key_id, region, expires).encode(), mac.encode()):
        raise UnrecognizedClientException("The bearer token is invalid.")
    return RequestContext(account_id=key.account_id, region=region, service="paimon", caller_arn=key.principal)
