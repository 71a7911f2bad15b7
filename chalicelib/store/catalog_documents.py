"""Catalog-level documents in DynamoDB: one item each in the ``catalog_documents`` table.

Hash key: the catalog (``region SEP catalog id``); range key: the document's key (``tags SEP
database SEP <uid>``, ``policy SEP catalog SEP``, ``settings SEP encryption``...); ``doc``: the
document as JSON (``store.documents`` encoding). Every read is one GetItem and every write one
single-item write, conditional for a read-modify-write (compare-and-set on ``doc``): of two
racing ones exactly one lands and the other re-reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from chalicelib import metrics
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.dynamo.models import SEP, CatalogDocumentItem
from chalicelib.store.dynamo.retry import conditional, retry


@dataclass(frozen=True)
class StoredDocument:
    """One document: its key, its JSON object, and the bytes as stored (the condition of a
    compare-and-set replace or delete)."""

    key: str
    data: Any
    raw: bytes


def _stored(item: CatalogDocumentItem) -> StoredDocument:
    raw = bytes(item.doc)
    return StoredDocument(item.key, decode_document(raw), raw)


def get(catalog: str, key: str) -> Optional[StoredDocument]:
    """One document (one strongly consistent GetItem), or None."""
    metrics.count_read()
    try:
        return _stored(CatalogDocumentItem.get(catalog, key, consistent_read=True))
    except CatalogDocumentItem.DoesNotExist:
        return None


def put(catalog: str, key: str, data: Any, replacing: Optional[StoredDocument], what: str = "document") -> bool:
    """Store ``data`` under ``key`` if the stored document is still ``replacing`` (None: only if
    there is none). False when another write landed first: re-read and decide again."""
    item = CatalogDocumentItem(catalog, key, doc=encode_document(data, what))
    condition = (CatalogDocumentItem.key.does_not_exist() if replacing is None
                 else CatalogDocumentItem.doc == replacing.raw)
    return conditional(lambda: item.save(condition=condition))


def overwrite(catalog: str, key: str, data: Any, what: str = "document") -> None:
    """Store ``data`` under ``key`` whatever is there (the last writer wins)."""
    item = CatalogDocumentItem(catalog, key, doc=encode_document(data, what))
    retry(item.save)


def delete(catalog: str, key: str, expected: Optional[StoredDocument] = None) -> bool:
    """Remove a document (if it is still ``expected``, when given); False if it was not there
    (or had changed)."""
    item = CatalogDocumentItem(catalog, key)
    condition = (CatalogDocumentItem.key.exists() if expected is None
                 else CatalogDocumentItem.doc == expected.raw)
    return conditional(lambda: item.delete(condition=condition))


# ------------------------------------------------------------------------------- document keys
def tags_key(kind: str, identity: str) -> str:
    """Where a resource's tags live: ``kind`` is its ARN resource type, ``identity`` what names
    this incarnation of it (a database's uid)."""
    return f"tags{SEP}{kind}{SEP}{identity}"


def connection_identity(name: str, creation_time: float) -> str:
    """What names one incarnation of a connection in its tags' key: its name and creation time."""
    return f"{name}{SEP}{creation_time!r}"


def policy_key(kind: str, identity: str = "") -> str:
    """Where a resource policy lives (the catalog's own: kind ``catalog``, no identity)."""
    return f"policy{SEP}{kind}{SEP}{identity}"


def settings_key(name: str) -> str:
    """Where one of the catalog's settings documents lives (``encryption``, ``import``)."""
    return f"settings{SEP}{name}"


def forget_resource(catalog: str, kind: str, identity: str) -> None:
    """Delete what is stored about a deleted resource (its tags): one DeleteItem, a no-op when
    there is nothing."""
    retry(CatalogDocumentItem(catalog, tags_key(kind, identity)).delete)
