"""What the skipped moto tests check that AWS also does, checked here with AWS's wording."""

from __future__ import annotations

import boto3
import pytest
from botocore.client import ClientError


@pytest.mark.parametrize("call", ["get_crawler", "delete_crawler"])
def test_moto_crawler_not_found_code(call: str) -> None:
    client = boto3.client("glue", region_name="us-east-1")
    with pytest.raises(ClientError) as exc:
        getattr(client, call)(Name="my_crawler_name")
    assert exc.value.response["Error"]["Code"] == "EntityNotFoundException"
    assert exc.value.response["Error"]["Message"] == "Crawler entry with name my_crawler_name does not exist"


def test_start_crawler_not_found_wording() -> None:
    """AWS's StartCrawler says "Crawler with name X does not exist" (awslabs/aws-customer-churn-pipeline#15)."""
    client = boto3.client("glue", region_name="us-east-1")
    with pytest.raises(ClientError) as exc:
        client.start_crawler(Name="my_crawler_name")
    assert exc.value.response["Error"]["Code"] == "EntityNotFoundException"
    assert exc.value.response["Error"]["Message"] == "Crawler with name my_crawler_name does not exist"
