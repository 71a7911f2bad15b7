"""The grants store API the enforcement reads, checked on the session's DynamoDB Local in a child
process (the store reads its endpoint and table prefix at import): what each call returns and
how many DynamoDB requests it costs. Prints a JSON result."""

from __future__ import annotations

import json
import sys
import uuid

from chalicelib import metrics
from chalicelib.domain import permissions as model
from chalicelib.domain.permissions import ColumnScope, Grant
from chalicelib.store import grants


def _put(catalog: str, grant: Grant) -> None:
    assert grants.put(catalog, grant, "arn:aws:iam::123456789012:user/admin", grants.get(catalog, grant))


def main() -> dict:
    catalog = f"us-east-1\x01{uuid.uuid4().int % 10**12:012d}"
    alice, bob = "arn:aws:iam::123456789012:user/alice", "arn:aws:iam::123456789012:role/bob"
    everyone = model.IAM_ALLOWED_PRINCIPALS
    planted = [
        Grant(alice, model.CATALOG, None, None, frozenset({model.CREATE_DATABASE})),
        Grant(alice, model.DATABASE, "sales", None, frozenset({model.DESCRIBE})),
        Grant(alice, model.TABLE, "sales", None, frozenset({model.SELECT})),  # the table wildcard
        Grant(alice, model.TABLE, "sales", "orders", frozenset({model.ALTER}), frozenset({model.ALTER})),
        Grant(alice, model.COLUMNS, "sales", "orders", frozenset({model.SELECT}),
              columns=ColumnScope(names=frozenset({"id"}))),
        Grant(alice, model.TABLE, "sales", "other", frozenset({model.DROP})),  # another table: not looked up
        Grant(alice, model.TABLE, "salesx", "orders", frozenset({model.DROP})),  # another database
        Grant(bob, model.TABLE, "sales", "orders", frozenset({model.INSERT})),  # another principal
        Grant(everyone, model.TABLE, "sales", "orders", frozenset({model.ALL})),
    ]
    for grant in planted:
        _put(catalog, grant)
    result: dict = {}

    metrics.reset()
    held = grants.lookup(catalog, [alice, everyone], "sales", "orders")
    result["lookup_requests"] = metrics.requests()
    result["lookup"] = sorted(f"{g.principal.rsplit('/', 1)[-1]}:{g.kind}:{g.table}:{','.join(sorted(g.permissions))}"
                              for g in held.grants)
    result["lookup_configured"] = held.configured
    result["lookup_admins"] = sorted(held.admins)

    assert grants.put_settings(catalog, {"DataLakeAdmins": [{"DataLakePrincipalIdentifier": alice}]}, None)
    metrics.reset()
    held = grants.lookup(catalog, [alice], "sales")
    result["database_lookup_requests"] = metrics.requests()
    result["database_lookup"] = sorted(f"{g.kind}:{g.table}" for g in held.grants)
    result["settings_admins"] = sorted(held.admins)
    result["settings_defaults_kept"] = held.settings["CreateTableDefaultPermissions"]

    metrics.reset()
    found = grants.on_database(catalog, [alice, bob], "sales")
    result["on_database_requests"] = metrics.requests()
    result["on_database"] = sorted(f"{g.principal.rsplit('/', 1)[-1]}:{g.kind}:{g.table}" for g in found)

    stale = grants.get(catalog, planted[3])
    assert stale is not None
    _put(catalog, model.merged(stale.grant, Grant(alice, model.TABLE, "sales", "orders", frozenset({model.DROP}))))
    result["stale_put_lands"] = grants.put(catalog, stale.grant, "x", stale)
    result["stale_delete_lands"] = grants.delete(catalog, stale)
    result["by_principal"] = sorted(g.grant.kind for g in grants.by_principal(catalog, bob))
    result["purged"] = grants.purge_database(catalog, "sales")
    result["left"] = sorted(f"{g.grant.kind}:{g.grant.database}" for g in grants.listing(catalog))
    return result


if __name__ == "__main__":
    json.dump(main(), sys.stdout)
    sys.exit(0)
