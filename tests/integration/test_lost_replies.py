"""Writes whose DynamoDB answer is lost after they landed (issue #46): the retry meets the
request's own write. A server talks to DynamoDB Local through a proxy (reply_proxy.py) that
loses the answer of a seeded fraction of the write calls (reset, truncated body, pause then
close) after DynamoDB applied them; the calls are then retried (botocore, the store) and must
recognise their own write: no create answered AlreadyExists for what it created, no delete
EntityNotFound for what it deleted, no UpdateTable a ConcurrentModification for its own
version, no commit anything but COMMITTED; and every acknowledged write is stored.

A call that still fails (a 500: the store gave up) is not acknowledged and may or may not have
landed; each body is faulted at most once, so retries get their answer and such 500s should
not happen at all: they are counted and must stay at zero too.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest
from botocore.exceptions import ClientError
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.common.identifier import Identifier
from pypaimon.schema.schema import Schema

from infra.local.stack import client
from tests.integration.conftest import random_account, table_input
from tests.integration.lf_helpers import add, governed_input
from tests.integration.reply_proxy import LostReplyProxy
from tests.integration.test_paimon_commits import APPEND_SCHEMA, options, read, write

pytestmark = pytest.mark.slow  # a server of its own behind the proxy, ~20-40 s a transport

RATE = 0.3


@dataclass
class Outcomes:
    """What each call answered: ``wrong`` are the answers that deny the call's own write,
    ``failed`` the calls that gave up (not acknowledged)."""

    wrong: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    ok: int = 0

    def call(self, what: str, send: Callable[[], Any], denies: tuple[str, ...]) -> Any:
        try:
            answer = send()
        except ClientError as error:
            code = error.response["Error"]["Code"]
            (self.wrong if code in denies else self.failed).append(f"{what}: {code} {error}")
            return None
        self.ok += 1
        return answer


def workload(endpoint: str, databases: int = 12) -> tuple[Outcomes, Callable[[], list[str]]]:
    """Creates, updates, deletes and commits through boto3; the outcomes and a function that
    checks, without faults, what the acknowledged calls stored."""
    account = random_account()
    glue = client(endpoint, "glue", account=account)
    lf = client(endpoint, "lakeformation", account=account)
    run = Outcomes()
    created: dict[str, bool] = {}  # database -> acknowledged
    tables: dict[tuple[str, str], int] = {}  # (database, table) -> acknowledged VersionId
    maybe: dict[tuple[str, str], int] = {}  # a version an update that gave up may have stored
    deleted_tables: list[tuple[str, str]] = []
    deleted_dbs: list[str] = []
    partitions: list[tuple[str, str, str]] = []
    commits: list[tuple[str, str, str]] = []  # (database, table, uri)

    for d in range(databases):
        db = f"lost_{uuid.uuid4().hex[:8]}"
        if run.call(f"CreateDatabase {db}", lambda: glue.create_database(DatabaseInput={"Name": db}),
                    ("AlreadyExistsException",)) is None:
            continue
        created[db] = True
        for t in range(2):
            name = f"t{t}"
            if run.call(f"CreateTable {db}.{name}",
                        lambda: glue.create_table(DatabaseName=db, TableInput=table_input(name)),
                        ("AlreadyExistsException", "EntityNotFoundException")) is None:
                continue
            tables[(db, name)] = 0
            for version in range(2):
                if run.call(f"UpdateTable {db}.{name} v{version}",
                            lambda: glue.update_table(DatabaseName=db, VersionId=str(version), TableInput=table_input(
                                name, Description=f"v{version + 1}")),
                            ("ConcurrentModificationException", "EntityNotFoundException")) is None:
                    maybe[(db, name)] = version + 1  # not acknowledged: it may have landed
                    break
                tables[(db, name)] = version + 1
            value = str(2000 + d)
            if run.call(f"CreatePartition {db}.{name}", lambda: glue.create_partition(
                    DatabaseName=db, TableName=name, PartitionInput={"Values": [value]}),
                    ("AlreadyExistsException", "EntityNotFoundException")) is not None:
                partitions.append((db, name, value))
            batch = [str(3000 + d * 10 + i) for i in range(3)]
            answer = run.call(f"BatchCreatePartition {db}.{name}", lambda: glue.batch_create_partition(
                DatabaseName=db, TableName=name, PartitionInputList=[{"Values": [v]} for v in batch]),
                ("EntityNotFoundException",))
            if answer is not None:
                refused = {tuple(e["PartitionValues"]): e["ErrorDetail"]["ErrorCode"] for e in answer.get("Errors", [])}
                run.wrong.extend(f"BatchCreatePartition {db}.{name} {v}: {code}" for v, code in refused.items())
                partitions.extend((db, name, v) for v in batch if (v,) not in refused)
        if d % 3 == 1 and (db, "t1") in tables:
            if run.call(f"DeleteTable {db}.t1", lambda: glue.delete_table(DatabaseName=db, Name="t1"),
                        ("EntityNotFoundException",)) is not None:
                deleted_tables.append((db, "t1"))
                del tables[(db, "t1")]
                partitions = [p for p in partitions if p[:2] != (db, "t1")]
        if d % 4 == 3:
            if run.call(f"DeleteDatabase {db}", lambda: glue.delete_database(Name=db),
                        ("EntityNotFoundException",)) is not None:
                deleted_dbs.append(db)
                created.pop(db)
                tables = {k: v for k, v in tables.items() if k[0] != db}
                partitions = [p for p in partitions if p[0] != db]
        if d % 4 == 2:
            governed = "gov"
            if run.call(f"CreateTable {db}.{governed}", lambda: glue.create_table(
                    DatabaseName=db, TableInput=governed_input(governed, keys=(("year", "int"),))),
                    ("AlreadyExistsException",)) is None:
                continue
            for c in range(2):
                tx = run.call("StartTransaction", lambda: lf.start_transaction()["TransactionId"], ())
                if tx is None:
                    continue
                uri = f"s3://lake/{db}/{c}"
                if run.call(f"UpdateTableObjects {tx}", lambda: lf.update_table_objects(
                        DatabaseName=db, TableName=governed, TransactionId=tx,
                        WriteOperations=[add(uri, ["2024"], etag=f"e{c}")]), ()) is None:
                    continue
                status = run.call(f"CommitTransaction {tx}", lambda: lf.commit_transaction(TransactionId=tx),
                                  ("TransactionCanceledException", "TransactionCommittedException"))
                if status is None:
                    continue
                if status["TransactionStatus"] != "COMMITTED":
                    run.wrong.append(f"CommitTransaction {tx}: {status['TransactionStatus']}")
                    continue
                commits.append((db, governed, uri))

    def check() -> list[str]:
        problems = []
        for db in created:
            try:
                glue.get_database(Name=db)
            except ClientError as error:
                problems.append(f"database {db} acknowledged but not stored: {error}")
        for db in deleted_dbs:
            try:
                glue.get_database(Name=db)
                problems.append(f"database {db} deleted but still there")
            except ClientError:
                pass
        for (db, name), version in tables.items():
            table = glue.get_table(DatabaseName=db, Name=name)["Table"]
            stored = int(table.get("VersionId", -1))
            if stored not in (version, maybe.get((db, name))) or table.get("Description", "v0") != f"v{stored}":
                problems.append(f"table {db}.{name}: version {table.get('VersionId')} "
                                f"{table.get('Description')!r}, acknowledged {version}")
        for db, name in deleted_tables:
            try:
                glue.get_table(DatabaseName=db, Name=name)
                problems.append(f"table {db}.{name} deleted but still there")
            except ClientError:
                pass
        for db, name, value in partitions:
            try:
                glue.get_partition(DatabaseName=db, TableName=name, PartitionValues=[value])
            except ClientError as error:
                problems.append(f"partition {db}.{name}[{value}] acknowledged but not stored: {error}")
        by_table: dict[tuple[str, str], set[str]] = {}
        for db, name, uri in commits:
            by_table.setdefault((db, name), set()).add(uri)
        for (db, name), uris in by_table.items():
            stored = {obj["Uri"] for group in lf.get_table_objects(DatabaseName=db, TableName=name)["Objects"]
                      for obj in group["Objects"]}
            if not uris <= stored:
                problems.append(f"{db}.{name}: committed objects {sorted(uris - stored)} missing")
        return problems

    return run, check


def run_faulted(stack: Any, start_server: Any, transport: str, proxy: LostReplyProxy, databases: int,
                at_least: int) -> None:
    """The workload on a server of its own behind ``proxy``; asserts the outcomes."""
    try:
        server = start_server(GLUE_DDB_ENDPOINT=proxy.endpoint, GLUE_DDB_TRANSPORT=transport,
                              GLUE_CLEANUP_THREAD="0")
        run, check = workload(server.endpoint, databases)
        proxy.enabled = False
        problems = check()
        faults = sum(proxy.faults.values())
        summary = f"{run.ok} calls answered, {faults} answers lost: {dict(proxy.faults)}"
        assert faults >= at_least, summary  # the faults did happen
        assert not run.wrong, f"{summary}\n" + "\n".join(run.wrong)
        assert not problems, f"{summary}\n" + "\n".join(problems)
        assert not run.failed, f"{summary}\n" + "\n".join(run.failed)
    finally:
        proxy.stop()


@pytest.mark.parametrize("transport", ["direct", "botocore"])
def test_a_retry_that_meets_its_own_write_answers_success(stack, start_server, transport):
    """Each chosen write loses one answer: botocore's (or the direct transport's) retry meets it."""
    proxy = LostReplyProxy(stack.ddb_endpoint, rate=RATE, seed=46 + len(transport))
    run_faulted(stack, start_server, transport, proxy, databases=12, at_least=20)


def test_a_write_whose_retries_all_lost_their_answers_is_sent_again(stack, start_server):
    """Each chosen write loses the answers of every attempt botocore makes (five sends with the
    direct one): the store sends it again after botocore gave up, and it is recognised then."""
    proxy = LostReplyProxy(stack.ddb_endpoint, rate=0.06, seed=7, per_body=5, delay=0.05)
    run_faulted(stack, start_server, "direct", proxy, databases=8, at_least=3)


def test_paimon_commits_whose_answers_were_lost_commit_once(stack, start_server):
    """pypaimon commits through a server whose DynamoDB answers are lost: each commit is one
    snapshot, none refused as a conflict with itself, every row readable."""
    proxy = LostReplyProxy(stack.ddb_endpoint, rate=RATE, seed=11)
    try:
        server = start_server(GLUE_DDB_ENDPOINT=proxy.endpoint, GLUE_CLEANUP_THREAD="0")
        catalog = CatalogFactory.create(options(server.endpoint))
        db = f"lost_paimon_{uuid.uuid4().hex[:8]}"
        catalog.create_database(db, False)
        identifier = Identifier.create(db, "events")
        catalog.create_table(identifier, Schema.from_pyarrow_schema(APPEND_SCHEMA, ["region"], None, {"bucket": "-1"}),
                             False)
        table = catalog.get_table(identifier)
        expected = []
        for commit in range(4):
            rows = {"region": ["eu", "us"], "n": [commit * 2, commit * 2 + 1]}
            write(table, rows)
            expected += [{"region": r, "n": n} for r, n in zip(rows["region"], rows["n"])]
        proxy.enabled = False
        table = catalog.get_table(identifier)
        assert sorted(read(table), key=lambda r: r["n"]) == expected
        assert catalog.load_snapshot(identifier).snapshot.id == 4, dict(proxy.faults)
        assert sum(proxy.faults.values()) >= 3, dict(proxy.faults)
    finally:
        proxy.stop()
