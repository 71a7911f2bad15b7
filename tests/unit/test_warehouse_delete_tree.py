"""warehouse.delete_tree on a local directory: within a deadline it stops part way and answers
False, keeping the ``last`` file (Paimon's schema-0, which keeps the path taken) until every other
one is gone; called again it finishes. The S3 backend: tests/integration/test_paimon_s3_warehouse.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from chalicelib import clock
from chalicelib.store import warehouse


def _table_directory(root: Path, files: int) -> tuple[str, str]:
    """A table directory of ``files`` data files and a schema-0: (its URI, schema-0's URI)."""
    table = root / "db.db" / "t"
    (table / "data" / "bucket-0").mkdir(parents=True)
    for n in range(files):
        (table / "data" / "bucket-0" / f"f-{n}").write_bytes(b"x")
    (table / "schema").mkdir()
    (table / "schema" / "schema-0").write_text("{}")
    return table.as_uri(), warehouse.schema_file(table.as_uri(), 0)


def test_a_deadline_stops_the_removal_part_way_and_the_last_file_goes_last(tmp_path: Path) -> None:
    uri, schema_0 = _table_directory(tmp_path, 450)
    data = tmp_path / "db.db" / "t" / "data" / "bucket-0"
    assert warehouse.delete_tree(uri, clock.monotonic(), last=schema_0) is False
    left = len(list(data.iterdir()))
    assert 0 < left <= 250  # stopped at a check of the clock, after 200 files
    assert warehouse.exists(schema_0)
    assert warehouse.delete_tree(uri, clock.monotonic() + 60, last=schema_0) is True
    assert not (tmp_path / "db.db" / "t").exists()
    assert (tmp_path / "db.db").is_dir()  # above the table: not the removal's
    assert warehouse.delete_tree(uri, clock.monotonic(), last=schema_0) is True  # absent: done


def test_a_file_written_after_the_last_one_went_is_not_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only empty directories are removed once ``last`` is gone: a table created at the path the
    moment it went keeps what it wrote."""
    uri, schema_0 = _table_directory(tmp_path, 3)
    table = tmp_path / "db.db" / "t"
    real_unlink = Path.unlink

    def unlink_then_a_new_table_writes(self: Path, missing_ok: bool = False) -> None:
        real_unlink(self, missing_ok=missing_ok)
        if self.name == "schema-0":
            (table / "schema" / "schema-0.new").write_text("{}")

    monkeypatch.setattr(Path, "unlink", unlink_then_a_new_table_writes)
    assert warehouse.delete_tree(uri, clock.monotonic() + 60, last=schema_0) is True
    assert (table / "schema" / "schema-0.new").is_file()
    assert not (table / "data").exists()


def test_without_a_deadline_or_last_file_the_whole_tree_goes(tmp_path: Path) -> None:
    uri, _ = _table_directory(tmp_path, 5)
    assert warehouse.delete_tree(uri) is True
    assert not (tmp_path / "db.db" / "t").exists()


def test_delete_many_removes_the_files_named_and_ignores_absent_ones(tmp_path: Path) -> None:
    uri, schema_0 = _table_directory(tmp_path, 3)
    data = [f"{uri}/data/bucket-0/f-{n}" for n in range(3)]
    warehouse.delete_many([*data[1:], f"{uri}/data/bucket-0/absent"])
    assert warehouse.list_prefix(uri) == sorted([data[0], schema_0])
