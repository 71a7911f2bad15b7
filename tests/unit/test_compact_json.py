"""compact_json: orjson's speed with the text ``json.dumps(separators=(",", ":"), ensure_ascii=False)``
writes, which every stored document has been written in."""

from __future__ import annotations

import json
import math

import pytest

from chalicelib import json_text
from chalicelib.store.documents import compact_json


def stdlib(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def test_every_character_is_written_as_json_writes_it() -> None:
    # All of Unicode but the surrogates (which are not text), one string per 4,096 code points.
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(points), 4096):
        text = "".join(map(chr, points[start:start + 4096]))
        assert compact_json({"k" + text[:3]: [text]}) == stdlib({"k" + text[:3]: [text]})


def test_documents_as_the_service_stores_them() -> None:
    doc = {"Values": ["US", "2024"], "CreationTime": 1764191234.123, "StorageDescriptor": {
        "Columns": [{"Name": "a", "Type": "int", "Parameters": {}}], "Compressed": False,
        "NumberOfBuckets": -1, "SkewedInfo": {"SkewedColumnNames": []}}, "Parameters": {"big": "9" * 400},
        "nested": [[[{}]]], "int64": [2**63 - 1, -2**63, 2**64 - 1], "zero": [0, -0.0, 0.0]}
    assert compact_json(doc) == stdlib(doc)


@pytest.mark.parametrize("obj", [
    {"v": float("nan")}, {"v": math.inf}, [-math.inf], {"v": None}, [2**64], [-(2**63) - 1], [10**400],
])
def test_what_orjson_writes_otherwise_or_refuses_goes_to_json(obj: object) -> None:
    assert compact_json(obj) == stdlib(obj)


def test_a_lone_surrogate_fails_as_before() -> None:
    with pytest.raises(UnicodeEncodeError):
        compact_json({"v": "\ud800"})


def test_floats_read_back_as_the_same_number() -> None:
    floats = [1e-7, 3.844329900045478e-05, 1e16, 1e22, 5e-324, 1.7976931348623157e308, 0.1, 1764191234.5]
    assert json.loads(compact_json(floats)) == floats


def test_text_written_before_is_spliced_in_as_it_is() -> None:
    metadata = {"format-version": 2, "snapshots": [{"snapshot-id": n, "summary": {"x": None}} for n in range(3)]}
    text = json_text.compact_lenient(metadata)
    answer = {"metadata-location": "file:///w/t/metadata/00001-x.metadata.json", "metadata": metadata}
    spliced = json_text.Spliced({"metadata-location": answer["metadata-location"]}, "metadata", text, metadata)
    assert json_text.compact_lenient(spliced) == json_text.compact_lenient(answer)
    # A member keeps its place.
    assert json_text.compact_lenient(json_text.Spliced(answer, "metadata-location", b'"elsewhere"', "elsewhere")) == \
        json_text.compact_lenient({**answer, "metadata-location": "elsewhere"})
    # What orjson refuses in the rest (an integer past 64 bits) goes to json, the value encoded.
    big = {"big": 2 ** 70}
    assert json_text.compact_lenient(json_text.Spliced(big, "metadata", text, metadata)) == \
        json_text.compact_lenient({**big, "metadata": metadata})
