"""The store's typed attributes: stored as PynamoDB's own, read back as the types they declare."""

from __future__ import annotations

import base64
import json

from pynamodb.attributes import NumberAttribute

from chalicelib.store.dynamo.models import (ALL_MODELS, CommitStateItem, IntAttribute, PartitionItem, StrListAttribute,
                                     TableVersionItem, TransactionItem)


def test_int_attribute_is_a_dynamodb_number_read_as_int() -> None:
    attribute = IntAttribute()
    assert attribute.attr_type == NumberAttribute.attr_type == "N"
    assert attribute.serialize(42) == NumberAttribute().serialize(42) == "42"
    # DynamoDB answers an integral number in plain digits, whatever form it was written in.
    value = attribute.deserialize("1763900000123456")
    assert value == 1763900000123456 and type(value) is int


def test_int_keys_keep_their_number_key_schema() -> None:
    assert TableVersionItem.version.attr_type == "N" and TableVersionItem.version.is_range_key


def test_str_list_attribute_reads_strings() -> None:
    item = PartitionItem.from_raw_data({"table_uid": {"S": "t"}, "key": {"S": "k"}, "segment": {"N": "3"},
                                        "values": {"L": [{"S": "2024"}, {"S": "01"}]}, "doc": {"B": b"{}"}})
    assert item.values == ["2024", "01"]
    assert (item.segment, item.revision) == (3, 0) and type(item.segment) is int
    assert PartitionItem.values.serialize(["a"]) == [{"S": "a"}]


def test_timestamps_stay_fractional_numbers() -> None:
    # Times are seconds with fractions: IntAttribute would refuse them.
    for attribute in (TransactionItem.start_time, TransactionItem.end_time, TransactionItem.last_activity,
                      CommitStateItem.since):
        assert type(attribute) is NumberAttribute
        assert attribute.deserialize("1763900000.123456") == 1763900000.123456


def test_every_list_of_strings_is_typed() -> None:
    for model in ALL_MODELS:
        for name, attribute in model.get_attributes().items():
            if getattr(attribute, "element_type", None) is not None and attribute.element_type.attr_type == "S":
                assert isinstance(attribute, StrListAttribute), f"{model.__name__}.{name}"


def test_partition_documents_read_back_as_bytes_in_either_form() -> None:
    """A plain-JSON partition document is stored as a string (no base64 either way), a
    compressed one as a binary; PynamoDB's models and the raw records read both as the bytes."""
    from chalicelib.store.dynamo import dynamo_json as dj
    from chalicelib.store.dynamo.models import IndexEntryItem
    from chalicelib.store.dynamo.ranges import record_type

    plain, packed = 'J{"Values":["é","\\"x"]}'.encode(), b"Z\x00\xff"
    assert dj.document(plain) == {"S": plain.decode()} and dj.document(packed) == dj.b(packed)
    assert dj.document(b"J\xff") == dj.b(b"J\xff")  # not UTF-8 (never written): kept binary
    for doc in (plain, packed):
        wire = json.loads(dj.document_json(doc))
        assert wire == json.loads(json.dumps(dj.document(doc)))
        read = {"S": wire["S"]} if "S" in wire else {"B": base64.b64decode(wire["B"])}
        raw = {"table_uid": {"S": "t"}, "index_uid": {"S": "i"}, "key": {"S": "k"}, "partition_key": {"S": "k"},
               "segment": {"N": "3"}, "values": {"L": []}, "doc": read}
        assert PartitionItem.from_raw_data(raw).doc == doc
        assert IndexEntryItem.from_raw_data(raw).doc == doc
        assert record_type(PartitionItem)(raw).doc == doc and record_type(IndexEntryItem)(raw).doc == doc
        if "B" in wire:  # as a Query within items_left_encoded hands it over: base64 text
            assert record_type(PartitionItem)({**raw, "doc": {"B": wire["B"]}}).doc == doc
