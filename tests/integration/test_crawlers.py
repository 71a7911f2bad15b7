"""Crawlers and classifiers through boto3 over HTTP: definitions, validation, the state machine,
runs crawled by the worker (a stub engine, tests/integration/crawl_stub_engine.py), StopCrawler
mid-run, a worker killed mid-run, ListCrawls, GetCrawlerMetrics, tags."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any, Callable

import pytest

from infra.local.stack import client
from tests.integration.conftest import random_account

S3 = {"S3Targets": [{"Path": "s3://bucket/data/"}]}
STUB = "tests.integration.crawl_stub_engine"


def wait_for(check: Callable[[], Any], timeout: float = 30.0, every: float = 0.2) -> Any:
    """``check()``'s first truthy answer; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = check()
        if answer:
            return answer
        time.sleep(every)
    raise AssertionError(f"not true after {timeout}s: {check}")


@pytest.fixture
def crawl_server(start_server) -> Callable[..., Any]:
    """``crawl_server(**env)``: a server of its own whose worker runs the stub engine on a queue of
    its own (the session server's worker never sees its runs); returns a Glue client factory."""
    def start(**env: str) -> Any:
        settings = {"GLUE_CRAWL_ENGINE": STUB, "GLUE_CRAWL_QUEUE": f"q-{uuid.uuid4().hex}",
                    "GLUE_CRAWL_HEARTBEAT_SECONDS": "0.3", "GLUE_CRAWL_STALE_SECONDS": "30", **env}
        return start_server(**settings)
    return start


def ready(glue: Any, name: str) -> Callable[[], Any]:
    def check() -> Any:
        crawler = glue.get_crawler(Name=name)["Crawler"]
        return crawler if crawler["State"] == "READY" and "LastCrawl" in crawler else None
    return check


# ------------------------------------------------------------------------------ definitions

def test_create_get_update_delete(fresh_glue) -> None:
    fresh_glue.create_crawler(Name="c1", Role="arn:aws:iam::123456789012:role/service-role/Crawl",
                              DatabaseName="sales", Targets=S3, TablePrefix="raw_", Description="d",
                              Configuration='{"Version": 1.0}')
    crawler = fresh_glue.get_crawler(Name="c1")["Crawler"]
    assert crawler["State"] == "READY" and crawler["Version"] == 1
    assert crawler["Targets"]["S3Targets"][0]["Path"] == "s3://bucket/data/"
    assert crawler["SchemaChangePolicy"] == {"UpdateBehavior": "UPDATE_IN_DATABASE",
                                             "DeleteBehavior": "DEPRECATE_IN_DATABASE"}
    assert crawler["CreationTime"] == crawler["LastUpdated"]
    assert "Schedule" not in crawler and "LastCrawl" not in crawler
    fresh_glue.update_crawler(Name="c1", Description="", TablePrefix="t_", Schedule="cron(0 12 * * ? *)")
    crawler = fresh_glue.get_crawler(Name="c1")["Crawler"]
    assert "Description" not in crawler and crawler["TablePrefix"] == "t_" and crawler["Version"] == 2
    assert crawler["Schedule"] == {"ScheduleExpression": "cron(0 12 * * ? *)", "State": "SCHEDULED"}
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException):
        fresh_glue.create_crawler(Name="c1", Role="r", Targets=S3)
    fresh_glue.delete_crawler(Name="c1")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_crawler(Name="c1")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.delete_crawler(Name="c1")


@pytest.mark.parametrize("extra, message", [
    ({"Targets": {}}, "at least one target"),
    ({"Targets": {"S3Targets": [{"Path": "/local/dir"}]}}, "s3://"),
    ({"Schedule": "rate(5 minutes)"}, "schedule"),
    ({"Schedule": "cron(0 12 * * * *)"}, "schedule"),
    ({"Configuration": "not json"}, "configuration"),
    ({"Targets": {"S3Targets": [{"Path": "s3://bucket/data/", "SampleSize": 250}]}}, "between 1 and 249"),
    ({"Configuration": '{"Version": 1.0, "CrawlerOutput": {"Tables": {"TableThreshold": 0}}}'}, "TableThreshold"),
    ({"Classifiers": ["nope"]}, "Classifier nope"),
    ({"RecrawlPolicy": {"RecrawlBehavior": "CRAWL_NEW_FOLDERS_ONLY"}}, "LOG"),
])
def test_create_validation(fresh_glue, extra: dict, message: str) -> None:
    request = {"Name": "bad", "Role": "r", "Targets": S3, **extra}
    with pytest.raises(fresh_glue.exceptions.InvalidInputException) as info:
        fresh_glue.create_crawler(**request)
    assert message.lower() in info.value.response["Error"]["Message"].lower()
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_crawler(Name="bad")


def test_listing_batch_get_and_tags_filter(fresh_glue, account: str) -> None:
    for name, tags in (("a", {"team": "x"}), ("b", {"team": "y"}), ("c", {"team": "x", "env": "p"})):
        fresh_glue.create_crawler(Name=name, Role="r", Targets=S3, Tags=tags)
    assert fresh_glue.list_crawlers()["CrawlerNames"] == ["a", "b", "c"]
    assert fresh_glue.list_crawlers(Tags={"team": "x"})["CrawlerNames"] == ["a", "c"]
    assert fresh_glue.list_crawlers(Tags={"team": "x", "env": "p"})["CrawlerNames"] == ["c"]
    first = fresh_glue.list_crawlers(MaxResults=2)
    assert first["CrawlerNames"] == ["a", "b"]
    assert fresh_glue.list_crawlers(MaxResults=2, NextToken=first["NextToken"])["CrawlerNames"] == ["c"]
    pages = list(fresh_glue.get_paginator("get_crawlers").paginate(PaginationConfig={"PageSize": 1}))
    assert [p["Crawlers"][0]["Name"] for p in pages if p["Crawlers"]] == ["a", "b", "c"]
    answer = fresh_glue.batch_get_crawlers(CrawlerNames=["c", "missing", "a"])
    assert [c["Name"] for c in answer["Crawlers"]] == ["c", "a"]
    assert answer["CrawlersNotFound"] == ["missing"]
    arn = f"arn:aws:glue:us-east-1:{account}:crawler/a"
    assert fresh_glue.get_tags(ResourceArn=arn)["Tags"] == {"team": "x"}
    fresh_glue.tag_resource(ResourceArn=arn, TagsToAdd={"env": "p"})
    assert fresh_glue.list_crawlers(Tags={"env": "p"})["CrawlerNames"] == ["a", "c"]


def test_schedule_state_machine(fresh_glue) -> None:
    fresh_glue.create_crawler(Name="s", Role="r", Targets=S3)
    with pytest.raises(fresh_glue.exceptions.NoScheduleException):
        fresh_glue.start_crawler_schedule(CrawlerName="s")
    with pytest.raises(fresh_glue.exceptions.SchedulerNotRunningException):
        fresh_glue.stop_crawler_schedule(CrawlerName="s")
    fresh_glue.update_crawler_schedule(CrawlerName="s", Schedule="cron(15 12 * * ? *)")
    assert fresh_glue.get_crawler(Name="s")["Crawler"]["Schedule"]["State"] == "SCHEDULED"
    with pytest.raises(fresh_glue.exceptions.SchedulerRunningException):
        fresh_glue.start_crawler_schedule(CrawlerName="s")
    fresh_glue.stop_crawler_schedule(CrawlerName="s")
    assert fresh_glue.get_crawler(Name="s")["Crawler"]["Schedule"] == {
        "ScheduleExpression": "cron(15 12 * * ? *)", "State": "NOT_SCHEDULED"}
    fresh_glue.start_crawler_schedule(CrawlerName="s")
    with pytest.raises(fresh_glue.exceptions.InvalidInputException):
        fresh_glue.update_crawler_schedule(CrawlerName="s", Schedule="cron(bad)")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.update_crawler_schedule(CrawlerName="none", Schedule="cron(15 12 * * ? *)")


@pytest.mark.parametrize("expression", ["cron(* * * * ? *)", "cron(0/4 * * * ? *)", "cron(0,3 12 * * ? *)",
                                        "cron(58 0,23 * * ? *)"])
def test_a_schedule_more_often_than_every_5_minutes_is_refused(fresh_glue, expression: str) -> None:
    """AWS: "Cron expressions that lead to rates faster than 5 minutes are not supported", in
    CreateCrawler, UpdateCrawler and UpdateCrawlerSchedule (cron(58 0,23 ...), at 00:58 and
    23:58, is accepted)."""
    def refused(call: Callable[[], Any]) -> str:
        with pytest.raises(fresh_glue.exceptions.InvalidInputException) as info:
            call()
        return str(info.value.response["Error"]["Message"])

    if expression == "cron(58 0,23 * * ? *)":
        fresh_glue.create_crawler(Name="ok", Role="r", Targets=S3, Schedule=expression)
        return
    message = refused(lambda: fresh_glue.create_crawler(Name="often", Role="r", Targets=S3, Schedule=expression))
    assert "every 5 minutes" in message
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_crawler(Name="often")
    fresh_glue.create_crawler(Name="often", Role="r", Targets=S3, Schedule="cron(0/5 * * * ? *)")
    assert "every 5 minutes" in refused(lambda: fresh_glue.update_crawler(Name="often", Schedule=expression))
    assert "every 5 minutes" in refused(lambda: fresh_glue.update_crawler_schedule(CrawlerName="often",
                                                                                    Schedule=expression))
    crawler = fresh_glue.get_crawler(Name="often")["Crawler"]
    assert crawler["Schedule"]["ScheduleExpression"] == "cron(0/5 * * * ? *)" and crawler["Version"] == 1


def test_list_crawls_filters_as_aws_words_them(crawl_server) -> None:
    """START_TIME / END_TIME values are epoch milliseconds (botocore's CrawlsFilter) or ISO 8601;
    STATE and CRAWL_ID take EQ and NE only; a filter without a member is refused naming it null
    (AWS's wording, as moto's tests have it)."""
    glue = client(crawl_server().endpoint, "glue", account=random_account())
    glue.create_crawler(Name="f", Role="r", Targets=S3)
    glue.start_crawler(Name="f")
    wait_for(ready(glue, "f"))
    [crawl] = glue.list_crawls(CrawlerName="f")["Crawls"]
    start_ms = int(crawl["StartTime"].timestamp() * 1000)

    def found(field: str, op: str, value: str) -> int:
        return len(glue.list_crawls(CrawlerName="f", Filters=[
            {"FieldName": field, "FilterOperator": op, "FieldValue": value}])["Crawls"])
    assert found("START_TIME", "GT", str(start_ms - 60_000)) == 1
    assert found("START_TIME", "LT", str(start_ms - 60_000)) == 0
    assert found("END_TIME", "GE", str(start_ms - 60_000)) == 1
    assert found("START_TIME", "GT", (crawl["StartTime"] - timedelta(minutes=1)).isoformat()) == 1
    assert found("STATE", "EQ", "COMPLETED") == 1 and found("STATE", "NE", "COMPLETED") == 0
    for field in ("STATE", "CRAWL_ID"):
        with pytest.raises(glue.exceptions.InvalidInputException) as info:
            found(field, "LE", "x")
        assert info.value.response["Error"]["Message"] == f"Only EQ or NE operator is allowed for field : {field}"
    with pytest.raises(glue.exceptions.InvalidInputException) as info:
        glue.list_crawls(CrawlerName="f", Filters=[{"FieldName": "CRAWL_ID", "FilterOperator": "NE"}])
    assert info.value.response["Error"]["Message"] == \
        "Invalid Filter Provided: FieldName: CRAWL_ID, FilterOperator: NE, FieldValue: null"


def test_list_crawls_pages_hold_at_most_100(crawl_server) -> None:
    """botocore's ListCrawlsRequest: "The default is 20, and maximum is 100"."""
    glue = client(crawl_server(GLUE_CRAWL_WORKER="0").endpoint, "glue", account=random_account())
    glue.create_crawler(Name="many", Role="r", Targets=S3)
    for _ in range(101):
        glue.start_crawler(Name="many")
        glue.stop_crawler(Name="many")  # no worker: the run ends CANCELLED at once
    first = glue.list_crawls(CrawlerName="many", MaxResults=1000)
    assert len(first["Crawls"]) == 100 and "NextToken" in first
    assert len(glue.list_crawls(CrawlerName="many", MaxResults=1000, NextToken=first["NextToken"])["Crawls"]) == 1
    assert len(glue.list_crawls(CrawlerName="many")["Crawls"]) == 20


def test_classifiers_crud(fresh_glue) -> None:
    fresh_glue.create_classifier(CsvClassifier={"Name": "csv1", "Delimiter": ";", "ContainsHeader": "PRESENT"})
    fresh_glue.create_classifier(JsonClassifier={"Name": "json1", "JsonPath": "$[*]"})
    fresh_glue.create_classifier(XMLClassifier={"Name": "xml1", "Classification": "xml", "RowTag": "row"})
    fresh_glue.create_classifier(GrokClassifier={"Name": "grok1", "Classification": "log",
                                                 "GrokPattern": "%{COMBINEDAPACHELOG}"})
    csv = fresh_glue.get_classifier(Name="csv1")["Classifier"]["CsvClassifier"]
    assert csv["Delimiter"] == ";" and csv["Version"] == 1
    with pytest.raises(fresh_glue.exceptions.AlreadyExistsException):
        fresh_glue.create_classifier(JsonClassifier={"Name": "csv1", "JsonPath": "$"})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException):
        fresh_glue.create_classifier()
    fresh_glue.update_classifier(CsvClassifier={"Name": "csv1", "Delimiter": "|"})
    csv = fresh_glue.get_classifier(Name="csv1")["Classifier"]["CsvClassifier"]
    assert csv["Delimiter"] == "|" and csv["ContainsHeader"] == "PRESENT" and csv["Version"] == 2
    with pytest.raises(fresh_glue.exceptions.InvalidInputException):
        fresh_glue.update_classifier(JsonClassifier={"Name": "csv1", "JsonPath": "$"})
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.update_classifier(JsonClassifier={"Name": "nope", "JsonPath": "$"})
    names = [next(iter(c.values()))["Name"] for c in fresh_glue.get_classifiers()["Classifiers"]]
    assert names == ["csv1", "grok1", "json1", "xml1"]
    fresh_glue.delete_classifier(Name="xml1")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_classifier(Name="xml1")
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.delete_classifier(Name="xml1")


# ------------------------------------------------------------------------------ runs

def test_a_crawl_runs_in_the_worker_and_writes_through_the_crawlers_role(crawl_server) -> None:
    server = crawl_server()
    account = random_account()
    glue = client(server.endpoint, "glue", account=account)
    glue.create_database(DatabaseInput={"Name": "lake"})
    glue.create_classifier(CsvClassifier={"Name": "semi", "Delimiter": ";"})
    glue.create_crawler(Name="c", Role="arn:aws:iam::123456789012:role/CrawlRole", DatabaseName="lake",
                        Targets=S3, TablePrefix="raw_", Description="table", Classifiers=["semi"])
    glue.start_crawler(Name="c")
    # The request only queued the run: the crawler is RUNNING (or already done by the worker).
    assert glue.get_crawler(Name="c")["Crawler"]["State"] in ("RUNNING", "READY")
    with pytest.raises(glue.exceptions.CrawlerRunningException):
        for _ in range(50):
            glue.start_crawler(Name="c")
    crawler = wait_for(ready(glue, "c"))
    assert crawler["LastCrawl"]["Status"] == "SUCCEEDED", crawler["LastCrawl"]
    table = glue.get_table(DatabaseName="lake", Name="raw_stub")["Table"]
    assert table["Parameters"]["classifiers"] == "semi"
    [crawl] = glue.list_crawls(CrawlerName="c")["Crawls"]
    assert crawl["State"] == "COMPLETED" and crawl["Summary"] == "1 table created"
    assert crawl["EndTime"] >= crawl["StartTime"]
    [metrics] = glue.get_crawler_metrics(CrawlerNameList=["c", "missing"])["CrawlerMetricsList"]
    assert metrics["TablesCreated"] == 1 and metrics["StillEstimating"] is False
    assert metrics["LastRuntimeSeconds"] >= 0
    glue.start_crawler(Name="c")  # READY again: a second run
    wait_for(lambda: len(glue.list_crawls(CrawlerName="c")["Crawls"]) == 2
             and glue.get_crawler(Name="c")["Crawler"]["State"] == "READY")
    crawls = glue.list_crawls(CrawlerName="c")["Crawls"]
    assert crawls[0]["StartTime"] >= crawls[1]["StartTime"]  # newest first
    assert [c["CrawlId"] for c in glue.list_crawls(
        CrawlerName="c", Filters=[{"FieldName": "CRAWL_ID", "FilterOperator": "EQ",
                                   "FieldValue": crawls[1]["CrawlId"]}])["Crawls"]] == [crawls[1]["CrawlId"]]
    assert len(glue.list_crawls(CrawlerName="c", MaxResults=1)["Crawls"]) == 1
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.list_crawls(CrawlerName="missing")


def test_a_failing_crawl_ends_failed_with_its_message(crawl_server) -> None:
    server = crawl_server()
    glue = client(server.endpoint, "glue", account=random_account())
    glue.create_crawler(Name="f", Role="r", Targets=S3, Description="fail:no files match")
    glue.start_crawler(Name="f")
    crawler = wait_for(ready(glue, "f"))
    assert crawler["LastCrawl"]["Status"] == "FAILED"
    assert crawler["LastCrawl"]["ErrorMessage"] == "no files match"
    [crawl] = glue.list_crawls(CrawlerName="f")["Crawls"]
    assert crawl["State"] == "FAILED" and crawl["ErrorMessage"] == "no files match"


def test_a_missing_engine_ends_the_run_failed_with_a_clear_message(crawl_server) -> None:
    server = crawl_server(GLUE_CRAWL_ENGINE="tests.integration.no_such_engine")
    glue = client(server.endpoint, "glue", account=random_account())
    glue.create_crawler(Name="m", Role="r", Targets=S3)
    glue.start_crawler(Name="m")
    crawler = wait_for(ready(glue, "m"))
    assert crawler["LastCrawl"]["Status"] == "FAILED"
    assert "crawl engine" in crawler["LastCrawl"]["ErrorMessage"]


def test_stop_crawler_mid_run(crawl_server) -> None:
    server = crawl_server()
    glue = client(server.endpoint, "glue", account=random_account())
    glue.create_crawler(Name="b", Role="r", Targets=S3, Description="block")
    with pytest.raises(glue.exceptions.CrawlerNotRunningException):
        glue.stop_crawler(Name="b")
    glue.start_crawler(Name="b")
    # Claimed once the engine's progress shows (TimeLeftSeconds 99).
    wait_for(lambda: glue.get_crawler_metrics(CrawlerNameList=["b"])["CrawlerMetricsList"][0]["TimeLeftSeconds"] == 99)
    with pytest.raises(glue.exceptions.CrawlerRunningException):
        glue.update_crawler(Name="b", TablePrefix="x")
    with pytest.raises(glue.exceptions.CrawlerRunningException):
        glue.delete_crawler(Name="b")
    assert glue.get_crawler(Name="b")["Crawler"]["CrawlElapsedTime"] >= 0
    glue.stop_crawler(Name="b")
    assert glue.get_crawler(Name="b")["Crawler"]["State"] in ("STOPPING", "READY")
    crawler = wait_for(ready(glue, "b"))
    assert crawler["LastCrawl"]["Status"] == "CANCELLED"
    [crawl] = glue.list_crawls(CrawlerName="b")["Crawls"]
    assert crawl["State"] == "STOPPED"
    glue.delete_crawler(Name="b")


def test_a_worker_killed_mid_run_is_taken_over(crawl_server, tmp_path) -> None:
    queue = f"q-{uuid.uuid4().hex}"
    first = crawl_server(GLUE_CRAWL_QUEUE=queue, GLUE_CRAWL_STALE_SECONDS="2")
    account = random_account()
    glue = client(first.endpoint, "glue", account=account)
    marker = tmp_path / "claimed"
    glue.create_crawler(Name="k", Role="r", Targets=S3, Description=f"once:{marker}")
    glue.start_crawler(Name="k")
    wait_for(marker.exists)
    assert first.process is not None
    first.process.kill()  # the worker dies mid-crawl: its run stays RUNNING with a stale heartbeat
    first.process.wait()
    second = crawl_server(GLUE_CRAWL_QUEUE=queue, GLUE_CRAWL_STALE_SECONDS="2")
    glue = client(second.endpoint, "glue", account=account)
    assert glue.get_crawler(Name="k")["Crawler"]["State"] == "RUNNING"
    crawler = wait_for(ready(glue, "k"), timeout=30)
    assert crawler["LastCrawl"]["Status"] == "SUCCEEDED"
    [crawl] = glue.list_crawls(CrawlerName="k")["Crawls"]
    assert crawl["State"] == "COMPLETED" and crawl["Summary"] == "resumed"
    assert glue.get_crawler_metrics(CrawlerNameList=["k"])["CrawlerMetricsList"][0]["TablesUpdated"] == 2


def test_the_crawl_writes_as_the_crawlers_role_under_lake_formation(crawl_server) -> None:
    server = crawl_server()
    account = random_account()
    glue = client(server.endpoint, "glue", account=account)
    lf = client(server.endpoint, "lakeformation", account=account)
    lf.put_data_lake_settings(DataLakeSettings={
        "DataLakeAdmins": [{"DataLakePrincipalIdentifier": f"arn:aws:iam::{account}:root"}],
        "CreateDatabaseDefaultPermissions": [], "CreateTableDefaultPermissions": []})
    glue.create_database(DatabaseInput={"Name": "lake"})  # no default grants: the role holds nothing on it
    glue.create_crawler(Name="lf", Role="service-role/CrawlRole", DatabaseName="lake", Targets=S3,
                        Description="table")
    glue.start_crawler(Name="lf")
    crawler = wait_for(ready(glue, "lf"))
    assert crawler["LastCrawl"]["Status"] == "FAILED"
    assert "AccessDenied" in crawler["LastCrawl"]["ErrorMessage"]
    lf.grant_permissions(Principal={"DataLakePrincipalIdentifier": f"arn:aws:iam::{account}:role/CrawlRole"},
                         Resource={"Database": {"Name": "lake"}}, Permissions=["CREATE_TABLE"])
    glue.start_crawler(Name="lf")
    wait_for(lambda: glue.get_crawler(Name="lf")["Crawler"].get("LastCrawl", {}).get("Status") == "SUCCEEDED")
    assert glue.get_table(DatabaseName="lake", Name="stub")["Table"]["Name"] == "stub"


def test_a_run_that_keeps_losing_its_worker_ends_failed(crawl_server) -> None:
    """Claims that go stale before their first heartbeat (stale after 1 s, heartbeats every 3 s):
    two workers keep taking the run from each other; each loser learns it at its heartbeat and
    drops the run; after three claims the run ends FAILED instead of RUNNING for ever."""
    queue = f"q-{uuid.uuid4().hex}"
    env = {"GLUE_CRAWL_QUEUE": queue, "GLUE_CRAWL_STALE_SECONDS": "1", "GLUE_CRAWL_HEARTBEAT_SECONDS": "3"}
    first, second = crawl_server(**env), crawl_server(**env)
    account = random_account()
    glue = client(first.endpoint, "glue", account=account)
    glue.create_crawler(Name="lost", Role="r", Targets=S3, Description="block")
    glue.start_crawler(Name="lost")
    crawler = wait_for(ready(client(second.endpoint, "glue", account=account), "lost"), timeout=60)
    assert crawler["LastCrawl"]["Status"] == "FAILED"
    assert "interrupted 3 times" in crawler["LastCrawl"]["ErrorMessage"]
    [crawl] = glue.list_crawls(CrawlerName="lost")["Crawls"]
    assert crawl["State"] == "FAILED"


def test_stopping_a_run_no_worker_claimed_ends_it_at_once(crawl_server) -> None:
    server = crawl_server(GLUE_CRAWL_WORKER="0")
    glue = client(server.endpoint, "glue", account=random_account())
    glue.create_crawler(Name="idle", Role="r", Targets=S3)
    glue.start_crawler(Name="idle")
    assert glue.get_crawler(Name="idle")["Crawler"]["State"] == "RUNNING"  # queued: no worker here
    glue.stop_crawler(Name="idle")
    crawler = glue.get_crawler(Name="idle")["Crawler"]
    assert crawler["State"] == "READY" and crawler["LastCrawl"]["Status"] == "CANCELLED"
    assert glue.list_crawls(CrawlerName="idle")["Crawls"][0]["State"] == "STOPPED"
    glue.start_crawler(Name="idle")  # READY again


# ------------------------------------------------------------------------------ schedules

def test_a_schedule_fires_once_per_tick_whatever_the_number_of_workers(crawl_server, tmp_path) -> None:
    """Two servers (two workers) on one queue and one clock: the crawler's schedule comes due when
    the clock is moved past its next tick; exactly one run is queued for it, crawled, and none
    once the schedule is stopped."""
    offset = tmp_path / "clock-offset"
    offset.write_text("0")
    env = {"GLUE_CRAWL_QUEUE": f"q-{uuid.uuid4().hex}", "GLUE_CLOCK_OFFSET_FILE": str(offset),
           "GLUE_CRAWL_SCHEDULE_SECONDS": "0.2"}
    first, _second = crawl_server(**env), crawl_server(**env)  # two workers on one queue
    account = random_account()
    glue = client(first.endpoint, "glue", account=account)
    glue.create_database(DatabaseInput={"Name": "lake"})
    glue.create_crawler(Name="nightly", Role="CrawlRole", DatabaseName="lake", Targets=S3, Description="table",
                        Schedule="cron(0/5 * * * ? *)")
    time.sleep(1.0)  # not due yet: both workers looked and queued nothing
    assert glue.list_crawls(CrawlerName="nightly")["Crawls"] == []
    offset.write_text("300")  # five minutes on: past the next tick, before the one after
    crawler = wait_for(ready(glue, "nightly"))
    assert crawler["LastCrawl"]["Status"] == "SUCCEEDED", crawler["LastCrawl"]
    assert glue.get_table(DatabaseName="lake", Name="stub")["Table"]["Name"] == "stub"
    time.sleep(1.0)  # both workers had their chance at the same tick
    assert len(glue.list_crawls(CrawlerName="nightly")["Crawls"]) == 1
    glue.stop_crawler_schedule(CrawlerName="nightly")
    offset.write_text("900")
    time.sleep(1.0)
    assert len(glue.list_crawls(CrawlerName="nightly")["Crawls"]) == 1
    glue.start_crawler_schedule(CrawlerName="nightly")  # due again from now: the next tick, not a past one
    time.sleep(1.0)
    assert len(glue.list_crawls(CrawlerName="nightly")["Crawls"]) == 1
    offset.write_text("1200")
    wait_for(lambda: len(glue.list_crawls(CrawlerName="nightly")["Crawls"]) == 2
             and glue.get_crawler(Name="nightly")["Crawler"]["State"] == "READY")


def test_a_running_crawler_skips_its_scheduled_tick(crawl_server, tmp_path) -> None:
    offset = tmp_path / "clock-offset"
    offset.write_text("0")
    server = crawl_server(GLUE_CLOCK_OFFSET_FILE=str(offset), GLUE_CRAWL_SCHEDULE_SECONDS="0.2")
    glue = client(server.endpoint, "glue", account=random_account())
    glue.create_crawler(Name="busy", Role="CrawlRole", Targets=S3, Description="block",
                        Schedule="cron(0/5 * * * ? *)")
    glue.start_crawler(Name="busy")
    wait_for(lambda: glue.get_crawler_metrics(CrawlerNameList=["busy"])["CrawlerMetricsList"][0]["TimeLeftSeconds"])
    offset.write_text("300")  # the tick comes due while the crawl blocks: skipped, not queued after it
    time.sleep(1.5)
    glue.stop_crawler(Name="busy")
    wait_for(ready(glue, "busy"))
    time.sleep(1.0)
    crawls = glue.list_crawls(CrawlerName="busy")["Crawls"]
    assert [c["State"] for c in crawls] == ["STOPPED"]


# ------------------------------------------------------------------------------ under SigV4

def test_a_crawl_succeeds_under_sigv4_signed_with_an_internal_key_of_the_crawlers_role(
        crawl_server, stack, tmp_path) -> None:
    """GLUE_AUTH=sigv4: the worker signs the crawl's calls with a key it issues itself for the
    crawler's role (the table is created as that role, under Lake Formation's rules), and the
    key is gone once the crawl has ended."""
    import json
    import subprocess
    import sys

    import boto3
    from botocore.exceptions import ClientError

    from infra.local.stack import CLIENT_CONFIG, REGION, REPO

    server_env = {"GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(tmp_path / "auth.key")}

    def admin(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "infra.identities", *args], cwd=REPO,
                              env={**stack.env, **server_env}, capture_output=True, text=True, check=True).stdout

    account = random_account()
    admin("principals", "create", f"arn:aws:iam::{account}:user/ops", "--admin")
    key = json.loads(admin("keys", "create", f"arn:aws:iam::{account}:user/ops"))
    server = crawl_server(**server_env)
    glue = boto3.client("glue", endpoint_url=server.endpoint, region_name=REGION, config=CLIENT_CONFIG,
                        aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
    glue.create_database(DatabaseInput={"Name": "lake"})
    role = f"arn:aws:iam::{account}:role/SignedCrawl"
    glue.create_crawler(Name="signed", Role=role, DatabaseName="lake", Targets=S3, Description="table")
    glue.start_crawler(Name="signed")
    crawler = wait_for(ready(glue, "signed"))
    assert crawler["LastCrawl"]["Status"] == "SUCCEEDED", crawler["LastCrawl"]
    assert glue.get_table(DatabaseName="lake", Name="stub")["Table"]["Name"] == "stub"
    assert role in admin("principals", "list")  # the role's principal exists...
    assert role not in admin("keys", "list")  # ...its key was revoked with the crawl's end
    with pytest.raises(ClientError, match="security token"):
        boto3.client("glue", endpoint_url=server.endpoint, region_name=REGION, config=CLIENT_CONFIG,
                     aws_access_key_id=f"{account}:role:SignedCrawl",
                     aws_secret_access_key="crawler").get_databases()  # the open mode's key: refused
