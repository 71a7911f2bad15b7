"""Who may do what: Lake Formation's permissions, enforced in the service core (docs/design.md,
"Permissions").

Every service entry point that reads or changes a governed object calls :func:`require` with
its action (a name of ``domain.permissions.ACTIONS``) and the object's names, before it reads
or writes anything, so a refused call changes nothing and learns nothing, and every protocol
(Glue, Lake Formation, Paimon, and the next) gets the same answer without code of its own. The
caller is the request's: the protocol frameworks open :func:`acting_as` around each request.
Outside a request (cleanup jobs, admin commands) nothing is checked.

One check reads what bears on the object in ONE BatchGetItem (``store.grants.lookup``: the
caller's and IAM_ALLOWED_PRINCIPALS' grants on the table, its columns, the database's table
wildcard, the database and the catalog, with the data lake settings), kept for the rest of the
request: revokes take effect on the next request.

The rules, as AWS documents them: a catalog whose data lake settings were never put is a new
account under IAM alone (everything is allowed to the account's principals); data lake
administrators may do everything, read-only administrators what only reads; everyone else needs
a grant that :func:`domain.permissions.allows` the action, their own, their account's (a
cross-account grant) or, within the catalog's account, IAM_ALLOWED_PRINCIPALS'.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from chalicelib.context import RequestContext
from chalicelib.domain import permissions as model
from chalicelib.domain.permissions import Grant
from chalicelib.errors import AccessDeniedException, table_not_found
from chalicelib.store import grants as store
from chalicelib.store.catalog import ExtraKey, get_keys

INSUFFICIENT = "Insufficient Lake Formation permission(s)"


@dataclass
class Caller:
    """The request's caller as the checks see it, and what this request has read so far."""

    principal: str
    account_id: str
    held: dict[tuple[str, Optional[str], Optional[str]], store.Held] = field(default_factory=dict)
    on_database: dict[tuple[str, str], list[Grant]] = field(default_factory=dict)

    def principals(self, catalog_key: str) -> list[str]:
        """Whose grants count: the caller's; within the catalog's own account, the group every
        IAM principal of it belongs to; from another account, that account's (AWS's
        cross-account grants name the account)."""
        if catalog_account(catalog_key) == self.account_id:
            return [self.principal, model.IAM_ALLOWED_PRINCIPALS]
        return [self.principal, self.account_id]


_CALLER: contextvars.ContextVar[Optional[Caller]] = contextvars.ContextVar("lake_formation_caller", default=None)


@contextmanager
def acting_as(ctx: RequestContext) -> Iterator[Caller]:
    """Check everything done inside as done by ``ctx``'s caller (one request)."""
    caller = Caller(ctx.principal_arn, ctx.account_id)
    token = _CALLER.set(caller)
    try:
        yield caller
    finally:
        _CALLER.reset(token)


@contextmanager
def checked() -> Iterator[None]:
    """Inside, nothing is checked: the service core's own work for an action already allowed
    (a Paimon commit writing its partitions' Glue entries, which the committer's INSERT covers)."""
    token = _CALLER.set(None)
    try:
        yield
    finally:
        _CALLER.reset(token)


def current() -> Optional[Caller]:
    """The caller of the request being served; None outside a request."""
    return _CALLER.get()


def catalog_account(catalog_key: str) -> str:
    """The account id a catalog key names (``<region> SEP <catalog id>``)."""
    return catalog_key.rpartition("\x01")[2]


# ------------------------------------------------------------------------------ reading grants
def held(caller: Caller, catalog_key: str, database: Optional[str], table: Optional[str] = None) -> store.Held:
    """What bears on the object, read once per request and object."""
    key = (catalog_key, database, table)
    found = caller.held.get(key)
    if found is None:
        found = caller.held[key] = store.lookup(catalog_key, caller.principals(catalog_key), database, table)
    return found


def _superuser(caller: Caller, found: store.Held, need: model.Need) -> bool:
    """Whether the caller needs no grant: the catalog is under IAM alone (never configured), or
    the caller administers the data lake (read-only administrators: for reads)."""
    if not found.configured:
        return True
    if caller.principal in found.admins:
        return True
    return need.read_only and caller.principal in found.read_only_admins


# ------------------------------------------------------------------------------ checks
def permits(action: str, catalog_key: str, database: Optional[str] = None, table: Optional[str] = None) -> bool:
    """Whether the request's caller may do ``action`` on the object (True outside a request)."""
    caller = current()
    if caller is None:
        return True
    need = model.need(action)
    database, table = _names(need, database, table)
    found = held(caller, catalog_key, database, table)
    if _superuser(caller, found, need) or model.allows(found.grants, need):
        return True
    # Any permission on a table in a database shows the database (one Query, only when the
    # database's own grants did not).
    return need.level == model.DATABASE and need.any_of == model.ANY and database is not None \
        and model.allows(_on_database(catalog_key, database), need)


def require(action: str, catalog_key: str, database: Optional[str] = None, table: Optional[str] = None,
            exists: Optional[Callable[[], bool]] = None) -> None:
    """Refuse the request unless its caller may do ``action`` on the object, as AWS refuses it:
    AccessDeniedException, before anything is read or written (so whether the object exists
    stays unknown to a caller with no permission there). ``exists``: for a table, whether it
    exists; a caller who may see its database then learns that it does not (EntityNotFound),
    as on AWS."""
    if permits(action, catalog_key, database, table):
        return
    if exists is not None and database is not None and table is not None \
            and knows_database(catalog_key, database) and not exists():
        raise table_not_found(table.lower())
    raise denied(action, database, table)


def require_reading(action: str, catalog_key: str, database: Optional[str], table: Optional[str],
                    reads: Sequence[ExtraKey], exists: Optional[Callable[[], bool]] = None
                    ) -> list[dict[str, Any] | None]:
    """``require``, and the items of ``reads`` (wire form, None where missing) read in the same
    BatchGetItem as the grants when this request has not looked them up yet: one round trip for
    the check and the object's own items. Refused, the items read are dropped unseen, so the
    answer is ``require``'s, whether or not the object exists (``exists``: as there)."""
    caller = current()
    if caller is None:
        return get_keys(reads) if reads else []
    need = model.need(action)
    folded_database, folded_table = _names(need, database, table)
    key = (catalog_key, folded_database, folded_table)
    items: Optional[list[dict[str, Any] | None]] = None
    if key not in caller.held:
        caller.held[key], items = store.lookup_with(catalog_key, caller.principals(catalog_key), folded_database,
                                                    folded_table, reads)
    require(action, catalog_key, database, table, exists)
    if items is None:
        items = get_keys(reads) if reads else []
    return items


def denied(action: str, database: Optional[str], table: Optional[str] = None) -> AccessDeniedException:
    """AWS's refusal of ``action`` on the object, in its words."""
    need = model.need(action)
    if need.level == model.CATALOG:
        return AccessDeniedException(f"{INSUFFICIENT}: Required Create Database on Catalog")
    if model.CREATE_TABLE in need.any_of:
        return AccessDeniedException(f"{INSUFFICIENT}: Required Create Table on {_fold(database)}")
    if need.level == model.TABLE and table is not None:
        return AccessDeniedException(f"{INSUFFICIENT} on {_fold(table)}")
    return AccessDeniedException(f"{INSUFFICIENT} on {_fold(database)} (Database name: {_fold(database)})")


def knows_database(catalog_key: str, database: str) -> bool:
    """Whether the caller may learn what a database holds: a permission on the database itself
    (permissions on some of its tables do not tell it which others exist), or no governance
    there at all. A table such a caller may not see is then not found rather than denied."""
    caller = current()
    if caller is None:
        return True
    need = model.need("GetDatabase")
    found = held(caller, catalog_key, database.lower())
    return _superuser(caller, found, need) or model.allows(found.grants, need)


def _names(need: model.Need, database: Optional[str], table: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    if need.level == model.CATALOG:
        return None, None
    if need.level == model.DATABASE:
        return _fold(database), None
    return _fold(database), _fold(table)


def _fold(name: Optional[str]) -> Optional[str]:
    return None if name is None else name.lower()


# ------------------------------------------------------------------------------ listings
# (catalog key, database, principals) -> (version of the database's grants, the grants of those
# principals there), as this process last read them: reused while the request's lookup finds the
# same version (every change to the database's grants writes a new one in its own transaction),
# so a listing costs no Query of the grants while they stay as they were.
_KNOWN: dict[tuple[str, str, tuple[str, ...]], tuple[bytes, list[Grant]]] = {}
_MAX_KNOWN = 1024


def _on_database(catalog_key: str, database: str) -> list[Grant]:
    caller = current()
    if caller is None:
        return []
    key = (catalog_key, database)
    found = caller.on_database.get(key)
    if found is None:
        found = caller.on_database[key] = _read_on_database(caller, catalog_key, database)
    return found


def _read_on_database(caller: Caller, catalog_key: str, database: str) -> list[Grant]:
    principals = tuple(caller.principals(catalog_key))
    version = held(caller, catalog_key, database).version
    known_key = (catalog_key, database, principals)
    known = _KNOWN.get(known_key)
    if version is not None and known is not None and known[0] == version:
        return known[1]
    grants = store.on_database(catalog_key, principals, database)
    if version is not None:
        if len(_KNOWN) >= _MAX_KNOWN:
            _KNOWN.clear()  # a cache of reads that are cheap to redo
        _KNOWN[known_key] = (version, grants)
    return grants


def _settings_held(caller: Caller, catalog_key: str) -> store.Held:
    """A lookup of this request in the catalog (each holds the settings): none read anew when
    the request's check has read one already."""
    for (key, _, _), found in caller.held.items():
        if key == catalog_key:
            return found
    return held(caller, catalog_key, None)


def _unrestricted(caller: Optional[Caller], catalog_key: str, need: model.Need) -> bool:
    return caller is None or _superuser(caller, _settings_held(caller, catalog_key), need)


# (catalog key, principals) -> (version of every database's grants, the databases those
# principals may see), kept as _KNOWN is.
_VISIBLE: dict[tuple[str, tuple[str, ...]], tuple[bytes, frozenset[str]]] = {}


def database_filter(catalog_key: str) -> Callable[[str], bool]:
    """A predicate on database names: which the caller may see in a listing (GetDatabases,
    Paimon's list): those it holds any permission on or in. No extra read for an administrator
    or a catalog under IAM alone, nor while this process knows the grants at their current
    version; else one Query of the catalog's database grants."""
    caller = current()
    if caller is None or _unrestricted(caller, catalog_key, model.need("GetDatabases")):
        return lambda name: True
    visible = _visible_databases(caller, catalog_key)
    return lambda name: name.lower() in visible


def _visible_databases(caller: Caller, catalog_key: str) -> frozenset[str]:
    principals = tuple(caller.principals(catalog_key))
    version = _settings_held(caller, catalog_key).databases_version
    known = _VISIBLE.get((catalog_key, principals))
    if version is not None and known is not None and known[0] == version:
        return known[1]
    need = model.need("GetDatabases")
    by_database: dict[str, list[Grant]] = {}
    for grant in store.on_databases(catalog_key, principals):
        by_database.setdefault(grant.database or "", []).append(grant)
    visible = frozenset(name for name, grants in by_database.items() if model.allows(grants, need))
    if version is not None:
        if len(_VISIBLE) >= _MAX_KNOWN:
            _VISIBLE.clear()
        _VISIBLE[(catalog_key, principals)] = (version, visible)
    return visible


def table_filter(catalog_key: str, database: str):
    """A predicate on table names of one database: which the caller may see in a listing
    (GetTables, SearchTables, Paimon's lists): ONE Query of the caller's grants in the database."""
    caller = current()
    if _unrestricted(caller, catalog_key, model.need("GetTables")):
        return lambda name: True
    grants = _on_database(catalog_key, database.lower())
    need = model.need("GetTables")

    def visible(name: str) -> bool:
        folded = name.lower()
        bearing = [grant for grant in grants if grant.table in (None, folded) and grant.kind != model.DATABASE]
        return model.allows(bearing, need)
    return visible


def visible_columns(catalog_key: str, database: str, table: str, columns: Iterable[str]) -> Optional[list[str]]:
    """The columns of a table the caller may see: None for all (any table-level permission, an
    administrator, no governance), else those its column grants cover."""
    caller = current()
    if caller is None:
        return None
    need = model.need("GetTable")
    found = held(caller, catalog_key, database.lower(), table.lower())
    if _superuser(caller, found, need):
        return None
    bearing = [grant for grant in found.grants if grant.kind in (model.TABLE, model.COLUMNS)]
    return model.visible_columns(bearing, columns)


# ------------------------------------------------------------------------------ new objects
def _settings(catalog_key: str) -> tuple[dict, bool]:
    """The data lake settings and whether they were ever put (read by this request's check)."""
    caller = current()
    if caller is not None:
        found = _settings_held(caller, catalog_key)
        return found.settings, found.configured
    settings, stored = store.get_settings(catalog_key)
    return settings, stored is not None


def default_table_permissions(catalog_key: str) -> list[dict]:
    """What a new database's CreateTableDefaultPermissions are when its DatabaseInput names none:
    the data lake settings' (IAM_ALLOWED_PRINCIPALS: ALL in a new account)."""
    return list(_settings(catalog_key)[0].get("CreateTableDefaultPermissions") or [])


def _defaults(entries: Iterable[dict], kind: str, database: str, table: Optional[str]) -> list[Grant]:
    grants = []
    for entry in entries:
        principal = (entry.get("Principal") or {}).get("DataLakePrincipalIdentifier")
        permissions = frozenset(entry.get("Permissions") or ()) & model.VALID[kind]
        if principal and permissions:
            grants.append(Grant(principal, kind, database, table, permissions))
    return grants


def _with_creator(catalog_key: str, grants: list[Grant], kind: str, database: str,
                  table: Optional[str], creator: Optional[str] = None) -> list[Grant]:
    """AWS's implicit permissions of a creator (ALL, with grant option), written as a grant
    when the defaults do not leave the object to IAM (IAM_ALLOWED_PRINCIPALS: ALL).
    ``creator``: who created it (default: the request's caller)."""
    caller = current()
    creator = creator or (caller.principal if caller is not None else None)
    under_iam = any(g.principal == model.IAM_ALLOWED_PRINCIPALS and model.ALL in g.permissions for g in grants)
    if creator is None or under_iam or not _settings(catalog_key)[1]:
        return grants
    others = [g for g in grants if g.principal != creator]
    return others + [Grant(creator, kind, database, table, frozenset({model.ALL}), frozenset({model.ALL}))]


def new_database_grants(catalog_key: str, database: str) -> list[Grant]:
    """The grants a new database is created with: the settings' CreateDatabaseDefaultPermissions
    (and its creator's)."""
    settings, _ = _settings(catalog_key)
    grants = _defaults(settings.get("CreateDatabaseDefaultPermissions") or (), model.DATABASE, database.lower(), None)
    return _with_creator(catalog_key, grants, model.DATABASE, database.lower(), None)


def new_table_grants(catalog_key: str, database_doc: dict, database: str, table: str,
                     creator: Optional[str] = None) -> list[Grant]:
    """The grants a new table is created with: its database's CreateTableDefaultPermissions
    (the settings' for a database stored without them), and its creator's (``creator``: for
    a table a transaction's commit creates, the principal that created it in the transaction)."""
    entries = database_doc.get("CreateTableDefaultPermissions")
    if entries is None:
        entries = default_table_permissions(catalog_key)
    grants = _defaults(entries, model.TABLE, database.lower(), table.lower())
    return _with_creator(catalog_key, grants, model.TABLE, database.lower(), table.lower(), creator)


def grant_items(catalog_key: str, grants: Iterable[Grant], by: Optional[str] = None) -> list:
    """The store items of new grants, for the creating write's transaction (``by``: who made
    them; default: the request's caller)."""
    caller = current()
    by = by or (caller.principal if caller is not None else "catalog")
    return store.grant_items(catalog_key, list(grants), by)


def forget_database(catalog_key: str, database: str) -> None:
    """Drop a deleted database's grants (and its tables'), as AWS does."""
    store.purge_database(catalog_key, database.lower())


def forget_table(catalog_key: str, database: str, table: str) -> None:
    """Drop a deleted table's grants (its own and its columns')."""
    store.purge_table(catalog_key, database.lower(), table.lower())


# ------------------------------------------------------------------------------ data locations
_WRITE = model.Need(model.DATA_LOCATION, frozenset({model.DATA_LOCATION_ACCESS}))


def _s3_arn(location: str) -> Optional[str]:
    """The S3 ARN of an ``s3://`` (``s3a://``, ``s3n://``) location; None for any other scheme."""
    scheme, sep, rest = location.partition("://")
    if not sep or scheme.lower() not in ("s3", "s3a", "s3n") or not rest:
        return None
    return f"arn:aws:s3:::{rest}"


def _under(arn: str, root: str) -> bool:
    return arn == root or arn.startswith(root.rstrip("/") + "/")


def require_location(catalog_key: str, location: Optional[str]) -> None:
    """Refuse pointing a database or table at a location registered with Lake Formation unless
    the caller holds DATA_LOCATION_ACCESS there (at or above it), as AWS does; a location that
    is not registered needs nothing. Reads the registered locations (one Query) and, for a
    registered one, the location grants (one Query), only in a configured catalog and for a
    caller who is not an administrator."""
    caller = current()
    arn = _s3_arn(location or "")
    if caller is None or arn is None:
        return
    found = _settings_held(caller, catalog_key)
    if _superuser(caller, found, _WRITE):
        return
    if not any(_under(arn, registered.arn) for registered in store.list_locations(catalog_key)):
        return
    principals = set(caller.principals(catalog_key))
    for stored in store.listing(catalog_key, store.kind_prefix(model.DATA_LOCATION)):
        grant = stored.grant
        if grant.principal in principals and grant.location and _under(arn, grant.location) \
                and model.DATA_LOCATION_ACCESS in grant.effective():
            return
    raise AccessDeniedException(f"{INSUFFICIENT}: Required Data Location Access on {location}")


def moving_table(catalog_key: str, database: str, table: str, new_database: str,
                 new_table: str) -> tuple[list, list, bool]:
    """A rename's grant moves, for its own transaction: (puts, deletes, whether they all fit;
    if not, :func:`move_table_after` moves them once the rename landed)."""
    moves = store.moved_table(catalog_key, database.lower(), table.lower(), new_database.lower(), new_table.lower())
    if moves is None:
        return [], [], False
    return moves[0], moves[1], True


def move_table_after(catalog_key: str, database: str, table: str, new_database: str, new_table: str) -> None:
    """Move a renamed table's grants one by one (when too many to ride in its transaction)."""
    database, table, new_database, new_table = (n.lower() for n in (database, table, new_database, new_table))
    for kind in (model.TABLE, model.COLUMNS):
        for stored in list(store.listing(catalog_key, store.grants_prefix(kind, database, table))):
            moved = store.renamed(stored.grant, new_database, new_table)
            store.put(catalog_key, moved, stored.updated_by, store.get(catalog_key, moved))
            store.delete(catalog_key, stored)
