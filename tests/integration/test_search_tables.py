"""SearchTables through boto3 over HTTP, each test in a catalog of its own (``fresh_glue``).

Token matching over every searchable field, quoted exact matches, filters, sorting, paging,
results that follow updates and deletes, catalog isolation, and the cost of a rare-token search.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from typing import Any, Optional

import pytest

from tests.integration.conftest import random_account


def items_read(response: dict[str, Any]) -> int:
    """DynamoDB items the request read, from the service's ``x-glue-items-read`` header."""
    return int(response["ResponseMetadata"]["HTTPHeaders"]["x-glue-items-read"])


def search_all(glue, **kwargs: Any) -> list[dict[str, Any]]:
    """Every table SearchTables returns, following NextToken (boto3 has no paginator for it)."""
    tables, token, pages = [], None, 0
    while True:
        response = glue.search_tables(**kwargs, **({"NextToken": token} if token else {}))
        tables += response["TableList"]
        token = response.get("NextToken")
        pages += 1
        assert pages < 1000
        if not token:
            return tables


def names(tables: list[dict[str, Any]]) -> list[str]:
    return [f"{t['DatabaseName']}.{t['Name']}" for t in tables]


def found(glue, text: Optional[str] = None, **kwargs: Any) -> set[str]:
    """``db.table`` of every hit for a SearchText."""
    if text is not None:
        kwargs["SearchText"] = text
    return set(names(search_all(glue, **kwargs)))


def make_db(glue, name: str, description: Optional[str] = None) -> str:
    glue.create_database(DatabaseInput={"Name": name, **({"Description": description} if description else {})})
    return name


def make_table(glue, db: str, name: str, *, description: Optional[str] = None,
               columns: Optional[list[dict[str, str]]] = None, parameters: Optional[dict[str, str]] = None,
               partition_keys: Optional[list[dict[str, str]]] = None) -> str:
    table: dict[str, Any] = {
        "Name": name,
        "StorageDescriptor": {"Columns": columns or [{"Name": "id", "Type": "bigint"}],
                              "Location": f"s3://bucket/{db}/{name}/"},
        "PartitionKeys": partition_keys or [],
        "TableType": "EXTERNAL_TABLE",
    }
    if description is not None:
        table["Description"] = description
    if parameters is not None:
        table["Parameters"] = parameters
    glue.create_table(DatabaseName=db, TableInput=table)
    return name


# ------------------------------------------------------------------------------ text matching
def test_name_tokens_split_on_punctuation(fresh_glue):
    glue = fresh_glue
    make_db(glue, "web")
    for name in ("customer-link", "xx-link-yy", "xxlinkyy", "ref_link.v2", "a:link#b", "link", "links",
                 "hyperlink", "unrelated"):
        make_table(glue, "web", name)
    expected = {"web.customer-link", "web.xx-link-yy", "web.ref_link.v2", "web.a:link#b", "web.link"}
    assert found(glue, "link") == expected
    assert found(glue, "LINK") == expected
    assert found(glue, "Link") == expected
    assert found(glue, "customer") == {"web.customer-link"}
    assert found(glue, "xxlinkyy") == {"web.xxlinkyy"}
    assert found(glue, "nothing_like_it") == set()


def test_every_searchable_field(fresh_glue):
    glue = fresh_glue
    make_db(glue, "sales", "Revenue mart for finance")
    make_db(glue, "ops")
    make_table(glue, "sales", "orders", description="Daily orders per store")
    make_table(glue, "ops", "events", columns=[{"Name": "shipment_id", "Type": "string"},
                                               {"Name": "note", "Type": "string", "Comment": "free-text courier remark"}])
    make_table(glue, "ops", "metrics", parameters={"classification": "parquet", "owner_team": "observability"})
    make_table(glue, "ops", "logs", partition_keys=[{"Name": "ingest_day", "Type": "date"}])
    everything = {"sales.orders", "ops.events", "ops.metrics", "ops.logs"}

    assert found(glue, "orders") == {"sales.orders"}                 # table name
    assert found(glue, "store") == {"sales.orders"}                  # description
    assert found(glue, "shipment") == {"ops.events"}                 # column name token
    assert found(glue, "courier") == {"ops.events"}                  # column comment
    assert found(glue, "classification") == {"ops.metrics"}          # parameter key
    assert found(glue, "parquet") == {"ops.metrics"}                 # parameter value
    assert found(glue, "observability") == {"ops.metrics"}
    assert found(glue, "ingest") == {"ops.logs"}                     # partition key name
    assert found(glue, "sales") == {"sales.orders"}                  # database name
    assert found(glue, "finance") == {"sales.orders"}                # database description
    assert found(glue, "ops") == {"ops.events", "ops.metrics", "ops.logs"}
    assert found(glue) == everything                                  # no SearchText: every table
    for table in search_all(glue, SearchText="parquet"):
        assert table["Parameters"]["classification"] == "parquet"
        assert table["DatabaseName"] == "ops" and table["VersionId"] == "0"
        assert "CatalogId" in table and "StorageDescriptor" in table


def test_every_token_must_match(fresh_glue):
    glue = fresh_glue
    make_db(glue, "sales", "Revenue mart")
    make_db(glue, "hr", "People data")
    make_table(glue, "sales", "customer_orders")
    make_table(glue, "sales", "customer_returns", description="refunds")
    make_table(glue, "hr", "customer_contacts")
    assert found(glue, "customer") == {"sales.customer_orders", "sales.customer_returns", "hr.customer_contacts"}
    assert found(glue, "customer orders") == {"sales.customer_orders"}
    assert found(glue, "customer-revenue") == {"sales.customer_orders", "sales.customer_returns"}  # db text counts
    assert found(glue, "customer refunds") == {"sales.customer_returns"}
    assert found(glue, "customer people") == {"hr.customer_contacts"}
    assert found(glue, "customer nowhere") == set()


def test_quoted_search_text_is_an_exact_match(fresh_glue):
    glue = fresh_glue
    make_db(glue, "sales")
    make_table(glue, "sales", "orders", description="Daily orders per store")
    make_table(glue, "sales", "stores", description="daily orders")
    make_table(glue, "sales", "per_store_daily", description="orders, daily, per store")
    assert found(glue, "daily orders") == {"sales.orders", "sales.stores", "sales.per_store_daily"}
    assert found(glue, '"daily orders"') == {"sales.stores"}
    assert found(glue, '"DAILY ORDERS PER STORE"') == {"sales.orders"}
    assert found(glue, '"orders"') == {"sales.orders"}  # the table name, exactly
    assert found(glue, '"daily"') == set()


# ------------------------------------------------------------------------------ filters
def test_string_filters_match_tokens_of_one_field(fresh_glue):
    glue = fresh_glue
    make_db(glue, "web", "link tracking")
    make_db(glue, "shop")
    make_table(glue, "web", "customer-link", parameters={"classification": "parquet"})
    make_table(glue, "web", "xxlinkyy", description="a link table", parameters={"classification": "csv"})
    make_table(glue, "shop", "xx-link-yy")

    def by(key: str, value: str, **kwargs: Any) -> set[str]:
        return found(glue, Filters=[{"Key": key, "Value": value}], **kwargs)

    assert by("Name", "link") == {"web.customer-link", "shop.xx-link-yy"}
    assert by("Name", "LINK") == {"web.customer-link", "shop.xx-link-yy"}
    assert by("Name", "xxlinkyy") == {"web.xxlinkyy"}
    assert by("DatabaseName", "shop") == {"shop.xx-link-yy"}
    assert by("Description", "link") == {"web.xxlinkyy"}
    assert by("classification", "parquet") == {"web.customer-link"}
    assert by("classification", "csv") == {"web.xxlinkyy"}
    assert by("no_such_parameter", "csv") == set()
    # Filters and SearchText combine; several filters must all hold.
    assert by("Name", "link", SearchText="tracking") == {"web.customer-link"}
    assert found(glue, Filters=[{"Key": "Name", "Value": "link"},
                                {"Key": "DatabaseName", "Value": "web"}]) == {"web.customer-link"}


def test_time_filters(fresh_glue):
    glue = fresh_glue
    make_db(glue, "d")
    make_table(glue, "d", "early_a")
    make_table(glue, "d", "early_b")
    early = max(glue.get_table(DatabaseName="d", Name=n)["Table"]["UpdateTime"].timestamp()
                for n in ("early_a", "early_b"))
    boundary = math.floor(early) + 1  # whole epoch seconds strictly after both early tables
    time.sleep(max(0.0, boundary - time.time()) + 0.05)
    make_table(glue, "d", "late_a")
    make_table(glue, "d", "late_b")
    iso = dt.datetime.fromtimestamp(boundary, dt.timezone.utc)

    def by(key: str, comparator: str, value: str) -> set[str]:
        return found(glue, Filters=[{"Key": key, "Value": value, "Comparator": comparator}])

    late, early_set = {"d.late_a", "d.late_b"}, {"d.early_a", "d.early_b"}
    assert by("UpdateTime", "GREATER_THAN", str(boundary)) == late
    assert by("UpdateTime", "GREATER_THAN_EQUALS", str(boundary)) == late
    assert by("UpdateTime", "LESS_THAN", str(boundary)) == early_set
    assert by("CreateTime", "LESS_THAN_EQUALS", str(boundary)) == early_set
    assert by("CreateTime", "GREATER_THAN", iso.isoformat()) == late
    assert by("CreateTime", "LESS_THAN", iso.strftime("%Y-%m-%dT%H:%M:%SZ")) == early_set
    assert by("UpdateTime", "GREATER_THAN", str(boundary - 10_000)) == late | early_set
    # UpdateTable moves UpdateTime, not CreateTime.
    glue.update_table(DatabaseName="d", TableInput={"Name": "early_a", "Description": "touched"})
    assert by("UpdateTime", "GREATER_THAN", str(boundary)) == late | {"d.early_a"}
    assert by("CreateTime", "GREATER_THAN", str(boundary)) == late
    for bad in ("yesterday", "2024-13-45", "12:00"):
        with pytest.raises(glue.exceptions.InvalidInputException):
            glue.search_tables(Filters=[{"Key": "UpdateTime", "Value": bad, "Comparator": "GREATER_THAN"}])
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.search_tables(Filters=[{"Key": "UpdateTime", "Value": "soon", "Comparator": "LESS_THAN"}],
                           SearchText="early")


# ------------------------------------------------------------------------------ sorting
def test_sort_by_name_and_update_time(fresh_glue):
    glue = fresh_glue
    make_db(glue, "a_db")
    make_db(glue, "b_db")
    for db, name in (("b_db", "mango_sales"), ("a_db", "kiwi_sales"), ("b_db", "apple_sales"),
                     ("a_db", "zucchini_sales")):
        make_table(glue, db, name)
    # Touch them in a known order so UpdateTime has a known order.
    touch_order = ["zucchini_sales", "apple_sales", "mango_sales", "kiwi_sales"]
    homes = {"mango_sales": "b_db", "kiwi_sales": "a_db", "apple_sales": "b_db", "zucchini_sales": "a_db"}
    for name in touch_order:
        time.sleep(0.01)
        glue.update_table(DatabaseName=homes[name], TableInput={"Name": name, "Description": "sales data"})

    def order(field: str, direction: str, **kwargs: Any) -> list[str]:
        return [t["Name"] for t in search_all(glue, SearchText="sales",
                                              SortCriteria=[{"FieldName": field, "Sort": direction}], **kwargs)]

    by_name = ["apple_sales", "kiwi_sales", "mango_sales", "zucchini_sales"]
    assert order("Name", "ASC") == by_name
    assert order("Name", "DESC") == by_name[::-1]
    assert order("UpdateTime", "ASC") == touch_order
    assert order("UpdateTime", "DESC") == touch_order[::-1]
    # Sorted across pages too.
    assert order("Name", "DESC", MaxResults=1) == by_name[::-1]
    assert order("UpdateTime", "ASC", MaxResults=3) == touch_order
    # A time none of them has: every table still comes back, once, across pages.
    assert sorted(order("LastAccessTime", "DESC", MaxResults=1)) == by_name
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.search_tables(SearchText="sales", SortCriteria=[{"FieldName": "NoSuchField", "Sort": "ASC"}])


# ------------------------------------------------------------------------------ paging
def test_paging_returns_every_match_once(fresh_glue):
    glue = fresh_glue
    for db in ("p1", "p2", "p3"):
        make_db(glue, db)
    expected = set()
    for i in range(23):
        db = ("p1", "p2", "p3")[i % 3]
        expected.add(f"{db}.{make_table(glue, db, f'paged_{i:02d}')}")
    make_table(glue, "p1", "other")
    for kwargs in ({"SearchText": "paged"}, {"SearchText": "paged", "SortCriteria": [{"FieldName": "Name", "Sort": "DESC"}]},
                   {"Filters": [{"Key": "Name", "Value": "paged"}]}):
        pages, token, seen = 0, None, []
        while True:
            response = glue.search_tables(MaxResults=5, **kwargs, **({"NextToken": token} if token else {}))
            assert len(response["TableList"]) <= 5
            seen += names(response["TableList"])
            pages += 1
            token = response.get("NextToken")
            if not token:
                break
        assert len(seen) == len(set(seen)) == 23
        assert set(seen) == expected
        assert pages == 5
    assert len(glue.search_tables(SearchText="paged", MaxResults=1000)["TableList"]) == 23
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.search_tables(SearchText="paged", MaxResults=1001)
    # A token only continues the search that issued it.
    token = glue.search_tables(SearchText="paged", MaxResults=5)["NextToken"]
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.search_tables(SearchText="other", MaxResults=5, NextToken=token)


def test_resource_share_type(fresh_glue):
    glue = fresh_glue
    make_db(glue, "mine")
    make_table(glue, "mine", "local_table")
    assert found(glue, "local", ResourceShareType="ALL") == {"mine.local_table"}
    assert found(glue, "local") == {"mine.local_table"}
    # Nothing is shared with this catalog.
    assert glue.search_tables(SearchText="local", ResourceShareType="FOREIGN")["TableList"] == []


# ------------------------------------------------------------------------------ freshness
def test_results_follow_updates_and_deletes(fresh_glue):
    glue = fresh_glue
    make_db(glue, "sales", "Revenue mart")
    make_db(glue, "hr")
    make_table(glue, "sales", "orders", description="golden records")
    make_table(glue, "sales", "refunds", description="golden records too")
    make_table(glue, "hr", "staff", description="golden staff")
    assert found(glue, "golden") == {"sales.orders", "sales.refunds", "hr.staff"}

    # UpdateTable removing a token / adding one.
    glue.update_table(DatabaseName="sales", TableInput={"Name": "orders", "Description": "silver records"})
    assert found(glue, "golden") == {"sales.refunds", "hr.staff"}
    assert found(glue, "silver") == {"sales.orders"}
    assert found(glue, "records") == {"sales.orders", "sales.refunds"}

    # DeleteTable.
    glue.delete_table(DatabaseName="sales", Name="refunds")
    assert found(glue, "golden") == {"hr.staff"}
    assert found(glue, "refunds") == set()

    # UpdateDatabase description: the database's text is searched as it is now.
    assert found(glue, "revenue") == {"sales.orders"}
    glue.update_database(Name="sales", DatabaseInput={"Name": "sales", "Description": "Income mart"})
    assert found(glue, "revenue") == set()
    assert found(glue, "income") == {"sales.orders"}
    assert found(glue, "mart") == {"sales.orders"}

    # DeleteDatabase takes its tables out of the results; a re-created database starts empty.
    glue.delete_database(Name="sales")
    assert found(glue, "silver") == set()
    assert found(glue, "income") == set()
    assert found(glue, "sales") == set()
    assert found(glue) == {"hr.staff"}
    make_db(glue, "sales", "Income mart")
    assert found(glue, "income") == set()
    assert found(glue, "silver") == set()
    make_table(glue, "sales", "orders")
    assert found(glue, "income") == {"sales.orders"}
    assert found(glue, "silver") == set()


def test_catalogs_are_isolated(make_client, glue):
    account = random_account()
    mine, theirs = make_client("glue", account=account), make_client("glue", account=random_account())
    make_db(mine, "shared_name", "zebra description")
    make_table(mine, "shared_name", "zebra_mine")
    make_db(theirs, "shared_name")
    make_table(theirs, "shared_name", "quokka_theirs")
    assert found(mine, "zebra") == {"shared_name.zebra_mine"}
    assert found(theirs, "zebra") == set()
    assert found(theirs, "quokka") == {"shared_name.quokka_theirs"}
    assert found(mine, "quokka") == set()
    assert found(theirs) == {"shared_name.quokka_theirs"}
    assert found(glue, "zebra") == set()  # the default account
    # Another region of the same account is another catalog too.
    elsewhere = make_client("glue", account=account, region="eu-west-1")
    assert found(elsewhere, "zebra") == set()


# ------------------------------------------------------------------------------ cost
def test_rare_token_search_reads_few_items(fresh_glue):
    glue = fresh_glue
    for d in range(4):
        make_db(glue, f"warehouse_{d}", "common warehouse data")
        for t in range(15):
            make_table(glue, f"warehouse_{d}", f"fact_{t:02d}", description="common facts about orders",
                       columns=[{"Name": "order_id", "Type": "bigint"}, {"Name": "amount", "Type": "double"}])
    glue.update_table(DatabaseName="warehouse_1", TableInput={
        "Name": "fact_03", "StorageDescriptor": {"Columns": [{"Name": "platypus_score", "Type": "int"}]}})
    glue.update_table(DatabaseName="warehouse_2", TableInput={"Name": "fact_07", "Description": "Platypus sightings"})
    glue.update_table(DatabaseName="warehouse_2", TableInput={"Name": "fact_11", "Parameters": {"x": "platypus"}})

    response = glue.search_tables(SearchText="platypus")
    hits = names(response["TableList"])
    assert sorted(hits) == ["warehouse_1.fact_03", "warehouse_2.fact_07", "warehouse_2.fact_11"]
    assert items_read(response) <= 3 * len(hits) + 3

    # The scan the index avoids: no SearchText reads every table.
    everything = glue.search_tables(MaxResults=1000, Filters=[{"Key": "Description", "Value": "sightings"}])
    assert names(everything["TableList"]) == ["warehouse_2.fact_07"]
    assert items_read(everything) >= 60


def test_default_order_pages_read_about_what_they_return(fresh_glue):
    """Sorted by database (the default, then table name; or both descending) or by table name
    (then database) a page reads its own tables, not the catalog: with and without SearchText,
    and the pages together are the whole sorted result."""
    glue = fresh_glue
    for d in ("zeta", "alpha", "mid"):
        make_db(glue, d)
        for t in range(20):
            make_table(glue, d, f"orders_{t:02d}", description="daily orders")
    by_database = sorted((d, f"orders_{t:02d}") for d in ("zeta", "alpha", "mid") for t in range(20))
    by_name = sorted(by_database, key=lambda candidate: (candidate[1], candidate[0]))

    def sort(field: str, direction: str) -> dict[str, Any]:
        return {"SortCriteria": [{"FieldName": field, "Sort": direction}]}

    cases = [({}, by_database), ({"SearchText": "orders"}, by_database),
             (sort("DatabaseName", "ASC"), by_database), (sort("DatabaseName", "DESC"), by_database[::-1]),
             ({**sort("DatabaseName", "DESC"), "SearchText": "orders"}, by_database[::-1]),
             (sort("Name", "ASC"), by_name), (sort("Name", "DESC"), by_name[::-1]),
             ({**sort("Name", "ASC"), "SearchText": "orders"}, by_name),
             ({**sort("Name", "DESC"), "SearchText": "orders"}, by_name[::-1])]
    for kwargs, expected in cases:
        tables, token, reads = [], None, []
        while True:
            response = glue.search_tables(MaxResults=7, **kwargs, **({"NextToken": token} if token else {}))
            assert len(response["TableList"]) <= 7
            tables += [(t["DatabaseName"], t["Name"]) for t in response["TableList"]]
            reads.append(items_read(response))
            token = response.get("NextToken")
            if not token:
                break
        assert tables == expected, kwargs
        # Without text: the page's tables, the chunk it was read in and a database or two (by
        # name: the databases and each one's first Query, 2 + 8 / 3 tables, then the page's).
        # With text: the token's 60 postings too, but the tables of this page only.
        bound = 7 + 25 + 3 + (60 if kwargs.get("SearchText") else 0)
        assert max(reads) <= bound, (kwargs, reads)
    # Another order needs every table's document before its first page.
    by_time = glue.search_tables(MaxResults=7, SortCriteria=[{"FieldName": "UpdateTime", "Sort": "ASC"}])
    assert items_read(by_time) >= 60


def test_a_failed_create_database_does_not_hide_the_existing_one(fresh_glue):
    glue = fresh_glue
    make_db(glue, "sales", "Revenue mart")
    make_table(glue, "sales", "orders")
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_database(DatabaseInput={"Name": "sales", "Description": "Revenue mart again"})
    assert found(glue, "revenue") == {"sales.orders"}
    assert found(glue, "sales") == {"sales.orders"}
    assert found(glue, "again") == set()
    glue.update_database(Name="sales", DatabaseInput={"Name": "sales", "Description": "Revenue mart again"})
    assert found(glue, "again") == {"sales.orders"}


def _column_names(animal: str, count: int) -> list[dict[str, str]]:
    """``count`` columns ``<animal>aa``, ``<animal>ab``, ...: a token each, none shared."""
    return [{"Name": f"{animal}{chr(97 + i // 26)}{chr(97 + i % 26)}", "Type": "int"} for i in range(count)]


@pytest.mark.parametrize("columns", [1, 60], ids=["postings-in-the-write", "postings-written-apart"])
def test_postings_follow_create_update_and_delete(fresh_glue, columns):
    """A table write's postings ride in its own DynamoDB transaction when they are few, and are
    written before and dropped after it when there are many: either way a token the table no
    longer has leaves no posting behind (a search for it reads no more than for a token never
    posted)."""
    glue = fresh_glue
    make_db(glue, "zoo")
    baseline = items_read(glue.search_tables(SearchText="aardwolf"))
    make_table(glue, "zoo", "pen", columns=_column_names("wombat", columns) + [{"Name": "okapi", "Type": "int"}])
    assert found(glue, "okapi") == found(glue, "wombataa") == {"zoo.pen"}

    glue.update_table(DatabaseName="zoo", TableInput={
        "Name": "pen", "StorageDescriptor": {"Columns": _column_names("numbat", columns) + [
            {"Name": "quagga", "Type": "int"}]}})
    assert found(glue, "quagga") == found(glue, "numbataa") == {"zoo.pen"}
    for gone in ("okapi", "wombataa"):
        response = glue.search_tables(SearchText=gone)
        assert (response["TableList"], items_read(response)) == ([], baseline)

    glue.delete_table(DatabaseName="zoo", Name="pen")
    for gone in ("quagga", "numbataa", "pen"):
        response = glue.search_tables(SearchText=gone)
        assert (response["TableList"], items_read(response)) == ([], baseline)
