"""Paimon DropBranch of a branch with many snapshots: the answer stays within the work budget.

Two API servers on one store and local warehouse (``bench_paimon_drop.bounded_and_unbounded``):
one with the work budget (``--budget``, 5 s as deployed), one whose budget is 600 s, which
removes everything in the request, as every DropBranch did before. Each drops a branch holding
``--snapshots`` snapshots: pypaimon creates the table and the branch, then the snapshots' items
and files are written straight into DynamoDB and the branch's directory (as the catalog stores
them, docs/design.md "The Paimon catalog"; committing that many through pypaimon would take
hours). Printed side by side: the time to the answer, and to the branch being wholly removed
(its items, its directory and the tombstone that keeps its name taken meanwhile).

Run: ``.venv/bin/python -m bench.bench_paimon_branch_drop [--snapshots 50000] [--budget 5] [--quick]``.
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

BRANCH = "big"
SEP = "\x01"  # the store's key separator (chalicelib.store.dynamo.models.SEP)


def _snap_key(number: int) -> str:
    return f"snap{SEP}{BRANCH}{SEP}{number:020d}"  # chalicelib.store.paimon.snap_key


def _big_branch(catalog: Any, stack: CatalogStack, database: str, snapshots: int) -> tuple[str, Path]:
    """A table named ``database`` (its name is found among every database's tables) with a branch
    of ``snapshots`` snapshots; (the table's uid, the branch directory)."""
    from pypaimon.schema import data_types as pt
    from pypaimon.schema.schema import Schema
    schema = Schema(fields=[pt.DataField(0, "id", pt.AtomicType("INT"))], options={"bucket": "-1"})
    catalog.create_table(f"{database}.{database}", schema, False)
    catalog.create_branch(_identifier(database, database), BRANCH)
    path = Path(unquote(urlparse(catalog.rest_api.get_table(_identifier(database, database)).path).path))
    ddb = stack.ddb_client()
    uid = table_record(ddb, stack.table_prefix, database)["uid"]["S"]
    folder = path / "branch" / f"branch-{BRANCH}" / "snapshot"
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(1, snapshots + 1, 25):
        requests = []
        for number in range(start, min(start + 25, snapshots + 1)):
            text = json.dumps({"version": 3, "id": number, "schemaId": 0, "commitKind": "APPEND"})
            requests.append({"PutRequest": {"Item": {
                "table_uid": {"S": uid}, "key": {"S": _snap_key(number)}, "doc": {"B": text.encode()},
                "snapshot_id": {"N": str(number)}}}})
            (folder / f"snapshot-{number}").write_text(text)
        pending: dict[str, Any] = {stack.table_prefix + "paimon": requests}
        while pending:
            pending = ddb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
    return uid, path / "branch" / f"branch-{BRANCH}"


def _drop(catalog: Any, stack: CatalogStack, database: str, uid: str, root: Path,
          timeout: float) -> tuple[float, float]:
    """Seconds to DropBranch's answer, and to the branch being wholly removed."""
    ddb = stack.ddb_client()
    started = time.perf_counter()
    catalog.drop_branch(_identifier(database, database), BRANCH)
    answered = time.perf_counter() - started
    key = {"table_uid": {"S": uid}, "key": {"S": f"branch{SEP}{BRANCH}"}}
    while root.exists() or "Item" in ddb.get_item(TableName=stack.table_prefix + "paimon", Key=key,
                                                  ConsistentRead=True):
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"branch {BRANCH} of {database}.{database} still not removed after {timeout:.0f} s")
        time.sleep(0.05)
    return answered, time.perf_counter() - started


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, help="snapshots in each dropped branch (default 50,000; quick 2,000)")
    parser.add_argument("--budget", type=float, help="the bounded server's work budget, seconds (default 5; quick 0.2)")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args(argv)
    snapshots = args.snapshots or (2_000 if args.quick else 50_000)
    budget = args.budget if args.budget is not None else (0.2 if args.quick else 5.0)
    command = command_line("bench_paimon_branch_drop", argv)

    def measure(catalog: Any, stack: CatalogStack, database: str, label: str) -> tuple[float, str]:
        log(f"writing a branch of {snapshots:,} snapshots (items and files)")
        uid, root = _big_branch(catalog, stack, database, snapshots)
        log(f"dropping it through the server with {label}")
        answered, gone = _drop(catalog, stack, database, uid, root, timeout=max(600.0, snapshots / 50))
        return answered, f"{gone:.2f} s"
    rows, ratio = side_by_side(budget, "the whole removal in the request, as before", "branch", measure)
    print_side_by_side(f"Paimon DropBranch of a branch of {snapshots:,} snapshots", command,
                       ["server", "answer", "branch wholly removed"], rows, ratio)


if __name__ == "__main__":
    main()
