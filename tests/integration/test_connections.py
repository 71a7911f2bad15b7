"""Connection API through boto3 over HTTP (what awswrangler's ``catalog.get_connection`` and Glue
jobs call)."""

from __future__ import annotations

import datetime
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from infra.local.stack import REGION, REPO
from tests.integration.store_helpers import DEFAULT_ACCOUNT, Store

SECRETS = {"PASSWORD": "hunter2", "ENCRYPTED_PASSWORD": "c2VjcmV0", "KAFKA_SASL_SCRAM_PASSWORD": "scram",
           "KAFKA_CLIENT_KEYSTORE_PASSWORD": "ks", "ENCRYPTED_KAFKA_CLIENT_KEY_PASSWORD": "a2V5"}


def jdbc(name: str, **extra) -> dict:
    """A JDBC ConnectionInput with a user name and a password."""
    return {"Name": name, "ConnectionType": "JDBC",
            "ConnectionProperties": {"JDBC_CONNECTION_URL": "jdbc:postgresql://db.example:5432/sales",
                                     "USERNAME": "etl", "PASSWORD": "hunter2"},
            **extra}


def test_create_get_round_trip(fresh_glue):
    answer = fresh_glue.create_connection(ConnectionInput=jdbc(
        "Sales-PG", Description="sales warehouse", MatchCriteria=["sales", "pg"],
        PhysicalConnectionRequirements={"SubnetId": "subnet-1", "SecurityGroupIdList": ["sg-1"],
                                        "AvailabilityZone": "us-east-1a"}),
        Tags={"team": "data"})  # tags: accepted; stored once i14-tags is merged
    assert answer["CreateConnectionStatus"] == "READY"
    connection = fresh_glue.get_connection(Name="Sales-PG")["Connection"]
    assert connection["Name"] == "Sales-PG"
    assert connection["Description"] == "sales warehouse"
    assert connection["ConnectionType"] == "JDBC"
    assert connection["MatchCriteria"] == ["sales", "pg"]
    assert connection["ConnectionProperties"] == {"JDBC_CONNECTION_URL": "jdbc:postgresql://db.example:5432/sales",
                                                  "USERNAME": "etl", "PASSWORD": "hunter2"}
    assert connection["PhysicalConnectionRequirements"]["SubnetId"] == "subnet-1"
    assert isinstance(connection["CreationTime"], datetime.datetime)
    assert connection["LastUpdatedTime"] == connection["CreationTime"]
    assert connection["Status"] == "READY"
    assert connection["ConnectionSchemaVersion"] == 1


def test_hide_password_withholds_every_secret_property(fresh_glue):
    properties = {"KAFKA_BOOTSTRAP_SERVERS": "b-1.kafka:9094", "KAFKA_SASL_SCRAM_USERNAME": "u", **SECRETS}
    fresh_glue.create_connection(ConnectionInput={"Name": "k", "ConnectionType": "KAFKA",
                                                  "ConnectionProperties": properties})
    assert fresh_glue.get_connection(Name="k")["Connection"]["ConnectionProperties"] == properties
    hidden = fresh_glue.get_connection(Name="k", HidePassword=True)["Connection"]["ConnectionProperties"]
    assert hidden == {"KAFKA_BOOTSTRAP_SERVERS": "b-1.kafka:9094", "KAFKA_SASL_SCRAM_USERNAME": "u"}
    listed = fresh_glue.get_connections(HidePassword=True)["ConnectionList"]
    assert listed[0]["ConnectionProperties"] == hidden
    assert fresh_glue.get_connections()["ConnectionList"][0]["ConnectionProperties"] == properties


def test_authentication_credentials_are_never_returned(fresh_glue):
    fresh_glue.create_connection(ConnectionInput={
        "Name": "sf", "ConnectionType": "SALESFORCE", "ConnectionProperties": {},
        "AuthenticationConfiguration": {
            "AuthenticationType": "OAUTH2",
            "OAuth2Properties": {"OAuth2GrantType": "CLIENT_CREDENTIALS",
                                 "TokenUrl": "https://login.example.com/token",
                                 "OAuth2Credentials": {"UserManagedClientApplicationClientSecret": "s3cr3t"}},
            "BasicAuthenticationCredentials": {"Username": "u", "Password": "p"}}})
    authentication = fresh_glue.get_connection(Name="sf")["Connection"]["AuthenticationConfiguration"]
    assert authentication == {"AuthenticationType": "OAUTH2",
                              "OAuth2Properties": {"OAuth2GrantType": "CLIENT_CREDENTIALS",
                                                   "TokenUrl": "https://login.example.com/token"}}


def test_duplicate_and_missing(fresh_glue):
    fresh_glue.create_connection(ConnectionInput=jdbc("c"))
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException, match="c already exists"):
        fresh_glue.create_connection(ConnectionInput=jdbc("c"))
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="nothere"):
        fresh_glue.get_connection(Name="nothere")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="nothere"):
        fresh_glue.delete_connection(ConnectionName="nothere")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="nothere"):
        fresh_glue.update_connection(Name="nothere", ConnectionInput=jdbc("nothere"))


@pytest.mark.parametrize("connection_input, rule", [
    ({"ConnectionType": "JDBC", "ConnectionProperties": {"USERNAME": "u", "PASSWORD": "p"}}, "JDBC_CONNECTION_URL"),
    ({"ConnectionType": "JDBC", "ConnectionProperties": {"HOST": "h", "PORT": "5432", "USERNAME": "u",
                                                         "PASSWORD": "p"}}, "JDBC_ENGINE"),
    ({"ConnectionType": "JDBC", "ConnectionProperties": {"JDBC_CONNECTION_URL": "jdbc:x", "USERNAME": "u"}},
     "SECRET_ID"),
    ({"ConnectionType": "KAFKA", "ConnectionProperties": {}}, "KAFKA_BOOTSTRAP_SERVERS"),
    ({"ConnectionType": "MONGODB", "ConnectionProperties": {"SECRET_ID": "s"}}, "CONNECTION_URL"),
    ({"ConnectionType": "MARKETPLACE", "ConnectionProperties": {"CONNECTOR_TYPE": "JDBC"}}, "CONNECTOR_URL"),
    ({"ConnectionType": "NETWORK", "ConnectionProperties": {}}, "PhysicalConnectionRequirements"),
    ({"ConnectionType": "SFTP", "ConnectionProperties": {}}, "SFTP"),
    ({"ConnectionType": "NOT_A_TYPE", "ConnectionProperties": {}}, "enum"),
    ({"ConnectionType": "JDBC", "ConnectionProperties": {"NOT_A_KEY": "x"}}, "enum"),
])
def test_connection_type_rules(fresh_glue, connection_input, rule):
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match=rule):
        fresh_glue.create_connection(ConnectionInput={"Name": "bad", **connection_input})
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_connection(Name="bad")


def test_accepted_alternatives(fresh_glue):
    fresh_glue.create_connection(ConnectionInput={"Name": "by-host", "ConnectionType": "JDBC", "ConnectionProperties": {
        "HOST": "h", "PORT": "5432", "JDBC_ENGINE": "postgres", "SECRET_ID": "my-secret"}})
    fresh_glue.create_connection(ConnectionInput={
        "Name": "net", "ConnectionType": "NETWORK", "ConnectionProperties": {},
        "PhysicalConnectionRequirements": {"SubnetId": "subnet-1"}})
    fresh_glue.create_connection(ConnectionInput={"Name": "custom", "ConnectionType": "CUSTOM",
                                                  "ConnectionProperties": {"CONNECTOR_URL": "s3://b/c.jar"}})
    assert [c["Name"] for c in fresh_glue.get_connections()["ConnectionList"]] == ["by-host", "custom", "net"]


def test_update_replaces_keeps_creation_time_and_renames(fresh_glue):
    fresh_glue.create_connection(ConnectionInput=jdbc("c", Description="old"))
    fresh_glue.create_connection(ConnectionInput=jdbc("taken"))
    before = fresh_glue.get_connection(Name="c")["Connection"]
    fresh_glue.update_connection(Name="c", ConnectionInput=jdbc("c"))
    after = fresh_glue.get_connection(Name="c")["Connection"]
    assert "Description" not in after
    assert after["CreationTime"] == before["CreationTime"]
    assert after["LastUpdatedTime"] >= before["LastUpdatedTime"]
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="JDBC_CONNECTION_URL"):
        fresh_glue.update_connection(Name="c", ConnectionInput={"Name": "c", "ConnectionType": "JDBC",
                                                                "ConnectionProperties": {}})
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException, match="taken"):
        fresh_glue.update_connection(Name="c", ConnectionInput=jdbc("taken"))
    fresh_glue.update_connection(Name="c", ConnectionInput=jdbc("renamed"))
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_connection(Name="c")
    assert fresh_glue.get_connection(Name="renamed")["Connection"]["CreationTime"] == before["CreationTime"]


def test_get_connections_filter(fresh_glue):
    fresh_glue.create_connection(ConnectionInput=jdbc("a", MatchCriteria=["x", "y"]))
    fresh_glue.create_connection(ConnectionInput=jdbc("b", MatchCriteria=["x"]))
    fresh_glue.create_connection(ConnectionInput={"Name": "k", "ConnectionType": "KAFKA", "MatchCriteria": ["x", "y"],
                                                  "ConnectionProperties": {"KAFKA_BOOTSTRAP_SERVERS": "b:9094"},
                                                  "SparkProperties": {"spark.x": "1"}})

    def listed(**params) -> list[str]:
        return [c["Name"] for c in fresh_glue.get_connections(**params)["ConnectionList"]]

    assert listed() == ["a", "b", "k"]
    assert listed(Filter={"ConnectionType": "JDBC"}) == ["a", "b"]
    assert listed(Filter={"MatchCriteria": ["y"]}) == ["a", "k"]
    assert listed(Filter={"MatchCriteria": ["x", "y"], "ConnectionType": "KAFKA"}) == ["k"]
    assert listed(Filter={"MatchCriteria": ["z"]}) == []
    assert listed(Filter={"ConnectionSchemaVersion": 2}) == ["k"]


def test_get_connections_pages_through_every_connection_once(fresh_glue):
    expected = sorted(f"conn-{i:02d}" for i in range(11))
    for name in expected:
        fresh_glue.create_connection(ConnectionInput=jdbc(name))
    seen, token = [], None
    while True:
        page = fresh_glue.get_connections(MaxResults=4, HidePassword=True, **({"NextToken": token} if token else {}))
        assert len(page["ConnectionList"]) <= 4
        assert all("PASSWORD" not in c["ConnectionProperties"] for c in page["ConnectionList"])
        seen += [c["Name"] for c in page["ConnectionList"]]
        token = page.get("NextToken")
        if not token:
            break
    assert seen == expected
    token = fresh_glue.get_connections(MaxResults=1)["NextToken"]
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="NextToken"):
        fresh_glue.get_connections(MaxResults=1, HidePassword=True, NextToken=token)
    paginator = fresh_glue.get_paginator("get_connections")
    assert [c["Name"] for p in paginator.paginate(PaginationConfig={"PageSize": 5}) for c in p["ConnectionList"]] \
        == expected


def test_batch_delete_reports_each_name(fresh_glue):
    for name in ("a", "b", "c"):
        fresh_glue.create_connection(ConnectionInput=jdbc(name))
    answer = fresh_glue.batch_delete_connection(ConnectionNameList=["a", "missing", "c"])
    assert sorted(answer["Succeeded"]) == ["a", "c"]
    assert list(answer["Errors"]) == ["missing"]
    assert answer["Errors"]["missing"]["ErrorCode"] == "EntityNotFoundException"
    assert "missing" in answer["Errors"]["missing"]["ErrorMessage"]
    assert [c["Name"] for c in fresh_glue.get_connections()["ConnectionList"]] == ["b"]
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="25"):
        fresh_glue.batch_delete_connection(ConnectionNameList=[f"n{i}" for i in range(26)])


def test_delete_connection(fresh_glue):
    fresh_glue.create_connection(ConnectionInput=jdbc("c"))
    fresh_glue.delete_connection(ConnectionName="c")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_connection(Name="c")
    fresh_glue.create_connection(ConnectionInput=jdbc("c"))


def test_racing_creates_have_one_winner(fresh_glue):
    def create(i: int) -> str:
        try:
            fresh_glue.create_connection(ConnectionInput=jdbc("c", Description=f"d{i}"))
            return "won"
        except fresh_glue.exceptions.AlreadyExistsException:
            return "lost"

    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(create, range(6)))
    assert outcomes.count("won") == 1, outcomes
    assert fresh_glue.get_connection(Name="c")["Connection"]["Description"] == f"d{outcomes.index('won')}"


STALE_DELETE = """
import sys
from chalicelib.service import connections
from chalicelib.store import catalog_entries as store
from chalicelib.store.documents import decode_document
catalog_key, name, raw_hex = sys.argv[1:4]
scope = store.scope(catalog_key, store.CONNECTION)
raw = bytes.fromhex(raw_hex)
print(store.delete(scope, name, raw=raw))  # a delete of the incarnation read before the re-create
reads = []
real_get = store.get
def get(scope_key, key):
    reads.append(key)  # the first read is the stale one, the next the connection as it is now
    return store.Entry(key, None, decode_document(raw), raw) if len(reads) == 1 else real_get(scope_key, key)
store.get = get
connections.delete_connection(catalog_key, name)
print(len(reads))
"""


def test_a_delete_applies_only_to_the_connection_it_read(glue, stack):
    """A delete whose read predates a delete and re-create of the name leaves the new
    connection alone (its condition is the definition read); the service then reads again and
    deletes the connection as it is now, with that one's tags."""
    name = f"c_{uuid.uuid4().hex[:12]}"
    glue.create_connection(ConnectionInput=jdbc(name, Description="first"))
    store = Store(stack)
    catalog_key = f"{REGION}\x01{DEFAULT_ACCOUNT}"
    first = store.get("catalog_entries", {"scope": f"{catalog_key}\x01connection", "key": name})
    glue.delete_connection(ConnectionName=name)
    glue.create_connection(ConnectionInput=jdbc(name, Description="second"))

    run = subprocess.run([sys.executable, "-c", STALE_DELETE, catalog_key, name, first["doc"]["B"].hex()],
                         cwd=REPO, env=stack.env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "2"]
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_connection(Name=name)
