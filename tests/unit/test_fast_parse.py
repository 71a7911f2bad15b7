"""fast_parse must hand over exactly what botocore's own parser would, for every read."""

from __future__ import annotations

import base64
import json
from typing import Any

import botocore.session
import pytest
from botocore.parsers import create_parser

from chalicelib.store.dynamo import fast_parse


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


ITEM = {
    "table_uid": {"S": "t1"}, "key": {"S": "2024\x01"}, "segment": {"N": "17"},
    "doc": {"B": _b64(b"Z\x00\x01compressed")}, "values": {"L": [{"S": "a"}, {"N": "1.5"}, {"B": _b64(b"\xff")}]},
    "meta": {"M": {"B": {"S": "a member named B"}, "blob": {"B": _b64(b"x")}, "deep": {"L": [{"M": {"k": {"BS": [_b64(b"1")]}}}]}}},
    "flags": {"BOOL": True}, "nothing": {"NULL": True}, "names": {"SS": ["x", "y"]}, "nums": {"NS": ["1", "2"]},
    "blobs": {"BS": [_b64(b"\x00"), _b64(b"\x01")]}, "B": {"S": "an attribute named B"},
}
KEY = {"table_uid": {"S": "t1"}, "key": {"B": _b64(b"k")}}
CAPACITY = {"TableName": "t", "CapacityUnits": 1.5}

BODIES = {
    "GetItem": {"Item": ITEM, "ConsumedCapacity": CAPACITY},
    "Query": {"Items": [ITEM, ITEM], "Count": 2, "ScannedCount": 2, "LastEvaluatedKey": KEY},
    "Scan": {"Items": [ITEM], "Count": 1, "ScannedCount": 3},
    "BatchGetItem": {"Responses": {"t": [ITEM, KEY]},
                     "UnprocessedKeys": {"t": {"Keys": [KEY], "ConsistentRead": True}}},
    "TransactGetItems": {"Responses": [{"Item": ITEM}, {}]},
}


def _response(body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    return {"status_code": status, "headers": {"x-amzn-requestid": "r1"}, "body": json.dumps(body).encode()}


@pytest.fixture(scope="module")
def dynamodb_model() -> Any:
    return botocore.session.get_session().get_service_model("dynamodb")


@pytest.mark.parametrize("operation", sorted(BODIES))
def test_same_result_as_botocore(dynamodb_model: Any, operation: str) -> None:
    shape = dynamodb_model.operation_model(operation).output_shape
    expected = create_parser("json").parse(_response(BODIES[operation]), shape)

    response, customized = _response(BODIES[operation]), {}
    fast_parse._take_body(response, customized)
    parsed = create_parser("json").parse(response, shape)  # what botocore does after the hook
    parsed.update(customized)
    assert parsed == expected


def test_errors_are_left_to_botocore() -> None:
    error = _response({"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", "message": "x"}, 400)
    body, customized = error["body"], {}
    fast_parse._take_body(error, customized)
    assert customized == {} and error["body"] == body
