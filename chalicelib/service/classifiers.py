"""Glue classifiers of a catalog: CreateClassifier, GetClassifier, GetClassifiers,
UpdateClassifier, DeleteClassifier. Stored definitions (CSV, JSON, XML, Grok) that crawlers name
in their ``Classifiers``; the crawl engine reads them.

A classifier is stored as its ``Classifier`` union: one member (``CsvClassifier``...) holding
the request's fields with CreationTime, LastUpdated and Version.
"""

from __future__ import annotations

from typing import Any, Optional

from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException)
from chalicelib.service.databases import now
from chalicelib.service.paging import take_page
from chalicelib.store import crawls as store

KINDS = ("GrokClassifier", "XMLClassifier", "JsonClassifier", "CsvClassifier")
_RESOURCE = "Classifier"


def _not_found(name: str) -> EntityNotFoundException:
    return EntityNotFoundException(f"Classifier {name} does not exist", _RESOURCE, name)


def _one_kind(request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The one classifier a Create/UpdateClassifier request carries; InvalidInputException
    for none or several (AWS's rule: exactly one)."""
    given = [kind for kind in KINDS if request.get(kind) is not None]
    if len(given) != 1:
        raise InvalidInputException("Exactly one of GrokClassifier, XMLClassifier, JsonClassifier or "
                                    "CsvClassifier must be specified")
    return given[0], dict(request[given[0]])


def _check(kind: str, fields: dict[str, Any]) -> None:
    if kind == "CsvClassifier":
        if fields.get("QuoteSymbol") is not None and fields.get("QuoteSymbol") == fields.get("Delimiter"):
            raise InvalidInputException("CsvClassifier: QuoteSymbol and Delimiter must differ")
        if fields.get("CustomDatatypes") and not fields.get("CustomDatatypeConfigured"):
            raise InvalidInputException("CsvClassifier: CustomDatatypes requires CustomDatatypeConfigured true")


def _scope(catalog_key: str) -> str:
    return store.scope(catalog_key, store.CLASSIFIER)


def create_classifier(catalog_key: str, request: dict[str, Any]) -> None:
    """Store a new classifier; AlreadyExistsException if the name is taken."""
    kind, fields = _one_kind(request)
    _check(kind, fields)
    stamp = now()
    fields.update(CreationTime=stamp, LastUpdated=stamp, Version=1)
    name = fields["Name"]
    if not store.create(_scope(catalog_key), name, {kind: fields}, "classifier"):
        raise AlreadyExistsException(f"Classifier {name} already exists", _RESOURCE, name)


def get_classifier(catalog_key: str, name: str) -> dict[str, Any]:
    """The stored ``Classifier``; EntityNotFoundException if there is none."""
    entry = store.get(_scope(catalog_key), name)
    if entry is None:
        raise _not_found(name)
    return entry.doc


def find_classifiers(catalog_key: str, names: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The classifiers named (in order) and the names that have none."""
    found, missing = [], []
    for name in names:
        entry = store.get(_scope(catalog_key), name)
        if entry is None:
            missing.append(name)
        else:
            found.append(entry.doc)
    return found, missing


def update_classifier(catalog_key: str, request: dict[str, Any]) -> None:
    """Change a classifier's fields (those given replace the stored ones); its kind cannot
    change (InvalidInputException); Version is incremented."""
    kind, fields = _one_kind(request)
    name = fields["Name"]
    scope = _scope(catalog_key)
    old = store.get(scope, name)
    if old is None:
        raise _not_found(name)
    if kind not in old.doc:
        stored_kind = next(iter(old.doc))
        raise InvalidInputException(f"Classifier {name} is a {stored_kind}; it cannot be updated with a {kind}")
    merged = {**old.doc[kind], **{k: v for k, v in fields.items() if v is not None}}
    _check(kind, merged)
    merged.update(LastUpdated=now(), Version=int(old.doc[kind].get("Version", 1)) + 1)
    if not store.replace(scope, old, {kind: merged}, "classifier"):
        raise ConcurrentModificationException(f"Classifier {name} was changed concurrently; retry.")


def delete_classifier(catalog_key: str, name: str) -> None:
    """Delete a classifier; EntityNotFoundException if there is none."""
    if not store.delete(_scope(catalog_key), name):
        raise _not_found(name)


def list_classifiers(catalog_key: str, after: Optional[str], limit: int) -> tuple[list[dict[str, Any]], Optional[str]]:
    """Up to ``limit`` classifiers in name order after ``after``; the name to resume after."""
    entries = store.query(_scope(catalog_key), "", after, min(limit + 1, 1000))
    return take_page(entries, limit, lambda entry: entry.doc, lambda entry: entry.key)
