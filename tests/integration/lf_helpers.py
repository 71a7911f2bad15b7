"""Helpers shared by the Lake Formation transaction, table-object, concurrency and crash tests."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

import boto3
from botocore.config import Config

from infra.local.stack import CLIENT_CONFIG, REGION, client
from tests.integration.conftest import columns, random_account

KEYS = (("year", "int"), ("region", "string"))

# Object state as a test models it: uri -> (partition values, etag, size).
State = dict[str, tuple[tuple[str, ...], str, int]]


def governed_input(name: str, keys: Sequence[tuple[str, str]] = KEYS, **extra: Any) -> dict:
    """A TableInput of a governed table partitioned by ``keys``."""
    base = {
        "Name": name,
        "TableType": "GOVERNED",
        "StorageDescriptor": {"Columns": columns("id", "value"), "Location": f"s3://lake/{name}/"},
        "PartitionKeys": [{"Name": n, "Type": t} for n, t in keys],
    }
    base.update(extra)
    return base


def commit(lf: Any, tx: str, timeout: float = 120.0) -> str:
    """CommitTransaction, then, while it answers COMMIT_IN_PROGRESS (a commit that queued for
    locks past its work budget, or whose check outlasted it, goes on in the background), poll
    DescribeTransaction as clients of Lake Formation do; the status it settles at."""
    status = lf.commit_transaction(TransactionId=tx)["TransactionStatus"]
    deadline = time.monotonic() + timeout
    while status == "COMMIT_IN_PROGRESS" and time.monotonic() < deadline:
        time.sleep(0.1)
        status = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"]
    return status


def add(uri: str, values: Sequence[str], etag: str = "etag", size: int = 1) -> dict:
    """An AddObject WriteOperation."""
    return {"AddObject": {"Uri": uri, "ETag": etag, "Size": size, "PartitionValues": list(values)}}


def delete(uri: str, values: Optional[Sequence[str]] = None) -> dict:
    """A DeleteObject WriteOperation."""
    body: dict[str, Any] = {"Uri": uri}
    if values is not None:
        body["PartitionValues"] = list(values)
    return {"DeleteObject": body}


def unvalidated(endpoint: str, service: str, account: str) -> Any:
    """A client that sends what it is given (no botocore parameter validation), to reach the
    service's own checks."""
    return boto3.client(service, endpoint_url=endpoint, region_name=REGION, aws_access_key_id=account,
                        aws_secret_access_key="testing",
                        config=CLIENT_CONFIG.merge(Config(parameter_validation=False)))


@dataclass
class Governed:
    """A catalog of its own (random account) with a database and governed tables, and its clients."""

    endpoint: str
    account: str
    glue: Any
    lf: Any
    db: str

    @classmethod
    def create(cls, endpoint: str, tables: Iterable[str] = ("objects",),
               keys: Sequence[tuple[str, str]] = KEYS) -> "Governed":
        account = random_account()
        glue = client(endpoint, "glue", account=account)
        lf = client(endpoint, "lakeformation", account=account)
        db = f"lf_{uuid.uuid4().hex[:10]}"
        glue.create_database(DatabaseInput={"Name": db})
        for table in tables:
            glue.create_table(DatabaseName=db, TableInput=governed_input(table, keys))
        return cls(endpoint, account, glue, lf, db)

    def client(self, service: str = "lakeformation", endpoint: Optional[str] = None) -> Any:
        """A new client of this account (for a thread, or another server)."""
        return client(endpoint or self.endpoint, service, account=self.account)

    def write(self, transaction_id: str, ops: Sequence[dict], table: str = "objects",
              lf: Any = None) -> None:
        """UpdateTableObjects in calls of at most 100 operations."""
        lf = lf or self.lf
        for start in range(0, len(ops), 100):
            lf.update_table_objects(DatabaseName=self.db, TableName=table, TransactionId=transaction_id,
                                    WriteOperations=list(ops[start:start + 100]))

    def commit_ops(self, ops: Sequence[dict], table: str = "objects", lf: Any = None) -> dict:
        """Start, write and commit a transaction; its DescribeTransaction description."""
        lf = lf or self.lf
        tx = lf.start_transaction()["TransactionId"]
        self.write(tx, ops, table, lf)
        assert commit(lf, tx) == "COMMITTED"
        return lf.describe_transaction(TransactionId=tx)["TransactionDescription"]

    def objects(self, table: str = "objects", lf: Any = None, page_size: Optional[int] = None,
                **kwargs: Any) -> State:
        """Every object GetTableObjects returns (all pages), checking that no uri comes twice
        and that groups carry their partition values."""
        found, _ = self.objects_and_cost(table, lf, page_size, **kwargs)
        return found

    def objects_and_cost(self, table: str = "objects", lf: Any = None, page_size: Optional[int] = None,
                         **kwargs: Any) -> tuple[State, int]:
        """:meth:`objects` plus the DynamoDB items read (x-glue-items-read) over all pages."""
        lf = lf or self.lf
        request = {"DatabaseName": self.db, "TableName": table, **kwargs}
        if page_size:
            request["MaxResults"] = page_size
        found: State = {}
        items = 0
        for _ in range(10_000):
            response = lf.get_table_objects(**request)
            items += int(response["ResponseMetadata"]["HTTPHeaders"].get("x-glue-items-read", 0))
            count = 0
            for group in response["Objects"]:
                values = tuple(group["PartitionValues"])
                for obj in group["Objects"]:
                    assert obj["Uri"] not in found, f"{obj['Uri']} returned twice"
                    found[obj["Uri"]] = (values, obj["ETag"], obj["Size"])
                    count += 1
            if page_size:
                assert count <= page_size
            if not response.get("NextToken"):
                return found, items
            request["NextToken"] = response["NextToken"]
        raise AssertionError("GetTableObjects never stopped paging")


def partitions_of(state: State) -> dict[tuple[str, ...], tuple[int, int]]:
    """The model of a governed table's partitions: values -> (objects, bytes)."""
    found: dict[tuple[str, ...], tuple[int, int]] = {}
    for values, _, size in state.values():
        files, total = found.get(values, (0, 0))
        found[values] = (files + 1, total + size)
    return found


def listed_partitions(glue: Any, db: str, table: str, **reads: Any) -> dict[tuple[str, ...], tuple[int, int]]:
    """GetPartitions of a governed table (all pages): values -> (numFiles, totalSize)."""
    request = {"DatabaseName": db, "TableName": table, **reads}
    found: dict[tuple[str, ...], tuple[int, int]] = {}
    while True:
        response = glue.get_partitions(**request)
        for partition in response["Partitions"]:
            values = tuple(partition["Values"])
            assert values not in found, f"{values} listed twice"
            found[values] = (int(partition["Parameters"]["numFiles"]), int(partition["Parameters"]["totalSize"]))
        if not response.get("NextToken"):
            return found
        request["NextToken"] = response["NextToken"]


def apply(state: State, ops: Sequence[dict]) -> State:
    """The model: ``state`` after ``ops`` (a copy)."""
    after = dict(state)
    for op in ops:
        if "AddObject" in op:
            body = op["AddObject"]
            after[body["Uri"]] = (tuple(body["PartitionValues"]), body["ETag"], body["Size"])
        else:
            del after[op["DeleteObject"]["Uri"]]
    return after
