"""Tags of Data Catalog resources: TagResource, UntagResource, GetTags, and the Tags of a create.

AWS tags these catalog resources: databases, connections and crawlers ("AWS tags in AWS Glue"); a
table, function or catalog ARN is InvalidInputException here, as there. A resource's tags are one
document (``store.catalog_documents``) keyed by the resource's *identity*: a uid minted when the
resource is created, so a resource deleted and re-created under the same name starts untagged
even if the deletion's clean-up (``forget_resource``) never ran. Limits as AWS documents them:
at most 50 tags per resource; keys 1-128 and values 0-256 characters (checked against the model
before an action runs); keys starting with ``aws:`` are reserved.
"""

from __future__ import annotations

from typing import Any, Callable

from chalicelib.context import RequestContext
from chalicelib.domain import arns
from chalicelib.errors import ConcurrentModificationException, EntityNotFoundException, InvalidInputException
from chalicelib.service.lookups import require_database, require_table
from chalicelib.store import catalog_documents as documents
from chalicelib.store import catalog_entries
from chalicelib.attempts import Policy, attempts

MAX_TAGS = 50
RESERVED_PREFIX = "aws:"

# How a resource type finds the identity of the resource an ARN names: (catalog key, names from
# the ARN) -> identity, EntityNotFoundException when there is no such resource.
Resolver = Callable[[str, tuple[str, ...]], str]


def _database_identity(catalog_key: str, names: tuple[str, ...]) -> str:
    return require_database(catalog_key, names[0]).uid


def _table_identity(catalog_key: str, names: tuple[str, ...]) -> str:
    return require_table(require_database(catalog_key, names[0]), names[1]).uid


def connection_identity(connection: dict[str, Any]) -> str:
    """What names one incarnation of a connection (its stored ``Connection``): its name and
    creation time, so a connection deleted and created again starts untagged."""
    return documents.connection_identity(connection["Name"], connection["CreationTime"])


def _connection_identity(catalog_key: str, names: tuple[str, ...]) -> str:
    entry = catalog_entries.get(catalog_entries.scope(catalog_key, catalog_entries.CONNECTION), names[0])
    if entry is None:
        raise EntityNotFoundException(f"Connection {names[0]} not found.", "Connection", names[0])
    return connection_identity(entry.doc)


def _crawler_identity(catalog_key: str, names: tuple[str, ...]) -> str:
    entry = catalog_entries.get(catalog_entries.scope(catalog_key, "crawler"), names[0])
    if entry is None:
        raise EntityNotFoundException(f"Crawler entry with name {names[0]} does not exist", "Crawler", names[0])
    crawler = entry.doc["Crawler"]
    return documents.connection_identity(crawler["Name"], crawler["CreationTime"])


# The taggable resource types (AWS tags databases, connections and crawlers, not tables or functions).
_TAGGABLE: dict[str, Resolver] = {"database": _database_identity, "connection": _connection_identity,
                                  "crawler": _crawler_identity}
# Resources GetResourcePolicy / DeleteResourcePolicy accept an ARN of (besides the catalog).
POLICY_RESOURCES: dict[str, Resolver] = {"database": _database_identity, "table": _table_identity}


def resource_arn(ctx: RequestContext, catalog_id: str, kind: str, *names: str) -> str:
    """The ARN of a catalog resource in the caller's region (``kind``: ``database``, ``connection``...)."""
    return arns.format_arn(ctx.region, catalog_id, kind, *names)


def locate(ctx: RequestContext, arn: str, resolvers: dict[str, Resolver],
           what: str = "tagged") -> tuple[str, arns.GlueArn, str]:
    """The catalog key, parsed ARN and resource identity an ARN names (the resource must exist).

    InvalidInputException for a malformed ARN, another region, or a resource type not in
    ``resolvers``; AccessDeniedException for another account's catalog (as a CatalogId);
    EntityNotFoundException when the resource does not exist.
    """
    parsed = arns.parse(arn)
    if parsed.region != ctx.region:
        raise InvalidInputException(
            f"ResourceArn '{arn[:200]}' is in region {parsed.region[:64]}, but this request is for region "
            f"{ctx.region}: a resource is addressed in its own region")
    catalog_key = ctx.catalog_key({"CatalogId": parsed.account})
    resolver = resolvers.get(parsed.kind)
    if resolver is None:
        allowed = " and ".join(f"{kind}s" for kind in resolvers)
        raise InvalidInputException(
            f"ResourceArn '{arn[:200]}': a {parsed.kind} cannot be {what}; only {allowed} can")
    return catalog_key, parsed, resolver(catalog_key, parsed.names)


def _check_keys(keys: list[str] | set[str], member: str) -> None:
    for key in keys:
        if key.lower().startswith(RESERVED_PREFIX):
            raise InvalidInputException(
                f"{member} key '{key}' is not allowed: tag keys starting with '{RESERVED_PREFIX}' are "
                "reserved for AWS use")


def _check_count(count: int, member: str) -> None:
    if count > MAX_TAGS:
        raise InvalidInputException(
            f"{member}: a resource can have at most {MAX_TAGS} tags; this request would give it {count}")


def get_tags(ctx: RequestContext, arn: str) -> dict[str, str]:
    """The tags of the resource ``arn`` names (empty when it has none)."""
    catalog_key, parsed, identity = locate(ctx, arn, _TAGGABLE)
    stored = documents.get(catalog_key, documents.tags_key(parsed.kind, identity))
    return dict(stored.data) if stored else {}


def _change(ctx: RequestContext, arn: str, change: Callable[[dict[str, str]], dict[str, str]]) -> None:
    """Apply ``change`` to a resource's tags, compare-and-set (re-read and re-applied when
    another change landed in between, so none is lost)."""
    catalog_key, parsed, identity = locate(ctx, arn, _TAGGABLE)
    key = documents.tags_key(parsed.kind, identity)
    for _ in attempts(Policy(attempts=8)):
        stored = documents.get(catalog_key, key)
        current = dict(stored.data) if stored else {}
        wanted = change(current)
        if wanted == current:
            return
        if not wanted:
            landed = stored is not None and documents.delete(catalog_key, key, expected=stored)
        else:
            landed = documents.put(catalog_key, key, wanted, stored, "tags")
        if landed:
            _drop_if_gone(catalog_key, parsed, identity)
            return
    raise ConcurrentModificationException("The resource's tags are being changed by other requests; retry.")


def _drop_if_gone(catalog_key: str, parsed: arns.GlueArn, identity: str) -> None:
    # A delete that ran between our lookup and our write has already forgotten the tags: the
    # write then made a document nothing reaches. Remove it rather than leave it stored.
    try:
        current: str | None = _TAGGABLE[parsed.kind](catalog_key, parsed.names)
    except EntityNotFoundException:
        current = None
    if current != identity:
        documents.forget_resource(catalog_key, parsed.kind, identity)


def tag_resource(ctx: RequestContext, arn: str, tags_to_add: dict[str, str]) -> None:
    """Add tags to a resource (a key it has already gets the new value)."""
    _check_keys(list(tags_to_add), "TagsToAdd")

    def add(current: dict[str, str]) -> dict[str, str]:
        merged = {**current, **tags_to_add}
        _check_count(len(merged), "TagsToAdd")
        return merged
    _change(ctx, arn, add)


def untag_resource(ctx: RequestContext, arn: str, tags_to_remove: list[str]) -> None:
    """Remove tags from a resource by key (keys it does not have are ignored)."""
    _check_keys(tags_to_remove, "TagsToRemove")
    removed = set(tags_to_remove)
    _change(ctx, arn, lambda current: {k: v for k, v in current.items() if k not in removed})


def tag_new_resource(catalog_key: str, kind: str, identity: str, tags: dict[str, str] | None) -> None:
    """Store the Tags of a create (CreateDatabase, CreateConnection), checked as TagResource
    checks them. Call it *before* the resource item is written, with the fresh identity the
    create gives it: until then nothing reaches the tags, so a create that fails leaves nothing
    visible behind (call ``forget_resource`` to remove them then). InvalidInputException for a
    reserved key."""
    if not tags:
        return
    _check_keys(list(tags), "Tags")
    _check_count(len(tags), "Tags")
    key = documents.tags_key(kind, identity)
    if not documents.put(catalog_key, key, dict(tags), None, "tags"):
        raise ConcurrentModificationException(f"Tags for {kind} {identity} already exist; retry.")


def forget_resource(catalog_key: str, kind: str, identity: str) -> None:
    """Drop the tags of a deleted (or never created) resource. Keyed by the identity, they are
    unreachable once the resource is gone; this frees the storage."""
    documents.forget_resource(catalog_key, kind, identity)
