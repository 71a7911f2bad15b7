"""TransactWriteItems written straight in DynamoDB's wire JSON, for the partition hot path.

Through PynamoDB, a BatchCreatePartition of 100 partitions spent about a third of the server's
CPU building model objects, serializing them to AttributeValues, and then having botocore walk
those AttributeValues again through the service model to serialize the request. Here the
request body is built once as the JSON DynamoDB reads and sent as it is by ``dynamo_http``.
When that answer is one a retry may cure (or the direct path is off), the same body goes
through the botocore client, for its retries: the client is called with an empty
``TransactItems`` (nothing to serialize) and a ``before-call`` hook puts the prepared body in
its place, for this thread's call only.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from binascii import b2a_base64
from typing import Any, Optional, Sequence

import orjson
from botocore.exceptions import ClientError
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]

from chalicelib.store.dynamo import dynamo_http, write_tokens
from chalicelib.store.dynamo.config import connection

_prepared = threading.local()
_HOOK_MARK = "_glue_prepared_body_hook"


class TransactionCancelled(Exception):
    """DynamoDB cancelled the transaction; ``codes`` has one entry per action, in order sent
    (``None`` where the action was fine, else e.g. ConditionalCheckFailed, TransactionConflict)."""

    def __init__(self, codes: Sequence[Optional[str]], message: str = "") -> None:
        super().__init__(message or f"transaction cancelled: {list(codes)}")
        self.codes = list(codes)


class Rendered(str):
    """An action already rendered as the wire JSON text ``json.dumps(action, separators=(",", ":"))``
    gives for it, byte for byte. The partition write path renders its puts this way: the values
    and the document are turned into JSON once per partition, not once for the partition item
    and again for each index entry, and no dictionary is built only to be serialized."""


# text(value): a JSON string literal as ``json.dumps`` writes it (ASCII, escaped). The C escaper
# itself, not a function calling it: the partition write path calls it ~8 times a partition.
text = encode_basestring_ascii


def render(action: dict[str, Any]) -> Rendered:
    """Any action (dict form) as Rendered text."""
    return Rendered(json.dumps(action, separators=(",", ":")))


# ----------------------------------------------------------------------- AttributeValues
def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def b(value: bytes) -> dict[str, str]:
    return {"B": base64.b64encode(value).decode("ascii")}


def document(doc: bytes) -> dict[str, str]:
    """A partition's document (documents.encode_document) as its AttributeValue: a plain-JSON
    one as a string, which DynamoDB carries without base64 both ways; a compressed one as a
    binary. Read back as the same bytes (models.DocumentAttribute)."""
    text = _document_string(doc)
    return {"S": text} if text is not None else b(doc)


def document_json(doc: bytes) -> str:
    """``document(doc)`` as wire JSON text: what ``json.dumps`` writes for it, but for
    non-ASCII characters, which orjson leaves as they are (both are the same JSON, and orjson
    writes a partition's text in two thirds of the time base64 took)."""
    text = _document_string(doc)
    if text is None:
        return f'{{"B":"{b2a_base64(doc, newline=False).decode("ascii")}"}}'
    return '{"S":' + orjson.dumps(text).decode("utf-8") + '}'


def _document_string(doc: bytes) -> Optional[str]:
    if doc[:1] != b"J":
        return None
    try:
        return doc.decode("utf-8")
    except UnicodeDecodeError:  # never written so (documents.compact_json is UTF-8); kept binary
        return None


def string_list(values: Sequence[str]) -> dict[str, list[dict[str, str]]]:
    return {"L": [{"S": v} for v in values]}


def put(table: str, item: dict[str, Any], condition: str | None = None,
        names: dict[str, str] | None = None, values: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Put action (``condition`` optional, with its expression names and values)."""
    return {"Put": _conditional({"TableName": table, "Item": item}, condition, names, values)}


def delete(table: str, key: dict[str, Any], condition: str | None = None,
           names: dict[str, str] | None = None, values: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Delete action."""
    return {"Delete": _conditional({"TableName": table, "Key": key}, condition, names, values)}


def check(table: str, key: dict[str, Any], condition: str, names: dict[str, str],
          values: dict[str, Any]) -> dict[str, Any]:
    """A ConditionCheck action."""
    return {"ConditionCheck": _conditional({"TableName": table, "Key": key}, condition, names, values)}


def _conditional(action: dict[str, Any], condition: str | None, names: dict[str, str] | None,
                 values: dict[str, Any] | None) -> dict[str, Any]:
    if condition:
        action["ConditionExpression"] = condition
        if names:
            action["ExpressionAttributeNames"] = names
        if values:
            action["ExpressionAttributeValues"] = values
    return action


# -------------------------------------------------------------------------------- sending
def _use_prepared_body(params: dict[str, Any], **_: Any) -> None:
    """botocore ``before-call`` hook: send this thread's prepared body, if it has one."""
    body = getattr(_prepared, "body", None)
    if body is not None:
        params["body"] = body


def _client() -> Any:
    client = connection().client
    if not getattr(client, _HOOK_MARK, False):
        client.meta.events.register("before-call.dynamodb.TransactWriteItems", _use_prepared_body,
                                    unique_id="glue-prepared-transact-body")
        setattr(client, _HOOK_MARK, True)
    return client


def _body(actions: Sequence[dict[str, Any] | Rendered]) -> bytes:
    # The idempotency token botocore adds to every TransactWriteItems (it would be lost with the
    # placeholder body): a retry after a lost response then succeeds instead of failing its
    # own conditions. Retries resend this same body, so they carry the same token.
    # Byte for byte json.dumps({"TransactItems": actions, "ClientRequestToken": token}), with
    # Rendered actions taken as they are.
    items = ",".join(a if isinstance(a, Rendered) else json.dumps(a, separators=(",", ":")) for a in actions)
    return f'{{"TransactItems":[{items}],"ClientRequestToken":"{uuid.uuid4()}"}}'.encode("utf-8")


def _send(actions: Sequence[dict[str, Any] | Rendered]) -> None:
    client = _client()
    body = _body(actions)
    # The same body (the same ClientRequestToken: DynamoDB applies it once) sent again if
    # botocore's retries too lost its answer.
    write_tokens.resend_lost(lambda: _send_body(client, body))


def _send_body(client: Any, body: bytes) -> None:
    direct = dynamo_http.caller(client)
    if direct is not None:
        try:
            direct.send("TransactWriteItems", body)
            return
        except dynamo_http.Retry as retry:
            retry.pause()  # then botocore sends the same body (the same token) again, with its retries
    _prepared.body = body
    try:
        # Straight to botocore's own call: the client's method would go through ``direct`` (and
        # write_tokens, whose resends ``_send`` makes itself).
        call = client._make_api_call
        (direct.botocore_call if direct is not None else getattr(call, "inner", call))("TransactWriteItems",
                                                                                     {"TransactItems": []})
    finally:
        _prepared.body = None


def update(table: str, key: dict[str, Any], expression: str, condition: str, names: dict[str, str],
           values: dict[str, Any]) -> None:
    """One conditional UpdateItem (botocore's ClientError when the condition fails)."""
    _client().update_item(TableName=table, Key=_native(key), UpdateExpression=expression,
                          ConditionExpression=condition, ExpressionAttributeNames=names,
                          ExpressionAttributeValues=_native(values))


def put_item(table: str, item: dict[str, Any], condition: str, names: dict[str, str],
             values: dict[str, Any]) -> None:
    """One conditional PutItem (botocore's ClientError when the condition fails)."""
    _client().put_item(TableName=table, Item=_native(item), ConditionExpression=condition,
                       ExpressionAttributeNames=names, ExpressionAttributeValues=_native(values))


def _native(values: dict[str, Any]) -> dict[str, Any]:
    """AttributeValues as botocore's serializer takes them: binary as bytes (it encodes them
    itself), where the wire JSON built here has them base64-encoded already."""
    return {name: _native_value(value) for name, value in values.items()}


def _native_value(value: dict[str, Any]) -> dict[str, Any]:
    if "B" in value:
        return {"B": base64.b64decode(value["B"])}
    if "M" in value:
        return {"M": _native(value["M"])}
    if "L" in value:
        return {"L": [_native_value(v) for v in value["L"]]}
    return value


def batch_get(keys: dict[str, list[dict[str, Any]]],
              attributes: Optional[Sequence[str]] = None) -> dict[str, list[dict[str, Any]]]:
    """Items by full key from several tables in one BatchGetItem (strongly consistent; keys that
    DynamoDB leaves unprocessed are asked again), by table name; missing items are absent.
    ``attributes``: only these of each item (include the key attributes to match items to keys)."""
    found: dict[str, list[dict[str, Any]]] = {table: [] for table in keys}
    projection: dict[str, Any] = {}
    if attributes:
        names = {f"#a{i}": name for i, name in enumerate(attributes)}
        projection = {"ProjectionExpression": ", ".join(names), "ExpressionAttributeNames": names}
    wanted: dict[str, Any] = {table: {"Keys": table_keys, "ConsistentRead": True, **projection}
                              for table, table_keys in keys.items() if table_keys}
    pause = 0.01
    while wanted:
        answer = _client().batch_get_item(RequestItems=wanted)
        for table, items in answer.get("Responses", {}).items():
            found[table].extend(items)
        wanted = answer.get("UnprocessedKeys") or {}
        if wanted:  # DynamoDB is short of capacity: back off as its guide asks
            time.sleep(pause)
            pause = min(pause * 2, 1.0)
    return found


def transact_write(actions: Sequence[dict[str, Any] | Rendered]) -> None:
    """Apply ``actions`` (at most 100; dicts in wire JSON form or Rendered text) atomically;
    TransactionCancelled when DynamoDB refuses."""
    try:
        _send(actions)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "TransactionCanceledException":
            raise
        reasons = error.response.get("CancellationReasons") or []
        codes = [None if (r.get("Code") in (None, "None")) else r["Code"] for r in reasons]
        raise TransactionCancelled(codes, str(error)) from None
