"""The wire: malformed requests, error shapes, unknown operations, NextToken binding."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.integration.conftest import random_account, table_input

AUTH = ("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/glue/aws4_request, "
        "SignedHeaders=host, Signature=0")


def _post(endpoint, body: bytes, target: str | None = "AWSGlue.GetDatabases", path: str = "/",
          content_type: str = "application/x-amz-json-1.1"):
    headers = {"Content-Type": content_type, "Authorization": AUTH}
    if target:
        headers["X-Amz-Target"] = target
    request = urllib.request.Request(endpoint + path, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read() or b"{}")


@pytest.mark.parametrize("body, code", [
    (b"{not json", "SerializationException"),
    (b"[1, 2]", "SerializationException"),
    (b'{"MaxResults": "ten"}', "InvalidInputException"),
    (b'{"MaxResults": 0}', "InvalidInputException"),
    (b'{"MaxResults": 101}', "InvalidInputException"),
    (b'{"NextToken": 5}', "InvalidInputException"),
    (b'{"ResourceShareType": "SOME"}', "InvalidInputException"),
    (b'{"NextToken": "garbage"}', "InvalidInputException"),
    (b"\xff\xfe\x00", "SerializationException"),
])
def test_malformed_requests_get_aws_shaped_4xx(endpoint, body, code):
    status, _, payload = _post(endpoint, body)
    assert status == 400
    assert payload["__type"] == code
    assert payload["Message"]


def test_validation_message_names_member_and_rule(endpoint):
    body = json.dumps({"DatabaseInput": {"Name": "x" * 256, "Parameters": {"": "v"}}}).encode()
    status, _, payload = _post(endpoint, body, target="AWSGlue.CreateDatabase")
    assert status == 400 and payload["__type"] == "InvalidInputException"
    assert "databaseInput.name" in payload["Message"]
    assert "less than or equal to 255" in payload["Message"]
    assert "2 validation errors" in payload["Message"]


def test_missing_required_member(endpoint):
    status, _, payload = _post(endpoint, b"{}", target="AWSGlue.CreateDatabase")
    assert status == 400 and payload["__type"] == "InvalidInputException"
    assert "databaseInput" in payload["Message"] and "must not be null" in payload["Message"]


def test_unknown_members_are_ignored(endpoint):
    status, _, payload = _post(endpoint, b'{"SomethingNew": {"x": 1}}')
    assert status == 200 and "DatabaseList" in payload


def test_unknown_and_unimplemented_operations(endpoint):
    for target in ("AWSGlue.NoSuchThing", "AWSGlue.StartJobRun", "Other.GetDatabases", None):
        status, _, payload = _post(endpoint, b"{}", target=target)
        assert status == 400
        assert payload["__type"] == "UnknownOperationException"


def test_lake_formation_errors_carry_the_type_header(endpoint):
    status, headers, payload = _post(endpoint, b"{}", target=None, path="/NoSuchOperation",
                                     content_type="application/json")
    assert status == 400
    assert {k.lower(): v for k, v in headers.items()}["x-amzn-errortype"] == "UnknownOperationException"
    assert payload["Message"]


def test_body_over_the_gateway_limit_is_refused(endpoint):
    status, _, payload = _post(endpoint, b"{" + b" " * (10 * 1024 * 1024 + 10) + b"}")
    assert status == 413
    assert payload["__type"] == "RequestEntityTooLargeException"


def test_failed_validation_writes_nothing(glue, db):
    bad = table_input("half", StorageDescriptor={"Columns": [{"Name": "ok", "Type": "int"}, {"Name": "c" * 256, "Type": "int"}]})
    with pytest.raises(glue.exceptions.InvalidInputException, match="columns.2.member.name"):
        glue.create_table(DatabaseName=db, TableInput=bad)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=db, Name="half")


def test_next_token_is_bound_to_its_request(make_client):
    client = make_client("glue", account=random_account())
    for i in range(3):
        client.create_database(DatabaseInput={"Name": f"a{i}"})
    for i in range(3):
        client.create_table(DatabaseName="a0", TableInput=table_input(f"t{i}"))
        client.create_table(DatabaseName="a1", TableInput=table_input(f"t{i}"))
    token = client.get_tables(DatabaseName="a0", MaxResults=1)["NextToken"]
    # Same request: fine.
    assert client.get_tables(DatabaseName="a0", MaxResults=1, NextToken=token)["TableList"]
    # Another database, another operation, another catalog, another filter, or an edited token: refused.
    with pytest.raises(client.exceptions.InvalidInputException, match="NextToken"):
        client.get_tables(DatabaseName="a1", NextToken=token)
    with pytest.raises(client.exceptions.InvalidInputException, match="NextToken"):
        client.get_databases(NextToken=token)
    with pytest.raises(client.exceptions.InvalidInputException, match="NextToken"):
        client.get_tables(DatabaseName="a0", Expression="t*", NextToken=token)
    stranger = make_client("glue", account=random_account())
    stranger.create_database(DatabaseInput={"Name": "a0"})
    with pytest.raises(stranger.exceptions.InvalidInputException, match="NextToken"):
        stranger.get_tables(DatabaseName="a0", NextToken=token)
    forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    with pytest.raises(client.exceptions.InvalidInputException, match="NextToken"):
        client.get_tables(DatabaseName="a0", NextToken=forged)
