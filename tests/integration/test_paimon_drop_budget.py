"""Paimon DropTable / DropDatabase / DropBranch within the work budget, through pypaimon's
RESTCatalog: a managed table's directory can hold any number of files, so a drop removes what its
budget allows and leaves the rest to a cleanup job (chalicelib/service/paimon_tables.py, "removing
dropped tables' directories"). Until the job is done the old directory keeps its schema-0, so a
table re-created under the same name gets a directory of its own, which the job never touches. A
branch can hold any number of snapshots: its name stays taken (a tombstone) until its job is done.

A stack of its own (``spent``, tests/integration/conftest.py): work budget 0 s (a removal stops at its first look at the clock, after 200
files) and no background cleaner, so what a drop left is seen before the scheduled cleaner's code
(run in a process of its own, as deployed) finishes it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
import requests
from pypaimon.catalog.catalog_exception import (BranchAlreadyExistException, BranchNotExistException,
                                                TableNotExistException)
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.schema.schema import Schema

from infra.local.stack import CatalogStack
from tests.integration.store_helpers import Store
from tests.integration.test_paimon_catalog import simple_schema
from tests.integration.test_paimon_commits import APPEND_SCHEMA, read, write
from tests.integration.test_paimon_protocol import ACCOUNT, WAREHOUSE, options

REPO = Path(__file__).resolve().parents[2]
EXTRA_FILES = 450


@pytest.fixture(scope="module")
def paimon(spent: CatalogStack) -> RESTCatalog:
    catalog = CatalogFactory.create(options(spent.endpoint))
    assert isinstance(catalog, RESTCatalog)
    return catalog


def _directory(paimon: RESTCatalog, identifier: Identifier) -> Path:
    return Path(unquote(urlparse(paimon.rest_api.get_table(identifier).path).path))


def _big_table(paimon: RESTCatalog, db: str, name: str) -> Path:
    """A managed table whose directory holds EXTRA_FILES data files besides its schema-0."""
    identifier = Identifier.create(db, name)
    paimon.create_table(identifier, simple_schema(), False)
    directory = _directory(paimon, identifier)
    (directory / "bucket-0").mkdir()
    for n in range(EXTRA_FILES):
        (directory / "bucket-0" / f"data-{n}.parquet").write_bytes(b"x")
    return directory


def _wide_table(paimon: RESTCatalog, prefix: str) -> tuple[str, Identifier, Any]:
    """A new database (named ``prefix``_...) holding table ``wide``, partitioned by region, with
    one row written in region ``eu`` (its first snapshot)."""
    db = f"{prefix}_{uuid.uuid4().hex[:8]}"
    paimon.create_database(db, False)
    identifier = Identifier.create(db, "wide")
    paimon.create_table(identifier, Schema.from_pyarrow_schema(APPEND_SCHEMA, ["region"], None, {"bucket": "-1"}),
                        False)
    table = paimon.get_table(identifier)
    write(table, {"region": ["eu"], "n": [1]})
    return db, identifier, table


def _files(directory: Path) -> int:
    return sum(1 for path in directory.rglob("*") if path.is_file()) if directory.exists() else 0


def _jobs(stack: CatalogStack, kind: str) -> list[dict[str, Any]]:
    return [job for job in Store(stack).query("cleanup_jobs", "queue", "purge") if job["kind"]["S"] == kind]


def _run_scheduled_cleaner(stack: CatalogStack) -> None:
    subprocess.run([sys.executable, "-c", "import app\nfrom chalicelib.service import cleanup\n"
                    "cleanup.run(max_seconds=30.0)"], env=stack.env, cwd=REPO, check=True, timeout=120)


def test_drop_table_leaves_a_large_directory_to_a_job_and_a_new_table_of_that_name_its_own(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    db = f"pdrop_{uuid.uuid4().hex[:8]}"
    paimon.create_database(db, False)
    old = _big_table(paimon, db, "big")
    identifier = Identifier.create(db, "big")

    paimon.drop_table(identifier)
    with pytest.raises(TableNotExistException):
        paimon.get_table(identifier)
    # The answer came after at most one look at the clock: part of the directory is left, schema-0 too.
    assert 0 < _files(old) < EXTRA_FILES
    assert (old / "schema" / "schema-0").is_file()
    jobs = [job for job in _jobs(spent, "paimon-directory") if job["path"]["S"] == old.as_uri()]
    assert len(jobs) == 1 and len(jobs[0]["digest"]["S"]) == 64

    # Re-created meanwhile: the old path is still taken, so the new table gets its own directory.
    paimon.create_table(identifier, simple_schema(), False)
    new = _directory(paimon, identifier)
    assert new != old and (new / "schema" / "schema-0").is_file()

    _run_scheduled_cleaner(spent)
    assert not old.exists()
    assert (new / "schema" / "schema-0").is_file()
    assert paimon.get_table(identifier) is not None
    assert not [job for job in _jobs(spent, "paimon-directory") if job["path"]["S"] == old.as_uri()]


def test_a_directory_job_removes_nothing_once_the_path_is_another_tables(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    """The job checks schema-0 against the dropped table's: were the directory finished and the path
    taken by a new table before the job ran, the job leaves that table's files alone."""
    db = f"pdrop_{uuid.uuid4().hex[:8]}"
    paimon.create_database(db, False)
    old = _big_table(paimon, db, "big")
    paimon.drop_table(Identifier.create(db, "big"))
    assert (old / "schema" / "schema-0").is_file()
    # What a finished removal followed by a create at the same path leaves there.
    for path in sorted(old.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (old / "schema").mkdir(parents=True)
    (old / "schema" / "schema-0").write_text('{"another": "table"}')
    (old / "bucket-0").mkdir()
    (old / "bucket-0" / "data-0.parquet").write_bytes(b"theirs")

    _run_scheduled_cleaner(spent)
    assert (old / "schema" / "schema-0").read_text() == '{"another": "table"}'
    assert (old / "bucket-0" / "data-0.parquet").read_bytes() == b"theirs"
    assert not [job for job in _jobs(spent, "paimon-directory") if job["path"]["S"] == old.as_uri()]


def test_drop_database_leaves_its_tables_directories_to_its_cleanup_job(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    db = f"pdrop_{uuid.uuid4().hex[:8]}"
    paimon.create_database(db, False)
    directories = [_big_table(paimon, db, name) for name in ("one", "two")]

    paimon.drop_database(db, ignore_if_not_exists=False, cascade=True)
    assert sum(_files(d) for d in directories) > EXTRA_FILES  # a budget of 0 s: not both removed
    jobs = [job for job in _jobs(spent, "database") if job["database"]["S"] == db]
    assert len(jobs) == 1 and jobs[0]["drop_files"]["BOOL"] is True

    _run_scheduled_cleaner(spent)
    assert not any(d.exists() for d in directories)
    assert not [job for job in _jobs(spent, "database") if job["database"]["S"] == db]


def test_glue_delete_database_leaves_paimon_files_alone(paimon: RESTCatalog, spent: CatalogStack) -> None:
    """Glue's DeleteDatabase never removes data: its cleanup job purges the catalog only."""
    db = f"pdrop_{uuid.uuid4().hex[:8]}"
    paimon.create_database(db, False)
    identifier = Identifier.create(db, "kept")
    paimon.create_table(identifier, simple_schema(), False)
    directory = _directory(paimon, identifier)
    spent.client("glue").delete_database(Name=db)
    _run_scheduled_cleaner(spent)
    assert (directory / "schema" / "schema-0").is_file()


def test_a_database_purge_cut_short_after_a_tables_purge_began_leaves_the_path_alone(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    """A database job's chunk that stopped after a table's directory was removed and its Paimon
    items partly purged finds no stored schema-0 to check against when it runs again: it must not
    remove the directory unchecked, since the path may be a new table's by then."""
    db = f"pdrop_{uuid.uuid4().hex[:8]}"
    paimon.create_database(db, False)
    identifier = Identifier.create(db, "t")
    paimon.create_table(identifier, simple_schema(), False)
    directory = _directory(paimon, identifier)
    store = Store(spent)
    uid = store.table_item(db, "t")["uid"]["S"]
    paimon.drop_database(db, ignore_if_not_exists=False, cascade=True)
    assert directory.exists()  # a budget of 0 s: the request removed nothing
    # As a chunk cut short leaves it: the directory removed, the schema items purged, the table
    # item still there...
    shutil.rmtree(directory)
    for item in store.query("paimon", "table_uid", uid):
        store.client.delete_item(TableName=store.prefix + "paimon",
                                 Key={"table_uid": item["table_uid"], "key": item["key"]})
    # ...and meanwhile a new table at the path.
    (directory / "schema").mkdir(parents=True)
    (directory / "schema" / "schema-0").write_text('{"another": "table"}')

    _run_scheduled_cleaner(spent)
    assert (directory / "schema" / "schema-0").read_text() == '{"another": "table"}'
    assert not [job for job in _jobs(spent, "database") if job["database"]["S"] == db]


def test_drop_branch_leaves_its_snapshots_to_a_job_and_keeps_its_name_until_they_are_gone(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    """A branch can hold any number of snapshots: DropBranch makes it gone at once (its item a
    tombstone), removes what its budget allows and leaves the rest to a job; the name stays
    taken until the job is done, so a new branch of that name never meets the old one's items."""
    db, identifier, table = _wide_table(paimon, "pdrop")  # one row, n=1
    paimon.create_branch(identifier, "b0")
    paimon.create_branch(identifier, "b1")
    for n in range(3):
        write(table.copy({"branch": "b1"}), {"region": ["us"], "n": [10 + n]})
    root = _directory(paimon, identifier) / "branch" / "branch-b1"
    assert (root / "snapshot" / "snapshot-3").is_file()
    store = Store(spent)
    uid = store.table_item(db, "wide")["uid"]["S"]

    def branch_items() -> list[str]:
        return sorted(item["key"]["S"] for item in store.query("paimon", "table_uid", uid)
                      if item["key"]["S"].split("\x01")[1:2] == ["b1"])

    paimon.drop_branch(identifier, "b1")
    assert paimon.list_branches(identifier) == ["b0"]
    with pytest.raises(BranchNotExistException):
        paimon.drop_branch(identifier, "b1")
    # Budget 0 s: the head went first (no commit to the branch can land), its snapshots are left.
    left = branch_items()
    assert "head\x01b1" not in left and any(key.startswith("snap\x01b1\x01") for key in left)
    tombstone = store.get("paimon", {"table_uid": uid, "key": "branch\x01b1"})
    assert "dropped" in tombstone
    assert len([job for job in _jobs(spent, "paimon-branch") if job["table_uid"]["S"] == uid]) == 1
    with pytest.raises(BranchAlreadyExistException):
        paimon.create_branch(identifier, "b1")  # still being removed
    with pytest.raises(BranchAlreadyExistException):
        paimon.rename_branch(identifier, "b0", "b1")
    with pytest.raises(BranchNotExistException):
        paimon.rename_branch(identifier, "b1", "b2")

    _run_scheduled_cleaner(spent)
    assert branch_items() == []
    assert not root.exists()
    assert not [job for job in _jobs(spent, "paimon-branch") if job["table_uid"]["S"] == uid]

    paimon.create_branch(identifier, "b1")
    assert paimon.list_branches(identifier) == ["b0", "b1"]
    branch = table.copy({"branch": "b1"})
    write(branch, {"region": ["ap"], "n": [20]})
    assert read(branch) == [{"region": "ap", "n": 20}]  # none of the old branch's snapshots
    assert paimon.rest_api.load_snapshot(Identifier.create(db, "wide", branch="b1")).snapshot.id == 1


def test_rollback_leaves_the_orphaned_snapshot_items_to_a_job_which_spares_a_later_commits(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    """A rollback may orphan any number of snapshots: their files go in the request (a file-system
    reader takes the highest as the latest), their items within its budget and then by a job,
    whose deletes are conditional on the rolled-back head's moves, so a commit made meanwhile
    that reused an id keeps its item."""
    from pypaimon.table.instant import Instant
    db, identifier, table = _wide_table(paimon, "pdrop")  # snapshot 1: one row, n=1
    for n in range(2, 5):
        write(table, {"region": ["eu"], "n": [n]})
    snapshots = _directory(paimon, identifier) / "snapshot"
    store = Store(spent)
    uid = store.table_item(db, "wide")["uid"]["S"]

    def snap_items() -> dict[int, dict[str, Any]]:
        return {int(item["snapshot_id"]["N"]): item for item in store.query("paimon", "table_uid", uid)
                if item["key"]["S"].startswith("snap\x01main\x01")}

    paimon.rollback_to(identifier, Instant.snapshot(1))
    assert paimon.load_snapshot(identifier).snapshot.id == 1
    assert not (snapshots / "snapshot-2").exists() and not (snapshots / "snapshot-4").exists()
    assert sorted(snap_items()) == [1, 2, 3, 4]  # budget 0 s: the items are the job's
    jobs = [job for job in _jobs(spent, "paimon-orphans") if job["table_uid"]["S"] == uid]
    assert len(jobs) == 1 and jobs[0]["snapshots"]["S"].startswith("1:4:")

    write(table, {"region": ["us"], "n": [9]})  # snapshot 2 again, before the job ran
    reused = snap_items()[2]
    _run_scheduled_cleaner(spent)
    assert sorted(snap_items()) == [1, 2]
    assert snap_items()[2] == reused
    assert not [job for job in _jobs(spent, "paimon-orphans") if job["table_uid"]["S"] == uid]
    assert sorted(r["n"] for r in read(paimon.get_table(identifier))) == [1, 9]


def test_fast_forward_and_rename_of_a_branch_past_their_limits_are_refused_without_reading_it_all(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    """A fast-forward or a rename is one transaction, so a branch of more snapshots than it holds
    is refused (400); the request reads about one more than the limit to know, not the branch."""
    db, identifier, _ = _wide_table(paimon, "pff")
    paimon.create_tag(identifier, "t1")
    paimon.create_branch(identifier, "long", "t1")  # the tag's snapshot 1 is its first
    uid = Store(spent).table_item(db, "wide")["uid"]["S"]
    ddb, items = spent.ddb_client(), spent.table_prefix + "paimon"
    first = ddb.get_item(TableName=items, Key={"table_uid": {"S": uid}, "key": {"S": "snap\x01long\x01" + "1".zfill(20)}},
                         ConsistentRead=True)["Item"]
    last = 1000  # snapshots 2..1000 of the branch, stored as its commits would have
    for start in range(2, last + 1, 25):
        ddb.batch_write_item(RequestItems={items: [
            {"PutRequest": {"Item": {**first, "key": {"S": "snap\x01long\x01" + str(n).zfill(20)},
                                     "snapshot_id": {"N": str(n)}}}} for n in range(start, min(start + 25, last + 1))]})
    ddb.update_item(TableName=items, Key={"table_uid": {"S": uid}, "key": {"S": "head\x01long"}},
                    UpdateExpression="SET snapshot_id = :n, published = :n", ExpressionAttributeValues={":n": {"N": str(last)}})
    branch = f"{spent.endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/wide/branches/long"
    for url, body in ((f"{branch}/forward", None), (f"{branch}/rename", {"toBranch": "longer"})):
        response = requests.post(url, json=body, headers={"Authorization": f"Bearer {ACCOUNT}"}, timeout=60)
        assert response.status_code == 400, response.text
        assert "too many snapshots" in response.json()["message"]
        assert int(response.headers["x-glue-items-read"]) < 150  # not the branch's 1,000
    assert paimon.list_branches(identifier) == ["long"]
