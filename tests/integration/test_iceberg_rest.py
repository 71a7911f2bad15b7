"""The Iceberg REST catalog at ``<endpoint>/iceberg``, driven by pyiceberg's RestCatalog signing
with SigV4 for ``glue`` as against AWS Glue's endpoint, and cross-checked through boto3's Glue
client and pyiceberg's GlueCatalog on the same tables."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pytest
import requests
from pyiceberg.catalog.glue import GlueCatalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import (CommitFailedException, ForbiddenError, NamespaceAlreadyExistsError, NamespaceNotEmptyError,
                                  NoSuchNamespaceError, NoSuchTableError, TableAlreadyExistsError)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestamptzType

from infra.local.stack import REGION
from tests.integration.conftest import random_account

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()),
                NestedField(3, "ts", TimestamptzType()))
ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"],
                 "ts": pa.array([0, 86_400_000_000, 2 * 86_400_000_000], pa.timestamp("us", tz="UTC"))},
                schema=pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                                  ("ts", pa.timestamp("us", tz="UTC"))]))


def rest_catalog(endpoint: str, account: str, key: tuple[str, str] | None = None, **extra: str) -> RestCatalog:
    """pyiceberg's RestCatalog configured as for AWS Glue's Iceberg endpoint (``key``: an issued
    access key; in the open mode the access key id names the account)."""
    key_id, secret = key or (account, "testing")
    return RestCatalog("glue_rest", **{
        "uri": f"{endpoint}/iceberg", "warehouse": extra.pop("warehouse", account), "rest.sigv4-enabled": "true",
        "rest.signing-name": "glue", "rest.signing-region": REGION, "client.access-key-id": key_id,
        "client.secret-access-key": secret, "client.region": REGION, **extra})


@pytest.fixture
def rest(endpoint: str, account: str) -> RestCatalog:
    return rest_catalog(endpoint, account)


@pytest.fixture
def glue_catalog(fresh_glue) -> GlueCatalog:
    return GlueCatalog("glue", client=fresh_glue)


@pytest.fixture
def namespace(rest: RestCatalog) -> str:
    name = f"ns_{uuid.uuid4().hex[:10]}"
    rest.create_namespace(name, {"comment": "made through REST"})
    return name


def test_config_answers_glues_prefix_and_the_endpoints(endpoint, account):
    answer = requests.get(f"{endpoint}/iceberg/v1/config", params={"warehouse": account},
                          headers={"Authorization": f"AWS4-HMAC-SHA256 Credential={account}/20260101/{REGION}/glue/"
                                                    "aws4_request, SignedHeaders=host, Signature=00"}).json()
    assert answer["defaults"] == {"prefix": f"catalogs/{account}"}
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}" in answer["endpoints"]
    assert "POST /v1/{prefix}/transactions/commit" in answer["endpoints"]


def test_namespaces_are_glue_databases(rest, fresh_glue, namespace):
    assert (namespace,) in rest.list_namespaces()
    database = fresh_glue.get_database(Name=namespace)["Database"]
    assert database["Description"] == "made through REST"
    assert rest.load_namespace_properties(namespace)["comment"] == "made through REST"
    summary = rest.update_namespace_properties(namespace, removals={"comment", "absent"}, updates={"owner": "me"})
    assert (sorted(summary.removed), summary.missing, summary.updated) == (["comment"], ["absent"], ["owner"])
    assert fresh_glue.get_database(Name=namespace)["Database"]["Parameters"] == {"owner": "me"}
    assert rest.namespace_exists(namespace) and not rest.namespace_exists("no_such_namespace_here")
    with pytest.raises(NamespaceAlreadyExistsError):
        rest.create_namespace(namespace)
    with pytest.raises(NoSuchNamespaceError):
        rest.load_namespace_properties("no_such_namespace_here")


def test_create_append_scan_and_every_door_sees_one_table(rest, fresh_glue, glue_catalog, namespace):
    spec = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=DayTransform(), name="ts_day"))
    table = rest.create_table(f"{namespace}.orders", SCHEMA, partition_spec=spec)
    table.append(ROWS)
    assert rest.load_table(f"{namespace}.orders").scan().to_arrow().num_rows == 3
    assert (namespace, "orders") in rest.list_tables(namespace)
    assert rest.table_exists(f"{namespace}.orders")
    glue_table = fresh_glue.get_table(DatabaseName=namespace, Name="orders")["Table"]
    assert glue_table["Parameters"]["table_type"] == "ICEBERG"
    assert glue_table["Parameters"]["metadata_location"] == rest.load_table(f"{namespace}.orders").metadata_location
    assert [c["Name"] for c in glue_table["StorageDescriptor"]["Columns"]] == ["id", "name", "ts"]
    # The other way round: pyiceberg's GlueCatalog commits, REST reads.
    glue_catalog.load_table(f"{namespace}.orders").append(ROWS)
    assert rest.load_table(f"{namespace}.orders").scan().to_arrow().num_rows == 6
    # Two versions at least: REST archives the created one; pyiceberg's GlueCatalog skips archiving.
    versions = fresh_glue.get_table_versions(DatabaseName=namespace, TableName="orders")["TableVersions"]
    assert len(versions) >= 2


def test_schema_and_partition_evolution(rest, fresh_glue, namespace):
    table = rest.create_table(f"{namespace}.events", SCHEMA)
    with table.update_schema() as update:
        update.add_column("region", StringType())
        update.rename_column("name", "label")
    with table.update_spec() as update:
        update.add_field("region", IdentityTransform(), "region")
    loaded = rest.load_table(f"{namespace}.events")
    assert [f.name for f in loaded.schema().fields] == ["id", "label", "ts", "region"]
    assert [f.name for f in loaded.spec().fields] == ["region"]
    # Glue's columns: the current ones, then the dropped or renamed-away ones marked not current
    # (as pyiceberg's GlueCatalog writes them).
    columns = fresh_glue.get_table(DatabaseName=namespace, Name="events")["Table"]["StorageDescriptor"]["Columns"]
    current = [c["Name"] for c in columns if c["Parameters"]["iceberg.field.current"] == "true"]
    assert current == ["id", "label", "ts", "region"]


def test_a_stale_commit_is_a_409_and_writes_nothing(rest, namespace):
    first = rest.create_table(f"{namespace}.stale", SCHEMA)
    second = rest.load_table(f"{namespace}.stale")
    first.update_schema().add_column("a", StringType()).commit()
    before = rest.load_table(f"{namespace}.stale").metadata_location
    with pytest.raises(CommitFailedException):
        second.update_schema().add_column("b", StringType()).commit()
    assert rest.load_table(f"{namespace}.stale").metadata_location == before


def test_racing_committers_each_answered_and_no_update_lost(endpoint, account, rest, namespace):
    rest.create_table(f"{namespace}.raced", SCHEMA)
    loaded = [rest_catalog(endpoint, account).load_table(f"{namespace}.raced") for _ in range(6)]
    outcomes: list[str] = []
    barrier = threading.Barrier(len(loaded))

    def commit(table: Any, i: int) -> None:
        barrier.wait()
        try:
            with table.transaction() as transaction:
                transaction.set_properties({f"writer{i}": "yes"})
            outcomes.append("won")
        except CommitFailedException:
            outcomes.append("lost")

    threads = [threading.Thread(target=commit, args=(t, i)) for i, t in enumerate(loaded)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Every committer is answered, at least one wins, and the table holds exactly the winners'
    # writes: no lost update, no phantom. (A property update asserts only the table's uuid, so a
    # committer whose request is read after the first commit landed rightly wins too: on a
    # loaded machine two winners were seen.)
    assert len(outcomes) == len(loaded) and "won" in outcomes, outcomes
    properties = rest.load_table(f"{namespace}.raced").properties
    assert len([k for k in properties if k.startswith("writer")]) == outcomes.count("won"), (outcomes, properties)


def test_errors_are_the_specs(rest, namespace):
    with pytest.raises(NoSuchTableError):
        rest.load_table(f"{namespace}.missing")
    with pytest.raises(NoSuchTableError, match="NoSuchNamespaceException"):
        rest.load_table("no_such_namespace_here.missing")
    rest.create_table(f"{namespace}.taken", SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        rest.create_table(f"{namespace}.taken", SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        rest.drop_namespace(namespace)
    with pytest.raises(NoSuchTableError):
        rest.drop_table(f"{namespace}.missing")


def test_rename_register_and_drop(rest, fresh_glue, namespace, tmp_path):
    table = rest.create_table(f"{namespace}.before", SCHEMA, location=(tmp_path / "before").as_uri())
    table.append(ROWS)
    rest.rename_table(f"{namespace}.before", f"{namespace}.after")
    assert not rest.table_exists(f"{namespace}.before")
    renamed = rest.load_table(f"{namespace}.after")
    assert renamed.scan().to_arrow().num_rows == 3
    registered = rest.register_table(f"{namespace}.again", renamed.metadata_location)
    assert registered.scan().to_arrow().num_rows == 3
    assert fresh_glue.get_table(DatabaseName=namespace, Name="again")["Table"]["Parameters"]["metadata_location"] \
        == renamed.metadata_location
    rest.drop_table(f"{namespace}.again")
    rest.purge_table(f"{namespace}.after")  # at a location the caller chose: only its metadata files go
    assert not any((tmp_path / "before" / "metadata").glob("*.metadata.json"))
    assert any((tmp_path / "before" / "data").rglob("*.parquet"))
    assert rest.list_tables(namespace) == []
    rest.drop_namespace(namespace)
    assert not rest.namespace_exists(namespace)


def test_a_managed_directory_is_registered_only_into_its_own_catalog(endpoint, rest, namespace):
    table = rest.create_table(f"{namespace}.managed", SCHEMA)  # in the warehouse's managed area
    table.append(ROWS)
    other = rest_catalog(endpoint, random_account())
    other.create_namespace(namespace)
    with pytest.raises(ForbiddenError, match="warehouse's own"):
        other.register_table(f"{namespace}.stolen", table.metadata_location)
    rest.drop_table(f"{namespace}.managed")  # its files stay (no purge): the catalog may adopt them
    again = rest.register_table(f"{namespace}.adopted", table.metadata_location)
    assert again.scan().to_arrow().num_rows == 3


def test_a_purge_deletes_no_file_another_catalog_wrote(endpoint, rest, namespace, tmp_path):
    table = rest.create_table(f"{namespace}.theirs", SCHEMA, location=(tmp_path / "theirs").as_uri())
    table.append(ROWS)
    other = rest_catalog(endpoint, random_account())
    other.create_namespace(namespace)
    other.register_table(f"{namespace}.borrowed", table.metadata_location)
    other.purge_table(f"{namespace}.borrowed")
    assert rest.load_table(f"{namespace}.theirs").scan().to_arrow().num_rows == 3


def test_purge_removes_a_managed_tables_directory(rest, namespace):
    table = rest.create_table(f"{namespace}.purged", SCHEMA)
    table.append(ROWS)
    directory = Path(urlsplit(table.location()).path)
    assert any(directory.rglob("*.parquet"))
    rest.purge_table(f"{namespace}.purged")
    assert not directory.exists() or not any(directory.rglob("*"))


def test_staged_create_lands_with_its_commit(rest, namespace):
    transaction = rest.create_table_transaction(f"{namespace}.staged", SCHEMA)
    assert not rest.table_exists(f"{namespace}.staged")
    transaction.append(ROWS)
    transaction.commit_transaction()
    assert rest.load_table(f"{namespace}.staged").scan().to_arrow().num_rows == 3


def test_pages_follow_the_token(endpoint, account, namespace):
    paged = rest_catalog(endpoint, account, **{"rest-page-size": "2"})
    for i in range(5):
        paged.create_table(f"{namespace}.t{i}", SCHEMA)
    assert sorted(paged.list_tables(namespace)) == [(namespace, f"t{i}") for i in range(5)]


def _raw(endpoint: str, account: str, method: str, path: str, body: Any = None) -> requests.Response:
    """A request to the Iceberg REST API as the account's root (open mode: the Credential names it)."""
    credential = f"AWS4-HMAC-SHA256 Credential={account}/20260101/{REGION}/glue/aws4_request, " \
                 "SignedHeaders=host, Signature=00"
    return requests.request(method, f"{endpoint}/iceberg/v1/catalogs/{account}{path}", json=body,
                            headers={"Authorization": credential})


def test_a_multi_table_commit_lands_whole_or_not_at_all(endpoint, account, rest, namespace):
    one, two = (rest.create_table(f"{namespace}.{name}", SCHEMA) for name in ("one", "two"))

    def change(table: Any, key: str, uuid_text: str) -> dict[str, Any]:
        return {"identifier": {"namespace": [namespace], "name": table.name()[-1]},
                "requirements": [{"type": "assert-table-uuid", "uuid": uuid_text}],
                "updates": [{"action": "set-properties", "updates": {key: "yes"}}]}

    good = [change(one, "both", str(one.metadata.table_uuid)), change(two, "both", str(two.metadata.table_uuid))]
    assert _raw(endpoint, account, "POST", "/transactions/commit", {"table-changes": good}).status_code == 204
    assert rest.load_table(f"{namespace}.one").properties["both"] == "yes"
    assert rest.load_table(f"{namespace}.two").properties["both"] == "yes"
    # The second change's requirement fails: the first lands neither.
    bad = [change(one, "half", str(one.metadata.table_uuid)), change(two, "half", str(uuid.uuid4()))]
    answer = _raw(endpoint, account, "POST", "/transactions/commit", {"table-changes": bad})
    assert answer.status_code == 409 and answer.json()["error"]["type"] == "CommitFailedException"
    assert "half" not in rest.load_table(f"{namespace}.one").properties
    assert "half" not in rest.load_table(f"{namespace}.two").properties


def test_bad_requests_get_the_error_model(endpoint, account, namespace):
    answer = _raw(endpoint, account, "POST", f"/namespaces/{namespace}/tables", {"name": "x"})
    assert answer.status_code == 400
    assert answer.json()["error"] == {"message": "Invalid request: schema is required", "type": "BadRequestException",
                                      "code": 400}
    answer = _raw(endpoint, account, "POST", f"/namespaces/{namespace}/tables/none", {"updates": "no"})
    assert answer.status_code == 400
    answer = _raw(endpoint, account, "GET", f"/namespaces/{namespace}/tables/none")
    assert (answer.status_code, answer.json()["error"]["type"]) == (404, "NoSuchTableException")
    answer = _raw(endpoint, account, "GET", "/namespaces/a%1Fb")
    assert (answer.status_code, answer.json()["error"]["type"]) == (404, "NoSuchNamespaceException")
    answer = _raw(endpoint, account, "POST", "/namespaces", {"namespace": ["a", "b"]})
    assert answer.status_code == 400
    answer = _raw(endpoint, account, "PUT", "/namespaces")
    assert answer.status_code in (403, 405)
    assert _raw(endpoint, account, "POST", f"/namespaces/{namespace}/tables/none/metrics",
                {"report-type": "scan-report"}).status_code == 404


def test_racing_multi_table_commits_lose_no_update_and_land_whole(endpoint, account, rest, namespace):
    for name in ("left", "right"):
        rest.create_table(f"{namespace}.{name}", SCHEMA)
    barrier = threading.Barrier(5)
    outcomes: dict[int, int] = {}

    def commit(i: int) -> None:
        changes = [{"identifier": {"namespace": [namespace], "name": name}, "requirements": [],
                    "updates": [{"action": "set-properties", "updates": {f"writer{i}": "yes"}}]}
                   for name in ("left", "right")]
        barrier.wait()
        outcomes[i] = _raw(endpoint, account, "POST", "/transactions/commit", {"table-changes": changes}).status_code

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(outcomes.values()) <= {204, 409}, outcomes
    winners = {f"writer{i}" for i, status in outcomes.items() if status == 204}
    assert winners
    for name in ("left", "right"):
        written = {k for k in rest.load_table(f"{namespace}.{name}").properties if k.startswith("writer")}
        assert written == winners  # every winner's change, on both tables; no loser's


def test_the_default_catalog_and_unprefixed_paths_name_the_callers_catalog(endpoint, account, rest, namespace):
    rest.create_table(f"{namespace}.here", SCHEMA)
    default = rest_catalog(endpoint, account, warehouse=":")
    assert default.properties["prefix"] == "catalogs/:"
    assert (namespace, "here") in default.list_tables(namespace)
    bare = requests.get(f"{endpoint}/iceberg/v1/namespaces/{namespace}/tables",
                        headers={"Authorization": f"AWS4-HMAC-SHA256 Credential={account}/20260101/{REGION}/glue/"
                                                  "aws4_request, SignedHeaders=host, Signature=00"})
    assert bare.json()["identifiers"] == [{"namespace": [namespace], "name": "here"}]
    other = requests.get(f"{endpoint}/iceberg/v1/config", params={"warehouse": "210987654321"},
                         headers={"Authorization": f"AWS4-HMAC-SHA256 Credential={account}/20260101/{REGION}/glue/"
                                                   "aws4_request, SignedHeaders=host, Signature=00"})
    assert (other.status_code, other.json()["error"]["type"]) == (403, "ForbiddenException")
    unknown = requests.get(f"{endpoint}/iceberg/v1/config", params={"warehouse": "s3://bucket/path"},
                           headers={"Authorization": f"AWS4-HMAC-SHA256 Credential={account}/20260101/{REGION}/"
                                                     "glue/aws4_request, SignedHeaders=host, Signature=00"})
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "NoSuchCatalogException"
