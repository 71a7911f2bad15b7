"""Reaching under the API: read and rewrite stored items in DynamoDB Local, to plant data
that older versions of the service could have written (and the API now refuses)."""

from __future__ import annotations

import json
import time
import zlib
from typing import Any, Callable


from infra.local.stack import REGION

DEFAULT_ACCOUNT = "123456789012"


class Store:
    """The session's DynamoDB tables, by model suffix (``databases``, ``tables``, ...)."""

    def __init__(self, stack: Any) -> None:
        self.client = stack.ddb_client()
        self.prefix = stack.table_prefix

    def get(self, table: str, key: dict[str, str]) -> dict[str, Any]:
        item = self.client.get_item(TableName=self.prefix + table, ConsistentRead=True,
                                    Key={k: {"S": v} for k, v in key.items()}).get("Item")
        assert item is not None, (table, key)
        return item

    def query(self, table: str, hash_name: str, hash_value: str) -> list[dict[str, Any]]:
        return self.client.query(TableName=self.prefix + table, ConsistentRead=True,
                                 KeyConditionExpression="#h = :h", ExpressionAttributeNames={"#h": hash_name},
                                 ExpressionAttributeValues={":h": {"S": hash_value}})["Items"]

    def wait_empty(self, table: str, hash_name: str, hash_value: str, timeout: float = 60) -> list[dict[str, Any]]:
        """The items under one hash key once none is left (deletes clean up in the background,
        chalicelib/service/cleanup.py), or what is still there after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while (items := self.query(table, hash_name, hash_value)) and time.monotonic() < deadline:
            time.sleep(0.2)
        return items

    def database_uid(self, name: str, account: str = DEFAULT_ACCOUNT) -> str:
        return self.get("databases", {"catalog": f"{REGION}\x01{account}", "name": name})["uid"]["S"]

    def table_item(self, database: str, name: str, account: str = DEFAULT_ACCOUNT) -> dict[str, Any]:
        return self.get("tables", {"db_uid": self.database_uid(database, account), "name": name})

    def rewrite_doc(self, table: str, item: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> None:
        """Decode an item's ``doc``, let ``change`` edit it, store it back as plain JSON."""
        stored = item["doc"]  # a partition's plain-JSON document is a string (models.DocumentAttribute)
        doc = decode(stored["B"] if "B" in stored else stored["S"].encode("utf-8"))
        change(doc)
        item = {**item, "doc": {"B": b"J" + json.dumps(doc, separators=(",", ":")).encode()}}
        self.client.put_item(TableName=self.prefix + table, Item=item)


def decode(data: bytes) -> Any:
    """A stored document (``J`` JSON or ``Z`` zlib-compressed JSON, see store/documents.py)."""
    return json.loads(zlib.decompress(data[1:]) if data[:1] == b"Z" else data[1:])
