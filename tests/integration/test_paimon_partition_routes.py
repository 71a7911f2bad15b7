"""The Java Paimon RESTCatalog's partition routes pypaimon 2.1.0 does not call, over HTTP against the
running service: list-by-filter (Paimon's predicate JSON planned like a Glue GetPartitions
Expression), list-by-names, drop, mark done, and CreatePartitions with reported statistics, for
Paimon tables and Glue tables served as format tables. Request bodies as paimon-api's RESTApi
builds them (MarkDonePartitionsRequest / ListPartitionsByNamesRequest: ``specs``;
DropPartitionsRequest: ``partitionSpecs``, ``ignoreIfNotExists``; ListPartitionsByFilterRequest:
``filter`` = JsonSerdeUtil.toFlatJson(predicate), ``partitionNamePattern``, ``maxResults``,
``pageToken``). pypaimon creates the tables and registers partitions where it can."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
import requests
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.schema.schema import Schema

from infra.local.stack import REGION

WAREHOUSE = "paimon_partition_routes_wh"
ACCOUNT = "123456789012"
HEADERS = {"Authorization": f"Bearer {ACCOUNT}/{REGION}", "Content-Type": "application/json"}


@pytest.fixture
def catalog(endpoint: str) -> RESTCatalog:
    made = CatalogFactory.create({"metastore": "rest", "uri": endpoint, "warehouse": WAREHOUSE,
                                  "token.provider": "bear", "token": f"{ACCOUNT}/{REGION}"})
    assert isinstance(made, RESTCatalog)
    return made


def make_table(catalog: RESTCatalog, db: str, name: str) -> Identifier:
    """An append table (region STRING, hr INT, n BIGINT) partitioned by (region, hr)."""
    arrow = pa.schema([pa.field("region", pa.string()), pa.field("hr", pa.int32()), pa.field("n", pa.int64())])
    identifier = Identifier.create(db, name)
    catalog.create_table(identifier, Schema.from_pyarrow_schema(arrow, ["region", "hr"], None, {"bucket": "-1"}),
                         False)
    return identifier


def url(endpoint: str, db: str, table: str, *tail: str) -> str:
    return "/".join([endpoint, "v1", WAREHOUSE, "databases", db, "tables", table, "partitions", *tail])


def post(endpoint: str, db: str, table: str, tail: str, body: Any) -> requests.Response:
    return requests.post(url(endpoint, db, table, *([tail] if tail else [])), data=json.dumps(body),
                         headers=HEADERS, timeout=60)


def field(name: str, index: int, kind: str) -> dict[str, Any]:
    return {"name": "FIELD_REF", "fieldRef": {"index": index, "name": name, "type": kind}}


def leaf(function: str, name: str, literals: list[Any], kind: str = "STRING", index: int = 0) -> dict[str, Any]:
    return {"kind": "LEAF", "transform": field(name, index, kind), "function": function, "literals": literals}


def compound(function: str, *children: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "COMPOUND", "function": function, "children": list(children)}


def by_filter(endpoint: str, db: str, table: str, predicate: Any, **extra: Any) -> tuple[list[dict], int, int]:
    """Every page of a list-by-filter: (the partitions, items read, pages)."""
    found, items, pages, token = [], 0, 0, None
    while True:
        body = {"filter": predicate if isinstance(predicate, str) else json.dumps(predicate), **extra}
        if token:
            body["pageToken"] = token
        response = post(endpoint, db, table, "list-by-filter", body)
        assert response.status_code == 200, response.text
        answer = response.json()
        found += answer["partitions"]
        items += int(response.headers["x-glue-items-read"])
        pages += 1
        token = answer.get("nextPageToken")
        if not token:
            return found, items, pages


def names(partitions: list[dict]) -> list[str]:
    return sorted(f"{p['spec']['region']}/{p['spec']['hr']}" for p in partitions)


def error_of(response: requests.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"message", "code", "resourceType", "resourceName"} and body["code"] == status, body
    return body


REGIONS = ["ap", "eu", "sa", "us"]


@pytest.fixture
def loaded(catalog: RESTCatalog, db: str) -> tuple[Identifier, str]:
    """A table of 4 regions x 24 hours = 96 partitions, registered through pypaimon."""
    identifier = make_table(catalog, db, "events")
    specs = [{"region": r, "hr": str(h)} for r in REGIONS for h in range(24)]
    catalog.rest_api.create_partitions(identifier, specs)
    return identifier, "events"


def test_list_by_filter_matches_glue_semantics_and_reads_about_the_matches(endpoint, db, loaded, glue):
    _, table = loaded
    # region = 'eu' AND hr IN (1, 2, 3): a key range on the partitions table (its leading key).
    predicate = compound("AND", leaf("EQUAL", "region", ["eu"]), leaf("IN", "hr", [1, 2, 3], "INT", 1))
    found, items, _ = by_filter(endpoint, db, table, predicate)
    assert names(found) == ["eu/1", "eu/2", "eu/3"]
    assert items <= 3 * 1.2 + 4, items
    assert {tuple(sorted(p)) for p in found} == {tuple(sorted(
        ["spec", "recordCount", "fileSizeInBytes", "fileCount", "lastFileCreationTime", "totalBuckets", "done",
         "createdAt", "createdBy", "updatedAt", "updatedBy", "options"]))}
    # The same through Glue's Expression.
    glue_names = sorted("/".join(p["Values"]) for page in glue.get_paginator("get_partitions").paginate(
        DatabaseName=db, TableName=table, Expression="region = 'eu' AND hr IN (1, 2, 3)") for p in page["Partitions"])
    assert glue_names == names(found)

    # hr >= 22 OR region STARTS_WITH 'a' AND hr < 2: the digest serves what no range does.
    predicate = compound("OR", leaf("GREATER_OR_EQUAL", "hr", [22], "INT", 1),
                         compound("AND", leaf("STARTS_WITH", "region", ["a"]), leaf("LESS_THAN", "hr", [2], "INT", 1)))
    found, items, _ = by_filter(endpoint, db, table, predicate)
    assert names(found) == sorted(["ap/0", "ap/1"] + [f"{r}/{h}" for r in REGIONS for h in (22, 23)])
    assert items <= len(found) * 1.2 + 4, items

    # NOT_IN, NOT_EQUAL, BETWEEN, NOT_BETWEEN, IS_NOT_NULL, TRUE, FALSE.
    found, _, _ = by_filter(endpoint, db, table, compound(
        "AND", leaf("NOT_IN", "region", ["ap", "eu"]), leaf("NOT_EQUAL", "region", ["sa"]),
        leaf("BETWEEN", "hr", [3, 5], "INT", 1), leaf("IS_NOT_NULL", "region", [])))
    assert names(found) == ["us/3", "us/4", "us/5"]
    found, _, _ = by_filter(endpoint, db, table, compound(
        "AND", leaf("EQUAL", "region", ["us"]), leaf("NOT_BETWEEN", "hr", [1, 22], "INT", 1)))
    assert names(found) == ["us/0", "us/23"]
    false = {"kind": "LEAF", "transform": {"name": "NULL"}, "function": "FALSE", "literals": []}
    true = {"kind": "LEAF", "transform": {"name": "NULL"}, "function": "TRUE", "literals": []}
    assert by_filter(endpoint, db, table, false)[0] == []
    assert len(by_filter(endpoint, db, table, true)[0]) == 96
    assert by_filter(endpoint, db, table, leaf("IN", "hr", [None], "INT", 1))[0] == []


def test_list_by_filter_pages_with_the_name_pattern_and_tokens_are_bound(endpoint, db, loaded):
    _, table = loaded
    predicate = leaf("LESS_THAN", "hr", [10], "INT", 1)
    found, _, pages = by_filter(endpoint, db, table, predicate, maxResults=7)
    assert len(found) == 40 and pages == 6
    assert names(found) == sorted(f"{r}/{h}" for r in REGIONS for h in range(10))
    found, _, _ = by_filter(endpoint, db, table, predicate, partitionNamePattern="region=e%")
    assert names(found) == sorted(f"eu/{h}" for h in range(10))
    # A token of one filter is refused under another.
    first = post(endpoint, db, table, "list-by-filter", {"filter": json.dumps(predicate), "maxResults": 2}).json()
    other = post(endpoint, db, table, "list-by-filter", {"filter": json.dumps(leaf("EQUAL", "region", ["eu"])),
                                                        "pageToken": first["nextPageToken"]})
    error_of(other, 400)


def test_list_by_filter_superset_for_what_glue_cannot_express_and_400_for_what_is_no_predicate(endpoint, db,
                                                                                               loaded):
    _, table = loaded
    # UPPER(region) = 'EU' has no Glue form: it counts as true, within the AND that pins hr.
    upper = {"kind": "LEAF", "transform": {"name": "UPPER", "inputs": [field("region", 0, "STRING")["fieldRef"]]},
             "function": "EQUAL", "literals": ["EU"]}
    found, _, _ = by_filter(endpoint, db, table, compound("AND", upper, leaf("EQUAL", "hr", [4], "INT", 1)))
    assert names(found) == [f"{r}/4" for r in REGIONS]
    # A column that is no partition key, an unknown function: true as well.
    found, _, _ = by_filter(endpoint, db, table, compound("AND", leaf("EQUAL", "n", [1], "BIGINT", 2),
                                                          leaf("ARRAY_CONTAINS", "region", ["x"]),
                                                          leaf("EQUAL", "hr", [5], "INT", 1)))
    assert len(found) == 4
    for body in ({"filter": "not json"}, {"filter": ""}, {}, {"filter": json.dumps({"kind": "invalid"})},
                 {"filter": json.dumps({"kind": "COMPOUND", "function": "XOR", "children": [upper]})},
                 {"filter": json.dumps(leaf("EQUAL", "hr", [1], "INT", 1)), "maxResults": "ten"}):
        error_of(post(endpoint, db, table, "list-by-filter", body), 400)
    error_of(post(endpoint, db, "nope", "list-by-filter", {"filter": json.dumps(upper)}), 404)


def test_list_by_names_gives_the_existing_ones_with_statistics(endpoint, db, loaded):
    _, table = loaded
    response = post(endpoint, db, table, "list-by-names",
                    {"specs": [{"region": "eu", "hr": "3"}, {"region": "xx", "hr": "1"}, {"region": "us", "hr": "0"}]})
    assert response.status_code == 200, response.text
    got = response.json()["partitions"]
    assert [p["spec"] for p in got] == [{"region": "eu", "hr": "3"}, {"region": "us", "hr": "0"}]
    assert got[0]["recordCount"] == 0 and got[0]["done"] is False
    error_of(post(endpoint, db, table, "list-by-names", {"specs": [{"region": "eu"}]}), 400)
    error_of(post(endpoint, db, table, "list-by-names", {"specs": [{"region": "eu", "hr": str(n)}
                                                                   for n in range(1001)]}), 400)


def test_drop_unregisters_and_reports_missing(endpoint, db, loaded, glue):
    _, table = loaded
    response = post(endpoint, db, table, "drop", {"partitionSpecs": [{"region": "eu", "hr": "1"},
                                                                     {"region": "eu", "hr": "99"}],
                                                  "ignoreIfNotExists": True})
    assert response.status_code == 200, response.text
    assert response.json() == {"dropped": [{"region": "eu", "hr": "1"}], "missing": [{"region": "eu", "hr": "99"}]}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["eu", "1"])
    # Not ignoring a missing one: 404 PARTITION, nothing dropped.
    body = error_of(post(endpoint, db, table, "drop", {"partitionSpecs": [{"region": "eu", "hr": "2"},
                                                                          {"region": "eu", "hr": "1"}],
                                                       "ignoreIfNotExists": False}), 404)
    assert body["resourceType"] == "PARTITION"
    glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["eu", "2"])
    error_of(post(endpoint, db, table, "drop", {"partitionSpecs": [{"region": "eu"}]}), 400)
    error_of(post(endpoint, db, table, "drop", {}), 400)


def test_mark_done_is_a_glue_partition_parameter_and_paimons_done_flag(endpoint, db, loaded, glue):
    _, table = loaded
    response = post(endpoint, db, table, "mark", {"specs": [{"region": "sa", "hr": "7"}, {"region": "zz", "hr": "1"}]})
    assert response.status_code == 200 and response.text == "", response.text
    parameters = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["sa", "7"])["Partition"][
        "Parameters"]
    assert parameters["paimon.done"] == "true" and int(parameters["paimon.done-time"]) > 0
    got = post(endpoint, db, table, "list-by-names", {"specs": [{"region": "sa", "hr": "7"},
                                                                {"region": "sa", "hr": "8"}]}).json()["partitions"]
    assert [p["done"] for p in got] == [True, False]
    listed = requests.get(url(endpoint, db, table), params={"partitionNamePattern": "region=sa/hr=7"},
                          headers=HEADERS, timeout=30).json()["partitions"]
    assert [p["done"] for p in listed] == [True]
    found, _, _ = by_filter(endpoint, db, table, compound("AND", leaf("EQUAL", "region", ["sa"]),
                                                          leaf("EQUAL", "hr", [7], "INT", 1)))
    assert [p["done"] for p in found] == [True]
    error_of(post(endpoint, db, table, "mark", {"specs": [{"hr": "7"}]}), 400)


def test_create_with_statistics_adds_or_replaces_all_or_nothing(endpoint, db, catalog):
    make_table(catalog, db, "stats")
    spec = {"region": "eu", "hr": "1"}

    def create(body: dict[str, Any]) -> requests.Response:
        return post(endpoint, db, "stats", "", body)

    def stats_of(wanted: dict[str, str]) -> tuple[int, int, int, int]:
        got = post(endpoint, db, "stats", "list-by-names", {"specs": [wanted]}).json()["partitions"][0]
        return got["recordCount"], got["fileSizeInBytes"], got["fileCount"], got["lastFileCreationTime"]

    stat = {"spec": spec, "recordCount": 10, "fileSizeInBytes": 100, "fileCount": 1, "lastFileCreationTime": 50,
            "totalBuckets": 1}
    response = create({"partitionSpecs": [spec], "ignoreIfExists": True, "partitionStatistics": [stat],
                       "replaceStatistics": False})
    assert response.status_code == 200, response.text
    assert response.json() == {"created": [spec], "existed": []}
    assert stats_of(spec) == (10, 100, 1, 50)
    # Adding: counts add up, the later creation time stays; an unknown (negative) field is left alone.
    create({"partitionSpecs": [spec], "partitionStatistics": [{**stat, "fileSizeInBytes": -1,
                                                                "lastFileCreationTime": 20}],
            "replaceStatistics": False})
    assert stats_of(spec) == (20, 100, 2, 50)
    # Replacing overwrites, the creation time too.
    create({"partitionSpecs": [spec], "partitionStatistics": [{**stat, "recordCount": 3, "lastFileCreationTime": 7}],
            "replaceStatistics": True})
    assert stats_of(spec) == (3, 100, 1, 7)
    # A report naming a partition the table does not hold applies none of it.
    other = {"region": "us", "hr": "2"}
    response = create({"partitionSpecs": [other], "partitionStatistics": [
        {**stat, "recordCount": 99}, {**stat, "spec": {"region": "xx", "hr": "9"}}], "replaceStatistics": True})
    assert response.status_code == 200 and response.json()["created"] == [other]
    assert stats_of(spec) == (3, 100, 1, 7) and stats_of(other) == (0, 0, 0, 0)
    # statistics without replaceStatistics, or naming other keys: 400, nothing created.
    third = {"region": "ap", "hr": "3"}
    error_of(create({"partitionSpecs": [third], "partitionStatistics": [stat]}), 400)
    error_of(create({"partitionSpecs": [third], "partitionStatistics": [{**stat, "spec": {"region": "eu"}}],
                     "replaceStatistics": True}), 400)
    error_of(create({"partitionSpecs": [third], "partitionStatistics": [{**stat, "recordCount": "many"}],
                     "replaceStatistics": True}), 400)
    assert post(endpoint, db, "stats", "list-by-names", {"specs": [third]}).json()["partitions"] == []
    # ignoreIfExists false with an existing one: 409, nothing created.
    error_of(create({"partitionSpecs": [third, spec], "ignoreIfExists": False}), 409)
    assert post(endpoint, db, "stats", "list-by-names", {"specs": [third]}).json()["partitions"] == []


def test_a_format_tables_partitions_through_the_new_routes(endpoint, db, glue, tmp_path):
    location = tmp_path / "fmt"
    location.mkdir()
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "fmt", "TableType": "EXTERNAL_TABLE", "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint"}], "Location": location.as_uri(),
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}},
        "PartitionKeys": [{"Name": "dt", "Type": "string"}]})
    specs = [{"dt": f"2024-01-0{d}"} for d in range(1, 6)]
    stats = [{"spec": s, "recordCount": 5, "fileSizeInBytes": 50, "fileCount": 1, "lastFileCreationTime": 9}
             for s in specs[:2]]
    response = post(endpoint, db, "fmt", "", {"partitionSpecs": specs, "ignoreIfExists": True,
                                              "partitionStatistics": stats, "replaceStatistics": True})
    assert response.status_code == 200, response.text
    got = glue.get_partition(DatabaseName=db, TableName="fmt", PartitionValues=["2024-01-01"])["Partition"]
    assert got["StorageDescriptor"]["Location"] == location.as_uri() + "/dt=2024-01-01"
    found = post(endpoint, db, "fmt", "list-by-filter", {"filter": json.dumps(
        leaf("GREATER_OR_EQUAL", "dt", ["2024-01-04"]))}).json()["partitions"]
    assert [p["spec"]["dt"] for p in found] == ["2024-01-04", "2024-01-05"]
    got = post(endpoint, db, "fmt", "list-by-names", {"specs": specs[:1]}).json()["partitions"]
    assert got[0]["recordCount"] == 5
    response = post(endpoint, db, "fmt", "drop", {"partitionSpecs": specs[4:], "ignoreIfNotExists": True})
    assert response.json()["dropped"] == specs[4:]
    assert (location).exists()  # the server never deletes data files


def test_list_by_filter_on_an_explicit_index_carries_the_statistics(endpoint, db, catalog, glue):
    make_table(catalog, db, "indexed")
    specs = [{"region": r, "hr": str(h)} for r in REGIONS for h in range(6)]
    stats = [{"spec": s, "recordCount": int(s["hr"]) + 1, "fileSizeInBytes": 10, "fileCount": 1,
              "lastFileCreationTime": 3} for s in specs]
    response = post(endpoint, db, "indexed", "", {"partitionSpecs": specs, "partitionStatistics": stats,
                                                  "replaceStatistics": True})
    assert response.status_code == 200, response.text
    glue.create_partition_index(DatabaseName=db, TableName="indexed",
                                PartitionIndex={"IndexName": "by_hr", "Keys": ["hr"]})
    for _ in range(100):
        indexes = glue.get_partition_indexes(DatabaseName=db, TableName="indexed")["PartitionIndexDescriptorList"]
        if indexes and indexes[0]["IndexStatus"] == "ACTIVE":
            break
    predicate = leaf("EQUAL", "hr", [4], "INT", 1)
    found, items, _ = by_filter(endpoint, db, "indexed", predicate)
    assert names(found) == [f"{r}/4" for r in REGIONS]
    assert {p["recordCount"] for p in found} == {5} and {p["fileCount"] for p in found} == {1}
    assert items <= 2 * len(found) + 6, items  # the entries, then the partitions by key
    # Marked done through the index's copy of the document too.
    post(endpoint, db, "indexed", "mark", {"specs": [{"region": "eu", "hr": "4"}]})
    found, _, _ = by_filter(endpoint, db, "indexed", predicate)
    assert {p["spec"]["region"]: p["done"] for p in found} == {"ap": False, "eu": True, "sa": False, "us": False}
