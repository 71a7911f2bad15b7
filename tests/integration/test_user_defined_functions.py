"""User-defined function API through boto3 over HTTP (what Spark SQL's and Hive's Glue clients call)."""

from __future__ import annotations

import datetime
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from infra.local.stack import REGION, REPO
from tests.integration.store_helpers import DEFAULT_ACCOUNT, Store


def udf(name: str, **extra) -> dict:
    """A UserDefinedFunctionInput."""
    return {"FunctionName": name, "ClassName": f"com.example.{name}", "OwnerName": "owner", "OwnerType": "USER",
            **extra}


def names(functions: list[dict]) -> list[tuple[str, str]]:
    return [(f["DatabaseName"], f["FunctionName"]) for f in functions]


def test_create_get_round_trip(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "sales"})
    fresh_glue.create_user_defined_function(DatabaseName="Sales", FunctionInput=udf(
        "My_Upper", FunctionType="REGULAR_FUNCTION",
        ResourceUris=[{"ResourceType": "JAR", "Uri": "s3://bucket/udfs.jar"}]))
    function = fresh_glue.get_user_defined_function(DatabaseName="SALES", FunctionName="my_UPPER")["UserDefinedFunction"]
    assert function["FunctionName"] == "my_upper"
    assert function["DatabaseName"] == "sales"
    assert function["ClassName"] == "com.example.My_Upper"
    assert function["OwnerName"] == "owner"
    assert function["OwnerType"] == "USER"
    assert function["FunctionType"] == "REGULAR_FUNCTION"
    assert function["ResourceUris"] == [{"ResourceType": "JAR", "Uri": "s3://bucket/udfs.jar"}]
    assert isinstance(function["CreateTime"], datetime.datetime)
    assert function["CatalogId"].isdigit() and len(function["CatalogId"]) == 12


def test_duplicate_missing_database_and_missing_function(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("f"))
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException, match="f already exists"):
        fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("F"))
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="nothere"):
        fresh_glue.create_user_defined_function(DatabaseName="nothere", FunctionInput=udf("f"))
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="nothere"):
        fresh_glue.get_user_defined_functions(DatabaseName="nothere", Pattern="*")
    for call in (fresh_glue.get_user_defined_function, fresh_glue.delete_user_defined_function):
        with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="g"):
            call(DatabaseName="d", FunctionName="g")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.update_user_defined_function(DatabaseName="d", FunctionName="g", FunctionInput=udf("g"))


def test_create_without_a_name_is_invalid_input(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="FunctionName"):
        fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput={"ClassName": "c"})


def test_model_limits_are_enforced(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="255"):
        fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("f" * 256))
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="enum"):
        fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("f", OwnerType="ROBOT"))


def test_update_replaces_keeps_create_time_and_renames(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("f", OwnerType="ROLE"))
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("taken"))
    before = fresh_glue.get_user_defined_function(DatabaseName="d", FunctionName="f")["UserDefinedFunction"]
    fresh_glue.update_user_defined_function(DatabaseName="d", FunctionName="f",
                                            FunctionInput={"FunctionName": "f", "ClassName": "com.example.New"})
    after = fresh_glue.get_user_defined_function(DatabaseName="d", FunctionName="f")["UserDefinedFunction"]
    assert after["ClassName"] == "com.example.New"
    assert "OwnerType" not in after
    assert after["CreateTime"] == before["CreateTime"]
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException, match="taken"):
        fresh_glue.update_user_defined_function(DatabaseName="d", FunctionName="f", FunctionInput=udf("taken"))
    fresh_glue.update_user_defined_function(DatabaseName="d", FunctionName="f", FunctionInput=udf("Renamed"))
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_user_defined_function(DatabaseName="d", FunctionName="f")
    renamed = fresh_glue.get_user_defined_function(DatabaseName="d", FunctionName="renamed")["UserDefinedFunction"]
    assert renamed["CreateTime"] == before["CreateTime"]


def test_delete_removes_the_function(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("f"))
    fresh_glue.delete_user_defined_function(DatabaseName="d", FunctionName="F")
    assert fresh_glue.get_user_defined_functions(DatabaseName="d", Pattern="*")["UserDefinedFunctions"] == []


def test_pattern_within_one_database_and_across_all(fresh_glue):
    for database in ("alpha", "beta", "gamma"):
        fresh_glue.create_database(DatabaseInput={"Name": database})
    for database, function in (("alpha", "to_upper"), ("alpha", "to_lower"), ("alpha", "hash"),
                               ("beta", "to_date"), ("beta", "mask")):
        fresh_glue.create_user_defined_function(DatabaseName=database, FunctionInput=udf(function))

    def listed(**params) -> list[tuple[str, str]]:
        return names(fresh_glue.get_user_defined_functions(**params)["UserDefinedFunctions"])

    assert listed(DatabaseName="alpha", Pattern="to_*") == [("alpha", "to_lower"), ("alpha", "to_upper")]
    assert listed(DatabaseName="ALPHA", Pattern="hash|mask") == [("alpha", "hash")]
    assert listed(Pattern="to_.*") == [("alpha", "to_lower"), ("alpha", "to_upper"), ("beta", "to_date")]
    assert listed(Pattern="*") == [("alpha", "hash"), ("alpha", "to_lower"), ("alpha", "to_upper"),
                                   ("beta", "mask"), ("beta", "to_date")]
    assert listed(Pattern="MASK") == [("beta", "mask")]
    assert listed(DatabaseName="gamma", Pattern="*") == []


def test_function_type_filter(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("agg", FunctionType="AGGREGATE_FUNCTION"))
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("reg", FunctionType="REGULAR_FUNCTION"))
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("untyped"))
    listed = fresh_glue.get_user_defined_functions(Pattern="*", FunctionType="AGGREGATE_FUNCTION")
    assert names(listed["UserDefinedFunctions"]) == [("d", "agg")]


def test_malformed_pattern_is_invalid_input_naming_pattern(fresh_glue):
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="Pattern"):
        fresh_glue.get_user_defined_functions(Pattern="(unclosed")


def test_paging_across_databases_returns_every_function_once(fresh_glue):
    expected = []
    for database in ("a", "b", "c"):
        fresh_glue.create_database(DatabaseInput={"Name": database})
        for i in range(7):
            fresh_glue.create_user_defined_function(DatabaseName=database, FunctionInput=udf(f"f{i}"))
            expected.append((database, f"f{i}"))
    seen, token, pages = [], None, 0
    while True:
        page = fresh_glue.get_user_defined_functions(Pattern="*", MaxResults=4, **({"NextToken": token} if token else {}))
        assert len(page["UserDefinedFunctions"]) <= 4
        seen += names(page["UserDefinedFunctions"])
        pages += 1
        token = page.get("NextToken")
        if not token:
            break
    assert seen == expected
    assert pages == 6
    paginator = fresh_glue.get_paginator("get_user_defined_functions")
    assert [f for p in paginator.paginate(DatabaseName="b", Pattern="*", PaginationConfig={"PageSize": 3})
            for f in names(p["UserDefinedFunctions"])] == [e for e in expected if e[0] == "b"]


def test_token_is_bound_to_its_request(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    for i in range(3):
        fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf(f"f{i}"))
    token = fresh_glue.get_user_defined_functions(Pattern="*", MaxResults=1)["NextToken"]
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="NextToken"):
        fresh_glue.get_user_defined_functions(Pattern="f*", MaxResults=1, NextToken=token)


def test_delete_database_removes_its_functions_and_a_recreated_database_starts_empty(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    fresh_glue.create_database(DatabaseInput={"Name": "other"})
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("f"))
    fresh_glue.create_user_defined_function(DatabaseName="other", FunctionInput=udf("f"))
    fresh_glue.delete_database(Name="d")
    fresh_glue.create_database(DatabaseInput={"Name": "d"})
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_user_defined_function(DatabaseName="d", FunctionName="f")
    assert names(fresh_glue.get_user_defined_functions(Pattern="*")["UserDefinedFunctions"]) == [("other", "f")]
    fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("f"))
    assert names(fresh_glue.get_user_defined_functions(Pattern="*")["UserDefinedFunctions"]) == [("d", "f"),
                                                                                                 ("other", "f")]


def test_a_function_left_behind_by_an_interrupted_purge_stays_invisible(glue, stack):
    """DeleteDatabase's purge cut short (a crash) leaves items keyed by the old name: they carry
    the old database uid, so the re-created database neither lists, reads nor collides with them."""
    database = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": database})
    glue.create_user_defined_function(DatabaseName=database, FunctionInput=udf("kept"))
    store = Store(stack)
    scope = f"{REGION}\x01{DEFAULT_ACCOUNT}\x01udf"
    leftover = store.get("catalog_entries", {"scope": scope, "key": f"{database}\x01kept"})
    glue.delete_database(Name=database)
    store.client.put_item(TableName=store.prefix + "catalog_entries", Item=leftover)  # as if never purged
    glue.create_database(DatabaseInput={"Name": database})
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_user_defined_function(DatabaseName=database, FunctionName="kept")
    assert glue.get_user_defined_functions(DatabaseName=database, Pattern="*")["UserDefinedFunctions"] == []
    assert all(f["DatabaseName"] != database
               for f in glue.get_user_defined_functions(Pattern="kept")["UserDefinedFunctions"])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_user_defined_function(DatabaseName=database, FunctionName="kept")
    glue.create_user_defined_function(DatabaseName=database, FunctionInput=udf("kept", ClassName="new.Class"))
    assert glue.get_user_defined_function(DatabaseName=database,
                                          FunctionName="kept")["UserDefinedFunction"]["ClassName"] == "new.Class"
    glue.delete_database(Name=database)


def test_racing_creates_have_one_winner(fresh_glue):
    fresh_glue.create_database(DatabaseInput={"Name": "d"})

    def create(i: int) -> str:
        try:
            fresh_glue.create_user_defined_function(DatabaseName="d", FunctionInput=udf("f", ClassName=f"c{i}"))
            return "won"
        except (fresh_glue.exceptions.AlreadyExistsException,
                fresh_glue.exceptions.ConcurrentModificationException) as error:
            return type(error).__name__

    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(create, range(6)))
    assert outcomes.count("won") == 1, outcomes
    winner = outcomes.index("won")
    assert fresh_glue.get_user_defined_function(DatabaseName="d",
                                                FunctionName="f")["UserDefinedFunction"]["ClassName"] == f"c{winner}"


STALE_RENAME = """
import sys
from chalicelib.store import catalog_entries as store
from chalicelib.store.dynamo.models import DatabaseItem
catalog_key, database, old_uid = sys.argv[1:4]
scope = store.scope(catalog_key, store.UDF)
old = store.get(scope, store.function_key(database, "f"))
stale = DatabaseItem(catalog_key, database, uid=old_uid)  # the incarnation the rename read
print(store.replace(scope, old, store.function_key(database, "g"), {"FunctionName": "g"}, "function", stale))
"""


def test_a_stale_rename_never_replaces_a_function_of_a_recreated_database(glue, stack):
    """A rename that read the database before it was deleted and re-created (its old function
    not purged yet) must not take the new name from the new incarnation's live function: the
    new key's own condition sees that one as another incarnation's."""
    database = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": database})
    glue.create_user_defined_function(DatabaseName=database, FunctionInput=udf("f"))
    store = Store(stack)
    catalog_key = f"{REGION}\x01{DEFAULT_ACCOUNT}"
    old_uid = store.get("databases", {"catalog": catalog_key, "name": database})["uid"]["S"]
    leftover = store.get("catalog_entries", {"scope": f"{catalog_key}\x01udf", "key": f"{database}\x01f"})
    glue.delete_database(Name=database)
    deadline = time.monotonic() + 60  # the background purge first, so that it cannot take the replant
    while any(job["uid"]["S"] == old_uid for job in store.query("cleanup_jobs", "queue", "purge")) \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    store.client.put_item(TableName=store.prefix + "catalog_entries", Item=leftover)  # as if not purged yet
    glue.create_database(DatabaseInput={"Name": database})
    glue.create_user_defined_function(DatabaseName=database, FunctionInput=udf("g", ClassName="live.Class"))

    run = subprocess.run([sys.executable, "-c", STALE_RENAME, catalog_key, database, old_uid], cwd=REPO,
                         env=stack.env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
    assert glue.get_user_defined_function(DatabaseName=database,
                                          FunctionName="g")["UserDefinedFunction"]["ClassName"] == "live.Class"
    glue.delete_database(Name=database)
