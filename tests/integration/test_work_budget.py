"""The work budget (GLUE_WORK_BUDGET_SECONDS) through boto3 and HTTP: a listing that has examined
items for its budget returns what it has, a partial or empty page, with a token to resume
exactly after the last item it examined. A second server on the same store runs with a budget
of 0 seconds, so each of its requests examines one item and stops: every listing must still
return exactly what the session's server (budget 5 s) returns, paginators included. No timing
is asserted: only the shape of the pages and the answers."""

from __future__ import annotations

import uuid
from typing import Any, Iterator

import pytest
import requests

from infra.local.stack import REGION, CatalogStack, client
from tests.integration.conftest import columns, random_account, table_input
from tests.integration.lf_helpers import Governed, add

KEYS = [{"Name": "year", "Type": "int"}, {"Name": "region", "Type": "string"}]
REGIONS = ["eu", "us", "ap", "sa"]


@pytest.fixture(scope="module")
def spent(stack: CatalogStack) -> Iterator[str]:
    """The endpoint of a server on the session's store whose work budget is 0 seconds. Its
    unindexed listings scan the partitions (GLUE_PARTITION_DIGEST=0), so they examine items they
    do not return, which is what runs out of budget; the digest path fetches only matches."""
    server = stack.extra_server({"GLUE_WORK_BUDGET_SECONDS": "0", "GLUE_PARTITION_DIGEST": "0"},
                                name="budget0").start()
    yield server.endpoint
    server.stop()


@pytest.fixture(scope="module")
def partitioned(glue: Any) -> tuple[str, str]:
    """A database with table ``t`` (year int, region string) of 60 partitions, and table ``g``."""
    db = f"budget_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=table_input("t", PartitionKeys=KEYS))
    inputs = [{"Values": [str(year), region], "StorageDescriptor": {"Columns": columns("id"),
                                                                     "Location": f"s3://b/t/{year}/{region}/"}}
              for year in range(2000, 2015) for region in REGIONS]
    for start in range(0, len(inputs), 100):
        assert not glue.batch_create_partition(DatabaseName=db, TableName="t",
                                               PartitionInputList=inputs[start:start + 100]).get("Errors")
    return db, "t"


def pages(glue: Any, operation: str, result: str, **request: Any) -> list[tuple[list[Any], bool]]:
    """Every page of a listing, following NextToken by hand: (items, whether a token came)."""
    found: list[tuple[list[Any], bool]] = []
    for _ in range(10_000):
        response = getattr(glue, operation)(**request)
        token = response.get("NextToken")
        found.append((response[result], bool(token)))
        if not token:
            return found
        request["NextToken"] = token
    raise AssertionError(f"{operation} never stopped paging")


def flat(found: list[tuple[list[Any], bool]]) -> list[Any]:
    return [item for items, _ in found for item in items]


# 3 of the 60 partitions; its `region IS NULL` alternative pins no year (the leading partition
# key), so no key range serves it and the plan is a scan of the whole table.
SELECTIVE = "(year IN (2001, 2007, 2013) AND region = 'sa') OR region IS NULL"


@pytest.mark.parametrize("expression", [SELECTIVE, None, "region = 'none'"])
def test_get_partitions_out_of_budget_returns_the_same_partitions_in_empty_and_partial_pages(
        glue: Any, spent: str, partitioned: tuple[str, str], expression: str | None) -> None:
    db, table = partitioned
    request = {"DatabaseName": db, "TableName": table, **({"Expression": expression} if expression else {})}
    expected = flat(pages(glue, "get_partitions", "Partitions", **request))
    assert len(expected) == {SELECTIVE: 3, None: 60, "region = 'none'": 0}[expression]
    budgeted = pages(client(spent), "get_partitions", "Partitions", **request)
    assert flat(budgeted) == expected  # same partitions, same order: none skipped or repeated
    # Out of budget after each item examined: one partition a page at most, and (the selective
    # and the empty listing) pages with nothing in them but a NextToken.
    assert all(len(items) <= 1 for items, _ in budgeted)
    assert len(budgeted) > len(expected)
    if expression != None:  # noqa: E711 - the full listing returns every partition it examines
        assert any(not items and token for items, token in budgeted)
    # boto3's paginator follows the empty pages.
    paginated = client(spent).get_paginator("get_partitions").paginate(**request)
    assert [p for page in paginated for p in page["Partitions"]] == expected


def test_segments_and_max_results_out_of_budget(glue: Any, spent: str, partitioned: tuple[str, str]) -> None:
    db, table = partitioned
    for number in range(3):
        request = {"DatabaseName": db, "TableName": table, "Expression": "region <> 'us'", "MaxResults": 2,
                   "Segment": {"SegmentNumber": number, "TotalSegments": 3}}
        assert flat(pages(client(spent), "get_partitions", "Partitions", **request)) == \
            flat(pages(glue, "get_partitions", "Partitions", **request))


def test_governed_partitions_and_table_objects_out_of_budget(endpoint: str, spent: str) -> None:
    gov = Governed.create(endpoint)
    ops = [add(f"s3://lake/objects/{year}-{region}-{n}", [str(year), region], etag=f"e{n}", size=n)
           for year in range(2018, 2024) for region in ("us", "eu") for n in range(3)]
    gov.commit_ops(ops)
    budget_glue = gov.client("glue", endpoint=spent)
    budget_lf = gov.client("lakeformation", endpoint=spent)
    for expression in ("region = 'eu' AND year > 2021", None):
        request = {"DatabaseName": gov.db, "TableName": "objects", **({"Expression": expression} if expression else {})}
        expected = flat(pages(gov.glue, "get_partitions", "Partitions", **request))
        budgeted = pages(budget_glue, "get_partitions", "Partitions", **request)
        assert [p["Values"] for p in flat(budgeted)] == [p["Values"] for p in expected] and expected
        assert len(budgeted) > 1
        if expression:  # partitions the expression leaves out end pages too: empty ones with a token
            assert any(not items and token for items, token in budgeted)
    for predicate in ("region = 'eu' AND year > 2021", None):
        request = {"DatabaseName": gov.db, "TableName": "objects",
                   **({"PartitionPredicate": predicate} if predicate else {})}
        expected_objects = gov.objects(**request)
        assert gov.objects(lf=budget_lf, **request) == expected_objects and expected_objects
        budgeted = pages(budget_lf, "get_table_objects", "Objects", **request)
        assert len(budgeted) > 1
        if predicate:  # versions left out by the predicate end pages too: empty ones with a token
            assert any(not groups and token for groups, token in budgeted)


def test_get_tables_with_an_expression_out_of_budget(glue: Any, spent: str) -> None:
    db = f"budget_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": db})
    names = [f"tbl_{n:02d}" for n in range(12)] + ["other_a", "other_b"]
    for name in names:
        glue.create_table(DatabaseName=db, TableInput=table_input(name))
    request = {"DatabaseName": db, "Expression": ".*_b"}  # no prefix to read from: every name is examined
    budgeted = pages(client(spent), "get_tables", "TableList", **request)
    assert [t["Name"] for t in flat(budgeted)] == ["other_b"]
    assert any(not items and token for items, token in budgeted)
    assert [t["Name"] for t in flat(pages(glue, "get_tables", "TableList", **request))] == ["other_b"]


def test_search_tables_out_of_budget(stack: CatalogStack, spent: str) -> None:
    """SearchTables sorted by database (the default, or descending) or by table name reads tables
    in that order and stops when the budget is spent: the same tables come back, through pages
    with one table at most, some empty (tables the filter or the text leaves out). Sorted by
    another field, every table is examined before a page can be answered: the requests stop at
    their budget with empty pages until the scan is done, and the tables still come back in order."""
    account = random_account()
    glue, budget_glue = stack.client(account=account), client(spent, account=account)
    for db in ("b_db", "a_db"):
        glue.create_database(DatabaseInput={"Name": db})
        for n in range(6):
            glue.create_table(DatabaseName=db, TableInput=table_input(f"t{n}", Description=f"kind {n % 3}"))
    for request in ({}, {"SearchText": "kind"}, {"Filters": [{"Key": "Description", "Value": "2"}]},
                    {"SearchText": "t1"}, {"SortCriteria": [{"FieldName": "DatabaseName", "Sort": "DESC"}]},
                    {"SortCriteria": [{"FieldName": "Name", "Sort": "DESC"}]},
                    {"SortCriteria": [{"FieldName": "Name", "Sort": "ASC"}], "SearchText": "kind"},
                    {"SortCriteria": [{"FieldName": "UpdateTime", "Sort": "DESC"}]},
                    {"SortCriteria": [{"FieldName": "UpdateTime", "Sort": "ASC"}], "SearchText": "kind"},
                    {"SortCriteria": [{"FieldName": "Owner", "Sort": "ASC"}],
                     "Filters": [{"Key": "Description", "Value": "1"}]}):
        expected = flat(pages(glue, "search_tables", "TableList", MaxResults=3, **request))
        assert expected, request
        budgeted = pages(budget_glue, "search_tables", "TableList", MaxResults=3, **request)
        assert [(t["DatabaseName"], t["Name"]) for t in flat(budgeted)] == \
            [(t["DatabaseName"], t["Name"]) for t in expected], request
        if request.get("SortCriteria", [{}])[0].get("FieldName") in ("DatabaseName", "Name", None):
            assert all(len(items) <= 1 for items, _ in budgeted) and len(budgeted) > len(expected)
        else:
            assert all(len(items) <= 3 for items, _ in budgeted)
            assert sum(1 for items, token in budgeted if not items and token) >= len(expected), request
        if "Filters" in request:
            assert any(not items and token for items, token in budgeted)


def test_search_tables_sorted_by_time_out_of_budget_carries_a_bounded_token(stack: CatalogStack, spent: str) -> None:
    """A scan sorted by UpdateTime that runs out of budget carries at most 101 sort positions in
    its token, so its pages then hold at most 100 tables even when MaxResults asks for 1,000;
    the tables still all come back once, in order."""
    account = random_account()
    glue, budget_glue = stack.client(account=account), client(spent, account=account)
    glue.create_database(DatabaseInput={"Name": "many"})
    for n in range(105):
        glue.create_table(DatabaseName="many", TableInput=table_input(f"t{n:03d}"))
    request = {"SortCriteria": [{"FieldName": "UpdateTime", "Sort": "ASC"}], "MaxResults": 1000}
    expected = [t["Name"] for t in flat(pages(glue, "search_tables", "TableList", **request))]
    assert expected == [f"t{n:03d}" for n in range(105)]
    budgeted = pages(budget_glue, "search_tables", "TableList", **request)
    assert [t["Name"] for t in flat(budgeted)] == expected
    assert [len(items) for items, _ in budgeted if items] == [100, 5]


def test_paimon_partition_listing_out_of_budget(glue: Any, spent: str, endpoint: str) -> None:
    """Partitions registered through Glue on a Paimon-visible table, listed over the Paimon REST
    protocol page by page with a name pattern: the same names from both servers."""
    from pypaimon.catalog.catalog_factory import CatalogFactory
    from pypaimon.common.identifier import Identifier
    from pypaimon.schema.schema import Schema
    import pyarrow as pa

    account, warehouse = "123456789012", "budget_wh"
    options = {"metastore": "rest", "uri": endpoint, "warehouse": warehouse, "token.provider": "bear",
               "token": f"{account}/{REGION}"}
    catalog = CatalogFactory.create(options)
    db = f"budget_{uuid.uuid4().hex[:10]}"
    catalog.create_database(db, False)
    ident = Identifier.create(db, "p")
    schema = pa.schema([pa.field("region", pa.string()), pa.field("hr", pa.int32()), pa.field("n", pa.int64())])
    catalog.create_table(ident, Schema.from_pyarrow_schema(schema, ["region", "hr"], None, {"bucket": "-1"}), False)
    catalog.rest_api.create_partitions(ident, [{"region": region, "hr": str(hour)}
                                               for region in ("eu", "us") for hour in range(8)])

    def listing(base: str) -> list[tuple[list[str], bool]]:
        url = f"{base}/v1/{warehouse}/databases/{db}/tables/p/partitions"
        headers = {"Authorization": f"Bearer {account}/{REGION}"}
        found, token = [], None
        for _ in range(1000):
            params = {"maxResults": "3", "partitionNamePattern": "region=us%",
                      **({"pageToken": token} if token else {})}
            response = requests.get(url, params=params, headers=headers, timeout=30)
            assert response.status_code == 200, response.text
            body = response.json()
            token = body.get("nextPageToken")
            found.append(([f"{p['spec']['region']}/{p['spec']['hr']}" for p in body["partitions"]], bool(token)))
            if not token:
                return found
        raise AssertionError("the listing never stopped paging")

    expected = flat(listing(endpoint))
    assert expected == [f"us/{hour}" for hour in range(8)]
    budgeted = listing(spent)
    assert flat(budgeted) == expected and all(len(names) <= 1 for names, _ in budgeted)


def test_list_transactions_out_of_budget(endpoint: str, spent: str) -> None:
    """ListTransactions settles and filters transactions within the work budget: out of it, a
    page holds what was examined so far (perhaps nothing) and a NextToken, and the pages
    together list exactly what the unhurried server lists, for every StatusFilter."""
    account = random_account()
    lf = client(endpoint, "lakeformation", account=account)
    hurried = client(spent, "lakeformation", account=account)
    started = [lf.start_transaction()["TransactionId"] for _ in range(7)]
    for tx in started[:3]:
        lf.commit_transaction(TransactionId=tx)
    lf.cancel_transaction(TransactionId=started[3])
    for status_filter in ["ALL", "COMPLETED", "ACTIVE", "COMMITTED", "ABORTED"]:
        wanted = flat(pages(lf, "list_transactions", "Transactions", StatusFilter=status_filter))
        found = pages(hurried, "list_transactions", "Transactions", StatusFilter=status_filter, MaxResults=3)
        assert [t["TransactionId"] for t in flat(found)] == [t["TransactionId"] for t in wanted]
        assert len(wanted) == {"ALL": 7, "COMPLETED": 4, "ACTIVE": 3, "COMMITTED": 3, "ABORTED": 1}[status_filter]
        assert all(len(items) <= 1 for items, _ in found)
        assert len(found) > 1
