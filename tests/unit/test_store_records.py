"""The store's raw reads: typed records, and the connections they (and the models) read through."""

from __future__ import annotations

import pytest

from chalicelib.store import transactions
from chalicelib.store.dynamo import fast_parse
from chalicelib.store.dynamo.config import table_connection
from chalicelib.store.dynamo.models import ALL_MODELS, IndexEntryItem, ObjectVersionItem, PartitionItem, TableItem
from chalicelib.store.dynamo.ranges import record_type


def test_record_reads_declared_attributes_and_refuses_others() -> None:
    # Built from the item as DynamoDB returns it; each attribute converted when read.
    record = record_type(PartitionItem)({"table_uid": {"S": "t"}, "key": {"S": "k"}, "segment": {"N": "3"},
                                         "values": {"L": [{"S": "2024"}, {"S": "us"}]}, "doc": {"B": b"x"}})
    assert (record.table_uid, record.key, record.segment) == ("t", "k", 3)
    assert (record.values, record.doc) == (["2024", "us"], b"x")
    assert record.uid is None  # declared (nullable) but absent from the item
    with pytest.raises(AttributeError, match="PartitionItemRecord has no attribute 'segmnet'"):
        record.segmnet  # noqa: B018 - a typo must fail, not read as missing
    with pytest.raises(AttributeError):
        record_type(IndexEntryItem)({}).uid  # noqa: B018 - PartitionItem's, not IndexEntryItem's
    assert not hasattr(record, "__deepcopy__")


def test_binary_values_left_encoded_are_decoded_when_read() -> None:
    """A Query within items_left_encoded hands its items over with binary values as base64
    text (its LastEvaluatedKey decoded as ever); a record decodes them when they are read."""
    body = {"Items": [{"key": {"S": "k"}, "doc": {"B": "eA=="}, "values": {"L": [{"B": "eQ=="}]}}],
            "LastEvaluatedKey": {"key": {"B": "eg=="}}}
    with fast_parse.items_left_encoded():
        parsed = fast_parse.decode_binary(body)
    assert parsed["Items"][0]["doc"] == {"B": "eA=="} and parsed["LastEvaluatedKey"] == {"key": {"B": b"z"}}
    record = record_type(PartitionItem)(parsed["Items"][0])
    assert (record.doc, record.values) == (b"x", [b"y"])
    assert fast_parse.decode_binary({"Items": [{"doc": {"B": "eA=="}}]})["Items"][0]["doc"] == {"B": b"x"}


def test_one_record_type_per_model() -> None:
    assert record_type(ObjectVersionItem) is record_type(ObjectVersionItem)
    assert record_type(ObjectVersionItem) is not record_type(PartitionItem)
    for model in ALL_MODELS:  # every model's attributes are stored under their Python names
        record_type(model)


@pytest.fixture
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials for the botocore clients (PynamoDB replaces a client that has none)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")


@pytest.mark.usefixtures("credentials")
def test_table_connection_knows_the_key_schema_and_reads_fast() -> None:
    table = table_connection(PartitionItem)
    assert table is table_connection(PartitionItem)
    meta = table.get_meta_table()  # given, not described: no DescribeTable call
    assert (meta.hash_keyname, meta.range_keyname) == ("table_uid", "key")
    assert getattr(table.connection.client, fast_parse._MARK)


@pytest.mark.usefixtures("credentials")
def test_model_reads_go_through_fast_parse() -> None:
    """StoreModel's hook into PynamoDB (the one private name the store overrides) still works."""
    for model in (TableItem, PartitionItem):  # a client each, ~0.5 s to create
        assert getattr(model._get_connection().connection.client, fast_parse._MARK)


def test_version_keys() -> None:
    partition = "2024\x01us\x01"  # a partition sort key ends with the separator
    key = transactions.version_key(partition, 42, "s3://b/x")
    assert transactions.split_version_key(key) == (partition, 42, "s3://b/x")
    low, high = transactions.partition_versions(partition)
    assert low <= key <= high == transactions.after_partition(partition)
    assert transactions.version_key(partition, 10 ** 19, "s3://b/x") < high
    assert high < transactions.version_key("2024\x01uz\x01", 0, "s3://b/x")  # the next partition's


def test_new_uids_are_random_version_4_uuids() -> None:
    import uuid

    from chalicelib.store.catalog import new_uid, new_uids
    uids = {new_uid() for _ in range(500)} | {uid for _ in range(5) for uid in new_uids(100)}
    assert len(uids) == 1000
    for uid in list(uids)[:100] + new_uids(3):
        parsed = uuid.UUID(hex=uid)
        assert (parsed.hex, parsed.version, parsed.variant) == (uid, 4, uuid.RFC_4122)
