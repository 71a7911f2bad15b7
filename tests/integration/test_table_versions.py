"""Table versions and optimistic locking through boto3 over HTTP."""

from __future__ import annotations

import threading

import pytest

from tests.integration.conftest import table_input


def _versions(glue, db, name, **kwargs):
    return glue.get_table_versions(DatabaseName=db, TableName=name, **kwargs)


def test_versions_number_from_zero_and_archive_previous(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t", Description="v0"))
    for i in range(1, 4):
        glue.update_table(DatabaseName=db, TableInput=table_input("t", Description=f"v{i}"))
    versions = _versions(glue, db, "t")["TableVersions"]
    assert [(v["VersionId"], v["Table"]["Description"]) for v in versions] == [
        ("3", "v3"), ("2", "v2"), ("1", "v1"), ("0", "v0")]
    assert all(v["Table"]["VersionId"] == v["VersionId"] for v in versions)
    old = glue.get_table_version(DatabaseName=db, TableName="t", VersionId="1")["TableVersion"]
    assert old["VersionId"] == "1" and old["Table"]["Description"] == "v1"
    current = glue.get_table_version(DatabaseName=db, TableName="t")["TableVersion"]
    assert current["VersionId"] == "3"


def test_skip_archive_still_advances_version(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t", Description="v0"))
    glue.update_table(DatabaseName=db, TableInput=table_input("t", Description="v1"), SkipArchive=True)
    versions = _versions(glue, db, "t")["TableVersions"]
    assert [v["VersionId"] for v in versions] == ["1"]
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table_version(DatabaseName=db, TableName="t", VersionId="0")


def test_stale_version_id_is_concurrent_modification(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    glue.update_table(DatabaseName=db, TableInput=table_input("t", Description="a"), VersionId="0")
    with pytest.raises(glue.exceptions.ConcurrentModificationException):
        glue.update_table(DatabaseName=db, TableInput=table_input("t", Description="b"), VersionId="0")
    assert glue.get_table(DatabaseName=db, Name="t")["Table"]["Description"] == "a"


def test_racing_updates_from_one_version_have_exactly_one_winner(glue, db, make_client):
    glue.create_table(DatabaseName=db, TableInput=table_input("race"))
    account = glue.get_database(Name=db)["Database"]["CatalogId"]
    racers = 8
    barrier = threading.Barrier(racers)
    outcomes: list[str] = []
    lock = threading.Lock()

    def racer(i: int) -> None:
        client = make_client("glue", account=account)
        barrier.wait()
        try:
            client.update_table(DatabaseName=db, TableInput=table_input("race", Description=f"r{i}"), VersionId="0")
            result = f"won:{i}"
        except client.exceptions.ConcurrentModificationException:
            result = "lost"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if o.startswith("won")]
    assert len(winners) == 1 and len(outcomes) == racers
    table = glue.get_table(DatabaseName=db, Name="race")["Table"]
    assert table["VersionId"] == "1"
    assert table["Description"] == "r" + winners[0].split(":")[1]


def test_unconditional_concurrent_updates_lose_nothing(glue, db, make_client):
    glue.create_table(DatabaseName=db, TableInput=table_input("busy"))
    account = glue.get_database(Name=db)["Database"]["CatalogId"]
    done = []

    def writer(i: int) -> None:
        client = make_client("glue", account=account)
        for _attempt in range(50):
            try:
                client.update_table(DatabaseName=db, TableInput=table_input("busy", Description=f"w{i}"))
                done.append(i)
                return
            except client.exceptions.ConcurrentModificationException:
                continue

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    versions = _versions(glue, db, "busy")["TableVersions"]
    assert sorted(done) == list(range(5))
    assert [v["VersionId"] for v in versions] == [str(v) for v in range(5, -1, -1)]


def test_get_table_versions_paging(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("p"))
    for i in range(11):
        glue.update_table(DatabaseName=db, TableInput=table_input("p", Description=str(i)))
    pages = glue.get_paginator("get_table_versions").paginate(
        DatabaseName=db, TableName="p", PaginationConfig={"PageSize": 3})
    ids = [v["VersionId"] for page in pages for v in page["TableVersions"]]
    assert ids == [str(v) for v in range(11, -1, -1)]


def test_delete_versions(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("d"))
    for i in range(3):
        glue.update_table(DatabaseName=db, TableInput=table_input("d", Description=str(i)))
    glue.delete_table_version(DatabaseName=db, TableName="d", VersionId="1")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_table_version(DatabaseName=db, TableName="d", VersionId="1")
    with pytest.raises(glue.exceptions.InvalidInputException, match="current"):
        glue.delete_table_version(DatabaseName=db, TableName="d", VersionId="3")
    errors = glue.batch_delete_table_version(DatabaseName=db, TableName="d", VersionIds=["0", "1", "x", "3"])["Errors"]
    assert [(e["VersionId"], e["ErrorDetail"]["ErrorCode"]) for e in errors] == [
        ("1", "EntityNotFoundException"), ("x", "InvalidInputException"), ("3", "InvalidInputException")]
    assert [v["VersionId"] for v in _versions(glue, db, "d")["TableVersions"]] == ["3", "2"]
    with pytest.raises(glue.exceptions.InvalidInputException, match="100"):
        glue.batch_delete_table_version(DatabaseName=db, TableName="d", VersionIds=[str(i) for i in range(101)])
