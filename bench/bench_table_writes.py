"""CreateTable / UpdateTable of different tables from 1 and from 8 threads, side by side.

Every table write outside a transaction is a commit of its own (docs/design.md, "Cost of the
stamps"): writes of different tables must not contend, so 8 client threads should write more
tables a second than one. Rounds alternate which thread count goes first; each round writes
fresh tables (its own names), then updates each of them once. Each round also sends
the DynamoDB requests the service sends for those writes by boto3 straight to DynamoDB Local
(:class:`Direct`): their 8 ÷ 1 is what the store and a client allow this work on this machine.

Called from ``bench.bench_partitions`` as :func:`table_writes`; alone:
``.venv/bin/python -m bench.bench_table_writes [--quick] [--tables N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import boto3

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.common import Report, command_line, log, machine, make_client, run_parallel  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402

DATABASE = "bench_table_writes"
# bench_search_stats --quick before the commit counter existed: 8 threads, first 200 / next 800.
RATE_BEFORE_COUNTER = 66.0
WARM_UP_TABLES = 100


def _table_input(name: str, comment: str) -> dict[str, Any]:
    return {"Name": name, "TableType": "EXTERNAL_TABLE",
            "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "v", "Type": "string",
                                                                                 "Comment": comment}],
                                  "Location": f"s3://bench/{name}/"},
            "PartitionKeys": [{"Name": "dt", "Type": "string"}]}


def _run(clients: Sequence[Any], names: Sequence[str], operation: str) -> tuple[float, int]:
    """(seconds, DynamoDB items read) for ``operation`` (create | update) of ``names`` on one
    thread per client. Items read count the service's retries: each attempt of a table write
    reads the commit counter and the metadata lock again, whatever the machine's load."""
    read: list[int] = []

    # Chunks of one table each: the threads take the next table as soon as they are free.
    def work(client: Any, name: str) -> None:
        if operation == "create":
            response = client.create_table(DatabaseName=DATABASE, TableInput=_table_input(name, "v1"))
        else:
            response = client.update_table(DatabaseName=DATABASE, TableInput=_table_input(name, "v2"))
        read.append(int(response["ResponseMetadata"]["HTTPHeaders"].get("x-glue-items-read", 0)))
    return run_parallel(clients, names, work), sum(read)


# The same DynamoDB requests, without the service: what DynamoDB Local (and a boto3 client)
# allow 8 threads ÷ 1 for this work at all on this machine, measured in the same rounds.
_DIRECT_CATALOG = "us-east-1\x01direct"  # keys of their own in the service's tables
_DOC = b'{"Name":"t","DatabaseName":"bench_table_writes","StorageDescriptor":{"Columns":[' + b"x" * 300 + b"]}}"


def _direct_requests(prefix: str, db_uid: str, name: str, operation: str) -> list[tuple[str, dict[str, Any]]]:
    """(boto3 method, parameters) of the DynamoDB requests the service sends for a CreateTable /
    UpdateTable of ``name`` (one of _table_input's tables), as traced from its DynamoDB transport
    on 2026-11-28: a BatchGetItem of the database and the commit counter; for a create, a
    BatchWriteItem of its 5 SearchTables postings and a transaction of the stamp's two checks, the
    database check, the table and its partition digest; for an update, a GetItem of the table and
    a transaction of the two checks, the archived version, the table's update and the 2 changed
    postings riding along."""
    def key(term: str) -> dict[str, Any]:
        return {"term": {"S": f"{_DIRECT_CATALOG}\x01t\x01{term}"}, "target": {"S": f"{DATABASE}\x01{name}"}}
    counter = {"name": {"S": f"seq\x01{_DIRECT_CATALOG}"}}
    stamp = [{"ConditionCheck": {"TableName": f"{prefix}lf_commit_state", "Key": counter,
                                 "ConditionExpression": "(attribute_not_exists (#0) OR #0 < :0)",
                                 "ExpressionAttributeNames": {"#0": "seq"},
                                 "ExpressionAttributeValues": {":0": {"N": "1"}}}},
             {"ConditionCheck": {"TableName": f"{prefix}lf_commit_state",
                                 "Key": {"name": {"S": f"lock\x01meta\x01{db_uid}"}},
                                 "ConditionExpression": "attribute_not_exists (#0)",
                                 "ExpressionAttributeNames": {"#0": "transaction_id"}}}]
    database = {"catalog": {"S": _DIRECT_CATALOG}, "name": {"S": DATABASE}}
    table = {"db_uid": {"S": db_uid}, "name": {"S": name}}
    uid = f"{name:0>32}"[-32:]
    requests: list[tuple[str, dict[str, Any]]] = [("batch_get_item", {"RequestItems": {
        f"{prefix}databases": {"Keys": [database], "ConsistentRead": True},
        f"{prefix}lf_commit_state": {"Keys": [counter], "ConsistentRead": True}}})]
    if operation == "create":
        postings = [{"PutRequest": {"Item": {**key(term), "uid": {"S": db_uid}}}} for term in ("dt", name, "v", "id", "v1")]
        requests.append(("batch_write_item", {"RequestItems": {f"{prefix}search_postings": postings},
                                              "ReturnConsumedCapacity": "TOTAL"}))
        requests.append(("transact_write_items", {"ReturnConsumedCapacity": "TOTAL", "TransactItems": [
            *stamp,
            {"ConditionCheck": {"TableName": f"{prefix}databases", "Key": database, "ConditionExpression": "#0 = :0",
                                "ExpressionAttributeNames": {"#0": "uid"},
                                "ExpressionAttributeValues": {":0": {"S": db_uid}}}},
            {"Put": {"TableName": f"{prefix}tables", "ConditionExpression": "attribute_not_exists (#0)",
                     "ExpressionAttributeNames": {"#0": "name"},
                     "Item": {**table, "changed_seq": {"N": "1"}, "doc": {"B": _DOC}, "index_epoch": {"N": "0"},
                              "key_types": {"L": [{"S": "string"}]}, "uid": {"S": uid}, "version": {"N": "0"}}}},
            {"Put": {"TableName": f"{prefix}partition_digests",
                     "Item": {"table_uid": {"S": uid}, "key": {"S": uid}, "chunk": {"N": "0"}, "chunks": {"N": "1"},
                              "data": {"B": b"x" * 36}, "kind": {"S": "base"}, "set_id": {"S": uid}}}}]}))
    else:
        requests.append(("get_item", {"TableName": f"{prefix}tables", "Key": table, "ConsistentRead": True,
                                      "ReturnConsumedCapacity": "TOTAL"}))
        requests.append(("transact_write_items", {"ReturnConsumedCapacity": "TOTAL", "TransactItems": [
            *stamp,
            {"Delete": {"TableName": f"{prefix}search_postings", "Key": key("v1")}},
            {"Put": {"TableName": f"{prefix}table_versions",
                     "Item": {"table_uid": {"S": uid}, "version": {"N": "0"}, "changed_seq": {"N": "1"},
                              "doc": {"B": _DOC}}}},
            {"Put": {"TableName": f"{prefix}search_postings", "Item": {**key("v2"), "uid": {"S": db_uid}}}},
            {"Update": {"TableName": f"{prefix}tables", "Key": table, "ConditionExpression": "(#0 = :0 AND #1 = :1)",
                        "UpdateExpression": "SET #2 = :2, #0 = :3, #3 = :4",
                        "ExpressionAttributeNames": {"#0": "version", "#1": "uid", "#2": "doc", "#3": "changed_seq"},
                        "ExpressionAttributeValues": {":0": {"N": "0"}, ":1": {"S": uid}, ":2": {"B": _DOC},
                                                      ":3": {"N": "1"}, ":4": {"N": "1"}}}}]}))
    return requests


class Direct:
    """The service's DynamoDB requests for table writes, sent by boto3 clients straight to
    DynamoDB Local (``endpoint``, the catalog's ``access_key`` and table ``prefix``)."""

    def __init__(self, endpoint: str, access_key: Optional[str], prefix: str, threads: int) -> None:
        self.prefix = prefix
        self.db_uid = "d" * 32
        self.clients = [make_client("dynamodb", endpoint, threads, access_key=access_key) for _ in range(threads)]
        self.clients[0].put_item(TableName=f"{prefix}databases", Item={
            "catalog": {"S": _DIRECT_CATALOG}, "name": {"S": DATABASE}, "uid": {"S": self.db_uid}})

    def run(self, count: int, names: Sequence[str], operation: str) -> float:
        """Seconds for ``operation``'s requests of each of ``names`` on ``count`` threads."""
        def work(client: Any, name: str) -> None:
            for method, params in _direct_requests(self.prefix, self.db_uid, name, operation):
                getattr(client, method)(**params)
        return run_parallel(self.clients[:count], names, work)


def _cpu(pids: Sequence[Optional[int]]) -> float:
    """CPU seconds so far of the processes ``pids`` and of this one (the client)."""
    from bench.bench_write_cpu import cpu_seconds
    return sum(cpu_seconds(pid) for pid in pids if pid is not None) + time.process_time()


def table_writes(endpoint: str, report: Report, tables: int = 100, rounds: int = 2,
                 threads: int = 8, pids: Sequence[Optional[int]] = (),
                 direct: Optional[Direct] = None) -> dict[tuple[str, int], float]:
    """Measure CreateTable and UpdateTable of ``tables`` different tables a round (one database,
    created here if missing) with 1 and with ``threads`` client threads, ``rounds`` rounds
    alternating which goes first; add the ratios to ``report`` and return
    (operation, threads) -> tables/s over all rounds. ``pids``: the service's and DynamoDB
    Local's processes, for the cores the 1-thread runs keep busy (the ceiling of any speed-up).
    ``direct``: also send the same DynamoDB requests without the service, in the same rounds."""
    clients = [make_client("glue", endpoint, threads) for _ in range(threads)]
    try:
        clients[0].create_database(DatabaseInput={"Name": DATABASE})
    except clients[0].exceptions.AlreadyExistsException:
        pass
    # Not measured: a warm-up, so DynamoDB Local's JIT compiles its write paths before either
    # thread count is timed (else the first one timed, 1 thread in round 1, pays for it).
    warm = [f"warm{int(time.time())}_{i:03d}" for i in range(WARM_UP_TABLES)]
    for op in ("create", "update"):
        _run(clients, warm, op)
        if direct is not None:
            direct.run(threads, warm, op)
    seconds = {(op, n): 0.0 for op in ("create", "update") for n in (1, threads)}
    direct_seconds = dict.fromkeys(seconds, 0.0)
    items = {key: 0 for key in seconds}
    cpu = {key: 0.0 for key in seconds}
    stamp = int(time.time())
    for round_number in range(rounds):
        order = (1, threads) if round_number % 2 == 0 else (threads, 1)
        for count in order:
            names = [f"w{stamp}_r{round_number}_t{count}_{i:05d}" for i in range(tables)]
            for op in ("create", "update"):
                log(f"table writes, round {round_number + 1}/{rounds}: {op} {tables} tables on {count} thread(s)")
                cpu0 = _cpu(pids)
                took, read = _run(clients[:count], names, op)
                cpu[op, count] += _cpu(pids) - cpu0
                seconds[op, count] += took
                items[op, count] += read
                if direct is not None:
                    direct_seconds[op, count] += direct.run(count, names, op)
    rate = {key: tables * rounds / value for key, value in seconds.items()}
    for op, label in (("create", "CreateTable"), ("update", "UpdateTable")):
        one, many = rate[op, 1], rate[op, threads]
        report.check(f"{label} of different tables, {threads} threads ÷ 1 thread",
                     f"{many / one:.2f} ({many:,.1f} ÷ {one:,.1f} tables/s)", "≥ 1.5", many / one >= 1.5)
    if direct is not None:
        for op, label in (("create", "CreateTable"), ("update", "UpdateTable")):
            one, many = (tables * rounds / direct_seconds[op, n] for n in (1, threads))
            report.check(f"Diagnosis: the same DynamoDB requests as a {label}, boto3 straight to DynamoDB Local "
                         f"(no service), {threads} threads ÷ 1 thread: what the store and client allow here",
                         f"{many / one:.2f} ({many:,.1f} ÷ {one:,.1f} writes/s)", "-", None)
    cores = os.cpu_count() or 1
    for op, label in (("create", "CreateTable"), ("update", "UpdateTable")):
        if pids:
            busy = cpu[op, 1] / seconds[op, 1]
            report.check(f"Diagnosis: {label} on 1 thread keeps {busy:.2f} of {cores} cores busy (service + "
                         f"DynamoDB Local + client): no number of threads can go past {cores / busy:.2f}× it",
                         f"{cores / busy:.2f}", "-", None)
        one, many = (items[op, n] / (tables * rounds) for n in (1, threads))
        report.check(f"Diagnosis: {label} items read a table (retries read again), {threads} threads ÷ 1 thread",
                     f"{many / one:.2f} ({many:.2f} ÷ {one:.2f})", "-", None)
    report.check(f"CreateTable of different tables on {threads} threads, tables/s (before the commit "
                 f"counter: {RATE_BEFORE_COUNTER:.0f} in bench_search_stats --quick)",
                 f"{rate['create', threads]:,.0f}", f"≥ {RATE_BEFORE_COUNTER:.0f}",
                 rate["create", threads] >= RATE_BEFORE_COUNTER)
    report.notes.append(f"Table writes: {tables} tables a round and thread count, {rounds} round(s) alternating "
                        f"which thread count goes first, after {WARM_UP_TABLES} tables written untimed; each table "
                        f"created, then updated once; one database.")
    return rate


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Start DynamoDB Local + the service, measure, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 60 tables, 1 round")
    parser.add_argument("--tables", type=int, help="tables a round and thread count (default 150; quick 60)")
    parser.add_argument("--rounds", type=int, help="rounds (default 2; quick 1)")
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args(argv)
    tables = args.tables or (60 if args.quick else 150)
    rounds = args.rounds or (1 if args.quick else 2)
    command = command_line("bench_table_writes", argv)
    env = (f"{machine()}, boto3 {boto3.__version__}; service and DynamoDB Local (in memory) "
           f"in their own processes; load average at start {os.getloadavg()[0]:.1f}")
    report = Report()
    with tempfile.TemporaryDirectory(prefix="bench-table-writes-") as tmp:
        log(f"starting DynamoDB Local + service (logs in {tmp})")
        for attempt in range(3):
            stack = CatalogStack(log_dir=Path(tmp) / str(attempt))
            try:
                stack.start()
                break
            except TimeoutError as error:  # a loaded machine: DynamoDB Local's JVM starts slowly
                log(f"{error}; starting again")
        else:
            raise RuntimeError("the stack did not start in 3 attempts")
        try:
            table_writes(stack.endpoint, report, tables, rounds, args.threads,
                         (stack.server.process.pid if stack.server.process else None,
                          stack.dynamodb.process.pid if stack.dynamodb and stack.dynamodb.process else None),
                         Direct(stack.ddb_endpoint, stack.ddb_access_key_id, stack.table_prefix, args.threads))
        finally:
            stack.stop()
    report.print(command, env)


if __name__ == "__main__":
    main()
