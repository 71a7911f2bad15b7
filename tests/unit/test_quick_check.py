"""The generated quick check agrees with the walker that words the errors (protocol/aws_json/validate.py),
on random requests for every Glue and Lake Formation operation."""

from __future__ import annotations

import random
from typing import Any

import botocore.session
import pytest
from botocore.model import Shape

from chalicelib.errors import InvalidInputException, SerializationException
from chalicelib.protocol.aws_json import quick_check, validate

_SESSION = botocore.session.get_session()
_TEXTS = ["", "a", "x" * 300, "abc\u0001", "Name", "s3://b/k", "\ud800", "int", "é" * 3, "1", "\u00a0", "x" * 2100]
_ODD = [None, 1, "s", 1.5, True, [], {}, float("nan"), 2 ** 70]


class _Requests:
    """Random values for a shape, mostly well-formed. ``vouchable`` turns False when one holds
    what the quick check leaves to the walker even when valid (a member the model lacks, a
    document holding more than text, a float of 2**63 or more)."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.vouchable = True

    def value(self, shape: Shape, depth: int = 0) -> Any:
        pick, kind = self.random.choice, shape.type_name
        if self.random.random() < 0.03:
            odd = pick(_ODD)
            self.vouchable &= not isinstance(odd, float) or odd < 2.0 ** 63
            return odd
        if kind == "structure" and shape.metadata.get("document"):
            document = pick(["text", True, {"n": 1}, [1]])
            self.vouchable &= isinstance(document, (str, bool))
            return document
        if kind == "structure":
            members = {name: self.value(member, depth + 1) for name, member in shape.members.items()
                       if name in shape.required_members or (depth < 5 and self.random.random() < 0.3)}
            if self.random.random() < 0.02:
                members["MemberTheModelLacks"] = 1
                self.vouchable = False
            return members
        if kind == "list":
            item = self.value(shape.member, depth + 1) if depth < 5 else None
            # Equal items, as a batch's partitions share their columns: what the memo skips.
            return [item] * pick([0, 1, 2, 3]) if item is not None else []
        if kind == "map":
            count = pick([0, 1, 2]) if depth < 5 else 0
            return {pick(_TEXTS) if self.random.random() < 0.3 else f"k{i}": self.value(shape.value, depth + 1)
                    for i in range(count)}
        if kind == "string":
            return pick(shape.enum) if shape.enum and self.random.random() < 0.8 else pick(_TEXTS)
        if kind in ("integer", "long"):
            return pick([0, 1, -1, 2 ** 31, 2 ** 31 - 1, -2 ** 63, 2 ** 63, 100000, 100001, True, 1.0])
        if kind in ("double", "float"):
            number = pick([0.0, 1.5, -1, 2.0 ** 63, -2.0 ** 63 + 1, 1e308, float("inf"), 2 ** 64, True, "1"])
            self.vouchable &= not (isinstance(number, float) and abs(number) >= 2.0 ** 63)
            return number
        if kind == "boolean":
            return pick([True, False, 0, "true"])
        if kind == "timestamp":
            return pick([0, 1.5, -1e12, 1e12, 253402300800, "2020", True])
        return pick(["YQ==", 1])


def _walker_accepts(shape: Shape, value: Any) -> bool:
    walker = validate._Walker()
    try:
        walker.check(shape, value, "")
    except (validate._EnoughErrors, SerializationException):
        return False
    return not walker.errors


@pytest.mark.parametrize("service", ["glue", "lakeformation"])
def test_the_quick_check_passes_exactly_what_the_walker_accepts(service: str) -> None:
    model = _SESSION.get_service_model(service)
    compared = passed = 0
    for seed, operation in enumerate(model.operation_names):
        shape = model.operation_model(operation).input_shape
        if shape is None:
            continue
        for attempt in range(25):
            requests = _Requests(seed * 1000 + attempt)
            value = requests.value(shape)
            quick, accepted = quick_check.passes_quickly(shape, value), _walker_accepts(shape, value)
            assert not quick or accepted, (operation, value)
            if requests.vouchable:
                assert quick == accepted, (operation, value)
            compared += 1
            passed += quick
    assert passed > compared // 5  # the valid side is exercised too


def test_an_equal_map_is_remembered_where_it_passed_not_where_another_map_of_its_shape_did() -> None:
    # A partition's Parameters and its SerdeInfo's share a shape: remembered each at its own
    # place, the second partition's SerDe parameters are not walked again.
    shape = _SESSION.get_service_model("glue").operation_model("BatchCreatePartition").input_shape
    serde = {"SerializationLibrary": "lib", "Parameters": {"serialization.format": "1"}}
    partitions = [{"Values": [str(i)], "Parameters": {"n": str(i)}, "StorageDescriptor": {"SerdeInfo": dict(serde)}}
                  for i in range(3)]
    seen: list[Any] = []

    class Recording(dict):  # type: ignore[type-arg]
        def get(self, key: Any, default: Any = None) -> Any:
            found = super().get(key, default)
            seen.append((key, found is not None))
            return found

    quick_check._recent.passed = Recording()
    try:
        assert quick_check.compile_check(shape)({"DatabaseName": "d", "TableName": "t",
                                                 "PartitionInputList": partitions})
    finally:
        quick_check._recent.passed = None
    assert ("SerDeInfo.Parameters", True) in seen
    with pytest.raises(InvalidInputException, match="partitionInputList.2.member.storageDescriptor.serdeInfo.parameters"):
        partitions[1]["StorageDescriptor"]["SerdeInfo"]["Parameters"] = {"k": "x" * 512001}
        validate.validate_input(shape, {"DatabaseName": "d", "TableName": "t", "PartitionInputList": partitions})
