"""Glue crawlers, classifiers and crawl runs in DynamoDB: ``catalog_entries`` items
(docs/design.md, "Crawlers and crawl runs").

- a crawler: hash ``catalog key SEP crawler``, range its name; the document holds the
  ``Crawler`` structure and its metrics;
- a classifier: hash ``catalog key SEP classifier``, range its name;
- a crawl run: hash ``catalog key SEP crawl``, range ``crawler SEP inverted start ms SEP crawl
  id``, so ListCrawls (newest first) is one ``begins_with`` Query;
- the run queue: ONE hash key (``crawl-queue``) for every account and region, range ``catalog
  key SEP crawler``: what a worker polls (one Query, empty when nothing runs);
- the schedule index: ONE hash key (``crawl-queue SEP schedule``), range ``catalog key SEP
  crawler``, one entry per crawler whose schedule is SCHEDULED: its expression and the next
  time it is due, what the workers fire schedules from.

Every change is a write conditional on the document read (``Entry.raw``), or one transaction
of such writes where the crawler, its run and its queue entry must change together.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from pynamodb.transactions import TransactWrite

from chalicelib import settings
from chalicelib.store import catalog_entries
from chalicelib.store.catalog_entries import Entry
from chalicelib.store.documents import encode_document
from chalicelib.store.dynamo.fence import transact
from chalicelib.store.dynamo.models import SEP, CatalogEntryItem
from chalicelib.store.dynamo.retry import conditional

CRAWLER = "crawler"
CLASSIFIER = "classifier"
CRAWL = "crawl"
# One hash key for every account and region; a test's server and worker may use their own.
QUEUE_SCOPE = settings.current().crawl_queue
# The schedule index: next to the queue, so a test's own queue has its own schedules too.
SCHEDULE_SCOPE = f"{QUEUE_SCOPE}{SEP}schedule"
# Start times are inverted against this (ms), so a crawler's newest run sorts first.
_LAST_MS = 10 ** 15

__all__ = ["Entry", "CRAWLER", "CLASSIFIER", "CRAWL", "scope", "run_key", "run_prefix", "queue_key",
           "split_queue_key", "get", "create", "replace", "delete", "query", "start", "finish", "queued",
           "scheduled", "get_scheduled", "put_scheduled", "replace_scheduled", "delete_scheduled"]


def scope(catalog_key: str, kind: str) -> str:
    """The hash key of a catalog's crawlers, classifiers or crawl runs."""
    return catalog_entries.scope(catalog_key, kind)


def run_prefix(crawler_name: str) -> str:
    """The range-key prefix of one crawler's runs."""
    return f"{crawler_name}{SEP}"


def run_key(crawler_name: str, start_ms: int, crawl_id: str) -> str:
    """The range key of a run: newest first within its crawler."""
    return f"{run_prefix(crawler_name)}{_LAST_MS - start_ms:015d}{SEP}{crawl_id}"


def queue_key(catalog_key: str, crawler_name: str) -> str:
    """The queue entry of a crawler's current run (at most one run per crawler)."""
    return f"{catalog_key}{SEP}{crawler_name}"


def split_queue_key(key: str) -> tuple[str, str]:
    """(catalog key, crawler name) of a queue entry's key (the catalog key holds one SEP)."""
    region, catalog_id, crawler_name = key.split(SEP, 2)
    return f"{region}{SEP}{catalog_id}", crawler_name


get = catalog_entries.get
create = catalog_entries.create
delete = catalog_entries.delete
query = catalog_entries.query


def replace(scope_key: str, old: Entry, doc: dict[str, Any], what: str) -> bool:
    """Replace ``old`` in place if it is still exactly as read; False otherwise."""
    return catalog_entries.replace(scope_key, old, old.key, doc, what)


def _item(scope_key: str, key: str, doc: dict[str, Any], what: str) -> CatalogEntryItem:
    return CatalogEntryItem(scope_key, key, doc=encode_document(doc, what))


def start(crawler_scope: str, crawler: Entry, crawler_doc: dict[str, Any], runs_scope: str, key: str,
          run_doc: dict[str, Any], queue_entry: str, queue_doc: dict[str, Any]) -> bool:
    """In one transaction: the crawler (still as read) replaced by ``crawler_doc``, its run
    created, its queue entry created. False if the crawler changed or a run is queued."""
    def build(tx: TransactWrite) -> None:
        tx.save(_item(crawler_scope, crawler.key, crawler_doc, "crawler"), condition=CatalogEntryItem.doc == crawler.raw)
        tx.save(_item(runs_scope, key, run_doc, "crawl"), condition=CatalogEntryItem.key.does_not_exist())
        tx.save(_item(QUEUE_SCOPE, queue_entry, queue_doc, "crawl"), condition=CatalogEntryItem.key.does_not_exist())
    return conditional(lambda: transact(None, build))


def finish(crawler_scope: str, crawler: Entry, crawler_doc: dict[str, Any], runs_scope: str, run: Entry,
           run_doc: dict[str, Any], queue_entry: str) -> bool:
    """In one transaction: crawler and run (each still as read) replaced, the queue entry
    removed. False if either changed meanwhile."""
    def build(tx: TransactWrite) -> None:
        tx.save(_item(crawler_scope, crawler.key, crawler_doc, "crawler"), condition=CatalogEntryItem.doc == crawler.raw)
        tx.save(_item(runs_scope, run.key, run_doc, "crawl"), condition=CatalogEntryItem.doc == run.raw)
        tx.delete(CatalogEntryItem(QUEUE_SCOPE, queue_entry))
    return conditional(lambda: transact(None, build))


def queued(limit: int = 100) -> Iterator[Entry]:
    """The queue entries (every account and region): one Query."""
    return catalog_entries.query(QUEUE_SCOPE, "", None, limit)


def get_queued(key: str) -> Optional[Entry]:
    """One queue entry, or None."""
    return catalog_entries.get(QUEUE_SCOPE, key)


def delete_queued(key: str) -> bool:
    """Remove a queue entry (a run that can no longer be finished normally)."""
    return catalog_entries.delete(QUEUE_SCOPE, key)


def scheduled(limit: int = 100) -> Iterator[Entry]:
    """The schedule index (every account and region): one Query."""
    return catalog_entries.query(SCHEDULE_SCOPE, "", None, limit)


def get_scheduled(key: str) -> Optional[Entry]:
    """One crawler's schedule index entry (key as ``queue_key``), or None."""
    return catalog_entries.get(SCHEDULE_SCOPE, key)


def put_scheduled(key: str, doc: dict[str, Any], old: Optional[Entry]) -> bool:
    """Create the entry (``old`` None: only if there is none) or replace ``old`` if it is still
    as read; False otherwise."""
    if old is None:
        return catalog_entries.create(SCHEDULE_SCOPE, key, doc, "crawler")
    return catalog_entries.replace(SCHEDULE_SCOPE, old, key, doc, "crawler")


def replace_scheduled(old: Entry, doc: dict[str, Any]) -> bool:
    """Replace a schedule entry if it is still exactly as read (how one worker of many wins a
    tick); False otherwise."""
    return catalog_entries.replace(SCHEDULE_SCOPE, old, old.key, doc, "crawler")


def delete_scheduled(key: str, raw: Optional[bytes] = None) -> bool:
    """Remove a schedule entry (if still ``raw`` when given)."""
    return catalog_entries.delete(SCHEDULE_SCOPE, key, raw=raw)
