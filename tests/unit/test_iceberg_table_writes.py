"""Iceberg UpdateTable's new metadata file (chalicelib.service.iceberg_tables): deleted again only
when the table write was refused before anything was stored; an error that may come after the
write landed leaves the file, which the committed table may point at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chalicelib.context import RequestContext
from chalicelib.domain.iceberg import metadata as md
from chalicelib.domain.iceberg.types import read_schema
from chalicelib.errors import ConcurrentModificationException
from chalicelib.service import iceberg_tables, tables
from chalicelib.store import warehouse

FIELDS = [{"Id": 1, "Name": "id", "Type": "long", "Required": True}]
ADDED = {"Id": 2, "Name": "name", "Type": "string", "Required": False}


def _iceberg_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException) -> Path:
    """A table whose first metadata file is under ``tmp_path``, read by a stubbed GetTable; its
    UpdateTable raises ``failure``. Returns the metadata directory."""
    location = (tmp_path / "t").as_uri()
    schema = read_schema({"Fields": FIELDS}, "Schema")
    first = md.new_table_metadata(location, schema, None, None, {}, "9f4b7a62-8f2c-4a4e-9a43-4c1f5a1c2d3e",
                                  1_700_000_000_000, "In")
    current = md.metadata_file(location, 0, "00000000-0000-0000-0000-000000000000")
    warehouse.put(current, md.encode(first))
    doc = {"Name": "t", "Parameters": {"table_type": "ICEBERG", "metadata_location": current}}

    def update(*args: Any, **kwargs: Any) -> None:
        raise failure

    monkeypatch.setattr(tables, "get_table", lambda *args, **kwargs: (doc, 0))
    monkeypatch.setattr(tables, "update_table", update)
    return tmp_path / "t" / "metadata"


def _update(tmp_path: Path) -> None:
    """UpdateTable adding a column (a new metadata file under the table's location)."""
    update = {"Updates": [{"Schema": {"Fields": [*FIELDS, ADDED]}, "Location": (tmp_path / "t").as_uri()}]}
    iceberg_tables.update_table(RequestContext("123456789012", "us-east-1"), "123456789012", "db", "t", None,
                                update)


def test_a_refused_update_deletes_its_new_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = _iceberg_table(tmp_path, monkeypatch, ConcurrentModificationException("lost the race"))
    with pytest.raises(ConcurrentModificationException):
        _update(tmp_path)
    assert len(list(directory.iterdir())) == 1


def test_a_failure_after_the_write_may_have_landed_keeps_the_file(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. the search postings or statistics after the table item moved to the new file
    directory = _iceberg_table(tmp_path, monkeypatch, RuntimeError("store went away"))
    with pytest.raises(RuntimeError):
        _update(tmp_path)
    assert len(list(directory.iterdir())) == 2
