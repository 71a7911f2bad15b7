"""SigV4 header parsing and verification (chalicelib/protocol/sigv4.py), the sealed secrets
(store/secret_box.py) and Paimon bearer tokens, without a store: the key lookup is replaced."""

from __future__ import annotations

import os
import time
from typing import Any, Callable

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode_sequence

from chalicelib import errors, settings
from chalicelib.protocol import sigv4
from chalicelib.store import identities, secret_box

KEY_ID, SECRET = "AKIAABCDEFGHIJKLMNOP", "s" * 40
PRINCIPAL = "arn:aws:iam::111122223333:user/alice"
HEADER = ("AWS4-HMAC-SHA256 Credential=AKIAABCDEFGHIJKLMNOP/20260101/eu-west-1/glue/aws4_request, "
          "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=abc123")


def test_parse_a_botocore_header() -> None:
    auth = sigv4.parse_authorization(HEADER)
    assert (auth.key_id, auth.date, auth.region, auth.service, auth.terminator) == (
        KEY_ID, "20260101", "eu-west-1", "glue", "aws4_request")
    assert auth.signed_headers == ("content-type", "host", "x-amz-date", "x-amz-target")
    assert auth.signature == "abc123"


@pytest.mark.parametrize("header, message", [
    ("AWS4-HMAC-SHA256 Credential=A/20260101/us-east-1/glue/aws4_request", "requires 'Signature' parameter"),
    ("AWS4-HMAC-SHA256 SignedHeaders=host, Signature=ab", "requires 'Credential' parameter"),
    ("AWS4-HMAC-SHA256 Credential=A/us-east-1/glue/aws4_request, SignedHeaders=host, Signature=ab",
     "exactly 5 slash-delimited elements"),
    ("AWS4-HMAC-SHA1 Credential=A/20260101/us-east-1/glue/aws4_request, SignedHeaders=host, Signature=ab",
     "Unsupported AWS 'algorithm'"),
    ("Bearer 123456789012", "Unsupported AWS 'algorithm'"),
])
def test_malformed_headers_are_incomplete_signatures(header: str, message: str) -> None:
    with pytest.raises(errors.IncompleteSignatureException, match=message):
        sigv4.parse_authorization(header)


def _signed(url: str = "https://api.example.com/prod/", body: bytes = b'{"a":1}', service: str = "glue",
            region: str = "eu-west-1", secret: str = SECRET) -> dict[str, str]:
    request = AWSRequest(method="POST", url=url, data=body,
                         headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSGlue.GetDatabases",
                                  "Host": url.split("/")[2]})
    SigV4Auth(Credentials(KEY_ID, secret), service, region).add_auth(request)
    return {name.lower(): value for name, value in request.headers.items()}


@pytest.fixture
def known_key(monkeypatch: pytest.MonkeyPatch) -> None:
    def lookup(key_id: str) -> Any:
        return identities.VerifiedKey(KEY_ID, PRINCIPAL, SECRET) if key_id == KEY_ID else None
    monkeypatch.setattr(identities, "lookup_key", lookup)


def test_a_botocore_signature_verifies_as_the_principal(known_key: None) -> None:
    ctx = sigv4.authenticate("glue", "POST", "/prod/", _signed(), b'{"a":1}')
    assert (ctx.account_id, ctx.region, ctx.caller_arn) == ("111122223333", "eu-west-1", PRINCIPAL)
    assert ctx.principal_arn == PRINCIPAL


@pytest.mark.parametrize("change, error", [
    (lambda h: {**h, "authorization": h["authorization"][:-1] + ("0" if h["authorization"][-1] != "0" else "1")},
     errors.SignatureDoesNotMatchException),
    (lambda h: {k: v for k, v in h.items() if k != "authorization"}, errors.MissingAuthenticationTokenException),
    (lambda h: {**h, "authorization": h["authorization"].replace(KEY_ID, "AKIAZZZZZZZZZZZZZZZZ")},
     errors.UnrecognizedClientException),
    (lambda h: {**h, "x-amz-security-token": "FQoG"}, errors.UnrecognizedClientException),
    (lambda h: {**h, "x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, errors.SignatureDoesNotMatchException),
    (lambda h: {**h, "host": "other.example.com"}, errors.SignatureDoesNotMatchException),
    (lambda h: {k: v for k, v in h.items() if k != "x-amz-date"}, errors.IncompleteSignatureException),
])
def test_what_does_not_verify(known_key: None, change: Any, error: type) -> None:
    with pytest.raises(error):
        sigv4.authenticate("glue", "POST", "/prod/", change(_signed()), b'{"a":1}')


def test_the_path_body_service_and_secret_are_all_signed(known_key: None) -> None:
    for path, body, headers in [("/", b'{"a":1}', _signed()), ("/prod/", b'{"a":2}', _signed()),
                                ("/prod/", b'{"a":1}', _signed(secret="t" * 40))]:
        with pytest.raises(errors.SignatureDoesNotMatchException, match="does not match"):
            sigv4.authenticate("glue", "POST", path, headers, body)
    with pytest.raises(errors.SignatureDoesNotMatchException, match="scoped to correct service: 'glue'"):
        sigv4.authenticate("glue", "POST", "/prod/", _signed(service="lakeformation"), b'{"a":1}')
    with pytest.raises(errors.SignatureDoesNotMatchException, match="valid region"):
        sigv4.authenticate("glue", "POST", "/prod/", _signed(region="EU_WEST"), b'{"a":1}')


def test_every_x_amz_header_must_be_signed(known_key: None) -> None:
    # Signed over host;x-amz-date only, a GetTable request could be replayed as DeleteTable.
    request = AWSRequest(method="POST", url="https://api.example.com/", data=b"{}",
                         headers={"X-Amz-Target": "AWSGlue.GetTable", "Host": "api.example.com"})
    verifier = sigv4._verifier_class()(Credentials(KEY_ID, SECRET), "glue", "eu-west-1")
    verifier.signed = ("host", "x-amz-date")
    verifier.add_auth(request)
    headers = {name.lower(): value for name, value in request.headers.items()}
    assert "SignedHeaders=host;x-amz-date," in headers["authorization"]
    with pytest.raises(errors.SignatureDoesNotMatchException, match="'x-amz-target' is present .* not a 'SignedHeader'"):
        sigv4.authenticate("glue", "POST", "/", {**headers, "x-amz-target": "AWSGlue.DeleteTable"}, b"{}")
    # CloudFront adds its request id in front of an edge-optimized endpoint, after signing.
    sigv4.authenticate("glue", "POST", "/prod/", {**_signed(), "x-amz-cf-id": "abc"}, b'{"a":1}')


def test_the_query_string_is_signed(known_key: None) -> None:
    query = [("b", "2 3"), ("a", "x/y"), ("a", "1")]
    url = "https://api.example.com/prod/?" + percent_encode_sequence(query)  # as botocore sends it
    headers = _signed(url=url)
    sigv4.authenticate("glue", "POST", "/prod/", headers, b'{"a":1}', query)
    for other in ([], [("b", "2 3"), ("a", "x/y")], [("b", "2 3"), ("a", "x/y"), ("a", "2")]):
        with pytest.raises(errors.SignatureDoesNotMatchException, match="does not match"):
            sigv4.authenticate("glue", "POST", "/prod/", headers, b'{"a":1}', other)


def test_skew_is_refused_both_ways(known_key: None, monkeypatch: pytest.MonkeyPatch) -> None:
    headers = _signed()
    for offset, message in [(16 * 60, "Signature expired"), (-16 * 60, "Signature not yet current")]:
        monkeypatch.setattr(sigv4.clock, "now", lambda offset=offset: time.time() + offset)
        with pytest.raises(errors.SignatureDoesNotMatchException, match=message):
            sigv4.authenticate("glue", "POST", "/prod/", headers, b'{"a":1}')
    monkeypatch.setattr(sigv4.clock, "now", lambda: time.time() + 14 * 60)
    sigv4.authenticate("glue", "POST", "/prod/", headers, b'{"a":1}')


def test_signed_path_prefers_the_gateway_path() -> None:
    assert sigv4.signed_path({"path": "/prod/", "stage": "prod"}, "/") == "/prod/"
    assert sigv4.signed_path({"resourcePath": "/"}, "/ListTransactions") == "/ListTransactions"
    assert sigv4.signed_path(None, "/") == "/"


def test_authentication_is_always_on_on_lambda(configure: Callable[..., Any]) -> None:
    configure(lambda_function_name=None)
    for value, required in [(None, False), ("", False), ("open", False), ("sigv4", True), ("sigv", True),
                            ("OPEN", False), (" Open ", False)]:
        configure(auth=settings.from_environ({} if value is None else {"GLUE_AUTH": value}).auth)
        assert sigv4.required() is required, value
    configure(lambda_function_name="glue-catalog-dev", auth="open")
    assert sigv4.required()


def test_bearer_tokens(known_key: None) -> None:
    token = sigv4.make_token(KEY_ID, SECRET, "eu-west-1", int(time.time()) + 60)
    ctx = sigv4.authenticate_bearer({"authorization": f"Bearer {token}"})
    assert (ctx.account_id, ctx.region, ctx.caller_arn, ctx.service) == ("111122223333", "eu-west-1", PRINCIPAL,
                                                                          "paimon")
    bad = [None, "Bearer", "Bearer 123456789012", "Bearer " + token.replace("eu-west-1", "us-east-1"),
           "Bearer " + sigv4.make_token(KEY_ID, "x" * 40, "eu-west-1", int(time.time()) + 60),
           "Bearer " + sigv4.make_token(KEY_ID, SECRET, "eu-west-1", int(time.time()) - 1)]
    for header in bad:
        with pytest.raises(errors.AuthenticationError):
            sigv4.authenticate_bearer({} if header is None else {"authorization": header})


@pytest.mark.parametrize("expires", ["\u00b2", "1" * 5000, "\u0661\u0662", "", "+5", "1" * 13])
def test_odd_bearer_expiries_are_unrecognized_tokens(known_key: None, expires: str) -> None:
    token = f"gc1.{KEY_ID}.eu-west-1.{expires}.{'0' * 64}"
    with pytest.raises(errors.UnrecognizedClientException, match="not a token this catalog issued"):
        sigv4.authenticate_bearer({"authorization": f"Bearer {token}"})


@pytest.mark.parametrize("host", ["[x", "a]b[", "[::1"])
def test_a_host_urlsplit_refuses_is_an_invalid_signature(known_key: None, host: str) -> None:
    with pytest.raises(errors.SignatureDoesNotMatchException, match="not a valid host"):
        sigv4.authenticate("glue", "POST", "/prod/", {**_signed(), "host": host}, b'{"a":1}')


def test_sealed_secrets_open_only_with_their_key_file_key_id_and_principal(tmp_path: Any,
                                                                           configure: Callable[..., Any]) -> None:
    """The whole format is tested in test_secret_box.py; here, what verification relies on."""
    configure(auth_kms_key_id=None)
    key_file = tmp_path / "data" / "auth.key"
    configure(auth_key_file=str(key_file))
    sealed = secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    assert os.stat(key_file).st_mode & 0o777 == 0o600 and SECRET.encode() not in sealed
    assert secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL) == SECRET
    with pytest.raises(secret_box.SecretBoxError):
        secret_box.open_sealed(sealed, "AKIAOTHEROTHEROTHERX", PRINCIPAL)
    with pytest.raises(secret_box.SecretBoxError):
        secret_box.open_sealed(sealed, KEY_ID, "arn:aws:iam::111122223333:user/admin")
    configure(auth_key_file=str(tmp_path / "other.key"))
    with pytest.raises(secret_box.SecretBoxError):
        secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL)


def test_the_admin_command_seals_with_kms_against_real_dynamodb(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str], configure: Callable[..., Any]) -> None:
    from chalicelib.store.dynamo import config
    from infra import identities as admin

    monkeypatch.setattr(config, "ENDPOINT", None)
    configure(auth_kms_key_id=None)
    monkeypatch.setattr(identities, "create_key", lambda *_: pytest.fail("sealed with the key file"))
    for argv in (["keys", "create", PRINCIPAL], ["admin", "bootstrap"]):
        assert admin.main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "GLUE_AUTH_KMS_KEY_ID is not set" in err


def test_the_admin_commands_store_and_secret_errors_are_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from botocore.exceptions import EndpointConnectionError
    from pynamodb.exceptions import ScanError

    from infra import identities as admin

    def unreachable(*_: Any) -> Any:
        raise ScanError("Failed to scan", cause=EndpointConnectionError(endpoint_url="http://127.0.0.1:8001"))

    def sealed_elsewhere(*_: Any) -> Any:
        raise secret_box.SecretBoxError("the sealed secret does not open with this key (wrong key or altered bytes)")

    def misconfigured(*_: Any) -> Any:
        raise errors.InternalServiceException("Authentication is misconfigured on this service")

    for name, failing, argv, needle in [
            ("list_principals", unreachable, ["principals", "list"], "cannot be reached: Could not connect"),
            ("list_keys", sealed_elsewhere, ["keys", "list"], "does not open with this key"),
            ("lookup_key", misconfigured, ["tokens", "create", "--key", KEY_ID], "InternalServiceException")]:
        monkeypatch.setattr(identities, name, failing)
        assert admin.main(argv) == 1, name
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, err


def test_a_secret_lambda_cannot_open_is_a_clean_500_and_not_cached(tmp_path: Any,
                                                                   monkeypatch: pytest.MonkeyPatch, configure: Callable[..., Any]) -> None:
    from types import SimpleNamespace

    configure(auth_kms_key_id=None, lambda_function_name=None, auth_key_file=str(tmp_path / "auth.key"))
    item = SimpleNamespace(status=identities.ACTIVE, secret=secret_box.seal(SECRET, KEY_ID, PRINCIPAL),
                           principal=PRINCIPAL)
    monkeypatch.setattr(identities.IdentityItem, "get", lambda *_, **__: item)
    identities._forget(KEY_ID)
    configure(lambda_function_name="glue-catalog-prod")  # a key file's secret on Lambda
    with pytest.raises(errors.InternalServiceException, match="Authentication is misconfigured"):
        sigv4.authenticate("glue", "POST", "/prod/", _signed(), b'{"a":1}')
    configure(lambda_function_name=None)
    assert identities.lookup_key(KEY_ID) == identities.VerifiedKey(KEY_ID, PRINCIPAL, SECRET)
    identities._forget(KEY_ID)


def test_a_key_item_pointed_at_another_principal_is_refused_though_its_secret_was_opened(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch, configure: Callable[..., Any]) -> None:
    """Someone who may write the identities table but holds no key encryption key cannot lend
    their key to the administrator: the sealed secret is bound to its principal, and the cache of
    opened secrets is keyed by the principal too."""
    from types import SimpleNamespace

    configure(auth_kms_key_id=None, lambda_function_name=None, auth_key_file=str(tmp_path / "auth.key"))
    item = SimpleNamespace(status=identities.ACTIVE, secret=secret_box.seal(SECRET, KEY_ID, PRINCIPAL),
                           principal=PRINCIPAL)
    monkeypatch.setattr(identities.IdentityItem, "get", lambda *_, **__: item)
    clock_now = [1000.0]
    monkeypatch.setattr(identities.time, "monotonic", lambda: clock_now[0])
    identities._forget(KEY_ID)
    assert identities.lookup_key(KEY_ID) == identities.VerifiedKey(KEY_ID, PRINCIPAL, SECRET)
    item.principal = "arn:aws:iam::111122223333:user/admin"
    clock_now[0] += identities.CACHE_SECONDS + 1
    with pytest.raises(errors.InternalServiceException, match="Authentication is misconfigured"):
        identities.lookup_key(KEY_ID)
    identities._forget(KEY_ID)


def test_a_kms_refusal_is_a_secret_box_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.exceptions import ClientError

    class Refusing:
        def decrypt(self, **_: Any) -> Any:
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "Decrypt")

    monkeypatch.setattr(secret_box, "_kms", lambda: Refusing())
    sealed = b'{"v":1,"kek":"kms","dk":{"kms":"AAAA"},"secret":{"n":"","c":"","t":""}}'
    with pytest.raises(secret_box.SecretBoxError, match="KMS Decrypt was refused.*AccessDenied"):
        secret_box.open_sealed(sealed, KEY_ID, PRINCIPAL)


def test_a_secret_is_opened_once_and_unknown_ids_cannot_evict_known_keys(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch, configure: Callable[..., Any]) -> None:
    from types import SimpleNamespace

    configure(auth_kms_key_id=None, lambda_function_name=None, auth_key_file=str(tmp_path / "auth.key"))
    item = SimpleNamespace(status=identities.ACTIVE, secret=secret_box.seal(SECRET, KEY_ID, PRINCIPAL),
                           principal=PRINCIPAL)
    reads: list[str] = []

    def get(_kind: str, key_id: str, **_: Any) -> Any:
        reads.append(key_id)
        if key_id != KEY_ID:
            raise identities.IdentityItem.DoesNotExist()
        return item

    opened: list[bytes] = []
    real_open = identities.open_sealed
    monkeypatch.setattr(identities.IdentityItem, "get", get)
    monkeypatch.setattr(identities, "open_sealed",
                        lambda sealed, key_id, principal: opened.append(sealed) or real_open(sealed, key_id, principal))
    monkeypatch.setattr(identities, "_UNKNOWN_LIMIT", 50)
    clock_now = [1000.0]
    monkeypatch.setattr(identities.time, "monotonic", lambda: clock_now[0])
    identities._forget(KEY_ID)
    assert identities.lookup_key(KEY_ID) == identities.VerifiedKey(KEY_ID, PRINCIPAL, SECRET)
    for n in range(200):  # a flood of random, unknown key ids
        assert identities.lookup_key(f"AKIA{n:016d}") is None
    assert len(identities._unknown) == 50 and KEY_ID in identities._known
    reads.clear()
    assert identities.lookup_key(KEY_ID) is not None and reads == []  # still cached
    clock_now[0] += identities.CACHE_SECONDS + 1
    assert identities.lookup_key(KEY_ID) is not None and reads == [KEY_ID]  # re-checked...
    assert len(opened) == 1  # ...but opened once only
    item.status = identities.INACTIVE
    clock_now[0] += identities.CACHE_SECONDS + 1
    assert identities.lookup_key(KEY_ID) is None
    assert not [entry for entry in identities._opened if entry[0] == KEY_ID]
    identities._forget(KEY_ID)


def test_one_kms_client_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secret_box, "_kms_client", None)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    assert secret_box._kms() is secret_box._kms()


def test_principal_arns_have_iams_shape() -> None:
    assert identities.check_arn(PRINCIPAL) == PRINCIPAL
    assert identities.check_arn("arn:aws:iam::111122223333:role/etl-job") == "arn:aws:iam::111122223333:role/etl-job"
    for bad in ("arn:aws:iam::1111:user/a", "arn:aws:iam::111122223333:group/a", "alice",
                "arn:aws:iam::111122223333:user/"):
        with pytest.raises(identities.IdentityError):
            identities.check_arn(bad)


def test_lambda_never_uses_a_key_file(tmp_path: Any, configure: Callable[..., Any]) -> None:
    configure(auth_kms_key_id=None, auth_key_file=str(tmp_path / "auth.key"), lambda_function_name="glue-catalog-dev")
    with pytest.raises(secret_box.SecretBoxError, match="GLUE_AUTH_KMS_KEY_ID"):
        secret_box.seal(SECRET, KEY_ID, PRINCIPAL)
    assert not (tmp_path / "auth.key").exists()
