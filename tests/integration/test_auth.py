"""SigV4 authentication (GLUE_AUTH=sigv4): keys issued by ``python -m infra.identities`` work through
boto3 and the AWS CLI; every forged, stale, unknown, disabled or unsigned request gets AWS's error
code and changes nothing. Paimon REST requests need a bearer token made from an issued key.

One extra API server with verification on shares the session's DynamoDB Local and tables; the open
session server keeps serving the other tests (and is used here to look at what was stored).
"""

from __future__ import annotations

import datetime
import http.client
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.exceptions import ClientError

from infra.local.stack import CLIENT_CONFIG, REGION, REPO, CatalogStack, ServerProcess
from tests import legacy_secrets
from tests.integration.store_helpers import Store

ADMIN = "arn:aws:iam::123456789012:user/admin"
OTHER = "arn:aws:iam::111122223333:role/etl"


@dataclass
class AuthServer:
    """The sigv4 server, the environment its admin command runs with, and keys issued for it."""

    server: ServerProcess
    env: dict[str, str]
    admin_key: tuple[str, str]
    other_key: tuple[str, str]

    @property
    def endpoint(self) -> str:
        return self.server.endpoint

    def admin(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``python -m infra.identities <args>`` against this server's store."""
        return subprocess.run([sys.executable, "-m", "infra.identities", *args], cwd=REPO, env=self.env,
                              capture_output=True, text=True, check=check)

    def new_key(self, principal: str = ADMIN) -> tuple[str, str]:
        answer = json.loads(self.admin("keys", "create", principal).stdout)
        return answer["AccessKeyId"], answer["SecretAccessKey"]

    def client(self, key: tuple[str, str], service: str = "glue", region: str = REGION) -> Any:
        return boto3.client(service, endpoint_url=self.endpoint, region_name=region, aws_access_key_id=key[0],
                            aws_secret_access_key=key[1], config=CLIENT_CONFIG)


@pytest.fixture(scope="module")
def auth(stack: CatalogStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    key_file = tmp_path_factory.mktemp("auth") / "auth.key"
    env = {**stack.env, "GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)}
    boot = subprocess.run([sys.executable, "-m", "infra.identities", "admin", "bootstrap", "--arn", ADMIN],
                          cwd=REPO, env=env, capture_output=True, text=True, check=True)
    admin_key = json.loads(boot.stdout)
    server = stack.extra_server({"GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)}, name="auth").start()
    running = AuthServer(server, env, (admin_key["AccessKeyId"], admin_key["SecretAccessKey"]), ("", ""))
    try:
        running.admin("principals", "create", OTHER)
        running.other_key = running.new_key(OTHER)
        yield running
    finally:
        server.stop()


def _name() -> str:
    return "auth_" + uuid.uuid4().hex[:10]


def _exists(glue: Any, name: str) -> bool:
    """Looked up through the open session server, which reads the same tables."""
    try:
        glue.get_database(Name=name)
        return True
    except glue.exceptions.EntityNotFoundException:
        return False


def _refused(call: Any, code: str) -> ClientError:
    with pytest.raises(ClientError) as caught:
        call()
    assert caught.value.response["Error"]["Code"] == code, caught.value.response
    return caught.value


def test_bootstrap_made_an_admin_once_and_its_key_file_is_private(auth: AuthServer) -> None:
    assert auth.admin_key[0].startswith("AKIA") and len(auth.admin_key[0]) == 20 and len(auth.admin_key[1]) == 40
    again = auth.admin("admin", "bootstrap")
    assert again.stdout == "" and "exists already" in again.stderr
    assert os.stat(auth.env["GLUE_AUTH_KEY_FILE"]).st_mode & 0o777 == 0o600
    principals = [json.loads(line) for line in auth.admin("principals", "list").stdout.splitlines()]
    assert {"Arn": ADMIN, "Admin": True} in [{k: p[k] for k in ("Arn", "Admin")} for p in principals]


def test_secrets_are_stored_sealed(auth: AuthServer, ddb_endpoint: str, stack: CatalogStack) -> None:
    ddb = stack.ddb_client()
    item = ddb.get_item(TableName=f"{stack.table_prefix}identities",
                        Key={"kind": {"S": "key"}, "name": {"S": auth.admin_key[0]}})["Item"]
    assert auth.admin_key[1].encode() not in item["secret"]["B"]
    assert item["status"]["S"] == "Active" and item["principal"]["S"] == ADMIN


def test_a_legacy_sealed_secret_verifies_and_keys_migrate_reseals_it(auth: AuthServer, stack: CatalogStack,
                                                                     tmp_path: Path) -> None:
    """A key stored by a release before format 2 (the frozen format-1 box, tests/legacy_secrets.py)
    keeps verifying; `keys migrate` re-seals it as format 2 (conditionally, in DynamoDB Local) and it
    still verifies; a second run finds nothing left to do, and keys already current are not touched."""
    key_file = tmp_path / "auth.key"
    key_file.write_bytes(legacy_secrets.FIXTURE_KEK)
    key_file.chmod(0o600)
    env = {**auth.env, "GLUE_AUTH_KEY_FILE": str(key_file)}
    legacy = AuthServer(stack.extra_server({"GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)},
                                           name="legacy").start(), env, ("", ""), ("", ""))
    principal, key = "arn:aws:iam::444455556666:user/legacy", (legacy_secrets.KEY_ID, legacy_secrets.SECRET)
    table, item_key = f"{stack.table_prefix}identities", {"kind": {"S": "key"}, "name": {"S": key[0]}}
    ddb = stack.ddb_client()
    try:
        legacy.admin("principals", "create", principal)
        ddb.put_item(TableName=table, Item={**item_key, "principal": {"S": principal}, "status": {"S": "Active"},
                                            "secret": {"B": legacy_secrets.V1_FILE}, "created": {"N": "0"}})
        client = legacy.client(key)
        name = _name()
        client.create_database(DatabaseInput={"Name": name})
        assert client.get_database(Name=name)["Database"]["CatalogId"] == "444455556666"
        admin_sealed = ddb.get_item(TableName=table, Key={"kind": {"S": "key"}, "name": {"S": auth.admin_key[0]}},
                                    ConsistentRead=True)["Item"]["secret"]["B"]

        migrated = legacy.admin("keys", "migrate")
        assert [json.loads(line) for line in migrated.stdout.splitlines()] == [
            {"AccessKeyId": key[0], "Migrated": True}]
        assert migrated.stderr.startswith("1 re-sealed, ")
        stored = ddb.get_item(TableName=table, Key=item_key, ConsistentRead=True)["Item"]
        assert stored["secret"]["B"][:2] == bytes([2, 1]) and key[1].encode() not in stored["secret"]["B"]
        assert stored["principal"]["S"] == principal and stored["status"]["S"] == "Active"
        assert ddb.get_item(TableName=table, Key={"kind": {"S": "key"}, "name": {"S": auth.admin_key[0]}},
                            ConsistentRead=True)["Item"]["secret"]["B"] == admin_sealed
        fresh = legacy.client(key)
        time.sleep(6)  # past the server's key cache (identities.CACHE_SECONDS): the item is re-read
        assert fresh.get_database(Name=name)["Database"]["Name"] == name

        again = legacy.admin("keys", "migrate")
        assert again.stdout == "" and again.stderr.startswith("0 re-sealed, ")
        fresh.delete_database(Name=name)
    finally:
        ddb.delete_item(TableName=table, Key=item_key)
        legacy.admin("principals", "delete", principal, check=False)
        legacy.server.stop()


def test_an_issued_key_works_and_names_the_caller(auth: AuthServer, glue: Any) -> None:
    client = auth.client(auth.admin_key)
    name = _name()
    client.create_database(DatabaseInput={"Name": name})
    assert name in [db["Name"] for db in client.get_databases()["DatabaseList"]]
    assert client.get_database(Name=name)["Database"]["CatalogId"] == "123456789012"
    lakeformation = auth.client(auth.admin_key, "lakeformation")
    assert "Transactions" in lakeformation.list_transactions()


def test_the_principals_account_is_the_callers(auth: AuthServer, glue: Any) -> None:
    client = auth.client(auth.other_key, region="eu-west-1")
    name = _name()
    client.create_database(DatabaseInput={"Name": name})
    assert client.get_database(Name=name)["Database"]["CatalogId"] == "111122223333"
    # Another account's catalog stays refused, and nothing is written there.
    other = _name()
    _refused(lambda: client.create_database(CatalogId="123456789012", DatabaseInput={"Name": other}),
             "AccessDeniedException")
    _refused(lambda: client.get_databases(CatalogId="123456789012"), "AccessDeniedException")
    assert not _exists(glue, other)


def test_a_wrong_secret_is_an_invalid_signature(auth: AuthServer, glue: Any) -> None:
    client = auth.client((auth.admin_key[0], "x" * 40))
    name = _name()
    error = _refused(lambda: client.create_database(DatabaseInput={"Name": name}), "InvalidSignatureException")
    assert error.response["Error"]["Message"].startswith("The request signature we calculated does not match")
    assert not _exists(glue, name)


def test_an_unknown_key_is_unrecognized(auth: AuthServer, glue: Any) -> None:
    for key_id in ("AKIAAAAAAAAAAAAAAAAA", "123456789012", "testing"):
        client = auth.client((key_id, auth.admin_key[1]))
        name = _name()
        error = _refused(lambda: client.create_database(DatabaseInput={"Name": name}),  # noqa: B023
                         "UnrecognizedClientException")
        assert error.response["Error"]["Message"] == "The security token included in the request is invalid."
        assert not _exists(glue, name)


def test_a_disabled_key_is_refused_and_enabled_again_works(auth: AuthServer, glue: Any) -> None:
    key = auth.new_key()
    auth.admin("keys", "disable", key[0])
    client = auth.client(key)
    name = _name()
    _refused(lambda: client.create_database(DatabaseInput={"Name": name}), "UnrecognizedClientException")
    assert not _exists(glue, name)
    auth.admin("keys", "enable", key[0])
    deadline = time.monotonic() + 15  # the server caches a key's state for a few seconds
    while True:
        try:
            client.get_databases()
            break
        except ClientError:
            assert time.monotonic() < deadline, "an enabled key still refused after 15 s"
            time.sleep(0.5)
    # A key in use stops working within seconds of being disabled, on a running server.
    auth.admin("keys", "disable", key[0])
    deadline = time.monotonic() + 15
    while True:
        try:
            client.get_databases()
        except ClientError as error:
            assert error.response["Error"]["Code"] == "UnrecognizedClientException"
            break
        assert time.monotonic() < deadline, "a disabled key still works after 15 s"
        time.sleep(0.5)
    listed = [json.loads(line) for line in auth.admin("keys", "list", "--principal", ADMIN).stdout.splitlines()]
    assert {"AccessKeyId": key[0], "Status": "Inactive"} in [
        {k: entry[k] for k in ("AccessKeyId", "Status")} for entry in listed]
    auth.admin("keys", "delete", key[0])
    assert key[0] not in auth.admin("keys", "list").stdout


def test_a_body_changed_after_signing_is_refused(auth: AuthServer, glue: Any) -> None:
    client = auth.client(auth.admin_key)
    signed, sent = _name(), _name()

    def tamper(request: Any, **_: Any) -> None:
        request.body = request.body.replace(signed.encode(), sent.encode())  # same length

    client.meta.events.register("before-send.glue.CreateDatabase", tamper)
    _refused(lambda: client.create_database(DatabaseInput={"Name": signed}), "InvalidSignatureException")
    assert not _exists(glue, signed) and not _exists(glue, sent)


@pytest.mark.parametrize("minutes", [-20, 20])
def test_a_request_signed_too_long_ago_or_ahead_is_refused(auth: AuthServer, glue: Any,
                                                           monkeypatch: pytest.MonkeyPatch, minutes: int) -> None:
    import botocore.auth

    skewed = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) + datetime.timedelta(minutes=minutes)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: skewed)
    client = auth.client(auth.admin_key)
    name = _name()
    error = _refused(lambda: client.create_database(DatabaseInput={"Name": name}), "InvalidSignatureException")
    assert error.response["Error"]["Message"].startswith(
        "Signature expired" if minutes < 0 else "Signature not yet current")
    assert not _exists(glue, name)


def _raw(endpoint: str, body: bytes, headers: dict[str, str], path: str = "/") -> tuple[int, dict]:
    request = urllib.request.Request(endpoint + path, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_an_unsigned_request_is_refused(auth: AuthServer, glue: Any) -> None:
    name = _name()
    body = json.dumps({"DatabaseInput": {"Name": name}}).encode()
    status, answer = _raw(auth.endpoint, body, {"Content-Type": "application/x-amz-json-1.1",
                                                "X-Amz-Target": "AWSGlue.CreateDatabase"})
    assert (status, answer["__type"]) == (400, "MissingAuthenticationTokenException")
    status, answer = _raw(auth.endpoint, b"{}", {"Content-Type": "application/json"}, "/ListTransactions")
    assert (status, answer["__type"]) == (403, "MissingAuthenticationTokenException")
    assert not _exists(glue, name)


@pytest.mark.parametrize("header, code", [
    ("AWS4-HMAC-SHA256 Credential=AKIAAAAAAAAAAAAAAAAA/20260101/us-east-1/glue/aws4_request",
     "IncompleteSignatureException"),
    ("AWS4-HMAC-SHA256 Credential=AKIA/us-east-1/glue/aws4_request, SignedHeaders=host, Signature=ab",
     "IncompleteSignatureException"),
    ("Bearer 123456789012", "IncompleteSignatureException"),
])
def test_a_malformed_authorization_header_is_refused(auth: AuthServer, header: str, code: str) -> None:
    status, answer = _raw(auth.endpoint, b"{}", {"Content-Type": "application/x-amz-json-1.1",
                                                 "X-Amz-Target": "AWSGlue.GetDatabases", "Authorization": header,
                                                 "X-Amz-Date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())})
    assert (status, answer["__type"]) == (400, code)


def test_a_credential_for_another_service_is_refused(auth: AuthServer) -> None:
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method="POST", url=auth.endpoint + "/", data=b"{}",
                         headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSGlue.GetDatabases"})
    botocore.auth.SigV4Auth(Credentials(*auth.admin_key), "s3", REGION).add_auth(request)
    status, answer = _raw(auth.endpoint, b"{}", dict(request.headers.items()))
    assert (status, answer["__type"]) == (400, "InvalidSignatureException")
    assert "scoped to correct service: 'glue'" in answer["Message"]


def _signed_raw(auth: AuthServer, target: str, url: str, signed: tuple[str, ...] | None = None) -> dict[str, str]:
    """Headers botocore's signer makes for ``url`` (optionally signing only ``signed``)."""
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    from chalicelib.protocol import sigv4

    request = AWSRequest(method="POST", url=url, data=b"{}",
                         headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": target})
    signer = sigv4._verifier_class()(Credentials(*auth.admin_key), "glue", REGION)
    signer.signed = signed or ("content-type", "host", "x-amz-date", "x-amz-target")
    request.headers["Host"] = url.split("/")[2]
    signer.add_auth(request)
    return dict(request.headers.items())


def test_an_unsigned_x_amz_target_cannot_be_swapped(auth: AuthServer) -> None:
    headers = _signed_raw(auth, "AWSGlue.GetDatabases", auth.endpoint + "/", ("host", "x-amz-date"))
    status, answer = _raw(auth.endpoint, b"{}", {**headers, "X-Amz-Target": "AWSGlue.GetDatabases"})
    assert (status, answer["__type"]) == (400, "InvalidSignatureException")
    assert "'x-amz-target'" in answer["Message"]


def test_a_signed_query_string_verifies(auth: AuthServer) -> None:
    url = auth.endpoint + "/?a=x%2Fy&b=1"
    status, answer = _raw(auth.endpoint, b"{}", _signed_raw(auth, "AWSGlue.GetDatabases", url), "/?a=x%2Fy&b=1")
    assert status == 200 and "DatabaseList" in answer, answer
    status, answer = _raw(auth.endpoint, b"{}", _signed_raw(auth, "AWSGlue.GetDatabases", url), "/?a=x%2Fy&b=2")
    assert (status, answer["__type"]) == (400, "InvalidSignatureException")


@pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is not on PATH")
def test_the_aws_cli_with_an_issued_key(auth: AuthServer, glue: Any, tmp_path: Path) -> None:
    name = _name()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=auth.admin_key[0], AWS_SECRET_ACCESS_KEY=auth.admin_key[1],
               AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    base = ["aws", "glue", "--endpoint-url", auth.endpoint, "--region", REGION, "--output", "json"]
    subprocess.run([*base, "create-database", "--database-input", json.dumps({"Name": name})], env=env,
                   check=True, capture_output=True, text=True)
    assert json.loads(subprocess.run([*base, "get-database", "--name", name], env=env, check=True,
                                     capture_output=True, text=True).stdout)["Database"]["Name"] == name
    wrong = {**env, "AWS_SECRET_ACCESS_KEY": "y" * 40}
    other = _name()
    failed = subprocess.run([*base, "create-database", "--database-input", json.dumps({"Name": other})], env=wrong,
                            capture_output=True, text=True)
    assert failed.returncode != 0 and "InvalidSignatureException" in failed.stderr
    assert not _exists(glue, other)


# -- the caller's region, and one Authorization header --------------------------------------------
def test_a_region_aws_does_not_have_is_refused(auth: AuthServer, stack: CatalogStack) -> None:
    """Correctly signed for a region no partition has: InvalidSignatureException, as AWS answers a
    credential scoped to an invalid region (Glue 400, Lake Formation 403), and nothing is stored."""
    name = _name()
    for service, call, status in [
            ("glue", lambda c: c.create_database(DatabaseInput={"Name": name}), 400),
            ("lakeformation", lambda c: c.start_transaction(), 403)]:
        client = auth.client(auth.admin_key, service, region="xx-nowhere-9")
        error = _refused(lambda: call(client), "InvalidSignatureException")  # noqa: B023
        assert error.response["ResponseMetadata"]["HTTPStatusCode"] == status
        assert error.response["Error"]["Message"] == "Credential should be scoped to a valid region, not 'xx-nowhere-9'. "
    store = Store(stack)
    for table in ("databases", "lf_transactions"):
        assert store.query(table, "catalog", "xx-nowhere-9\x01123456789012") == []
    # Another partition's region is a region: served.
    china = auth.client(auth.admin_key, region="cn-north-1")
    china.create_database(DatabaseInput={"Name": name})
    assert china.get_database(Name=name)["Database"]["Name"] == name


def test_no_bearer_token_for_a_region_aws_does_not_have(auth: AuthServer, stack: CatalogStack) -> None:
    refused = auth.admin("tokens", "create", "--key", auth.other_key[0], "--region", "xx-nowhere-9", check=False)
    assert refused.returncode != 0 and "valid AWS region" in refused.stderr and "gc1." not in refused.stdout
    # A token naming such a region, with a correct MAC (one made by hand, or before the rule): 401.
    from chalicelib.protocol import sigv4

    expires = int(time.time()) + 600
    mac = sigv4._token_mac(auth.other_key[1], auth.other_key[0], "xx-nowhere-9", expires)
    forged = f"gc1.{auth.other_key[0]}.xx-nowhere-9.{expires}.{mac}"
    status, answer = _paimon_post_database(auth.endpoint, [f"Bearer {forged}"], "nowhere")
    assert status == 401 and answer["code"] == 401 and "valid region, not 'xx-nowhere-9'" in answer["message"]
    assert Store(stack).query("databases", "catalog", "xx-nowhere-9\x01111122223333") == []


def _send(endpoint: str, path: str, headers: list[tuple[str, str]], body: bytes) -> tuple[int, dict[str, str], dict]:
    """One request with exactly these header lines (repeats included), over http.client."""
    url = urlsplit(endpoint)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    try:
        conn.putrequest("POST", path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers:
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def _signed_pairs(auth: AuthServer, key: tuple[str, str], service: str, path: str, body: bytes,
                  headers: dict[str, str]) -> list[tuple[str, str]]:
    """The header lines botocore's signer makes for POST ``path`` with ``body``."""
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method="POST", url=auth.endpoint + path, data=body, headers=headers)
    botocore.auth.SigV4Auth(Credentials(*key), service, REGION).add_auth(request)
    return [("Host", urlsplit(auth.endpoint).netloc), *request.headers.items()]


@pytest.mark.parametrize("where", ["after", "before", "folded"])
def test_two_authorization_headers_are_refused(auth: AuthServer, glue: Any, where: str) -> None:
    """A correctly signed request plus a second Authorization header (another key's signature), or
    both values folded into one line: IncompleteSignatureException whichever comes first (Glue 400,
    Lake Formation 403), and nothing stored."""
    name = _name()
    body = json.dumps({"DatabaseInput": {"Name": name}}).encode()
    target = {"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSGlue.CreateDatabase"}
    signed = _signed_pairs(auth, auth.admin_key, "glue", "/", body, target)
    other = dict(_signed_pairs(auth, auth.other_key, "glue", "/", body, target))["Authorization"]
    extra = [("Authorization", other)]
    sent = {"after": signed + extra, "before": extra + signed,
            "folded": [(k, f"{v}, {other}" if k == "Authorization" else v) for k, v in signed]}[where]
    status, _, answer = _send(auth.endpoint, "/", sent, body)
    assert (status, answer["__type"]) == (400, "IncompleteSignatureException")
    assert "more than one 'Authorization' header" in answer["Message"]
    assert not _exists(glue, name)
    # The same request with one Authorization header is served.
    assert _send(auth.endpoint, "/", signed, body)[0] == 200 and _exists(glue, name)

    lf = _signed_pairs(auth, auth.admin_key, "lakeformation", "/StartTransaction", b"{}",
                       {"Content-Type": "application/json"})
    status, headers, answer = _send(auth.endpoint, "/StartTransaction",
                                    lf + [("authorization", dict(lf)["Authorization"])], b"{}")
    assert (status, answer["__type"], headers["x-amzn-errortype"]) == (
        403, "IncompleteSignatureException", "IncompleteSignatureException")


def _paimon_post_database(endpoint: str, authorizations: list[str], name: str) -> tuple[int, dict]:
    headers = [("Host", urlsplit(endpoint).netloc), ("Content-Type", "application/json"),
               *(("Authorization", value) for value in authorizations)]
    status, _, answer = _send(endpoint, "/v1/auth_wh/databases", headers,
                              json.dumps({"name": name, "options": {}}).encode())
    return status, answer


def test_two_bearer_tokens_are_refused(auth: AuthServer, glue: Any) -> None:
    admin = auth.admin("tokens", "create", "--key", auth.admin_key[0]).stdout.strip()
    other = auth.admin("tokens", "create", "--key", auth.other_key[0]).stdout.strip()
    name = _name()
    status, answer = _paimon_post_database(auth.endpoint, [f"Bearer {admin}", f"Bearer {other}"], name)
    assert status == 401 and answer["code"] == 401 and "more than one 'Authorization'" in answer["message"]
    assert not _exists(glue, name)
    assert _paimon_post_database(auth.endpoint, [f"Bearer {admin}"], name)[0] == 200 and _exists(glue, name)


# -- Paimon REST bearer tokens --------------------------------------------------------------------
def _paimon_get(endpoint: str, token: str | None) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    request = urllib.request.Request(endpoint + "/v1/config?warehouse=w1", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_paimon_needs_an_issued_bearer_token(auth: AuthServer) -> None:
    token = auth.admin("tokens", "create", "--key", auth.other_key[0], "--region", "eu-west-1").stdout.strip()
    status, _ = _paimon_get(auth.endpoint, token)
    assert status == 200
    for bad in (None, "123456789012", token[:-2] + ("00" if not token.endswith("00") else "11"),
                token.replace("eu-west-1", "us-east-1")):
        status, answer = _paimon_get(auth.endpoint, bad)
        assert status == 401 and answer["code"] == 401 and answer["message"], (bad, answer)
    expired = auth.admin("tokens", "create", "--key", auth.other_key[0], "--days", "-1").stdout.strip()
    assert _paimon_get(auth.endpoint, expired)[0] == 401


def test_chalice_test_client_with_api_gateway_events(auth: AuthServer, glue: Any) -> None:
    """The app in process (chalice.test.Client and API Gateway proxy events with a stage path and
    an execute-api host), run in a child process on the session's store."""
    out = subprocess.run([sys.executable, "-m", "tests.integration.auth_gateway_checks", *auth.admin_key],
                         cwd=REPO, env=auth.env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    created = result.pop("created")
    assert result == {"client_ok": 200, "client_unsigned": "MissingAuthenticationTokenException",
                      "stage_ok": 200, "stage_path_ignored": "InvalidSignatureException",
                      "stage_wrong_host": "InvalidSignatureException", "stage_other_body": "InvalidSignatureException",
                      "lakeformation_stage_ok": 200, "stage_unknown_region": "InvalidSignatureException",
                      "stage_two_authorizations": "IncompleteSignatureException",
                      "lakeformation_two_authorizations": "IncompleteSignatureException"}, result
    assert _exists(glue, created) and not _exists(glue, created + "_refused")


def test_pyiceberg_with_an_issued_key(auth: AuthServer, glue: Any) -> None:
    """pyiceberg's GlueCatalog, given the endpoint and an issued key pair as its own properties."""
    from pyiceberg.catalog.glue import GlueCatalog

    catalog = GlueCatalog("auth", **{"glue.endpoint": auth.endpoint, "glue.region": REGION,
                                     "glue.access-key-id": auth.admin_key[0],
                                     "glue.secret-access-key": auth.admin_key[1]})
    name = _name()
    catalog.create_namespace(name)
    assert (name,) in catalog.list_namespaces()
    forged = GlueCatalog("forged", **{"glue.endpoint": auth.endpoint, "glue.region": REGION,
                                      "glue.access-key-id": auth.admin_key[0], "glue.secret-access-key": "z" * 40})
    other = _name()
    with pytest.raises(Exception, match="InvalidSignatureException"):
        forged.create_namespace(other)
    assert not _exists(glue, other)


def test_awswrangler_with_an_issued_key(auth: AuthServer, glue: Any) -> None:
    """awswrangler's catalog functions, with a boto3 session of an issued key pair and the
    service as its Glue endpoint (``wr.config.glue_endpoint_url``)."""
    import awswrangler as wr

    session = boto3.Session(aws_access_key_id=auth.admin_key[0], aws_secret_access_key=auth.admin_key[1],
                            region_name=REGION)
    forged = boto3.Session(aws_access_key_id=auth.admin_key[0], aws_secret_access_key="z" * 40,
                           region_name=REGION)
    previous = wr.config.glue_endpoint_url
    wr.config.glue_endpoint_url = auth.endpoint
    try:
        name = _name()
        wr.catalog.create_database(name, description="made by awswrangler", boto3_session=session)
        assert name in set(wr.catalog.databases(limit=1000, boto3_session=session)["Database"])
        wr.catalog.create_parquet_table(database=name, table="t", path="s3://bucket/t/",
                                        columns_types={"id": "bigint", "v": "string"},
                                        partitions_types={"dt": "string"}, boto3_session=session)
        assert wr.catalog.get_table_types(database=name, table="t", boto3_session=session) == {
            "id": "bigint", "v": "string", "dt": "string"}
        other = _name()
        with pytest.raises(Exception, match="InvalidSignatureException"):
            wr.catalog.create_database(other, boto3_session=forged)
        assert not _exists(glue, other)
    finally:
        wr.config.glue_endpoint_url = previous


def test_pypaimon_with_an_issued_token(auth: AuthServer) -> None:
    """pypaimon's RESTCatalog with token.provider=bear and a token from ``tokens create``."""
    from pypaimon.api.rest_api import RESTApi
    from pypaimon.api.rest_exception import NotAuthorizedException

    token = auth.admin("tokens", "create", "--key", auth.admin_key[0]).stdout.strip()

    def options(bearer: str) -> dict[str, str]:
        return {"metastore": "rest", "uri": auth.endpoint, "warehouse": "auth_wh", "token.provider": "bear",
                "token": bearer}

    api = RESTApi(options(token))
    name = _name()
    api.create_database(name, {})
    assert name in api.list_databases()
    with pytest.raises(NotAuthorizedException):
        RESTApi(options("123456789012"))


def test_unsigned_requests_through_boto3(auth: AuthServer, glue: Any) -> None:
    """botocore itself reads the refusal of an unsigned request as MissingAuthenticationTokenException."""
    from botocore import UNSIGNED
    from botocore.config import Config

    name = _name()
    for service, call in [("glue", lambda c: c.create_database(DatabaseInput={"Name": name})),
                          ("lakeformation", lambda c: c.list_transactions())]:
        client = boto3.client(service, endpoint_url=auth.endpoint, region_name=REGION,
                              config=CLIENT_CONFIG.merge(Config(signature_version=UNSIGNED)))
        _refused(lambda: call(client), "MissingAuthenticationTokenException")  # noqa: B023
    assert not _exists(glue, name)


def test_iceberg_rest_requests_are_verified_as_sigv4_for_glue(auth: AuthServer) -> None:
    """pyiceberg's RestCatalog signs for ``glue`` as against AWS; the server verifies it over the
    path as sent (a table name with a space and a percent sign is percent-encoded in it)."""
    from pyiceberg.exceptions import ForbiddenError
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    from tests.integration.test_iceberg_rest import rest_catalog

    account = ADMIN.split(":")[4]
    rest = rest_catalog(auth.endpoint, account, auth.admin_key)
    name = _name()
    rest.create_namespace(name)
    table = rest.create_table((name, "odd name 100%"), Schema(NestedField(1, "id", LongType())))
    assert rest.load_table((name, "odd name 100%")).metadata_location == table.metadata_location
    assert (name, "odd name 100%") in rest.list_tables(name)
    with pytest.raises(ForbiddenError, match="signature we calculated does not match"):
        rest_catalog(auth.endpoint, account, (auth.admin_key[0], "wrong" * 8)).list_namespaces()
    with pytest.raises(ForbiddenError):
        rest_catalog(auth.endpoint, account, ("AKIAUNKNOWNKEY000000", "x" * 40)).list_namespaces()
