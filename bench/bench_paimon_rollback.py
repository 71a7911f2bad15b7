"""Paimon rollback over many snapshots: the answer, and the orphaned snapshots' clean-up.

Two API servers on one store and local warehouse (``bench_paimon_drop.bounded_and_unbounded``):
one with the work budget (``--budget``, 5 s as deployed), one whose budget is 600 s, which
deletes every orphaned snapshot item in the request, as every rollback did before. Each rolls a
table of ``--snapshots`` snapshots back to its first: pypaimon creates the table, then the
snapshots' items, files and head are written straight into DynamoDB and the table's directory
(as the catalog stores them, docs/design.md "The Paimon catalog"; committing that many through
pypaimon would take hours). Printed side by side: the time to the answer, and to the last
orphaned item being gone (the bounded server's background cleaner deletes what its rollback left).

Run: ``.venv/bin/python -m bench.bench_paimon_rollback [--snapshots 20000] [--budget 5] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence
from urllib.parse import unquote, urlparse

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.bench_paimon_drop import _identifier, print_side_by_side, side_by_side  # noqa: E402
from bench.bench_partitions import table_record  # noqa: E402
from bench.common import command_line, log  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402

SEP = "\x01"  # the store's key separator (chalicelib.store.dynamo.models.SEP)


def _text(number: int) -> str:
    return json.dumps({"version": 3, "id": number, "schemaId": 0, "baseManifestList": f"manifest-list-{number}",
                       "deltaManifestList": f"manifest-list-{number}-d", "commitUser": "bench",
                       "commitIdentifier": number, "commitKind": "APPEND", "timeMillis": 1_700_000_000_000 + number,
                       "totalRecordCount": 0, "deltaRecordCount": 0})


def _long_history(catalog: Any, stack: CatalogStack, name: str, snapshots: int) -> str:
    """A table ``name`` (database of the same name) at snapshot ``snapshots``; its uid."""
    from pypaimon.schema import data_types as pt
    from pypaimon.schema.schema import Schema
    schema = Schema(fields=[pt.DataField(0, "id", pt.AtomicType("INT"))], options={"bucket": "-1"})
    catalog.create_table(f"{name}.{name}", schema, False)
    folder = Path(unquote(urlparse(catalog.rest_api.get_table(_identifier(name, name)).path).path)) / "snapshot"
    folder.mkdir(parents=True, exist_ok=True)
    ddb = stack.ddb_client()
    table = stack.table_prefix + "paimon"
    uid = table_record(ddb, stack.table_prefix, name)["uid"]["S"]
    totals = {"records": {"N": "0"}, "size": {"N": "0"}, "files": {"N": "0"}, "last_file": {"N": "0"}}
    for start in range(1, snapshots + 1, 25):
        requests = []
        for number in range(start, min(start + 25, snapshots + 1)):
            text = _text(number)
            requests.append({"PutRequest": {"Item": {
                "table_uid": {"S": uid}, "key": {"S": f"snap{SEP}main{SEP}{number:020d}"}, "doc": {"B": text.encode()},
                "snapshot_id": {"N": str(number)}, "move_seq": {"N": str(number)}, **totals}}})
            (folder / f"snapshot-{number}").write_text(text)
        pending: dict[str, Any] = {table: requests}
        while pending:
            pending = ddb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
    ddb.update_item(TableName=table, Key={"table_uid": {"S": uid}, "key": {"S": f"head{SEP}main"}},
                    UpdateExpression="SET snapshot_id = :n, published = :n, stats_seq = :n, doc = :doc",
                    ExpressionAttributeValues={":n": {"N": str(snapshots)}, ":doc": {"B": _text(snapshots).encode()}})
    (folder / "LATEST").write_text(str(snapshots))
    (folder / "EARLIEST").write_text("1")
    return uid


def _rollback(catalog: Any, stack: CatalogStack, name: str, uid: str, timeout: float) -> tuple[float, float]:
    """Seconds to the rollback's answer, and to the last orphaned snapshot item being gone."""
    from pypaimon.table.instant import Instant
    ddb = stack.ddb_client()
    started = time.perf_counter()
    catalog.rollback_to(_identifier(name, name), Instant.snapshot(1))
    answered = time.perf_counter() - started
    while ddb.query(TableName=stack.table_prefix + "paimon", KeyConditionExpression="table_uid = :u AND #k > :k",
                    ExpressionAttributeNames={"#k": "key"}, Limit=1, ConsistentRead=True,
                    ExpressionAttributeValues={":u": {"S": uid},
                                               ":k": {"S": f"snap{SEP}main{SEP}{1:020d}"}}).get("Items"):
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"orphaned snapshot items of {name} still there after {timeout:.0f} s")
        time.sleep(0.05)
    return answered, time.perf_counter() - started


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, help="snapshots in each table (default 20,000; quick 2,000)")
    parser.add_argument("--budget", type=float, help="the bounded server's work budget, seconds (default 5; quick 0.2)")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args(argv)
    snapshots = args.snapshots or (2_000 if args.quick else 20_000)
    budget = args.budget if args.budget is not None else (0.2 if args.quick else 5.0)
    command = command_line("bench_paimon_rollback", argv)

    def measure(catalog: Any, stack: CatalogStack, database: str, label: str) -> tuple[float, str]:
        log(f"writing a table of {snapshots:,} snapshots (items, files, head)")
        uid = _long_history(catalog, stack, database, snapshots)
        log(f"rolling it back to snapshot 1 through the server with {label}")
        answered, gone = _rollback(catalog, stack, database, uid, timeout=max(600.0, snapshots / 50))
        return answered, f"{gone:.2f} s"
    rows, ratio = side_by_side(budget, "every orphaned item deleted in the request, as before", "rollback", measure)
    print_side_by_side(f"Paimon rollback of a table of {snapshots:,} snapshots to its first", command,
                       ["server", "answer", "orphaned items gone"], rows, ratio)


if __name__ == "__main__":
    main()
