"""The wire: malformed requests, error shapes, unknown operations, NextToken binding."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.integration.conftest import random_account, table_input
from tests.integration.store_helpers import Store

AUTH = ("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/glue/aws4_request, "
        "SignedHeaders=host, Signature=0")


def _auth(access_key: str = "AKIDEXAMPLE", region: str = "us-east-1") -> str:
    return (f"AWS4-HMAC-SHA256 Credential={access_key}/20260101/{region}/glue/aws4_request, "
            "SignedHeaders=host, Signature=0")


def _post(endpoint, body: bytes, target: str | None = "AWSGlue.GetDatabases", path: str = "/",
          content_type: str = "application/x-amz-json-1.1", auth: str = AUTH):
    headers = {"Content-Type": content_type, "Authorization": auth}
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


# --------------------------------------------------------------------- hostile but well-framed
def _glue_call(endpoint, account: str, operation: str, body: bytes):
    return _post(endpoint, body, target=f"AWSGlue.{operation}", auth=_auth(account))


def _database_names(glue_client) -> list[str]:
    return [d["Name"] for d in glue_client.get_databases()["DatabaseList"]]


@pytest.mark.parametrize("operation, body", [
    # Echoed in a validation message (the name is too long): the connection used to drop.
    ("CreateDatabase", b'{"DatabaseInput": {"Name": "\\ud800' + b"x" * 300 + b'"}}'),
    # Stored text.
    ("CreateDatabase", b'{"DatabaseInput": {"Name": "fine", "Description": "bad \\udc00 text"}}'),
    # A high surrogate followed by something other than a low one; UTF-8-encoded surrogates.
    ("CreateDatabase", b'{"DatabaseInput": {"Name": "fine", "Parameters": {"k": "\\ud83d\\u0041"}}}'),
    ("CreateDatabase", b'{"DatabaseInput": {"Name": "fine", "Description": "\xed\xa0\x80"}}'),
])
def test_lone_surrogates_are_refused_and_nothing_is_stored(endpoint, make_client, operation, body):
    account = random_account()
    status, _, payload = _glue_call(endpoint, account, operation, body)
    assert status == 400 and payload["__type"] == "SerializationException", payload
    assert "surrogate" in payload["Message"] or "not valid JSON" in payload["Message"]
    assert _database_names(make_client("glue", account=account)) == []


def test_lone_surrogate_in_a_partition_value_is_refused(endpoint, make_client):
    account = random_account()
    client = make_client("glue", account=account)
    client.create_database(DatabaseInput={"Name": "d"})
    client.create_table(DatabaseName="d", TableInput=table_input("t"))
    body = b'{"DatabaseName": "d", "TableName": "t", "PartitionInput": {"Values": ["\\udc00"]}}'
    status, _, payload = _glue_call(endpoint, account, "CreatePartition", body)
    assert status == 400 and payload["__type"] == "SerializationException"
    assert client.get_partitions(DatabaseName="d", TableName="t")["Partitions"] == []


def test_surrogate_pairs_are_text(make_client):
    client = make_client("glue", account=random_account())
    client.create_database(DatabaseInput={"Name": "d", "Description": "rocket \U0001F680"})
    assert client.get_database(Name="d")["Database"]["Description"] == "rocket \U0001F680"


@pytest.mark.parametrize("body", [
    b'{"DatabaseInput": {"Name": "deep", "Parameters": ' + b"[" * 990 + b"]" * 990 + b"}}",
    b'{"DatabaseInput": {"Name": "deep"}, "Unknown": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    # Deep enough to parse, but more than the service stores inside a member it does not know.
    b'{"DatabaseInput": {"Name": "deep", "Future": ' + b'{"a":' * 40 + b"1" + b"}" * 40 + b"}}",
])
def test_deeply_nested_json_is_refused_and_nothing_is_stored(endpoint, make_client, body):
    account = random_account()
    status, _, payload = _glue_call(endpoint, account, "CreateDatabase", body)
    assert status == 400 and payload["__type"] == "SerializationException", payload
    assert "nested too deeply" in payload["Message"]
    assert _database_names(make_client("glue", account=account)) == []


def test_modest_nesting_in_unknown_members_is_accepted(endpoint, make_client):
    account = random_account()
    body = b'{"DatabaseInput": {"Name": "ok", "Future": ' + b'{"a":' * 20 + b"1" + b"}" * 20 + b"}}"
    status, _, payload = _glue_call(endpoint, account, "CreateDatabase", body)
    assert status == 200, payload
    assert _database_names(make_client("glue", account=account)) == ["ok"]


@pytest.mark.parametrize("token", ["abc.d\u00e9f", "\u00e9", "\u4e2d.\u6587"])
def test_next_token_with_non_ascii_characters_is_refused(endpoint, token):
    status, _, payload = _post(endpoint, b'{"NextToken": "' + token.encode() + b'"}')
    assert status == 400 and payload["__type"] == "InvalidInputException"
    assert "NextToken" in payload["Message"]


def test_huge_integer_in_a_timestamp_is_refused(endpoint, make_client):
    account = random_account()
    client = make_client("glue", account=account)
    client.create_database(DatabaseInput={"Name": "d"})
    body = b'{"DatabaseName": "d", "TableInput": {"Name": "t", "LastAccessTime": ' + b"9" * 400 + b"}}"
    status, _, payload = _glue_call(endpoint, account, "CreateTable", body)
    assert status == 400 and payload["__type"] == "InvalidInputException"
    assert "tableInput.lastAccessTime" in payload["Message"]
    assert client.get_tables(DatabaseName="d")["TableList"] == []


@pytest.mark.parametrize("member, number", [
    ("Retention", b"9" * 400),  # an integer: Java int
    ("Retention", b"2147483648"),
])
def test_integers_beyond_their_type_are_refused(endpoint, make_client, member, number):
    account = random_account()
    client = make_client("glue", account=account)
    client.create_database(DatabaseInput={"Name": "d"})
    body = b'{"DatabaseName": "d", "TableInput": {"Name": "t", "' + member.encode() + b'": ' + number + b"}}"
    status, _, payload = _glue_call(endpoint, account, "CreateTable", body)
    assert status == 400 and payload["__type"] == "InvalidInputException"
    assert client.get_tables(DatabaseName="d")["TableList"] == []


@pytest.mark.parametrize("version", ["\u00b2", "\u0661", "1" * 30])
def test_version_ids_that_are_not_plain_numbers_are_refused(endpoint, make_client, version):
    account = random_account()
    client = make_client("glue", account=account)
    client.create_database(DatabaseInput={"Name": "d"})
    client.create_table(DatabaseName="d", TableInput=table_input("t", Description="before"))
    for operation, body in [
        ("GetTableVersion", b'{"DatabaseName": "d", "TableName": "t", "VersionId": "%s"}'),
        ("DeleteTableVersion", b'{"DatabaseName": "d", "TableName": "t", "VersionId": "%s"}'),
        ("UpdateTable", b'{"DatabaseName": "d", "TableInput": {"Name": "t", "Description": "after"}, '
                        b'"VersionId": "%s"}'),
    ]:
        status, _, payload = _glue_call(endpoint, account, operation, body % version.encode())
        assert status == 400 and payload["__type"] == "InvalidInputException", (operation, payload)
        assert "VersionId" in payload["Message"]
    assert client.get_table(DatabaseName="d", Name="t")["Table"]["Description"] == "before"


@pytest.mark.parametrize("region", ["r" * 3000, "US-EAST-1", "us_east_1", "eu-west-1\x01x", "-x",
                                    "xx-nowhere-9", "local", "aws-global", "fips-us-east-1"])
def test_credential_scope_with_an_invalid_region_is_refused(endpoint, stack, region):
    account = random_account()
    body = b'{"DatabaseInput": {"Name": "d"}}'
    status, _, payload = _post(endpoint, body, target="AWSGlue.CreateDatabase", auth=_auth(account, region))
    assert status == 400 and payload["__type"] == "InvalidSignatureException"
    assert "region" in payload["Message"]
    # Nothing stored under that region (nor anywhere else for this account).
    store = Store(stack)
    for scope in (region, "us-east-1"):
        assert store.query("databases", "catalog", f"{scope}\x01{account}") == []


def test_a_region_aws_does_not_have_is_refused_on_every_protocol(endpoint, stack, make_client):
    """Open mode: the caller's region must exist (botocore's partitions), as AWS requires of a
    credential scope: Glue answers 400, Lake Formation 403, Paimon 401, and nothing is stored."""
    account = random_account()
    glue = make_client("glue", account=account, region="xx-nowhere-9")
    with pytest.raises(glue.exceptions.ClientError) as raised:
        glue.create_database(DatabaseInput={"Name": "nowhere"})
    error = raised.value.response
    assert (error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]) == ("InvalidSignatureException", 400)
    assert error["Error"]["Message"] == "Credential should be scoped to a valid region, not 'xx-nowhere-9'. "
    lakeformation = make_client("lakeformation", account=account, region="xx-nowhere-9")
    with pytest.raises(lakeformation.exceptions.ClientError) as raised:
        lakeformation.start_transaction()
    error = raised.value.response
    assert (error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]) == ("InvalidSignatureException", 403)
    request = urllib.request.Request(endpoint + "/v1/w1/databases", method="POST",
                                     data=json.dumps({"name": "nowhere", "options": {}}).encode(),
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {account}/xx-nowhere-9"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    answer = json.loads(refused.value.read())
    assert refused.value.code == 401 and answer["code"] == 401 and "valid region" in answer["message"]
    store = Store(stack)
    assert store.query("databases", "catalog", f"xx-nowhere-9\x01{account}") == []
    assert store.query("lf_transactions", "catalog", f"xx-nowhere-9\x01{account}") == []


@pytest.mark.parametrize("region", ["cn-north-1", "us-gov-west-1", "us-isob-east-1", "eusc-de-east-1", "eu-south-9"])
def test_regions_of_every_partition_are_served(make_client, region):
    """Every partition's regions, and a name its regionRegex admits (a region newer than botocore)."""
    glue = make_client("glue", account=random_account(), region=region)
    glue.create_database(DatabaseInput={"Name": "here"})
    assert [db["Name"] for db in glue.get_databases()["DatabaseList"]] == ["here"]


def test_every_client_checks_response_shapes(glue, lakeformation, make_client):
    """The harness checks the raw body of every response against botocore's output shape
    (tests/shape_check.py): the session clients and clients made later are all covered."""
    from tests import shape_check

    before = shape_check.CHECKED["count"]
    glue.get_databases()
    lakeformation.start_transaction()
    make_client("glue", account=random_account()).get_databases()
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name="no_such_database_anywhere")
    assert shape_check.CHECKED["count"] - before == 4


def test_null_database_members_are_absent(endpoint, make_client):
    account = random_account()
    body = json.dumps({"DatabaseInput": {"Name": "nulls", "Parameters": None, "Description": None},
                       "Tags": None}).encode()
    status, _, payload = _post(endpoint, body, target="AWSGlue.CreateDatabase", auth=_auth(account))
    assert status == 200, payload
    database = make_client("glue", account=account).get_database(Name="nulls")["Database"]
    assert "Parameters" not in database and "Description" not in database


def test_null_nested_members_are_absent(endpoint, make_client):
    account = random_account()
    glue = make_client("glue", account=account)
    glue.create_database(DatabaseInput={"Name": "nested"})
    glue.create_table(DatabaseName="nested", TableInput=table_input("t"))
    body = json.dumps({"DatabaseName": "nested", "TableName": "t", "PartitionInput": {
        "Values": ["2020"], "StorageDescriptor": {"Location": "s3://b/t/2020/", "InputFormat": None}}}).encode()
    status, _, payload = _post(endpoint, body, target="AWSGlue.CreatePartition", auth=_auth(account))
    assert status == 200, payload
    partition = glue.get_partition(DatabaseName="nested", TableName="t", PartitionValues=["2020"])["Partition"]
    assert partition["StorageDescriptor"]["Location"] == "s3://b/t/2020/"
    assert "InputFormat" not in partition["StorageDescriptor"]


# Request bodies are decoded by orjson when the quick validation vouches for the result, and by
# json otherwise (protocol/wire.py): orjson reads integers beyond 64 bits as floats, so wherever
# one may sit (a double, a member the model lacks, a document) the body is decoded exactly.
_BEYOND_64_BITS = b"18446744073709551617"


def _raw_json(endpoint, account: str, operation: str, body: bytes) -> bytes:
    request = urllib.request.Request(endpoint + "/", data=body, method="POST", headers={
        "Content-Type": "application/x-amz-json-1.1", "Authorization": _auth(account),
        "X-Amz-Target": f"AWSGlue.{operation}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


def test_members_the_model_lacks_are_ignored_at_any_depth(endpoint, make_client):
    """As AWS's JSON services do: a member the model lacks (here holding integers beyond 64 bits,
    which the fast decoder cannot read exactly) neither fails the request nor is stored, so no
    answer carries a member botocore's output shapes lack."""
    account = random_account()
    make_client("glue", account=account).create_database(DatabaseInput={"Name": "d"})
    body = (b'{"DatabaseName": "d", "Future": 1, "TableInput": {"Name": "t", "StorageDescriptor": {"Future": {"n": '
            + _BEYOND_64_BITS + b', "m": [-' + _BEYOND_64_BITS + b']}, "Columns": [{"Name": "c", "Type": "int", '
            b'"__type": "x"}]}}}')
    status, _, payload = _glue_call(endpoint, account, "CreateTable", body)
    assert status == 200, payload
    stored = _raw_json(endpoint, account, "GetTable", b'{"DatabaseName": "d", "Name": "t"}')
    assert b"Future" not in stored and b"__type" not in stored, stored
    assert b'"Columns":[{"Name":"c","Type":"int"}]' in stored, stored


def test_integers_beyond_64_bits_in_doubles_are_kept_exactly(endpoint, make_client):
    account = random_account()
    client = make_client("glue", account=account)
    client.create_database(DatabaseInput={"Name": "d"})
    client.create_table(DatabaseName="d", TableInput={
        "Name": "t", "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "double"}]}})
    statistics = (b'{"ColumnName": "x", "ColumnType": "double", "AnalyzedTime": 1700000000, "StatisticsData": '
                  b'{"Type": "DOUBLE", "DoubleColumnStatisticsData": {"MaximumValue": ' + _BEYOND_64_BITS
                  + b', "NumberOfNulls": 0, "NumberOfDistinctValues": 1}}}')
    body = b'{"DatabaseName": "d", "TableName": "t", "ColumnStatisticsList": [' + statistics + b"]}"
    status, _, payload = _glue_call(endpoint, account, "UpdateColumnStatisticsForTable", body)
    assert status == 200 and not payload.get("Errors"), payload
    stored = _raw_json(endpoint, account, "GetColumnStatisticsForTable",
                       b'{"DatabaseName": "d", "TableName": "t", "ColumnNames": ["x"]}')
    assert b'"MaximumValue":' + _BEYOND_64_BITS in stored, stored
