"""dynamo_json must put on the wire exactly the TransactWriteItems body botocore would send.

Both bodies come from the same botocore client, caught at ``before-send`` (after the prepared
body hook, serialization and signing, before the network): one sent by
``dynamo_json.transact_write`` from its hand-built wire JSON, the other by botocore's own JSON
serializer from the same request in boto3's form (binary values as ``bytes``). Then value by
value (strings, numbers, binary, lists, maps, sets, nulls, bools, nesting): the wire JSON matches
boto3's TypeSerializer on the way out and reads back through TypeDeserializer.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Iterator

import botocore.session
import pytest
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.parsers import create_parser

from chalicelib.store.dynamo import config
from chalicelib.store.dynamo import dynamo_json as dj

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


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """dynamo_json's own botocore client (a fresh one, shared by this module's tests: making one
    takes most of a second), stopped before it reaches the network."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
        monkeypatch.setattr(config, "_connection", None)
        client = dj._client()
        client.meta.events.register("before-send.dynamodb.TransactWriteItems", _catch, unique_id="test-catch")
        yield client


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


# ------------------------------------------------------------------ one value at a time
# (Python value, its AttributeValue in wire JSON as dynamo_json is given it): the builders where
# the store has one, hand-written wire JSON (as the store would write it) for the other types.
_VALUES: dict[str, tuple[Any, dict[str, Any]]] = {
    "empty string": ("", dj.s("")),
    "ascii": ("plain", dj.s("plain")),
    "unicode": ("é\u2028日本語", dj.s("é\u2028日本語")),
    "astral plane": ("\U0001F600\U00010348", dj.s("\U0001F600\U00010348")),
    "control and json escapes": ("\x00\x01\x1f\"\\/\n\t\x7f", dj.s("\x00\x01\x1f\"\\/\n\t\x7f")),
    "key separators": ("2024\x01\x00z", dj.s("2024\x01\x00z")),
    "long string": ("x" * 70_000, dj.s("x" * 70_000)),
    "zero": (0, dj.n(0)),
    "negative": (-3, dj.n(-3)),
    "long max": (2**63 - 1, dj.n(2**63 - 1)),
    "long min": (-(2**63), dj.n(-(2**63))),
    "38 digits": (10**38 - 1, dj.n(10**38 - 1)),
    "38 digits negative": (-(10**38 - 1), dj.n(-(10**38 - 1))),
    "decimal": (Decimal("1.50"), {"N": "1.50"}),
    "decimal exponent": (Decimal("1E+3"), {"N": "1E+3"}),
    "decimal tiny negative": (Decimal("-0.001"), {"N": "-0.001"}),
    "decimal 38 digits": (Decimal("1234567890123456789012345678.9012345678"),
                          {"N": "1234567890123456789012345678.9012345678"}),
    "empty binary": (b"", dj.b(b"")),
    "binary": (b"Z\x00\xff\x01", dj.b(b"Z\x00\xff\x01")),
    "binary every byte": (bytes(range(256)), dj.b(bytes(range(256)))),
    "string list": (["2024", "é\u2028", ""], dj.string_list(["2024", "é\u2028", ""])),
    "empty list": ([], dj.string_list([])),
    "true": (True, {"BOOL": True}),
    "false": (False, {"BOOL": False}),
    "null": (None, {"NULL": True}),
    "string set": ({"a", "é", "\U0001F600"}, {"SS": ["a", "é", "\U0001F600"]}),
    "number set": ({Decimal("1"), Decimal("-2.5"), Decimal("1E+3")}, {"NS": ["1", "-2.5", "1E+3"]}),
    "binary set": ({b"\x00", b"\xff", b"x"}, {"BS": ["AA==", "/w==", "eA=="]}),
    "empty map": ({}, {"M": {}}),
    "nested": ({"a": [1, "x", None, True, {"b": b"\x00", "B": "named B"}], "é": {"ss": {"x"}, "n": Decimal("0.5")},
                "": [[], [[-7]]]},
               {"M": {"a": {"L": [dj.n(1), dj.s("x"), {"NULL": True}, {"BOOL": True},
                                  {"M": {"b": dj.b(b"\x00"), "B": dj.s("named B")}}]},
                      "é": {"M": {"ss": {"SS": ["x"]}, "n": {"N": "0.5"}}},
                      "": {"L": [{"L": []}, {"L": [{"L": [dj.n(-7)]}]}]}}}),
}


@pytest.fixture(scope="module")
def dynamodb_model() -> Any:
    return botocore.session.get_session().get_service_model("dynamodb")


def _sets_sorted(value: Any) -> Any:
    """The JSON body with set members in one order (a Python set has none, nor has DynamoDB's)."""
    if isinstance(value, dict):
        return {k: sorted(v) if k in ("SS", "NS", "BS") else _sets_sorted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_sets_sorted(v) for v in value]
    return value


@pytest.mark.parametrize("case", list(_VALUES))
def test_value_encodes_as_type_serializer(client: Any, case: str) -> None:
    """The wire JSON dynamo_json sends for a value is what botocore sends for boto3's
    TypeSerializer form of the same value."""
    value, wire = _VALUES[case]
    with pytest.raises(_Sent) as ours:
        dj.transact_write([dj.put(TABLE, {**KEY, "v": wire})])
    with pytest.raises(_Sent) as botocores:
        client.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE,
                                                            "Item": {**KEY, "v": TypeSerializer().serialize(value)}}}])
    ours_body, botocores_body = json.loads(ours.value.body), json.loads(botocores.value.body)
    ours_body.pop("ClientRequestToken"), botocores_body.pop("ClientRequestToken")
    assert _sets_sorted(ours_body) == _sets_sorted(botocores_body)


@pytest.mark.parametrize("case", list(_VALUES))
def test_value_decodes_as_type_deserializer(dynamodb_model: Any, case: str) -> None:
    """Read back the way boto3 reads an item (botocore's parser, then TypeDeserializer), the
    wire JSON gives the value again."""
    value, wire = _VALUES[case]
    shape = dynamodb_model.operation_model("GetItem").output_shape
    response = {"status_code": 200, "headers": {}, "body": json.dumps({"Item": {"v": wire}}).encode("utf-8")}
    parsed = create_parser("json").parse(response, shape)
    assert TypeDeserializer().deserialize(parsed["Item"]["v"]) == value


def test_values_for_botocores_own_serializer_carry_binary_as_bytes():
    """update / put_item go through botocore's serializer, which base64-encodes bytes itself."""
    wire = {"a": dj.b(b"\x00\xff"), "m": {"M": {"x": dj.b(b"y"), "n": dj.n(3)}}, "l": {"L": [dj.b(b"z"), dj.s("s")]}}
    assert dj._native(wire) == {"a": {"B": b"\x00\xff"}, "m": {"M": {"x": {"B": b"y"}, "n": {"N": "3"}}},
                                "l": {"L": [{"B": b"z"}, {"S": "s"}]}}
