"""The Lake Formation permission model (domain/permissions.py): what each grant lets through."""

from __future__ import annotations

from chalicelib.domain import permissions as p


def grant(kind: str, *permissions: str, columns: p.ColumnScope | None = None) -> p.Grant:
    return p.Grant("arn:aws:iam::123456789012:user/ana", kind, "db", None if kind == p.DATABASE else "t",
                   frozenset(permissions), columns=columns)


def test_all_on_a_table_is_every_table_permission_and_nothing_of_its_database() -> None:
    held = [grant(p.TABLE, p.ALL)]
    assert p.allows(held, p.need("GetPartitions")) and p.allows(held, p.need("DeleteTable"))
    assert p.allows(held, p.need("BatchUpdatePartition"))
    assert not p.allows(held, p.need("UpdateDatabase")) and not p.allows(held, p.need("CreateTable"))
    assert p.allows(held, p.need("GetDatabase"))  # any permission on a table shows its database


def test_one_permission_lets_through_only_what_needs_it() -> None:
    held = [grant(p.TABLE, p.DESCRIBE)]
    assert p.allows(held, p.need("GetTable")) and p.allows(held, p.need("GetTableVersions"))
    assert not p.allows(held, p.need("GetPartitions"))
    assert not p.allows(held, p.need("UpdateTable"))
    assert not p.allows([grant(p.DATABASE, p.CREATE_TABLE)], p.need("CreateDatabase"))
    assert p.allows([grant(p.CATALOG, p.CREATE_DATABASE)], p.need("CreateDatabase"))


def test_column_grants_select_their_columns_and_show_the_table() -> None:
    named = grant(p.COLUMNS, p.SELECT, columns=p.ColumnScope(names=frozenset({"a", "c"})))
    excluded = grant(p.COLUMNS, p.SELECT, columns=p.ColumnScope(excluded=frozenset({"ssn"})))
    assert p.allows([named], p.need("GetTable")) and p.allows([named], p.need("GetPartitions"))
    assert not p.allows([named], p.need("UpdateTable"))
    assert p.visible_columns([named], ["a", "b", "c"]) == ["a", "c"]
    assert p.visible_columns([excluded], ["a", "ssn"]) == ["a"]
    assert p.visible_columns([named, grant(p.TABLE, p.SELECT)], ["a", "b"]) is None


def test_what_may_be_granted_where() -> None:
    assert p.invalid_permissions(p.DATABASE, [p.SELECT, p.ALTER]) == [p.SELECT]
    assert p.invalid_permissions(p.TABLE, [p.CREATE_TABLE]) == [p.CREATE_TABLE]
    assert p.invalid_permissions(p.COLUMNS, [p.SELECT]) == []


def test_read_only_needs_are_marked() -> None:
    assert p.need("GetTable").read_only and p.need("GetPartitions").read_only
    assert not p.need("UpdateTable").read_only and not p.need("CreateDatabase").read_only


def test_design_md_shows_the_actions_table_as_it_is() -> None:
    from pathlib import Path
    design = (Path(__file__).resolve().parents[2] / "docs" / "design.md").read_text(encoding="utf-8")
    for action, need in p.ACTIONS.items():
        wanted = "any permission" if need.any_of == p.ANY else " or ".join(sorted(need.any_of))
        assert f"| {action} | {need.level.lower()} | {wanted} |" in design, action
