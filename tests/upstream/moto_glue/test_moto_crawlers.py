# Vendored from getmoto/moto, tests/test_glue/test_datacatalog.py at commit
# 0af643a5dbfc98797f08ee64f5be3ef8002d56ff: its crawler tests (lines 1115-1732), test bodies unchanged. Only the imports differ:
# ``mock_aws``, ``settings``, ``utcnow`` and ``freeze_time`` come from this directory's moto_shim.py
# (no mock: boto3 reaches this service, AWS_ENDPOINT_URL_GLUE set by conftest.py; server mode),
# ``helpers`` is the vendored helpers.py. Tests that assert moto-only behaviour are marked in
# conftest.py, each with its reason.
"""moto's crawler tests (test_datacatalog.py) against this service (vendored)."""
import json
from datetime import datetime, timezone

import boto3
import pytest
from botocore.client import ClientError

from tests.upstream.moto_glue import helpers
from tests.upstream.moto_glue.moto_shim import freeze_time, mock_aws, settings, utcnow

FROZEN_CREATE_TIME = datetime(2015, 1, 1, 0, 0, 0, tzinfo=timezone.utc)


@mock_aws
@freeze_time(FROZEN_CREATE_TIME)
def test_create_crawler_scheduled():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    role = "arn:aws:iam::123456789012:role/Glue/Role"
    database_name = "my_database_name"
    description = "my crawler description"
    targets = {
        "S3Targets": [{"Path": "s3://my-source-bucket/"}],
        "JdbcTargets": [],
        "MongoDBTargets": [],
        "DynamoDBTargets": [],
        "CatalogTargets": [],
    }
    schedule = "cron(15 12 * * ? *)"
    classifiers = []
    table_prefix = "my_table_prefix_"
    schema_change_policy = {
        "UpdateBehavior": "LOG",
        "DeleteBehavior": "LOG",
    }
    recrawl_policy = {"RecrawlBehavior": "CRAWL_NEW_FOLDERS_ONLY"}
    lineage_configuration = {"CrawlerLineageSettings": "DISABLE"}
    configuration = json.dumps(
        {
            "Version": 1.0,
            "CrawlerOutput": {
                "Partitions": {"AddOrUpdateBehavior": "InheritFromTable"},
            },
            "Grouping": {"TableGroupingPolicy": "CombineCompatibleSchemas"},
        }
    )
    crawler_security_configuration = "my_security_configuration"
    tags = {"tag_key": "tag_value"}
    helpers.create_crawler(
        client,
        name,
        role,
        targets,
        database_name=database_name,
        description=description,
        schedule=schedule,
        classifiers=classifiers,
        table_prefix=table_prefix,
        schema_change_policy=schema_change_policy,
        recrawl_policy=recrawl_policy,
        lineage_configuration=lineage_configuration,
        configuration=configuration,
        crawler_security_configuration=crawler_security_configuration,
        tags=tags,
    )

    response = client.get_crawler(Name=name)
    crawler = response["Crawler"]

    assert crawler.get("Name") == name
    assert crawler.get("Role") == role
    assert crawler.get("DatabaseName") == database_name
    assert crawler.get("Description") == description
    assert crawler.get("Targets") == targets
    assert crawler["Schedule"] == {"ScheduleExpression": schedule, "State": "SCHEDULED"}
    assert crawler.get("Classifiers") == classifiers
    assert crawler.get("TablePrefix") == table_prefix
    assert crawler.get("SchemaChangePolicy") == schema_change_policy
    assert crawler.get("RecrawlPolicy") == recrawl_policy
    assert crawler.get("LineageConfiguration") == lineage_configuration
    assert crawler.get("Configuration") == configuration
    assert crawler["CrawlerSecurityConfiguration"] == crawler_security_configuration

    assert crawler.get("State") == "READY"
    assert crawler.get("CrawlElapsedTime") == 0
    assert crawler.get("Version") == 1
    if not settings.TEST_SERVER_MODE:
        assert crawler["CreationTime"].timestamp() == FROZEN_CREATE_TIME.timestamp()
        assert crawler["LastUpdated"].timestamp() == FROZEN_CREATE_TIME.timestamp()

    assert "LastCrawl" not in crawler


@mock_aws
@freeze_time(FROZEN_CREATE_TIME)
def test_create_crawler_unscheduled():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    role = "arn:aws:iam::123456789012:role/Glue/Role"
    database_name = "my_database_name"
    description = "my crawler description"
    targets = {
        "S3Targets": [{"Path": "s3://my-source-bucket/"}],
        "JdbcTargets": [],
        "MongoDBTargets": [],
        "DynamoDBTargets": [],
        "CatalogTargets": [],
    }
    classifiers = []
    table_prefix = "my_table_prefix_"
    schema_change_policy = {
        "UpdateBehavior": "LOG",
        "DeleteBehavior": "LOG",
    }
    recrawl_policy = {"RecrawlBehavior": "CRAWL_NEW_FOLDERS_ONLY"}
    lineage_configuration = {"CrawlerLineageSettings": "DISABLE"}
    configuration = json.dumps(
        {
            "Version": 1.0,
            "CrawlerOutput": {
                "Partitions": {"AddOrUpdateBehavior": "InheritFromTable"},
            },
            "Grouping": {"TableGroupingPolicy": "CombineCompatibleSchemas"},
        }
    )
    crawler_security_configuration = "my_security_configuration"
    tags = {"tag_key": "tag_value"}
    helpers.create_crawler(
        client,
        name,
        role,
        targets,
        database_name=database_name,
        description=description,
        classifiers=classifiers,
        table_prefix=table_prefix,
        schema_change_policy=schema_change_policy,
        recrawl_policy=recrawl_policy,
        lineage_configuration=lineage_configuration,
        configuration=configuration,
        crawler_security_configuration=crawler_security_configuration,
        tags=tags,
    )

    response = client.get_crawler(Name=name)
    crawler = response["Crawler"]

    assert crawler.get("Name") == name
    assert crawler.get("Role") == role
    assert crawler.get("DatabaseName") == database_name
    assert crawler.get("Description") == description
    assert crawler.get("Targets") == targets
    assert "Schedule" not in crawler
    assert crawler.get("Classifiers") == classifiers
    assert crawler.get("TablePrefix") == table_prefix
    assert crawler.get("SchemaChangePolicy") == schema_change_policy
    assert crawler.get("RecrawlPolicy") == recrawl_policy
    assert crawler.get("LineageConfiguration") == lineage_configuration
    assert crawler.get("Configuration") == configuration
    assert crawler["CrawlerSecurityConfiguration"] == crawler_security_configuration

    assert crawler.get("State") == "READY"
    assert crawler.get("CrawlElapsedTime") == 0
    assert crawler.get("Version") == 1
    if not settings.TEST_SERVER_MODE:
        assert crawler["CreationTime"].timestamp() == FROZEN_CREATE_TIME.timestamp()
        assert crawler["LastUpdated"].timestamp() == FROZEN_CREATE_TIME.timestamp()

    assert "LastCrawl" not in crawler


@mock_aws
def test_create_crawler_already_exists():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    with pytest.raises(ClientError) as exc:
        helpers.create_crawler(client, name)

    assert exc.value.response["Error"]["Code"] == "AlreadyExistsException"


@mock_aws
def test_get_crawler_not_exits():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"

    with pytest.raises(ClientError) as exc:
        client.get_crawler(Name=name)

    assert exc.value.response["Error"]["Code"] == "EntityNotFoundException"
    assert (
        exc.value.response["Error"]["Message"] == "Crawler my_crawler_name not found."
    )


@mock_aws
def test_get_crawlers_empty():
    client = boto3.client("glue", region_name="us-east-1")
    response = client.get_crawlers()
    assert len(response["Crawlers"]) == 0


@mock_aws
def test_get_crawlers_several_items():
    client = boto3.client("glue", region_name="us-east-1")
    name_1, name_2 = "my_crawler_name_1", "my_crawler_name_2"

    helpers.create_crawler(client, name_1)
    helpers.create_crawler(client, name_2)

    crawlers = sorted(client.get_crawlers()["Crawlers"], key=lambda x: x["Name"])
    assert len(crawlers) == 2
    assert crawlers[0].get("Name") == name_1
    assert crawlers[1].get("Name") == name_2


@mock_aws
def test_start_crawler():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"

    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)

    response = client.get_crawler(Name=name)
    crawler = response["Crawler"]

    assert crawler.get("State") == "RUNNING"


@mock_aws
def test_start_crawler_should_raise_exception_if_already_running():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"

    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)
    with pytest.raises(ClientError) as exc:
        client.start_crawler(Name=name)

    assert exc.value.response["Error"]["Code"] == "CrawlerRunningException"


@mock_aws
def test_stop_crawler():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"

    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)

    client.stop_crawler(Name=name)

    response = client.get_crawler(Name=name)
    crawler = response["Crawler"]

    assert crawler.get("State") == "STOPPING"


@mock_aws
def test_stop_crawler_should_raise_exception_if_not_running():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    with pytest.raises(ClientError) as exc:
        client.stop_crawler(Name=name)

    assert exc.value.response["Error"]["Code"] == "CrawlerNotRunningException"


@mock_aws
def test_delete_crawler():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    result = client.delete_crawler(Name=name)
    assert result["ResponseMetadata"]["HTTPStatusCode"] == 200

    # confirm crawler is deleted
    with pytest.raises(ClientError) as exc:
        client.get_crawler(Name=name)

    assert exc.value.response["Error"]["Code"] == "EntityNotFoundException"
    assert (
        exc.value.response["Error"]["Message"] == "Crawler my_crawler_name not found."
    )


@mock_aws
def test_delete_crawler_not_exists():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"

    with pytest.raises(ClientError) as exc:
        client.delete_crawler(Name=name)

    assert exc.value.response["Error"]["Code"] == "EntityNotFoundException"
    assert (
        exc.value.response["Error"]["Message"] == "Crawler my_crawler_name not found."
    )


@mock_aws
def test_list_crawls():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)

    response = client.list_crawls(CrawlerName=name)
    assert len(response["Crawls"]) == 1


@mock_aws
def test_list_crawls_no_crawler_with_name():
    client = boto3.client("glue", region_name="us-east-1")
    name = "non_existent_crawler"

    with pytest.raises(ClientError) as exc:
        client.list_crawls(CrawlerName=name)

    assert exc.value.response["Error"]["Code"] == "EntityNotFoundException"
    assert (
        exc.value.response["Error"]["Message"]
        == f"Crawler entry with name {name} does not exist"
    )


@mock_aws
def test_bad_filter_operator():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    bad_filter_value = "bad_value"

    with pytest.raises(ClientError) as exc:
        client.list_crawls(
            CrawlerName=name,
            Filters=[
                {
                    "FieldName": "CRAWL_ID",
                    "FilterOperator": bad_filter_value,
                    "FieldValue": "ee3401e1-b7b9-4d76-adfc-202e5484b8e1",
                }
            ],
        )

    assert exc.value.response["Error"]["Code"] == "ValidationException"
    assert (
        exc.value.response["Error"]["Message"]
        == f"Value '{bad_filter_value}' at 'filters.1.member.filterOperator' failed to satisfy constraint: Member must satisfy enum value set: [LT, EQ, GT, NE, LE, GE]"
    )


@mock_aws
def test_bad_filter_field_name():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    bad_field_name = "bad_value"

    with pytest.raises(ClientError) as exc:
        client.list_crawls(
            CrawlerName=name,
            Filters=[
                {
                    "FieldName": bad_field_name,
                    "FilterOperator": "LE",
                    "FieldValue": "ee3401e1-b7b9-4d76-adfc-202e5484b8e1",
                }
            ],
        )

    assert exc.value.response["Error"]["Code"] == "ValidationException"
    assert (
        exc.value.response["Error"]["Message"]
        == f"Value '{bad_field_name}' at 'filters.1.member.fieldName' failed to satisfy constraint: Member must satisfy enum value set: [START_TIME, END_TIME, STATE, CRAWL_ID, DPU_HOUR]"
    )


@mock_aws
def test_use_ordered_compare_operator_on_state_field():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    with pytest.raises(ClientError) as exc:
        client.list_crawls(
            CrawlerName=name,
            Filters=[
                {
                    "FieldName": "STATE",
                    "FilterOperator": "LE",
                    "FieldValue": "RUNNING",
                }
            ],
        )

    assert exc.value.response["Error"]["Code"] == "InvalidInputException"
    assert (
        exc.value.response["Error"]["Message"]
        == "Only EQ or NE operator is allowed for field : STATE"
    )


@mock_aws
def test_use_ordered_compare_operator_on_uid_field():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    with pytest.raises(ClientError) as exc:
        client.list_crawls(
            CrawlerName=name,
            Filters=[
                {
                    "FieldName": "CRAWL_ID",
                    "FilterOperator": "LE",
                    "FieldValue": "some_uid",
                }
            ],
        )

    assert exc.value.response["Error"]["Code"] == "InvalidInputException"
    assert (
        exc.value.response["Error"]["Message"]
        == "Only EQ or NE operator is allowed for field : CRAWL_ID"
    )


@mock_aws
@pytest.mark.parametrize("operator", ["NE", "EQ"])
def test_filter_crawls_for_state(operator):
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)
    # turn crawler to completed
    client.list_crawls(CrawlerName=name)
    client.start_crawler(Name=name)

    crawls = client.list_crawls(
        CrawlerName=name,
        Filters=[
            {
                "FieldName": "STATE",
                "FilterOperator": operator,
                "FieldValue": "RUNNING",
            }
        ],
    )

    assert len(crawls["Crawls"]) == 1


@mock_aws
@pytest.mark.parametrize("operator", ["LE", "LT", "GE", "GT"])
def test_filter_crawls_for_start_time(operator):
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)
    between_the_two_run_starts = utcnow()
    # turn crawler to completed
    client.list_crawls(CrawlerName=name)

    client.start_crawler(Name=name)

    crawls = client.list_crawls(
        CrawlerName=name,
        Filters=[
            {
                "FieldName": "START_TIME",
                "FilterOperator": operator,
                "FieldValue": between_the_two_run_starts.isoformat(),
            }
        ],
    )

    assert len(crawls["Crawls"]) == 1


@mock_aws
@pytest.mark.parametrize("operator", ["LE", "LT", "GE", "GT"])
def test_filter_crawls_for_end_time(operator):
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)
    # turn crawler to completed
    client.list_crawls(CrawlerName=name)

    client.start_crawler(Name=name)
    between_the_two_run_ends = utcnow()
    client.list_crawls(CrawlerName=name)

    crawls = client.list_crawls(
        CrawlerName=name,
        Filters=[
            {
                "FieldName": "END_TIME",
                "FilterOperator": operator,
                "FieldValue": between_the_two_run_ends.isoformat(),
            }
        ],
    )

    assert len(crawls["Crawls"]) == 1


@mock_aws
@pytest.mark.parametrize("operator", ["LE", "LT", "GE", "GT"])
def test_multiple_filters(operator):
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)
    # turn crawler to completed
    client.list_crawls(CrawlerName=name)

    between_the_two_runs = utcnow()
    client.start_crawler(Name=name)
    client.list_crawls(CrawlerName=name)

    crawls = client.list_crawls(
        CrawlerName=name,
        Filters=[
            {
                "FieldName": "END_TIME",
                "FilterOperator": operator,
                "FieldValue": between_the_two_runs.isoformat(),
            },
            {
                "FieldName": "START_TIME",
                "FilterOperator": operator,
                "FieldValue": between_the_two_runs.isoformat(),
            },
        ],
    )

    assert len(crawls["Crawls"]) == 1


@mock_aws
def test_filter_crawls_for_crawl_id():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)

    first_crawl_crawl_id = client.list_crawls(CrawlerName=name)["Crawls"][0]["CrawlId"]
    client.start_crawler(Name=name)

    crawls = client.list_crawls(
        CrawlerName=name,
        Filters=[
            {
                "FieldName": "CRAWL_ID",
                "FilterOperator": "EQ",
                "FieldValue": first_crawl_crawl_id,
            }
        ],
    )

    assert len(crawls["Crawls"]) == 1
    assert crawls["Crawls"][0]["CrawlId"] == first_crawl_crawl_id


@mock_aws
def test_filter_crawls_for_not_crawl_id():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    client.start_crawler(Name=name)

    first_crawl_crawl_id = client.list_crawls(CrawlerName=name)["Crawls"][0]["CrawlId"]
    client.start_crawler(Name=name)

    crawls = client.list_crawls(
        CrawlerName=name,
        Filters=[
            {
                "FieldName": "CRAWL_ID",
                "FilterOperator": "NE",
                "FieldValue": first_crawl_crawl_id,
            }
        ],
    )

    assert len(crawls["Crawls"]) == 1
    assert crawls["Crawls"][0]["CrawlId"] != first_crawl_crawl_id


@mock_aws
def test_crawl_filter_missing_field():
    client = boto3.client("glue", region_name="us-east-1")
    name = "my_crawler_name"
    helpers.create_crawler(client, name)

    with pytest.raises(ClientError) as exc:
        client.list_crawls(
            CrawlerName=name,
            Filters=[
                {
                    "FieldName": "CRAWL_ID",
                    "FilterOperator": "NE",
                }
            ],
        )

    assert exc.value.response["Error"]["Code"] == "InvalidInputException"
    assert (
        exc.value.response["Error"]["Message"]
        == "Invalid Filter Provided: FieldName: CRAWL_ID, FilterOperator: NE, FieldValue: null"
    )
