"""The embedded store is not a back door: DynamoDB Local listens on every interface and checks
no signature, so the catalog's database is named by a random access key id only the stack knows
(infra/local/dynamodb_local.py). A client with any other credentials reaches the port but sees
an empty database of its own: no catalog table to list, read or write.
"""

from __future__ import annotations

import socket
import stat
import uuid
from pathlib import Path
from typing import Any, Optional

import boto3
import pytest
from botocore.exceptions import ClientError

from infra.local.dynamodb_local import KEY_FILE_NAME, SHARED_DB_FILE, DynamoDBLocal
from infra.local.stack import REGION, CatalogStack

# The credentials an intruder would try first: the fakes the stack used before, the test
# clients' key, an account-shaped key id, and a fresh random one.
OTHER_KEYS = ["local", "testing", "123456789012", "AKIA" + uuid.uuid4().hex[:16].upper()]


def intruder(endpoint: str, key: str) -> Any:
    """A DynamoDB client on the stack's DynamoDB Local with credentials of its own."""
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=key, aws_secret_access_key=key)


def catalog_item(stack: CatalogStack, database: str) -> Optional[dict[str, Any]]:
    """The database's item, read with the catalog's own key."""
    return stack.ddb_client().get_item(
        TableName=stack.table_prefix + "databases", ConsistentRead=True,
        Key={"catalog": {"S": f"{REGION}\x01123456789012"}, "name": {"S": database}}).get("Item")


@pytest.fixture(scope="module")
def planted(stack: CatalogStack, glue: Any) -> str:
    """A database written through the API, so the catalog's tables hold an item."""
    if stack.dynamodb is None:
        pytest.skip("an external DynamoDB (LocalStack) has credentials of its own")
    name = f"lockdown_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": name, "Description": "before"})
    return name


def test_the_catalog_key_sees_the_tables(stack: CatalogStack, planted: str) -> None:
    names = stack.ddb_client().list_tables()["TableNames"]
    assert stack.table_prefix + "databases" in names
    assert catalog_item(stack, planted) is not None


@pytest.mark.parametrize("key", OTHER_KEYS)
def test_other_credentials_see_no_catalog_table(stack: CatalogStack, planted: str, key: str) -> None:
    names = intruder(stack.ddb_endpoint, key).list_tables()["TableNames"]
    assert not [name for name in names if name.startswith(stack.table_prefix)]


@pytest.mark.parametrize("key", OTHER_KEYS)
def test_other_credentials_cannot_read_or_write_the_catalog(stack: CatalogStack, planted: str, key: str) -> None:
    other = intruder(stack.ddb_endpoint, key)
    table = stack.table_prefix + "databases"
    item_key = {"catalog": {"S": f"{REGION}\x01123456789012"}, "name": {"S": planted}}
    before = catalog_item(stack, planted)
    attempts = [
        lambda: other.get_item(TableName=table, Key=item_key),
        lambda: other.scan(TableName=table),
        lambda: other.describe_table(TableName=table),
        lambda: other.put_item(TableName=table, Item={**item_key, "description": {"S": "rewritten"}}),
        lambda: other.update_item(TableName=table, Key=item_key, UpdateExpression="SET description = :d",
                                  ExpressionAttributeValues={":d": {"S": "rewritten"}}),
        lambda: other.delete_item(TableName=table, Key=item_key),
        lambda: other.delete_table(TableName=table),
        lambda: other.execute_statement(Statement=f'SELECT * FROM "{table}"'),
    ]
    for attempt in attempts:
        with pytest.raises(ClientError) as caught:
            attempt()
        assert caught.value.response["Error"]["Code"] == "ResourceNotFoundException"
    assert catalog_item(stack, planted) == before


def test_the_service_still_reads_what_it_wrote(stack: CatalogStack, planted: str, glue: Any) -> None:
    assert glue.get_database(Name=planted)["Database"]["Description"] == "before"


def non_loopback_address() -> Optional[str]:
    """One of this machine's own non-loopback IPv4 addresses, or None."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent, a route is chosen
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_from_a_non_loopback_address_the_port_answers_but_the_catalog_stays_hidden(
        stack: CatalogStack, planted: str) -> None:
    """DynamoDB Local cannot be bound to loopback: the database key is what protects the catalog
    from another machine, and this is what that machine sees."""
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    assert stack.dynamodb is not None
    remote = f"http://{address}:{stack.dynamodb.port}"
    for key in OTHER_KEYS:
        names = intruder(remote, key).list_tables()["TableNames"]
        assert not [name for name in names if name.startswith(stack.table_prefix)]


def test_the_persisted_key_is_private_and_survives_restarts(persistent_stack: CatalogStack) -> None:
    assert persistent_stack.dynamodb is not None and persistent_stack.dynamodb.db_path is not None
    db_path = persistent_stack.dynamodb.db_path
    key_file = db_path / KEY_FILE_NAME
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o700
    key = key_file.read_text().strip()
    assert key == persistent_stack.ddb_access_key_id
    assert (db_path / f"{key}_{REGION}.db").exists()
    glue = persistent_stack.client()
    glue.create_database(DatabaseInput={"Name": "kept"})
    persistent_stack.restart()
    assert persistent_stack.ddb_access_key_id == key
    assert glue.get_database(Name="kept")["Database"]["Name"] == "kept"
    names = intruder(persistent_stack.ddb_endpoint, "local").list_tables()["TableNames"]
    assert not [name for name in names if name.startswith(persistent_stack.table_prefix)]


def test_a_shared_database_from_an_older_run_becomes_the_keyed_one(tmp_path: Path) -> None:
    """Data written by a -sharedDb DynamoDB Local (what `make run` used before) is renamed to
    the new key's database on first start, so an existing .data catalog is kept."""
    db_path = tmp_path / "dynamodb"
    with DynamoDBLocal(db_path=db_path, region=REGION) as first:
        client = first.client()
        client.create_table(TableName="kept_table", BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}])
        client.put_item(TableName="kept_table", Item={"k": {"S": "v"}})
        old_key = first.access_key_id
    # Make the directory look like a -sharedDb run's: one shared file, no key file.
    (db_path / f"{old_key}_{REGION}.db").rename(db_path / SHARED_DB_FILE)
    (db_path / KEY_FILE_NAME).unlink()
    with DynamoDBLocal(db_path=db_path, region=REGION) as second:
        assert second.access_key_id != old_key
        assert not (db_path / SHARED_DB_FILE).exists()
        item = second.client().get_item(TableName="kept_table", Key={"k": {"S": "v"}})
        assert item["Item"] == {"k": {"S": "v"}}
        assert intruder(second.endpoint, "local").list_tables()["TableNames"] == []
