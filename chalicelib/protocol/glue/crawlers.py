"""Crawler and classifier API: CreateCrawler, GetCrawler, GetCrawlers, ListCrawlers,
BatchGetCrawlers, UpdateCrawler, DeleteCrawler, StartCrawler, StopCrawler, GetCrawlerMetrics,
ListCrawls, UpdateCrawlerSchedule, StartCrawlerSchedule, StopCrawlerSchedule, CreateClassifier,
GetClassifier, GetClassifiers, UpdateClassifier, DeleteClassifier.

The rules live in ``service.crawlers`` and ``service.classifiers``; StartCrawler only queues a
run (a worker crawls, never this request).
"""

from __future__ import annotations

from typing import Any

from chalicelib.context import RequestContext
from chalicelib.protocol.aws_json.common import make_token, page_size, read_token
from chalicelib.service import classifiers, crawl_runs, crawlers


def _paged(key: str, page: list[Any], token: str | None) -> dict[str, Any]:
    return {key: page, **({"NextToken": token} if token else {})}


def create_crawler(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a crawler (READY); AlreadyExistsException if the name is taken."""
    crawlers.create_crawler(ctx.catalog_key({}), params)
    return {}


def get_crawler(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One crawler's definition and state."""
    return {"Crawler": crawlers.get_crawler(ctx.catalog_key({}), params["Name"])}


def get_crawlers(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every crawler in name order, paged."""
    key = ctx.catalog_key({})
    page, last = crawlers.list_crawlers(key, read_token(ctx, params, key), page_size(params, 100))
    return _paged("Crawlers", page, make_token(ctx, last, key))


def list_crawlers(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Crawler names in name order, those with every tag of Tags, paged."""
    key = ctx.catalog_key({})
    wanted = params.get("Tags") or {}
    scope = (key, sorted(wanted.items()))
    page, last = crawlers.list_crawlers(key, read_token(ctx, params, *scope), page_size(params, 100), wanted,
                                        as_name=True)
    return _paged("CrawlerNames", page, make_token(ctx, last, *scope))


def batch_get_crawlers(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The crawlers named; the names without one in CrawlersNotFound."""
    found, missing = crawlers.batch_get_crawlers(ctx.catalog_key({}), params["CrawlerNames"])
    return {"Crawlers": found, "CrawlersNotFound": missing}


def update_crawler(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Change a crawler's definition; CrawlerRunningException while it runs."""
    crawlers.update_crawler(ctx.catalog_key({}), params)
    return {}


def delete_crawler(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a crawler and its run history; CrawlerRunningException while it runs."""
    crawlers.delete_crawler(ctx.catalog_key({}), params["Name"])
    return {}


def start_crawler(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Queue a crawl (the crawler RUNNING); CrawlerRunningException unless it is READY."""
    crawlers.start_crawler(ctx.catalog_key({}), params["Name"], ctx.account_id)
    return {}


def stop_crawler(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Ask the running crawl to stop (STOPPING, then READY with LastCrawl CANCELLED); a run no
    worker has claimed yet ends at once."""
    crawlers.stop_crawler(ctx.catalog_key({}), params["Name"])
    crawl_runs.cancel_unclaimed(ctx.catalog_key({}), params["Name"])
    return {}


def get_crawler_metrics(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Metrics of the crawlers named in CrawlerNameList, or of all of them, paged."""
    key = ctx.catalog_key({})
    names = params.get("CrawlerNameList") or []
    scope = (key, names)
    page, last = crawlers.get_crawler_metrics(key, names, read_token(ctx, params, *scope), page_size(params, 100))
    return _paged("CrawlerMetricsList", page, make_token(ctx, last, *scope))


def list_crawls(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """A crawler's runs, newest first, filtered by Filters, paged."""
    key = ctx.catalog_key({})
    filters = params.get("Filters") or []
    scope = (key, params["CrawlerName"], [sorted(f.items()) for f in filters])
    # botocore's ListCrawlsRequest: "The default is 20, and maximum is 100" (the shape allows 1,000).
    page, last = crawlers.list_crawls(key, params["CrawlerName"], filters, read_token(ctx, params, *scope),
                                      min(page_size(params, 20), 100))
    return _paged("Crawls", page, make_token(ctx, last, *scope))


def update_crawler_schedule(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Set or change a crawler's cron schedule."""
    crawlers.update_crawler_schedule(ctx.catalog_key({}), params["CrawlerName"], params.get("Schedule"))
    return {}


def start_crawler_schedule(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Schedule state SCHEDULED."""
    crawlers.start_crawler_schedule(ctx.catalog_key({}), params["CrawlerName"])
    return {}


def stop_crawler_schedule(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Schedule state NOT_SCHEDULED."""
    crawlers.stop_crawler_schedule(ctx.catalog_key({}), params["CrawlerName"])
    return {}


def create_classifier(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a CSV, JSON, XML or Grok classifier."""
    classifiers.create_classifier(ctx.catalog_key({}), params)
    return {}


def get_classifier(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One classifier."""
    return {"Classifier": classifiers.get_classifier(ctx.catalog_key({}), params["Name"])}


def get_classifiers(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Every classifier in name order, paged."""
    key = ctx.catalog_key({})
    page, last = classifiers.list_classifiers(key, read_token(ctx, params, key), page_size(params, 100))
    return _paged("Classifiers", page, make_token(ctx, last, key))


def update_classifier(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Change a classifier's fields (its kind stays)."""
    classifiers.update_classifier(ctx.catalog_key({}), params)
    return {}


def delete_classifier(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a classifier."""
    classifiers.delete_classifier(ctx.catalog_key({}), params["Name"])
    return {}
