"""Grants that merge, revokes that remove only what they name, column scopes that widen and
narrow, AWS's default settings (domain/permissions.py)."""

from __future__ import annotations

from chalicelib.domain import permissions as p

ANA = "arn:aws:iam::123456789012:user/ana"


def names(*columns: str) -> p.ColumnScope:
    return p.ColumnScope(names=frozenset(columns))


def all_but(*columns: str) -> p.ColumnScope:
    return p.ColumnScope(excluded=frozenset(columns))


def table(*permissions: str, grantable: tuple[str, ...] = ()) -> p.Grant:
    return p.Grant(ANA, p.TABLE, "db", "t", frozenset(permissions), frozenset(grantable))


def columns(scope: p.ColumnScope, grantable: bool = False) -> p.Grant:
    return p.Grant(ANA, p.COLUMNS, "db", "t", frozenset({p.SELECT}), frozenset({p.SELECT} if grantable else ()),
                   scope)


def test_a_second_grant_adds_to_the_first() -> None:
    held = p.merged(None, table(p.SELECT))
    held = p.merged(held, table(p.INSERT, grantable=(p.INSERT,)))
    assert held.permissions == {p.SELECT, p.INSERT} and held.grantable == {p.INSERT}


def test_a_revoke_removes_only_what_it_names() -> None:
    held = table(p.SELECT, p.INSERT, grantable=(p.INSERT,))
    left, changed = p.revoked(held, table(p.SELECT))
    assert changed and left is not None and left.permissions == {p.INSERT} and left.grantable == {p.INSERT}
    left, changed = p.revoked(held, table(grantable=(p.INSERT,)))
    assert changed and left is not None and left.permissions == held.permissions and not left.grantable
    assert p.revoked(held, table(p.DROP)) == (held, False)
    assert p.revoked(table(p.SELECT), table(p.SELECT)) == (None, True)


def test_all_is_a_permission_of_its_own() -> None:
    held = table(p.ALL)
    assert p.revoked(held, table(p.SELECT)) == (held, False)
    assert p.expand(p.TABLE, [p.ALL]) >= {p.SELECT, p.ALTER, p.DROP, p.INSERT, p.DELETE, p.DESCRIBE}


def test_revoking_a_permission_takes_its_grant_option_too() -> None:
    left, _ = p.revoked(table(p.SELECT, p.ALTER, grantable=(p.SELECT,)), table(p.SELECT))
    assert left is not None and left.permissions == {p.ALTER} and not left.grantable


def test_grant_options_must_be_among_the_permissions() -> None:
    assert p.grant_option_outside(p.TABLE, [p.SELECT], [p.ALTER]) == [p.ALTER]
    assert p.grant_option_outside(p.TABLE, [p.ALL], [p.SELECT, p.ALTER]) == []
    assert p.grant_option_outside(p.TABLE, [p.SELECT], [p.ALL]) != []


def test_column_scopes_union_and_difference() -> None:
    assert p.union_columns(names("a"), names("b")) == names("a", "b")
    assert p.union_columns(names("a"), all_but("a", "b")) == all_but("b")
    assert p.union_columns(all_but("a", "b"), all_but("b", "c")) == all_but("b")
    assert p.minus_columns(names("a", "b"), names("a")) == names("b")
    assert p.minus_columns(names("a"), names("a")) is None
    assert p.minus_columns(names("a", "b"), all_but("b")) == names("b")
    assert p.minus_columns(all_but("a"), names("b")) == all_but("a", "b")
    assert p.minus_columns(all_but("a"), all_but("a", "b")) == names("b")
    assert p.minus_columns(all_but("a"), all_but("a")) is None


def test_column_grants_widen_and_narrow() -> None:
    held = p.merged(columns(names("a")), columns(names("b"), grantable=True))
    assert held.columns == names("a", "b") and held.grantable == {p.SELECT}
    left, changed = p.revoked(held, columns(names("a")))
    assert changed and left is not None and left.columns == names("b") and left.grantable == {p.SELECT}
    left, changed = p.revoked(held, columns(names("a", "b")))
    assert changed and left is None
    assert p.revoked(held, columns(names("z"))) == (held, False)


def test_a_new_catalog_has_aws_defaults() -> None:
    settings = p.default_settings()
    assert settings["DataLakeAdmins"] == [] and settings["Parameters"]["CROSS_ACCOUNT_VERSION"] == "1"
    everyone_all = [{"Principal": {"DataLakePrincipalIdentifier": p.IAM_ALLOWED_PRINCIPALS}, "Permissions": [p.ALL]}]
    assert settings["CreateDatabaseDefaultPermissions"] == everyone_all == settings["CreateTableDefaultPermissions"]
    settings["DataLakeAdmins"].append({"DataLakePrincipalIdentifier": ANA})
    assert p.default_settings()["DataLakeAdmins"] == []  # a fresh copy each time
    assert p.principals_of([{"DataLakePrincipalIdentifier": ANA}]) == {ANA}


def test_the_longest_names_fit_in_a_grant_key() -> None:
    from chalicelib.store import grants as store
    database, table = "数" * 255, "表" * 255
    grant = p.Grant("arn:aws:iam::123456789012:user/" + "a" * 64, "TABLE", database, table, frozenset({"SELECT"}))
    key = store.key_of(grant)
    assert len(key.encode("utf-8")) <= store.MAX_KEY_BYTES
    assert key.startswith(store.database_prefix(database)) and store.database_prefix(database) != store.database_prefix(
        "数" * 254)
    # Short names stay readable.
    assert store.resource_key("TABLE", "sales", "orders") == "D\x01sales\x01T\x01orders"
