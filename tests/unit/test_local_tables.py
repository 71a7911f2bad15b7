"""infra/local/tables.py protects the tables it creates on real DynamoDB as the template does
(point-in-time recovery, deletion protection), and leaves DynamoDB Local and LocalStack alone."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from infra.local.tables import is_aws_endpoint, protect_tables


@pytest.mark.parametrize(("endpoint", "aws"), [
    (None, True), ("https://dynamodb.eu-west-1.amazonaws.com", True), ("https://dynamodb.cn-north-1.amazonaws.com.cn", True),
    ("https://dynamodb-fips.us-gov-west-1.amazonaws.com", True), ("https://dynamodb.us-east-1.api.aws", True),
    ("http://127.0.0.1:8001", False), ("http://localhost:4566", False), ("http://localstack:4566", False),
    ("http://amazonaws.com.evil.example", False),
])
def test_only_aws_endpoints_are_protected(endpoint: str | None, aws: bool) -> None:
    assert is_aws_endpoint(endpoint) is aws


class FakeDynamoDB:
    """Tables with their protection state; UpdateContinuousBackups refused ``busy`` times first."""

    def __init__(self, tables: dict[str, tuple[bool, bool]], busy: int = 0) -> None:
        self.tables = {name: list(state) for name, state in tables.items()}
        self.busy = busy
        self.calls: list[tuple[str, str]] = []

    def describe_table(self, TableName: str) -> dict[str, Any]:
        return {"Table": {"TableName": TableName, "DeletionProtectionEnabled": self.tables[TableName][0]}}

    def describe_continuous_backups(self, TableName: str) -> dict[str, Any]:
        status = "ENABLED" if self.tables[TableName][1] else "DISABLED"
        return {"ContinuousBackupsDescription": {"ContinuousBackupsStatus": "ENABLED",
                                                 "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": status}}}

    def update_table(self, TableName: str, DeletionProtectionEnabled: bool) -> None:
        self.calls.append(("UpdateTable", TableName))
        self.tables[TableName][0] = DeletionProtectionEnabled

    def update_continuous_backups(self, TableName: str, PointInTimeRecoverySpecification: dict[str, bool]) -> None:
        self.calls.append(("UpdateContinuousBackups", TableName))
        if self.busy:
            self.busy -= 1
            raise ClientError({"Error": {"Code": "ContinuousBackupsUnavailableException",
                                         "Message": "Backups are being enabled for the table"}}, "UpdateContinuousBackups")
        self.tables[TableName][1] = PointInTimeRecoverySpecification["PointInTimeRecoveryEnabled"]


def test_both_protections_are_turned_on_where_off_and_left_where_on() -> None:
    client = FakeDynamoDB({"new": (False, False), "half": (True, False), "done": (True, True)})
    assert protect_tables(client, ["new", "half", "done"], sleep=lambda s: None) == ["new", "half"]
    assert client.tables == {"new": [True, True], "half": [True, True], "done": [True, True]}
    assert client.calls == [("UpdateTable", "new"), ("UpdateContinuousBackups", "new"),
                            ("UpdateContinuousBackups", "half")]


def test_backups_refused_right_after_creation_are_retried_then_given_up() -> None:
    pauses: list[float] = []
    client = FakeDynamoDB({"t": (True, False)}, busy=3)
    assert protect_tables(client, ["t"], sleep=pauses.append) == ["t"]
    assert pauses == [1.0, 2.0, 4.0] and client.tables["t"] == [True, True]
    now = [0.0]
    stuck = FakeDynamoDB({"t": (True, False)}, busy=10**6)

    def wait(seconds: float) -> None:
        now[0] += seconds

    with pytest.raises(ClientError):
        protect_tables(stuck, ["t"], sleep=wait, clock=lambda: now[0])
    assert 300 <= now[0] < 330
