"""Glue connections of a catalog: create, read (optionally without secrets), replace or rename,
delete (one or a batch), and list with a filter.

A connection is stored as its Glue ``Connection`` object: the members of a ``ConnectionInput``
that the output shape has, plus CreationTime, LastUpdatedTime, Status and
ConnectionSchemaVersion. Credentials the output shape never carries (AuthenticationConfiguration's
BasicAuthenticationCredentials, OAuth2Credentials, CustomAuthenticationCredentials,
AuthorizationCodeProperties) are not stored at all: AWS moves them into Secrets Manager and never
returns them, and nothing here uses them. Connection names are kept as given (not folded).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException)
from chalicelib.service import tags
from chalicelib.service.databases import now
from chalicelib.service.paging import take_page
from chalicelib.store import catalog_entries as store

_INPUT_MEMBERS = ("Description", "ConnectionType", "MatchCriteria", "ConnectionProperties", "SparkProperties",
                  "AthenaProperties", "PythonProperties", "PhysicalConnectionRequirements")
_COMPUTE_PROPERTIES = ("SparkProperties", "AthenaProperties", "PythonProperties")
_AUTHENTICATION_MEMBERS = ("AuthenticationType", "SecretArn", "KmsKeyArn")
_OAUTH2_MEMBERS = ("OAuth2GrantType", "OAuth2ClientApplication", "TokenUrl", "TokenUrlParametersMap")
_RESOURCE = "Connection"
# A delete re-reads a connection changed between its read and its delete this many times at most.
_DELETE_ATTEMPTS = 3


def is_secret_property(key: str) -> bool:
    """Whether a ConnectionProperties key holds a secret that HidePassword withholds: PASSWORD,
    ENCRYPTED_PASSWORD and every Kafka keystore / key / SASL password (plain or encrypted)."""
    return "PASSWORD" in key


def _not_found(name: str) -> EntityNotFoundException:
    return EntityNotFoundException(f"Connection {name} not found.", _RESOURCE, name)


def _missing(properties: dict[str, str], required: Iterable[str]) -> list[str]:
    return [key for key in required if not properties.get(key)]


def _require_any(kind: str, properties: dict[str, str], *alternatives: tuple[str, ...]) -> None:
    """InvalidInputException unless one of ``alternatives`` (sets of keys) is wholly present."""
    if any(not _missing(properties, keys) for keys in alternatives):
        return
    spelled = " or ".join(keys[0] if len(keys) == 1 else "all of (" + ", ".join(keys) + ")" for keys in alternatives)
    raise InvalidInputException(f"ConnectionInput.ConnectionProperties of a {kind} connection must contain {spelled}")


def validate_connection_input(connection_input: dict[str, Any]) -> None:
    """The per-type rules of ConnectionInput.ConnectionType as the Glue API reference states
    them (required ConnectionProperties of JDBC, KAFKA, MONGODB and MARKETPLACE connections, a
    PhysicalConnectionRequirements for NETWORK, SFTP not supported); other types are stored as
    given. InvalidInputException naming the member and the rule."""
    kind = connection_input["ConnectionType"]
    properties = connection_input.get("ConnectionProperties") or {}
    credentials = (("USERNAME", "PASSWORD"), ("SECRET_ID",))
    if kind == "SFTP":
        raise InvalidInputException("ConnectionInput.ConnectionType SFTP is not supported")
    if kind == "JDBC":
        _require_any(kind, properties, ("JDBC_CONNECTION_URL",), ("HOST", "PORT", "JDBC_ENGINE"))
        _require_any(kind, properties, *credentials)
    elif kind == "KAFKA":
        _require_any(kind, properties, ("KAFKA_BOOTSTRAP_SERVERS",))
    elif kind == "MONGODB":
        _require_any(kind, properties, ("CONNECTION_URL",))
        _require_any(kind, properties, *credentials)
    elif kind == "MARKETPLACE":
        _require_any(kind, properties, ("CONNECTOR_TYPE", "CONNECTOR_URL", "CONNECTOR_CLASS_NAME", "CONNECTION_URL"))
        if properties.get("CONNECTOR_TYPE") == "JDBC":
            _require_any("MARKETPLACE (CONNECTOR_TYPE JDBC)", properties, *credentials)
    elif kind == "NETWORK" and not connection_input.get("PhysicalConnectionRequirements"):
        raise InvalidInputException(
            "ConnectionInput.PhysicalConnectionRequirements is required for a NETWORK connection")


def _authentication(configuration: dict[str, Any]) -> dict[str, Any]:
    """The stored (and returned) part of an AuthenticationConfigurationInput: no credentials."""
    stored = {k: configuration[k] for k in _AUTHENTICATION_MEMBERS if k in configuration}
    oauth2 = configuration.get("OAuth2Properties")
    if oauth2 is not None:
        stored["OAuth2Properties"] = {k: oauth2[k] for k in _OAUTH2_MEMBERS if k in oauth2}
    return stored


def _document(connection_input: dict[str, Any], creation_time: float, updated: float) -> dict[str, Any]:
    validate_connection_input(connection_input)
    doc: dict[str, Any] = {"Name": connection_input["Name"]}
    doc.update({k: connection_input[k] for k in _INPUT_MEMBERS if k in connection_input})
    if "AuthenticationConfiguration" in connection_input:
        doc["AuthenticationConfiguration"] = _authentication(connection_input["AuthenticationConfiguration"])
    doc["CreationTime"] = creation_time
    doc["LastUpdatedTime"] = updated
    doc["Status"] = "READY"
    # Schema version 2 is the one with per-compute-environment properties.
    doc["ConnectionSchemaVersion"] = 2 if any(k in connection_input for k in _COMPUTE_PROPERTIES) else 1
    return doc


def hide_secrets(doc: dict[str, Any]) -> dict[str, Any]:
    """The connection without its secret ConnectionProperties (HidePassword)."""
    properties = doc.get("ConnectionProperties")
    if not properties:
        return doc
    return {**doc, "ConnectionProperties": {k: v for k, v in properties.items() if not is_secret_property(k)}}


def create_connection(catalog_key: str, connection_input: dict[str, Any],
                      tags_given: Optional[dict[str, str]] = None) -> None:
    """Create a connection (with its Tags): one conditional put, so of racing creates exactly
    one wins. AlreadyExistsException if the name is taken; InvalidInputException if the input
    breaks a rule of its ConnectionType or a tag rule."""
    stamp = now()
    doc = _document(connection_input, stamp, stamp)
    name = doc["Name"]
    identity = tags.connection_identity(doc)
    # The tags go first, under this incarnation's identity: nothing reaches them until the
    # connection exists, and a create that loses removes them again.
    tags.tag_new_resource(catalog_key, "connection", identity, tags_given)
    if not store.create(store.scope(catalog_key, store.CONNECTION), name, doc, "connection"):
        tags.forget_resource(catalog_key, "connection", identity)
        raise AlreadyExistsException(f"Connection {name} already exists.", _RESOURCE, name)


def get_connection(catalog_key: str, name: str, hide_password: bool = False) -> dict[str, Any]:
    """The stored ``Connection`` (one GetItem), without secrets with ``hide_password``.
    EntityNotFoundException if there is none."""
    entry = store.get(store.scope(catalog_key, store.CONNECTION), name)
    if entry is None:
        raise _not_found(name)
    return hide_secrets(entry.doc) if hide_password else entry.doc


def update_connection(catalog_key: str, name: str, connection_input: dict[str, Any]) -> None:
    """Replace a connection's definition (CreationTime kept, LastUpdatedTime set). A different
    ``ConnectionInput.Name`` renames it, in one transaction with the removal of the old name
    (AlreadyExistsException if the new name is taken). Conditional on the definition read:
    ConcurrentModificationException if it changed meanwhile."""
    scope = store.scope(catalog_key, store.CONNECTION)
    old = store.get(scope, name)
    if old is None:
        raise _not_found(name)
    doc = _document(connection_input, old.doc["CreationTime"], now())
    new_name = doc["Name"]
    if store.replace(scope, old, new_name, doc, "connection"):
        return
    if new_name != name and store.get(scope, new_name) is not None:
        raise AlreadyExistsException(f"Connection {new_name} already exists.", _RESOURCE, new_name)
    raise ConcurrentModificationException(f"Connection {name} was changed concurrently; retry.", _RESOURCE, name)


def delete_connection(catalog_key: str, name: str) -> None:
    """Delete a connection (one delete conditional on the definition read) and its tags;
    EntityNotFoundException if there is none.

    The condition keeps the delete and the tags it forgets on one incarnation: an unconditional
    delete after a read could remove a connection deleted and created again meanwhile while
    forgetting the old one's tags. If the definition changed, it is read again: gone is
    EntityNotFoundException, else the delete applies to the current one (a few times at most,
    then ConcurrentModificationException)."""
    scope = store.scope(catalog_key, store.CONNECTION)
    for _ in range(_DELETE_ATTEMPTS):
        entry = store.get(scope, name)
        if entry is None:
            raise _not_found(name)
        if store.delete(scope, name, raw=entry.raw):
            tags.forget_resource(catalog_key, "connection", tags.connection_identity(entry.doc))
            return
    raise ConcurrentModificationException(f"Connection {name} was changed concurrently; retry.", _RESOURCE, name)


def delete_connections(catalog_key: str, names: list[str]) -> tuple[list[str], dict[str, EntityNotFoundException]]:
    """Delete each named connection; the names deleted, and per name not deleted its error
    (each delete stands alone: one missing name does not stop the others)."""
    succeeded: list[str] = []
    errors: dict[str, EntityNotFoundException] = {}
    for name in dict.fromkeys(names):
        try:
            delete_connection(catalog_key, name)
        except EntityNotFoundException as error:
            errors[name] = error
        else:
            succeeded.append(name)
    return succeeded, errors


def list_connections(catalog_key: str, match_criteria: Optional[list[str]], connection_type: Optional[str],
                     schema_version: Optional[int], hide_password: bool, after: Optional[str], limit: int,
                     render: Callable[[dict[str, Any]], Any] = lambda doc: doc) -> tuple[list[Any], Optional[str]]:
    """Up to ``limit`` connections in name order after ``after``, each as ``render(Connection)``,
    keeping those of ``connection_type`` and ``schema_version`` (when given) whose MatchCriteria
    hold every one of ``match_criteria``; the name to resume after (None after the last). One
    Query of the catalog's connections."""
    wanted = set(match_criteria or ())

    def rendered(entry: store.Entry) -> Any:
        doc = entry.doc
        if connection_type is not None and doc.get("ConnectionType") != connection_type:
            return None
        if schema_version is not None and doc.get("ConnectionSchemaVersion") != schema_version:
            return None
        if not wanted <= set(doc.get("MatchCriteria") or ()):
            return None
        return render(hide_secrets(doc) if hide_password else doc)

    entries = store.query(store.scope(catalog_key, store.CONNECTION), "", after, min(limit + 1, 1000))
    return take_page(entries, limit, rendered, lambda entry: entry.key)
