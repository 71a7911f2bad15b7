"""Lake Formation's permission model, as data: what may be granted on each kind of resource,
what implies what, and what every catalog action needs (docs/design.md, "Permissions").

Pure: no store, no wire. The service core (``service/access.py``) reads the grants that bear on
a request and asks :func:`allows`; every protocol's handlers reach the same checks by calling
the core, so a protocol added later needs no permission code of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

# ------------------------------------------------------------------------------ permissions
ALL = "ALL"
SELECT, ALTER, DROP, DELETE, INSERT, DESCRIBE = "SELECT", "ALTER", "DROP", "DELETE", "INSERT", "DESCRIBE"
CREATE_DATABASE, CREATE_TABLE, DATA_LOCATION_ACCESS = "CREATE_DATABASE", "CREATE_TABLE", "DATA_LOCATION_ACCESS"

# The group every IAM principal of the account belongs to; AWS's default grants go to it.
IAM_ALLOWED_PRINCIPALS = "IAM_ALLOWED_PRINCIPALS"

# Resource kinds, as a grant names them.
CATALOG, DATABASE, TABLE, COLUMNS, DATA_LOCATION = "CATALOG", "DATABASE", "TABLE", "COLUMNS", "DATA_LOCATION"

# What may be granted on each kind (Lake Formation permissions reference, "Lake Formation
# permissions per resource type"). A TableWildcard is a TABLE grant on every table of a
# database; a TableWithColumns grant is SELECT on some columns.
VALID: dict[str, frozenset[str]] = {
    CATALOG: frozenset({CREATE_DATABASE}),
    DATABASE: frozenset({ALL, ALTER, CREATE_TABLE, DESCRIBE, DROP}),
    TABLE: frozenset({ALL, ALTER, DELETE, DESCRIBE, DROP, INSERT, SELECT}),
    COLUMNS: frozenset({SELECT}),
    DATA_LOCATION: frozenset({DATA_LOCATION_ACCESS}),
}

# ALL ("Super") is every permission of its resource kind.
IMPLIED_BY_ALL: dict[str, frozenset[str]] = {kind: valid - {ALL} for kind, valid in VALID.items()}

# Any permission at all on the object: enough to see it (DESCRIBE-level actions, listings).
ANY = frozenset({"*"})

# ------------------------------------------------------------------------------ actions


@dataclass(frozen=True)
class Need:
    """What an action needs: any one of ``any_of`` on the object at ``level`` (ANY: any
    permission there). ``read_only``: a read-only administrator may do it."""

    level: str
    any_of: frozenset[str]
    read_only: bool = False


def _need(level: str, *permissions: str) -> Need:
    any_of = ANY if not permissions else frozenset(permissions)
    return Need(level, any_of, read_only=any_of == ANY or any_of <= {SELECT, DESCRIBE})


# The one table: every catalog action of every protocol that Lake Formation governs, by the
# service core's name for it (Glue's operation names; Lake Formation's and Paimon's own where
# Glue has none). Connections, crawlers, classifiers, tags, resource policies and catalog
# settings are IAM's, not Lake Formation's: they are not here, as on AWS. (A crawl's own writes
# reach the catalog through the Glue API as the crawler's role and are checked as its.)
ACTIONS: dict[str, Need] = {
    # databases
    "CreateDatabase": _need(CATALOG, CREATE_DATABASE),
    "GetDatabase": _need(DATABASE),
    "GetDatabases": _need(DATABASE),
    "UpdateDatabase": _need(DATABASE, ALTER),
    "DeleteDatabase": _need(DATABASE, DROP),
    # tables
    "CreateTable": _need(DATABASE, CREATE_TABLE),
    "GetTable": _need(TABLE),
    "GetTables": _need(TABLE),
    "SearchTables": _need(TABLE),
    "UpdateTable": _need(TABLE, ALTER),
    "DeleteTable": _need(TABLE, DROP),
    "BatchDeleteTable": _need(TABLE, DROP),
    "GetTableVersion": _need(TABLE),
    "GetTableVersions": _need(TABLE),
    "DeleteTableVersion": _need(TABLE, ALTER),
    "BatchDeleteTableVersion": _need(TABLE, ALTER),
    # partitions
    "GetPartition": _need(TABLE, SELECT),
    "GetPartitions": _need(TABLE, SELECT),
    "BatchGetPartition": _need(TABLE, SELECT),
    "CreatePartition": _need(TABLE, INSERT),
    "BatchCreatePartition": _need(TABLE, INSERT),
    "UpdatePartition": _need(TABLE, INSERT, ALTER),
    "BatchUpdatePartition": _need(TABLE, INSERT, ALTER),
    "DeletePartition": _need(TABLE, DELETE),
    "BatchDeletePartition": _need(TABLE, DELETE),
    "CreatePartitionIndex": _need(TABLE, ALTER),
    "DeletePartitionIndex": _need(TABLE, ALTER),
    "GetPartitionIndexes": _need(TABLE),
    # column statistics
    "GetColumnStatisticsForTable": _need(TABLE, SELECT),
    "GetColumnStatisticsForPartition": _need(TABLE, SELECT),
    "UpdateColumnStatisticsForTable": _need(TABLE, ALTER),
    "UpdateColumnStatisticsForPartition": _need(TABLE, ALTER),
    "DeleteColumnStatisticsForTable": _need(TABLE, ALTER),
    "DeleteColumnStatisticsForPartition": _need(TABLE, ALTER),
    # user-defined functions: governed through their database
    "CreateUserDefinedFunction": _need(DATABASE, ALTER),
    "UpdateUserDefinedFunction": _need(DATABASE, ALTER),
    "DeleteUserDefinedFunction": _need(DATABASE, ALTER),
    "GetUserDefinedFunction": _need(DATABASE),
    "GetUserDefinedFunctions": _need(DATABASE),
    # Lake Formation governed tables
    "GetTableObjects": _need(TABLE, SELECT),
    "UpdateTableObjects.AddObject": _need(TABLE, INSERT),
    "UpdateTableObjects.DeleteObject": _need(TABLE, DELETE),
    "DeleteObjectsOnCancel": _need(TABLE, INSERT, DELETE),
    # Paimon's own: snapshots are data, tags and branches the table's metadata
    "PaimonCommit": _need(TABLE, INSERT),
    # The latest snapshot is what a reader scans and what a writer commits on top of.
    "PaimonLoadSnapshot": Need(TABLE, frozenset({SELECT, INSERT}), read_only=True),
    "PaimonRollback": _need(TABLE, ALTER),
    "PaimonRenameTable": _need(TABLE, ALTER),
    "PaimonListPartitions": _need(TABLE, SELECT),
    "PaimonCreatePartitions": _need(TABLE, INSERT),
    # Unregistering partitions is Glue's BatchDeletePartition; marking them done rewrites them.
    "PaimonDropPartitions": _need(TABLE, DELETE),
    "PaimonMarkDonePartitions": _need(TABLE, INSERT, ALTER),
    "PaimonReadTags": _need(TABLE),
    "PaimonWriteTags": _need(TABLE, ALTER),
    "PaimonReadBranches": _need(TABLE),
    # Creating, dropping and renaming branches, and fast-forwarding main to one (which moves
    # main's snapshots as a rollback does).
    "PaimonWriteBranches": _need(TABLE, ALTER),
    # A streaming reader's progress (consumer files): reading it is reading the table; moving it
    # changes which snapshots expiry keeps, as a rollback or tag does.
    "PaimonReadConsumers": _need(TABLE, SELECT),
    "PaimonWriteConsumers": _need(TABLE, ALTER),
    # CREATE OR REPLACE of an existing table: a new schema, as an alter.
    "PaimonReplaceTable": _need(TABLE, ALTER),
}


def need(action: str) -> Need:
    """What ``action`` needs (KeyError for an action the table does not govern)."""
    return ACTIONS[action]


# ------------------------------------------------------------------------------ grants


@dataclass(frozen=True)
class ColumnScope:
    """The columns a TableWithColumns grant covers: ``names``, or every column but
    ``excluded`` (ColumnWildcard)."""

    names: Optional[frozenset[str]] = None
    excluded: frozenset[str] = frozenset()

    def covers(self, column: str) -> bool:
        if self.names is not None:
            return column in self.names
        return column not in self.excluded


@dataclass(frozen=True)
class Grant:
    """One principal's permissions on one resource. ``kind`` is the resource's (a TableWildcard
    grant is a TABLE grant whose ``table`` is None); ``columns`` only on COLUMNS grants."""

    principal: str
    kind: str
    database: Optional[str]
    table: Optional[str]
    permissions: frozenset[str]
    grantable: frozenset[str] = frozenset()
    columns: Optional[ColumnScope] = None
    location: Optional[str] = None

    def effective(self) -> frozenset[str]:
        """Its permissions with ALL spelled out."""
        if ALL in self.permissions:
            return self.permissions | IMPLIED_BY_ALL[self.kind]
        return self.permissions

    def effective_grantable(self) -> frozenset[str]:
        if ALL in self.grantable:
            return self.grantable | IMPLIED_BY_ALL[self.kind]
        return self.grantable


def allows(grants: Iterable[Grant], need_: Need) -> bool:
    """Whether the grants that bear on an object (on it, on its database's table wildcard, and
    for a database-level need on the database) let ``need_`` through. A column grant gives its
    SELECT, and counts as "any permission" on its table."""
    for grant in grants:
        held = grant.effective()
        if not held:
            continue
        if need_.any_of == ANY:
            if grant.kind in (TABLE, COLUMNS) and need_.level == DATABASE:
                return True  # any permission on a table shows its database
            if _level_of(grant.kind) == need_.level:
                return True
            continue
        if _level_of(grant.kind) == need_.level and held & need_.any_of:
            return True
    return False


def _level_of(kind: str) -> str:
    return TABLE if kind == COLUMNS else kind


def visible_columns(grants: Iterable[Grant], columns: Iterable[str]) -> Optional[list[str]]:
    """The columns a caller with these grants on a table may see: None for all of them (a
    table-level grant), else those its column grants cover (in the table's order)."""
    scopes = []
    for grant in grants:
        if not grant.effective():
            continue
        if grant.kind == TABLE:
            return None
        if grant.kind == COLUMNS and grant.columns is not None:
            scopes.append(grant.columns)
    return [column for column in columns if any(scope.covers(column) for scope in scopes)]


def invalid_permissions(kind: str, permissions: Iterable[str]) -> list[str]:
    """The permissions that may not be granted on a resource of ``kind``."""
    valid = VALID[kind]
    return sorted(set(permissions) - valid)


# ------------------------------------------------------------------------------ settings
# What GetDataLakeSettings answers for a catalog never configured: AWS's new account (no
# administrators; IAM_ALLOWED_PRINCIPALS holds ALL on new databases and tables, so IAM alone
# governs; cross-account version 1 with SET_CONTEXT, as a fresh account reports them).
_IAM_ALLOWED_ALL = ({"Principal": {"DataLakePrincipalIdentifier": IAM_ALLOWED_PRINCIPALS}, "Permissions": [ALL]},)
DEFAULT_DATA_LAKE_SETTINGS: dict = {
    "DataLakeAdmins": [],
    "ReadOnlyAdmins": [],
    "CreateDatabaseDefaultPermissions": list(_IAM_ALLOWED_ALL),
    "CreateTableDefaultPermissions": list(_IAM_ALLOWED_ALL),
    "Parameters": {"CROSS_ACCOUNT_VERSION": "1", "SET_CONTEXT": "TRUE"},
    "TrustedResourceOwners": [],
    "AllowExternalDataFiltering": False,
    "AllowFullTableExternalDataAccess": False,
    "ExternalDataFilteringAllowList": [],
    "AuthorizedSessionTagValueList": [],
}


def default_settings() -> dict:
    """A fresh copy of :data:`DEFAULT_DATA_LAKE_SETTINGS` (callers may change it)."""
    import copy
    return copy.deepcopy(DEFAULT_DATA_LAKE_SETTINGS)


def principals_of(entries: Optional[Iterable[dict]]) -> frozenset[str]:
    """The identifiers of a DataLakePrincipal list (DataLakeAdmins, ReadOnlyAdmins)."""
    return frozenset(entry.get("DataLakePrincipalIdentifier", "") for entry in entries or ())


# ------------------------------------------------------------------------------ grant arithmetic
def expand(kind: str, permissions: Iterable[str]) -> frozenset[str]:
    """``permissions`` with ALL spelled out (what they let through)."""
    given = frozenset(permissions)
    return given | IMPLIED_BY_ALL[kind] if ALL in given else given


def grant_option_outside(kind: str, permissions: Iterable[str], grantable: Iterable[str]) -> list[str]:
    """The permissions with grant option that are not among the permissions granted (AWS: the
    grantable ones "may only be a subset of the permissions granted")."""
    return sorted(expand(kind, grantable) - expand(kind, permissions))


def union_columns(a: ColumnScope, b: ColumnScope) -> ColumnScope:
    """The columns either scope covers."""
    if a.names is not None and b.names is not None:
        return ColumnScope(names=a.names | b.names)
    if a.names is not None:
        return ColumnScope(excluded=b.excluded - a.names)
    if b.names is not None:
        return ColumnScope(excluded=a.excluded - b.names)
    return ColumnScope(excluded=a.excluded & b.excluded)


def minus_columns(a: ColumnScope, b: ColumnScope) -> Optional[ColumnScope]:
    """The columns ``a`` covers and ``b`` does not; None when none are left."""
    if a.names is not None:
        left = frozenset(c for c in a.names if not b.covers(c))
        return ColumnScope(names=left) if left else None
    if b.names is not None:
        return ColumnScope(excluded=a.excluded | b.names)
    left = b.excluded - a.excluded
    return ColumnScope(names=left) if left else None


def merged(held: Optional[Grant], given: Grant) -> Grant:
    """What a principal holds on a resource after ``given`` is granted on top of ``held`` (a
    second grant adds to the first; a column grant widens the columns)."""
    if held is None:
        return given
    columns = given.columns
    if held.columns is not None and given.columns is not None:
        columns = union_columns(held.columns, given.columns)
    return Grant(given.principal, given.kind, given.database, given.table, held.permissions | given.permissions,
                 held.grantable | given.grantable, columns, given.location)


def revoked(held: Grant, taken: Grant) -> tuple[Optional[Grant], bool]:
    """What is left of ``held`` once ``taken`` is revoked (None: nothing), and whether the revoke
    removed anything. A revoke removes only what it names: ALL is a permission of its own, not
    the set it implies. A column revoke narrows the columns of SELECT; once none are left the
    grant is gone."""
    permissions = held.permissions - taken.permissions
    grantable = held.grantable - taken.grantable
    columns = held.columns
    if held.kind == COLUMNS and held.columns is not None and taken.columns is not None and SELECT in taken.permissions \
            and SELECT in held.permissions:
        left = minus_columns(held.columns, taken.columns)
        if left is not None:
            # Some columns keep their SELECT (and its grant option, unless that was revoked too).
            permissions, columns = permissions | {SELECT}, left
            if SELECT in held.grantable and SELECT not in taken.grantable:
                grantable = grantable | {SELECT}
        else:
            grantable = grantable - {SELECT}
    grantable = frozenset(grantable & expand(held.kind, permissions)) if held.kind != COLUMNS else grantable & permissions
    changed = permissions != held.permissions or grantable != held.grantable or columns != held.columns
    if not permissions and not grantable:
        return None, changed
    return Grant(held.principal, held.kind, held.database, held.table, frozenset(permissions),
                 frozenset(grantable), columns, held.location), changed
