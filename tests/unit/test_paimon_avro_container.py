"""The Avro object-container header a truncating replace reads and writes
(chalicelib.domain.paimon.avro_container), checked against fastavro (pypaimon's Avro library)."""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from chalicelib.domain.paimon.avro_container import AvroHeaderError, empty_container, read_header, writer_schema

SCHEMA = {"type": "record", "name": "record", "namespace": "org.apache.paimon.avro.generated",
          "fields": [{"name": "_FILE_NAME", "type": "string"}, {"name": "_FILE_SIZE", "type": "long"}]}


def _written(codec: str) -> bytes:
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(SCHEMA), [{"_FILE_NAME": "m-1", "_FILE_SIZE": 7}] * 50,
                    codec=codec)
    return buffer.getvalue()


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_the_writer_schema_comes_from_the_header_whatever_the_codec(codec: str) -> None:
    data = _written(codec)
    metadata, sync = read_header(data)
    assert metadata["avro.codec"] == codec.encode() and len(sync) == 16
    assert json.loads(writer_schema(data))["fields"][0]["name"] == "_FILE_NAME"


def test_an_empty_container_is_read_by_fastavro_as_no_records_of_that_schema() -> None:
    schema = writer_schema(_written("deflate"))
    empty = empty_container(schema, b"0123456789abcdef")
    reader = fastavro.reader(io.BytesIO(empty))
    assert list(reader) == []
    assert reader.writer_schema["fields"][1]["name"] == "_FILE_SIZE"
    assert reader.metadata["avro.codec"] == "null"
    assert writer_schema(empty) == schema


@pytest.mark.parametrize("data", [b"", b"PAR1", b"Obj\x01", b"Obj\x01\x04\x02a", b"Obj\x01\x00short"])
def test_what_is_not_a_header_is_refused(data: bytes) -> None:
    with pytest.raises(AvroHeaderError):
        writer_schema(data)
