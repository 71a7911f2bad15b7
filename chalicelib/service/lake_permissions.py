"""Lake Formation's permission operations: data lake settings, grants and revokes, listings of
grants (docs/design.md, "Permissions").

Who may: the data lake administrators (``DataLakeAdmins``) grant and revoke anything and read
the settings, read-only administrators read; a principal holding a permission with grant option
on a resource may grant and revoke that permission there; the service's identities administrator
(in the open mode: the account's root, the only caller there is) acts as the account's IAM
administrator: it reads and puts the settings, which is how a data lake administrator is made.
Everyone else is refused as AWS refuses them.

The grants' storage is ``store.grants``; the model (what may be granted where, ALL, column
scopes, merging and revoking) is ``domain.permissions``. Enforcement of the grants on catalog
operations reads them with ``store.grants.lookup`` (one BatchGetItem).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Optional

from chalicelib.attempts import Policy, attempts
from chalicelib.context import RequestContext
from chalicelib.domain import arns
from chalicelib.domain import permissions as model
from chalicelib.domain.permissions import ColumnScope, Grant
from chalicelib.errors import (AccessDeniedException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, ServiceError)
from chalicelib.service import lookups, tables
from chalicelib.store import grants as store
from chalicelib.store import identities

# AWS's words (docs/compatibility_notes.toml says where they come from).
NOT_AUTHORIZED = "Resource does not exist or requester is not authorized to access requested permissions."
INVALID_MODIFICATION = "Permissions modification is invalid."
NOTHING_REVOKED = "No permissions revoked. Grantee has no permissions and no grantable permissions on resource."
TABLE_NAME_AND_WILDCARD_EMPTY = "Table name and table wildcard cannot both be empty."
TABLE_NAME_AND_WILDCARD_BOTH = "Table name and table wildcard cannot both be present."

_RETRY = Policy(attempts=5)
# Resource kinds of botocore's model that this service does not grant on (yet).
_UNSUPPORTED = ("AnyResource", "DataCellsFilter", "LFTag", "LFTagPolicy", "LFTagExpression", "RLSPolicy",
                "UserDefinedFunction")
_KINDS = ("Catalog", "Database", "Table", "TableWithColumns", "DataLocation")


# ------------------------------------------------------------------------------ who is calling
def caller(ctx: RequestContext) -> str:
    """The caller as a data lake principal: its IAM ARN (the account root in the open mode)."""
    return ctx.principal_arn


def is_iam_admin(ctx: RequestContext) -> bool:
    """Whether the caller acts as the account's IAM administrator: the service's identities
    administrator, or anyone in the open mode (unauthenticated, the caller is the account root)."""
    if not ctx.caller_arn:
        return True
    principal = identities.get_principal(ctx.caller_arn)
    return principal is not None and principal.admin


def _iam_denied(ctx: RequestContext, catalog_id: str) -> AccessDeniedException:
    """IAM's refusal, as AWS words it for a Lake Formation action the caller may not call."""
    return AccessDeniedException(
        f"User: {caller(ctx)} is not authorized to perform: lakeformation:{ctx.operation} on resource: "
        f"arn:aws:lakeformation:{ctx.region}:{catalog_id}:catalog:{catalog_id}")


# ------------------------------------------------------------------------------ settings
def get_data_lake_settings(ctx: RequestContext, catalog_key: str, catalog_id: str) -> dict[str, Any]:
    """The catalog's DataLakeSettings, AWS's defaults for a catalog never configured. For the
    IAM administrator and the data lake (and read-only) administrators."""
    settings, _ = store.get_settings(catalog_key)
    who = caller(ctx)
    if who not in model.principals_of(settings.get("DataLakeAdmins")) | model.principals_of(
            settings.get("ReadOnlyAdmins")) and not is_iam_admin(ctx):
        raise _iam_denied(ctx, catalog_id)
    return settings


def put_data_lake_settings(ctx: RequestContext, catalog_key: str, catalog_id: str, settings: dict[str, Any]) -> None:
    """Replace the catalog's DataLakeSettings (a member left out is stored as absent and answered
    with its default). For the IAM administrator only, as on AWS (the managed data lake
    administrator policy denies lakeformation:PutDataLakeSettings)."""
    if not is_iam_admin(ctx):
        raise _iam_denied(ctx, catalog_id)
    admins = model.principals_of(settings.get("DataLakeAdmins"))
    if model.IAM_ALLOWED_PRINCIPALS in admins | model.principals_of(settings.get("ReadOnlyAdmins")):
        raise InvalidInputException(f"Invalid principal {model.IAM_ALLOWED_PRINCIPALS}: it cannot be a data lake "
                                    "administrator.")
    for member in ("CreateDatabaseDefaultPermissions", "CreateTableDefaultPermissions"):
        kind = model.DATABASE if member.startswith("CreateDatabase") else model.TABLE
        for entry in settings.get(member) or ():
            if model.invalid_permissions(kind, entry.get("Permissions") or ()):
                raise InvalidInputException(INVALID_MODIFICATION)
    for _ in attempts(_RETRY):
        _, stored = store.get_settings(catalog_key)
        if stored is None:
            _keep_new_account_grants(ctx, catalog_key)
        if store.put_settings(catalog_key, settings, stored):
            return
    raise ConcurrentModificationException("The data lake settings are being changed by another request; retry.")


def _keep_new_account_grants(ctx: RequestContext, catalog_key: str) -> None:
    """Before a catalog's settings are first put (until then it is under IAM alone), store
    what a new AWS account holds besides its databases' and tables' default grants:
    IAM_ALLOWED_PRINCIPALS' CREATE_DATABASE on the catalog, so that everyone may still create
    databases until an administrator revokes it. Idempotent (only if not there yet)."""
    grant = Grant(model.IAM_ALLOWED_PRINCIPALS, model.CATALOG, None, None, frozenset({model.CREATE_DATABASE}))
    if store.get(catalog_key, grant) is None:
        store.put(catalog_key, grant, caller(ctx), None)


# ------------------------------------------------------------------------------ resources
@dataclass(frozen=True)
class Target:
    """A request's resource, as the model names it: a Grant without principal or permissions."""

    kind: str
    database: Optional[str] = None
    table: Optional[str] = None
    columns: Optional[ColumnScope] = None
    location: Optional[str] = None

    def grant(self, principal: str, permissions: frozenset[str] = frozenset(),
              grantable: frozenset[str] = frozenset()) -> Grant:
        return Grant(principal, self.kind, self.database, self.table, permissions, grantable, self.columns,
                     self.location)


def _resource_catalog(ctx: RequestContext, catalog_id: str, member_catalog: Optional[str]) -> None:
    """A resource's own CatalogId names the request's catalog (another account's is refused as
    any CatalogId is)."""
    if member_catalog and member_catalog != catalog_id:
        ctx.catalog_id({"CatalogId": member_catalog})
        raise InvalidInputException(f"The resource's CatalogId {member_catalog} is not the request's {catalog_id}")


def target_of(ctx: RequestContext, catalog_id: str, resource: dict[str, Any]) -> Target:
    """The resource a request names; InvalidInputException for what no grant can be on."""
    given = [name for name in resource if resource[name] is not None]
    unsupported = [name for name in given if name in _UNSUPPORTED]
    if unsupported:
        raise InvalidInputException(f"Resource type {unsupported[0]} is not supported by this catalog")
    kinds = [name for name in given if name in _KINDS]
    if len(kinds) != 1:
        raise InvalidInputException("Resource must name exactly one of Catalog, Database, Table, TableWithColumns "
                                    "or DataLocation.")
    kind, body = kinds[0], resource[kinds[0]]
    if kind == "Catalog":
        _resource_catalog(ctx, catalog_id, body.get("Id"))
        return Target(model.CATALOG)
    _resource_catalog(ctx, catalog_id, body.get("CatalogId"))
    if kind == "Database":
        return Target(model.DATABASE, lookups.fold(body["Name"]))
    if kind == "Table":
        name, wildcard = body.get("Name"), body.get("TableWildcard")
        if name is None and wildcard is None:
            raise InvalidInputException(TABLE_NAME_AND_WILDCARD_EMPTY)
        if name is not None and wildcard is not None:
            raise InvalidInputException(TABLE_NAME_AND_WILDCARD_BOTH)
        return Target(model.TABLE, lookups.fold(body["DatabaseName"]), None if name is None else lookups.fold(name))
    if kind == "TableWithColumns":
        names, wildcard = body.get("ColumnNames"), body.get("ColumnWildcard")
        if (names is None) == (wildcard is None):
            raise InvalidInputException("TableWithColumns must have exactly one of ColumnNames or ColumnWildcard.")
        if names is not None:
            if not names:
                raise InvalidInputException("ColumnNames must name at least one column.")
            scope = ColumnScope(names=frozenset(n.lower() for n in names))
        else:
            scope = ColumnScope(excluded=frozenset(n.lower() for n in wildcard.get("ExcludedColumnNames") or ()))
        return Target(model.COLUMNS, lookups.fold(body["DatabaseName"]), lookups.fold(body["Name"]), scope)
    return Target(model.DATA_LOCATION, location=body["ResourceArn"])


def render_resource(grant: Grant, catalog_id: str) -> dict[str, Any]:
    """A grant's resource as Lake Formation answers it."""
    if grant.kind == model.CATALOG:
        return {"Catalog": {}}
    if grant.kind == model.DATA_LOCATION:
        return {"DataLocation": {"CatalogId": catalog_id, "ResourceArn": grant.location}}
    if grant.kind == model.DATABASE:
        return {"Database": {"CatalogId": catalog_id, "Name": grant.database}}
    if grant.kind == model.TABLE:
        table: dict[str, Any] = {"CatalogId": catalog_id, "DatabaseName": grant.database}
        if grant.table is None:
            table["TableWildcard"] = {}
        else:
            table["Name"] = grant.table
        return {"Table": table}
    columns: dict[str, Any] = {"CatalogId": catalog_id, "DatabaseName": grant.database, "Name": grant.table}
    assert grant.columns is not None
    if grant.columns.names is not None:
        columns["ColumnNames"] = sorted(grant.columns.names)
    else:
        columns["ColumnWildcard"] = {"ExcludedColumnNames": sorted(grant.columns.excluded)}
    return {"TableWithColumns": columns}


def render(stored: store.StoredGrant, catalog_id: str, permissions: Optional[frozenset[str]] = None,
           grantable: Optional[frozenset[str]] = None) -> dict[str, Any]:
    """One PrincipalResourcePermissions (``permissions``/``grantable``: only these of the grant's)."""
    grant = stored.grant
    return {"Principal": {"DataLakePrincipalIdentifier": grant.principal},
            "Resource": render_resource(grant, catalog_id),
            "Permissions": sorted(grant.permissions if permissions is None else permissions),
            "PermissionsWithGrantOption": sorted(grant.grantable if grantable is None else grantable),
            "LastUpdated": stored.updated, "LastUpdatedBy": stored.updated_by}


def _require_exists(ctx: RequestContext, catalog_key: str, target: Target) -> None:
    """The database, table and columns a grant names exist (EntityNotFoundException /
    InvalidInputException as the catalog words them); a location is registered."""
    if target.kind in (model.DATABASE, model.TABLE, model.COLUMNS):
        lookups.require_database(catalog_key, target.database or "")
    if target.table is not None:
        doc, _ = tables.get_table(ctx, catalog_key, target.database or "", target.table)
        if target.columns is not None:
            known = {c["Name"].lower() for c in (doc.get("StorageDescriptor") or {}).get("Columns") or []}
            known |= {k["Name"].lower() for k in doc.get("PartitionKeys") or []}
            named = target.columns.names if target.columns.names is not None else target.columns.excluded
            missing = sorted(named - known)
            if missing:
                raise InvalidInputException(f"Column(s) {', '.join(missing)} not found in table {target.table}.")
    if target.kind == model.DATA_LOCATION and not _registered(catalog_key, target.location or ""):
        raise EntityNotFoundException(f"Location {target.location} is not registered with Lake Formation.")


def _registered(catalog_key: str, arn: str) -> bool:
    if store.get_location(catalog_key, arn) is not None:
        return True
    # A location below a registered one is governed by it.
    return any(arn.startswith(location.arn.rstrip("/") + "/") for location in store.list_locations(catalog_key))


# ------------------------------------------------------------------------------ who may grant
def _grantable_on(held: list[Grant], target: Target) -> frozenset[str]:
    """What the caller's grants (``held``, from store.grants.lookup) let it grant on ``target``:
    its grant options on the resource itself; for a table or its columns also those on the
    database's table wildcard; for columns, a column grant with grant option covering them."""
    found: set[str] = set()
    for grant in held:
        options = grant.effective_grantable()
        if target.kind == model.TABLE and grant.kind == model.TABLE and grant.table in (None, target.table):
            found |= options
        elif target.kind == model.COLUMNS:
            if grant.kind == model.TABLE and grant.table in (None, target.table) and model.SELECT in options:
                found.add(model.SELECT)
            elif grant.kind == model.COLUMNS and grant.table == target.table and model.SELECT in options \
                    and grant.columns is not None and target.columns is not None \
                    and model.minus_columns(target.columns, grant.columns) is None:
                found.add(model.SELECT)
        elif grant.kind == target.kind and target.kind in (model.CATALOG, model.DATABASE):
            found |= options
    return frozenset(found)


def _authorize(ctx: RequestContext, catalog_key: str, target: Target, wanted: frozenset[str]) -> None:
    """The caller may grant or revoke ``wanted`` on ``target``: a data lake administrator, or
    one holding each of them with grant option there; else AWS's AccessDeniedException."""
    who = caller(ctx)
    held = store.lookup(catalog_key, [who], target.database, target.table)
    if who in held.admins:
        return
    if target.kind == model.DATA_LOCATION:
        own = store.get(catalog_key, target.grant(who))
        options = own.grant.effective_grantable() if own is not None else frozenset()
    else:
        options = _grantable_on(held.grants, target)
    # ``options`` has ALL spelled out: ALL with grant option lets each of its permissions through.
    if not wanted or not wanted <= options:
        raise AccessDeniedException(NOT_AUTHORIZED)


# ------------------------------------------------------------------------------ grant, revoke
@dataclass(frozen=True)
class Change:
    """One grant or revoke: who, on what, which permissions (and which with grant option)."""

    principal: str
    target: Target
    permissions: frozenset[str]
    grantable: frozenset[str]


def change_of(ctx: RequestContext, catalog_id: str, entry: dict[str, Any]) -> Change:
    """A GrantPermissions / RevokePermissions request (or batch entry), checked against the
    model: permissions valid for the resource kind, grant options within the permissions."""
    principal = ((entry.get("Principal") or {}).get("DataLakePrincipalIdentifier") or "").strip()
    if not principal:
        raise InvalidInputException("Principal.DataLakePrincipalIdentifier is required.")
    if entry.get("Resource") is None:
        raise InvalidInputException("Resource is required.")
    target = target_of(ctx, catalog_id, entry["Resource"])
    permissions = frozenset(entry.get("Permissions") or ())
    grantable = frozenset(entry.get("PermissionsWithGrantOption") or ())
    if entry.get("Condition"):
        raise InvalidInputException("Condition is not supported by this catalog.")
    if model.invalid_permissions(target.kind, permissions | grantable):
        raise InvalidInputException(INVALID_MODIFICATION)
    return Change(principal, target, permissions, grantable)


def grant(ctx: RequestContext, catalog_key: str, catalog_id: str, entry: dict[str, Any]) -> None:
    """GrantPermissions: add the permissions (and grant options) to what the principal holds
    on the resource; granting what is held already changes nothing."""
    change = change_of(ctx, catalog_id, entry)
    if not change.permissions:
        raise InvalidInputException(INVALID_MODIFICATION)
    if model.grant_option_outside(change.target.kind, change.permissions, change.grantable):
        raise InvalidInputException(INVALID_MODIFICATION)
    _authorize(ctx, catalog_key, change.target, change.permissions | change.grantable)
    _require_exists(ctx, catalog_key, change.target)
    given = change.target.grant(change.principal, change.permissions, change.grantable)
    for _ in attempts(_RETRY):
        stored = store.get(catalog_key, given)
        after = model.merged(stored.grant if stored else None, given)
        if stored is not None and after == stored.grant:
            return
        if store.put(catalog_key, after, caller(ctx), stored):
            return
    raise ConcurrentModificationException("The grant is being changed by another request; retry.")


def revoke(ctx: RequestContext, catalog_key: str, catalog_id: str, entry: dict[str, Any]) -> None:
    """RevokePermissions: remove the named permissions (and grant options) from what the
    principal holds on the resource, nothing else; InvalidInputException when it holds none of
    them."""
    change = change_of(ctx, catalog_id, entry)
    _authorize(ctx, catalog_key, change.target, change.permissions | change.grantable)
    taken = change.target.grant(change.principal, change.permissions, change.grantable)
    for _ in attempts(_RETRY):
        stored = store.get(catalog_key, taken)
        if stored is None:
            raise InvalidInputException(NOTHING_REVOKED)
        left, changed = model.revoked(stored.grant, taken)
        if not changed:
            raise InvalidInputException(NOTHING_REVOKED)
        done = store.delete(catalog_key, stored) if left is None else store.put(catalog_key, left, caller(ctx),
                                                                                 stored)
        if done:
            return
    raise ConcurrentModificationException("The grant is being changed by another request; retry.")


def batch(ctx: RequestContext, catalog_key: str, catalog_id: str, entries: list[dict[str, Any]],
          action: Callable[[RequestContext, str, str, dict[str, Any]], None]) -> list[dict[str, Any]]:
    """BatchGrantPermissions / BatchRevokePermissions: each entry on its own; the Failures (the
    entry and AWS's ErrorDetail) of those that did not apply."""
    failures = []
    for entry in entries:
        try:
            action(ctx, catalog_key, catalog_id, entry)
        except ServiceError as error:
            failures.append({"RequestEntry": entry, "Error": {"ErrorCode": error.code, "ErrorMessage": error.message}})
    return failures


# ------------------------------------------------------------------------------ listings
@dataclass(frozen=True)
class Listed:
    """One grant as a listing shows it to this caller (``entry`` None: not shown), and the
    position after it."""

    entry: Optional[dict[str, Any]]
    key: str


class _Viewer:
    """What a caller may see of each grant: an administrator everything; anyone else its own
    grants, and of others' grants the permissions it holds with grant option on that resource
    (as AWS filters ListPermissions "by the permissions of the caller")."""

    def __init__(self, ctx: RequestContext, catalog_key: str, catalog_id: str) -> None:
        self.who = caller(ctx)
        self.catalog_key, self.catalog_id = catalog_key, catalog_id
        held = store.lookup(catalog_key, [self.who], None)
        self.admin = self.who in held.admins | held.read_only_admins
        self._options: dict[str, frozenset[str]] = {}

    def _options_on(self, grant: Grant) -> frozenset[str]:
        key = store.resource_of_key(store.key_of(grant))
        if key not in self._options:
            own = store.get(self.catalog_key, replace(grant, principal=self.who))
            self._options[key] = own.grant.effective_grantable() if own is not None else frozenset()
        return self._options[key]

    def show(self, stored: store.StoredGrant) -> Optional[dict[str, Any]]:
        grant = stored.grant
        if self.admin or grant.principal == self.who:
            return render(stored, self.catalog_id)
        options = self._options_on(grant)
        if not options:
            return None
        permissions = frozenset(p for p in grant.permissions if p in options)
        grantable = frozenset(p for p in grant.grantable if p in options)
        if not permissions and not grantable:
            return None
        return render(stored, self.catalog_id, permissions, grantable)


def _prefixes_of(target: Target) -> list[str]:
    """The range-key prefixes of the grants on one resource (a table: its own and its columns')."""
    if target.kind == model.TABLE and target.table is not None:
        return sorted(store.grants_prefix(kind, target.database, target.table) for kind in (model.TABLE, model.COLUMNS))
    return [store.grants_prefix(target.kind, target.database, target.table, target.location)]


def _scan(catalog_key: str, prefixes: list[str], after: Optional[str]) -> Iterator[store.StoredGrant]:
    """The grants under each prefix (sorted, disjoint), in key order, after key ``after``."""
    for prefix in sorted(prefixes):
        if after is not None and not after.startswith(prefix) and after > prefix:
            continue  # every key under this prefix sorts before ``after``
        yield from store.listing(catalog_key, prefix, after if after is not None and after.startswith(prefix)
                                 else None)


_TYPE_KINDS = {"CATALOG": {model.CATALOG}, "DATABASE": {model.DATABASE}, "TABLE": {model.TABLE, model.COLUMNS},
               "DATA_LOCATION": {model.DATA_LOCATION}}
_TYPE_PREFIXES = {"CATALOG": store.kind_prefix(model.CATALOG), "DATABASE": store.kind_prefix(model.DATABASE),
                  "TABLE": store.kind_prefix(model.TABLE), "DATA_LOCATION": store.kind_prefix(model.DATA_LOCATION)}


def list_permissions(ctx: RequestContext, catalog_key: str, catalog_id: str, params: dict[str, Any],
                     after: Optional[str]) -> Iterator[Listed]:
    """ListPermissions: the catalog's grants in key order, after position ``after``, filtered by
    Principal, Resource and ResourceType, as this caller may see them."""
    principal = (params.get("Principal") or {}).get("DataLakePrincipalIdentifier")
    resource_type = params.get("ResourceType")
    if params.get("Resource") is not None:
        prefixes = _prefixes_of(target_of(ctx, catalog_id, params["Resource"]))
    elif resource_type is not None:
        if resource_type not in _TYPE_PREFIXES:
            return  # LF-Tags, tag policies, functions: none are granted here
        prefixes = [_TYPE_PREFIXES[resource_type]]
    else:
        prefixes = [""]
    kinds = _TYPE_KINDS.get(resource_type or "")
    viewer = _Viewer(ctx, catalog_key, catalog_id)
    found = (store.by_principal(catalog_key, principal, after) if principal and prefixes == [""]
             else _scan(catalog_key, prefixes, after))
    for stored in found:
        shown = (principal is None or stored.grant.principal == principal) and \
            (kinds is None or stored.grant.kind in kinds)
        yield Listed(viewer.show(stored) if shown else None, stored.key)


def list_scope(params: dict[str, Any]) -> str:
    """What a ListPermissions page token is bound to besides the catalog: its filters."""
    return json.dumps({k: params.get(k) for k in ("Principal", "Resource", "ResourceType")}, sort_keys=True)


def effective_for_path(ctx: RequestContext, catalog_key: str, catalog_id: str, resource_arn: str,
                       after: Optional[str]) -> Iterator[Listed]:
    """GetEffectivePermissionsForPath: the grants on the resource an ARN names, as this caller
    may see them: a database's (and everything in it), a table's (its own, its columns', its
    database's table wildcard), or those on the registered locations at or above an S3 path."""
    viewer = _Viewer(ctx, catalog_key, catalog_id)
    if resource_arn.startswith("arn:") and ":s3:::" in resource_arn:
        path = resource_arn.rstrip("/")
        for stored in _scan(catalog_key, [store.kind_prefix(model.DATA_LOCATION)], after):
            location = (stored.grant.location or "").rstrip("/")
            covers = path == location or path.startswith(location + "/")
            yield Listed(viewer.show(stored) if covers else None, stored.key)
        return
    parsed = arns.parse(resource_arn)
    if parsed.region != ctx.region or parsed.account != catalog_id or parsed.kind not in ("database", "table"):
        raise InvalidInputException(f"ResourceArn {resource_arn[:200]} is not a database, table or S3 location "
                                    "of this catalog.")
    database = lookups.require_database(catalog_key, parsed.names[0]).name
    if parsed.kind == "database":
        prefixes = [store.database_prefix(database)]
    else:
        table = lookups.fold(parsed.names[1])
        tables.get_table(ctx, catalog_key, database, table)
        prefixes = _prefixes_of(Target(model.TABLE, database, table)) + [
            store.grants_prefix(model.TABLE, database)]
    for stored in _scan(catalog_key, prefixes, after):
        yield Listed(viewer.show(stored), stored.key)
