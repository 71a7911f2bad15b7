"""The warehouse's sandbox (``store.warehouse._place``) on local paths: what lies inside the roots
the server owns, after normalising, and what is refused before any file is touched. The attacks
through the running service are in tests/integration/test_warehouse_sandbox.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from chalicelib.errors import AccessDeniedException, InvalidInputException
from chalicelib.store import warehouse


@pytest.fixture
def roots(tmp_path: Path, configure: Callable[..., Any]) -> tuple[Path, Path, Path]:
    """(warehouse, allowed, outside) directories; the outside one holds a file."""
    wh, allowed, outside = tmp_path / "wh", tmp_path / "allowed", tmp_path / "outside"
    for directory in (wh, allowed, outside):
        directory.mkdir()
    (outside / "precious").write_text("keep")
    configure(paimon_warehouse=wh.as_uri(), allowed_locations=f" {allowed.as_uri()}/ , ", lambda_function_name=None)
    return wh, allowed, outside


def test_inside_the_roots_files_are_written_and_removed(roots: tuple[Path, Path, Path]) -> None:
    wh, allowed, _ = roots
    for root in (wh, allowed):
        uri = f"{root.as_uri()}/db.db/t/schema/schema-0"
        warehouse.put(uri, "{}")
        assert warehouse.get(uri) == b"{}" and warehouse.exists(uri)
        assert warehouse.list_prefix(f"{root.as_uri()}/db.db/t") == [uri]
        assert warehouse.delete_tree(f"{root.as_uri()}/db.db/t")
        assert not (root / "db.db" / "t").exists()


@pytest.mark.parametrize("make_uri", [
    lambda o: o.as_uri(),
    lambda o: "FILE://" + str(o / "x"),
    lambda o: f"file://localhost{o}/x",
    lambda o: f"file://{o.parent}/allowedness/x",  # a prefix of a root's name is not inside it
])
def test_outside_the_roots_is_access_denied(roots: tuple[Path, Path, Path], make_uri) -> None:
    _, _, outside = roots
    uri = make_uri(outside)
    for call in (lambda: warehouse.put(uri + "/f", "x"), lambda: warehouse.get(uri + "/precious"),
                 lambda: warehouse.delete_tree(uri), lambda: warehouse.delete(uri + "/precious"),
                 lambda: warehouse.list_prefix(uri), lambda: warehouse.delete_many([uri + "/precious"])):
        with pytest.raises(warehouse.OutsideRoots):
            call()
    assert issubclass(warehouse.OutsideRoots, AccessDeniedException)
    assert (outside / "precious").read_text() == "keep"


@pytest.mark.parametrize("tail", ["/../outside/precious", "/%2e%2e/outside/precious", "/..%2Foutside/precious",
                                  "/a//b", "/./x", "/a/%2E/b"])
def test_dot_segments_and_percent_tricks_are_invalid_input(roots: tuple[Path, Path, Path], tail: str) -> None:
    wh, _, outside = roots
    with pytest.raises(warehouse.WarehouseError) as refused:
        warehouse.put(wh.as_uri() + tail, "x")
    assert isinstance(refused.value, InvalidInputException)
    assert (outside / "precious").read_text() == "keep"


def test_a_host_in_a_file_uri_and_other_schemes_are_refused(roots: tuple[Path, Path, Path]) -> None:
    wh, _, _ = roots
    for uri in (f"file://otherhost{wh}/x", f"file:{wh}/x", "http://example.com/x", "s3:bucket/x", "s3:///x"):
        with pytest.raises(warehouse.WarehouseError):
            warehouse.put(uri, "x")


def test_a_symlink_out_of_a_root_is_followed_and_refused(roots: tuple[Path, Path, Path]) -> None:
    wh, _, outside = roots
    os.symlink(outside, wh / "link")
    with pytest.raises(warehouse.OutsideRoots):
        warehouse.put(f"{wh.as_uri()}/link/precious", "overwritten")
    with pytest.raises(warehouse.OutsideRoots):
        warehouse.delete_tree(f"{wh.as_uri()}/link")
    assert (outside / "precious").read_text() == "keep"


def test_caller_locations_stay_out_of_the_managed_directories(roots: tuple[Path, Path, Path]) -> None:
    wh, allowed, outside = roots
    warehouse.check_caller_location(f"{wh.as_uri()}/iceberg/t")
    warehouse.check_caller_location(f"{allowed.as_uri()}/t")
    for uri in (wh.as_uri(), f"{wh.as_uri()}/", f"{wh.as_uri()}/db.db", f"{wh.as_uri()}/db.db/t/x"):
        with pytest.raises(warehouse.OutsideRoots, match="managed tables"):
            warehouse.check_caller_location(uri)
    with pytest.raises(warehouse.OutsideRoots):
        warehouse.check_caller_location(outside.as_uri())
    assert warehouse.in_managed_area(f"{wh.as_uri()}/db.db/t")
    assert not warehouse.in_managed_area(f"{allowed.as_uri()}/db.db/t")


def test_names_become_safe_directory_names() -> None:
    assert warehouse.path_segment("orders_2026", "u1") == "orders_2026"
    assert warehouse.path_segment("a.b-c", "u1") == "a.b-c"
    for name in ("..", ".", "../x", "a/b", "a%2Fb", "a#b", "é", ".hidden", "a b"):
        segment = warehouse.path_segment(name, "u1")
        assert segment.endswith("-u1") and "/" not in segment and "%" not in segment
        assert not segment.startswith(".")
    with pytest.raises(ValueError):
        warehouse.path_segment("../x", None)
    path = warehouse.table_path("../../db", "../t", "file:///wh", database_uid="d1", table_uid="t1")
    assert path == "file:///wh/______db-d1.db/___t-t1"


def test_on_lambda_there_is_no_default_warehouse(configure: Callable[..., Any], tmp_path: Path) -> None:
    configure(lambda_function_name="glue-catalog", paimon_warehouse=None, allowed_locations=tmp_path.as_uri())
    with pytest.raises(warehouse.NoWarehouse, match="PAIMON_WAREHOUSE"):
        warehouse.warehouse_root()
    with pytest.raises(warehouse.OutsideRoots):
        warehouse.put(f"{warehouse.DEFAULT_WAREHOUSE}/db.db/t/schema/schema-0", "x")
    warehouse.put(f"{tmp_path.as_uri()}/ice/metadata/m.json", "{}")  # the allowed prefixes still serve
    configure(paimon_warehouse="s3://glue-catalog-paimon-x/wh")
    assert warehouse.warehouse_root() == "s3://glue-catalog-paimon-x/wh"
