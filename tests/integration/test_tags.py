"""Tags of catalog resources through boto3: TagResource, UntagResource, GetTags, CreateDatabase Tags."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from infra.local.stack import REGION
from tests.integration.conftest import random_account, table_input
from tests.integration.store_helpers import Store



def database_arn(account: str, name: str, region: str = REGION) -> str:
    return f"arn:aws:glue:{region}:{account}:database/{name}"


def test_create_database_tags_round_trip(fresh_glue, account):
    fresh_glue.create_database(DatabaseInput={"Name": "Tagged"}, Tags={"team": "data", "env": ""})
    assert fresh_glue.get_tags(ResourceArn=database_arn(account, "tagged"))["Tags"] == {"team": "data", "env": ""}
    # The ARN names the database as created or folded: Glue folds database names.
    assert fresh_glue.get_tags(ResourceArn=database_arn(account, "TAGGED"))["Tags"] == {"team": "data", "env": ""}


def test_untagged_database_has_empty_tags(fresh_glue, account):
    fresh_glue.create_database(DatabaseInput={"Name": "plain"})
    assert fresh_glue.get_tags(ResourceArn=database_arn(account, "plain"))["Tags"] == {}


def test_tag_untag_round_trip(fresh_glue, account):
    fresh_glue.create_database(DatabaseInput={"Name": "db1"}, Tags={"a": "1"})
    arn = database_arn(account, "db1")
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"b": "2", "a": "changed"})
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {"a": "changed", "b": "2"}
    fresh_glue.untag_resource(ResourceArn=arn, TagsToRemove=["a", "not-there"])
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {"b": "2"}
    fresh_glue.untag_resource(ResourceArn=arn, TagsToRemove=["b"])
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {}
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={})
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {}


def test_fifty_tags_per_resource(fresh_glue, account):
    fresh_glue.create_database(DatabaseInput={"Name": "many"}, Tags={f"k{i}": "v" for i in range(30)})
    arn = database_arn(account, "many")
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={f"k{i}": "v" for i in range(20, 50)})  # 20 overlap
    assert len(fresh_glue.get_tags(ResourceArn=arn)["Tags"]) == 50
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="at most 50 tags"):
        fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"one-more": "v"})
    assert len(fresh_glue.get_tags(ResourceArn=arn)["Tags"]) == 50
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"k0": "new value"})  # replacing stays at 50
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"]["k0"] == "new value"


def test_key_and_value_lengths(fresh_glue, account):
    fresh_glue.create_database(DatabaseInput={"Name": "lengths"})
    arn = database_arn(account, "lengths")
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"k" * 128: "v" * 256})
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {"k" * 128: "v" * 256}
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="tagsToAdd"):
        fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"k" * 129: "v"})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="less than or equal to 256"):
        fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"k": "v" * 257})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="less than or equal to 50"):
        fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={f"k{i}": "v" for i in range(51)})


def test_aws_prefix_is_reserved(fresh_glue, account):
    fresh_glue.create_database(DatabaseInput={"Name": "reserved"})
    arn = database_arn(account, "reserved")
    for key in ("aws:owner", "AWS:owner"):
        with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="reserved"):
            fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"ok": "1", key: "x"})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="reserved"):
        fresh_glue.untag_resource(ResourceArn=arn, TagsToRemove=["aws:owner"])
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {}
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"awsome": "aws:value"})  # only the key prefix is reserved
    # A create with a reserved key creates nothing.
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="reserved"):
        fresh_glue.create_database(DatabaseInput={"Name": "never"}, Tags={"aws:x": "1"})
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_database(Name="never")


def test_missing_database_is_entity_not_found(fresh_glue, account):
    arn = database_arn(account, "nothere")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="nothere"):
        fresh_glue.get_tags(ResourceArn=arn)
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"a": "1"})
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.untag_resource(ResourceArn=arn, TagsToRemove=["a"])


@pytest.mark.parametrize("arn, match", [
    ("arn:aws:glue:us-east-1", "not a valid Glue resource ARN"),
    ("arn:aws:glue:us-east-1:{account}:database", "database ARN ends in 'database/<name>'"),
    ("arn:aws:glue:us-east-1:{account}:database/", "database ARN ends in"),
    ("arn:aws:glue:us-east-1:{account}:table/db1", "table ARN ends in 'table/<name>/<name>'"),
    ("arn:aws:glue:us-east-1:{account}:job/j1", "resource type 'job' is not a Data Catalog"),
    ("arn:aws:glue::{account}:database/db1", "names no region"),
    ("arn:aws:glue:us-east-1:12345:database/db1", "12 digits"),
    ("arn:aws:glue:eu-west-1:{account}:database/db1", "region eu-west-1"),
])
def test_malformed_arn_is_invalid_input(fresh_glue, account, arn, match):
    fresh_glue.create_database(DatabaseInput={"Name": "db1"})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match=match):
        fresh_glue.get_tags(ResourceArn=arn.format(account=account))


def test_arn_outside_the_glue_pattern_is_refused_by_the_model(fresh_glue):
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="regular expression"):
        fresh_glue.get_tags(ResourceArn="arn:aws:s3:::bucket")


def test_another_accounts_database_is_access_denied(fresh_glue, make_client, account):
    other = random_account()
    make_client("glue", account=other).create_database(DatabaseInput={"Name": "theirs"})
    with pytest.raises(fresh_glue.exceptions.AccessDeniedException):
        fresh_glue.get_tags(ResourceArn=database_arn(other, "theirs"))


def test_tables_functions_and_the_catalog_are_not_taggable(fresh_glue, account):
    # AWS tags databases and connections among catalog resources ("AWS tags in AWS Glue").
    fresh_glue.create_database(DatabaseInput={"Name": "db1"})
    fresh_glue.create_table(DatabaseName="db1", TableInput=table_input("t1"))
    for resource in ("table/db1/t1", "userDefinedFunction/db1/f1", "catalog"):
        arn = f"arn:aws:glue:{REGION}:{account}:{resource}"
        with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="cannot be tagged"):
            fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"a": "1"})
        with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="cannot be tagged"):
            fresh_glue.get_tags(ResourceArn=arn)


def test_tags_go_with_the_database_and_are_not_inherited(fresh_glue, account, stack):
    fresh_glue.create_database(DatabaseInput={"Name": "gone"}, Tags={"a": "1"})
    arn = database_arn(account, "gone")
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"b": "2"})
    fresh_glue.delete_database(Name="gone")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_tags(ResourceArn=arn)
    fresh_glue.create_database(DatabaseInput={"Name": "gone"})
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {}
    # Nothing of the first database's tags is left stored, once the background clean-up of the
    # deleted database ran (DeleteDatabase answers before it).
    store = Store(stack)
    deadline = time.monotonic() + 90
    while (keys := [item["key"]["S"] for item in store.query("catalog_documents", "catalog",
                                                             f"{REGION}\x01{account}")]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert keys == []


def test_failed_create_leaves_no_tags_and_keeps_the_winners(fresh_glue, account, stack):
    fresh_glue.create_database(DatabaseInput={"Name": "taken"}, Tags={"owner": "first"})
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException):
        fresh_glue.create_database(DatabaseInput={"Name": "taken"}, Tags={"owner": "second"})
    assert fresh_glue.get_tags(ResourceArn=database_arn(account, "taken"))["Tags"] == {"owner": "first"}
    store = Store(stack)
    assert len(store.query("catalog_documents", "catalog", f"{REGION}\x01{account}")) == 1


def test_tags_are_per_region(make_client, account):
    east = make_client("glue", account=account)
    west = make_client("glue", account=account, region="eu-west-1")
    east.create_database(DatabaseInput={"Name": "db1"}, Tags={"where": "east"})
    west.create_database(DatabaseInput={"Name": "db1"}, Tags={"where": "west"})
    assert east.get_tags(ResourceArn=database_arn(account, "db1"))["Tags"] == {"where": "east"}
    assert west.get_tags(ResourceArn=database_arn(account, "db1", "eu-west-1"))["Tags"] == {"where": "west"}


def test_concurrent_tag_changes_are_all_kept(fresh_glue, account):
    fresh_glue.create_database(DatabaseInput={"Name": "racy"})
    arn = database_arn(account, "racy")

    def add(i: int) -> None:
        fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={f"k{i}": str(i)})

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(add, range(16)))
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {f"k{i}": str(i) for i in range(16)}


def _jdbc(name: str) -> dict:
    return {"Name": name, "ConnectionType": "JDBC",
            "ConnectionProperties": {"JDBC_CONNECTION_URL": "jdbc:postgresql://h:5432/db", "USERNAME": "u",
                                     "PASSWORD": "p"}}


def test_connection_tags_from_create_tag_resource_and_gone_with_the_connection(fresh_glue, account):
    arn = f"arn:aws:glue:{REGION}:{account}:connection/tagged-conn"
    fresh_glue.create_connection(ConnectionInput=_jdbc("tagged-conn"), Tags={"team": "data"})
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {"team": "data"}
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"env": "prod"})
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {"team": "data", "env": "prod"}

    # A create that loses the name leaves the winner's tags alone.
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException):
        fresh_glue.create_connection(ConnectionInput=_jdbc("tagged-conn"), Tags={"team": "other"})
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {"team": "data", "env": "prod"}

    fresh_glue.delete_connection(ConnectionName="tagged-conn")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_tags(ResourceArn=arn)
    fresh_glue.create_connection(ConnectionInput=_jdbc("tagged-conn"))
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {}  # a new connection starts untagged


def test_connection_create_with_a_reserved_tag_key_creates_nothing(fresh_glue):
    with pytest.raises(fresh_glue.exceptions.InvalidInputException):
        fresh_glue.create_connection(ConnectionInput=_jdbc("refused-conn"), Tags={"aws:x": "y"})
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_connection(Name="refused-conn")
