"""dynamo_json must put on the wire exactly the TransactWriteItems body botocore would send.

Both bodies come from the same botocore client, caught at ``before-send`` (after the prepared
body hook, serialization and signing, before the network): one sent by
``dynamo_json.transact_write`` from its hand-built wire JSON, the other by botocore's own JSON
serializer from the same request in boto3's form (binary values as ``bytes``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.store import config
from chalicelib.store import dynamo_json as dj

TABLE = "glue_catalog_partitions"
KEY = {"table_uid": {"S": "t1"}, "key": {"S": "2024\x01\x00z"}}

# (wire JSON as dynamo_json is given it, the same request as a boto3 caller writes it)
CASES: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "builders": (
        [dj.put(TABLE, {**KEY, "values": dj.string_list(["2024", "é\u2028"]), "doc": dj.b(b"Z\x00\xff\x01"),
                        "segment": dj.n(17), "revision": dj.n(-3)},
                "attribute_not_exists(#k) OR #r = :r", {"#k": "key", "#r": "revision"}, {":r": dj.n(0)}),
         dj.delete(TABLE, KEY),
         dj.delete(TABLE, KEY, "#r = :r", {"#r": "revision"}, {":r": dj.n(2)}),
         dj.check("glue_catalog_tables", {"db_uid": dj.s("d"), "name": dj.s("t")},
                  "uid = :u AND version = :v", {}, {":u": dj.s("u"), ":v": dj.n(4)})],
        [{"Put": {"TableName": TABLE,
                  "Item": {**KEY, "values": {"L": [{"S": "2024"}, {"S": "é\u2028"}]}, "doc": {"B": b"Z\x00\xff\x01"},
                           "segment": {"N": "17"}, "revision": {"N": "-3"}},
                  "ConditionExpression": "attribute_not_exists(#k) OR #r = :r",
                  "ExpressionAttributeNames": {"#k": "key", "#r": "revision"},
                  "ExpressionAttributeValues": {":r": {"N": "0"}}}},
         {"Delete": {"TableName": TABLE, "Key": KEY}},
         {"Delete": {"TableName": TABLE, "Key": KEY, "ConditionExpression": "#r = :r",
                     "ExpressionAttributeNames": {"#r": "revision"}, "ExpressionAttributeValues": {":r": {"N": "2"}}}},
         {"ConditionCheck": {"TableName": "glue_catalog_tables", "Key": {"db_uid": {"S": "d"}, "name": {"S": "t"}},
                             "ConditionExpression": "uid = :u AND version = :v",
                             "ExpressionAttributeValues": {":u": {"S": "u"}, ":v": {"N": "4"}}}}],
    ),
    "every attribute value type and action": (
        [{"Update": {"TableName": TABLE, "Key": KEY,
                     "UpdateExpression": "SET #d = :d, #m = :m ADD #n :n, #bs :bs REMOVE #x",
                     "ConditionExpression": "attribute_exists(#d)",
                     "ExpressionAttributeNames": {"#d": "doc", "#m": "meta", "#n": "nums", "#bs": "blobs", "#x": "x"},
                     "ExpressionAttributeValues": {
                         ":d": {"B": "AAEC/w=="}, ":n": {"NS": ["1", "2.5", "-1E+3"]},
                         ":bs": {"BS": ["AA==", "/w==", ""]},
                         ":m": {"M": {"s": {"SS": ["a", "b"]}, "t": {"BOOL": False}, "z": {"NULL": True},
                                      "l": {"L": [{"B": "eA=="}, {"M": {"B": {"S": "named B"}}}, {"N": "0"}]}}}},
                     "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
         {"Put": {"TableName": TABLE, "Item": {**KEY, "empty": {"L": []}, "blank": {"S": ""}}}}],
        [{"Update": {"TableName": TABLE, "Key": KEY,
                     "UpdateExpression": "SET #d = :d, #m = :m ADD #n :n, #bs :bs REMOVE #x",
                     "ConditionExpression": "attribute_exists(#d)",
                     "ExpressionAttributeNames": {"#d": "doc", "#m": "meta", "#n": "nums", "#bs": "blobs", "#x": "x"},
                     "ExpressionAttributeValues": {
                         ":d": {"B": b"\x00\x01\x02\xff"}, ":n": {"NS": ["1", "2.5", "-1E+3"]},
                         ":bs": {"BS": [b"\x00", b"\xff", b""]},
                         ":m": {"M": {"s": {"SS": ["a", "b"]}, "t": {"BOOL": False}, "z": {"NULL": True},
                                      "l": {"L": [{"B": b"x"}, {"M": {"B": {"S": "named B"}}}, {"N": "0"}]}}}},
                     "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
         {"Put": {"TableName": TABLE, "Item": {**KEY, "empty": {"L": []}, "blank": {"S": ""}}}}],
    ),
}


class _Sent(Exception):
    """Raised at ``before-send`` to stop the request there, carrying its body."""

    def __init__(self, body: bytes) -> None:
        super().__init__("request caught before the network")
        self.body = body


def _catch(request: Any, **_: Any) -> None:
    raise _Sent(request.body)


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Any:
    """dynamo_json's own botocore client (a fresh one), stopped before it reaches the network."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setattr(config, "_connection", None)
    client = dj._client()
    client.meta.events.register("before-send.dynamodb.TransactWriteItems", _catch, unique_id="test-catch")
    return client


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_body_as_botocore(client: Any, case: str) -> None:
    wire, boto3_form = CASES[case]
    with pytest.raises(_Sent) as ours:
        dj.transact_write(wire)
    with pytest.raises(_Sent) as botocores:
        client.transact_write_items(TransactItems=boto3_form)
    ours_body, botocores_body = json.loads(ours.value.body), json.loads(botocores.value.body)
    # Both carry an idempotency token (a fresh uuid per request, so not the same one).
    assert len(ours_body.pop("ClientRequestToken")) == len(botocores_body.pop("ClientRequestToken")) == 36
    assert ours_body == botocores_body
    assert ours_body["TransactItems"]  # the prepared body, not the empty placeholder


def test_prepared_body_is_used_once(client: Any) -> None:
    """After a transact_write, the same thread's next plain call sends its own body again."""
    with pytest.raises(_Sent):
        dj.transact_write(CASES["builders"][0])
    with pytest.raises(_Sent) as plain:
        client.transact_write_items(TransactItems=[])
    assert json.loads(plain.value.body)["TransactItems"] == []
