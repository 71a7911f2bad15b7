"""The crawler's grouping rule (pipelines/crawl/discover.py): when the folders at a level are
partitions of one table, with AWS's documented numbers (a partition threshold higher than 70%,
at most five clusters of schemas)."""

from __future__ import annotations

import pytest

from pipelines.crawl.classify import Classified
from pipelines.crawl.discover import Folder, compatible, plan_tables


def folder(name: str, *columns: str, kind: str = "parquet") -> Folder:
    return Folder(rel=("t", name), schema=Classified(kind, [{"Name": c, "Type": "string"} for c in columns]))


def test_a_two_column_schema_gaining_a_column_is_not_similar() -> None:
    """2 of 3 names shared is 67%, not higher than 70%: two folders, two schemas, two tables."""
    folders = [folder("a", "x", "y"), folder("b", "x", "y", "z")]
    assert not compatible(folders, ("t",))
    plans, _ = plan_tables(folders, "s3://b/", "b")
    assert sorted(p.name for p in plans) == ["a", "b"]


def test_three_of_four_names_shared_is_similar() -> None:
    assert compatible([folder("a", "w", "x", "y"), folder("b", "w", "x", "y", "z")], ("t",))


def test_exactly_70_percent_is_not_higher_than_70() -> None:
    seven = [f"c{i}" for i in range(7)]
    ten = seven + ["d0", "d1", "d2"]
    assert not compatible([folder("a", *seven), folder("b", *ten)], ("t",))


def test_the_majority_of_folders_decides() -> None:
    """Eight folders of one schema and two odd ones: 80% of the folders agree, one table."""
    folders = [folder(f"p{i}", "x", "y") for i in range(8)] + [folder("odd1", "q"), folder("odd2", "r", "s")]
    assert compatible(folders, ("t",))
    [plan] = plan_tables(folders, "s3://b/", "b")[0]
    assert len(plan.partitions) == 10
    assert {c["Name"] for c in plan.columns} == {"x", "y", "q", "r", "s"}


@pytest.mark.parametrize("agreeing, odd, one_table", [(7, 3, False), (8, 2, True), (2, 1, False), (3, 1, True)])
def test_the_largest_cluster_must_hold_more_than_70_percent(agreeing: int, odd: int, one_table: bool) -> None:
    folders = [folder(f"p{i}", "x", "y") for i in range(agreeing)] + [folder(f"o{i}", f"u{i}") for i in range(odd)]
    assert compatible(folders, ("t",)) is one_table


def test_more_than_five_clusters_is_never_one_table() -> None:
    folders = [folder(f"p{i}", "x", "y") for i in range(30)] + [folder(f"o{i}", f"u{i}") for i in range(5)]
    assert 30 / 35 > 0.7
    assert not compatible(folders, ("t",))  # six clusters


def test_formats_must_agree_whatever_the_schemas() -> None:
    assert not compatible([folder("a", "x"), folder("b", "x", kind="json")], ("t",))
    assert compatible([folder("a", "x"), folder("b", "y")], ("t",), combine=True)
