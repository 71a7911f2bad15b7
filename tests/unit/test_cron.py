"""AWS's six-field cron expressions (chalicelib/domain/cron.py): parsing and the next time due."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chalicelib.domain import cron


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


def iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M")


@pytest.mark.parametrize("expression, after, due", [
    ("cron(0 10 * * ? *)", "2026-12-03T09:50:00", "2026-12-03T10:00"),
    ("cron(0 10 * * ? *)", "2026-12-03T10:00:00", "2026-12-04T10:00"),  # strictly after
    ("cron(15 12 * * ? *)", "2026-12-31T12:15:30", "2027-01-01T12:15"),
    ("cron(0/15 * * * ? *)", "2026-12-03T09:50:10", "2026-12-03T10:00"),
    ("cron(1/10 * * * ? *)", "2026-12-03T09:50:10", "2026-12-03T09:51"),
    ("cron(* * * * ? *)", "2026-12-03T09:50:10", "2026-12-03T09:51"),
    # 2026-12-03 is a Thursday; MON-FRI at 18:00
    ("cron(0 18 ? * MON-FRI *)", "2026-12-04T18:00:00", "2026-12-07T18:00"),
    ("cron(0/5 8-17 ? * MON-FRI *)", "2026-12-04T17:55:00", "2026-12-07T08:00"),
    ("cron(0 8 1 * ? *)", "2026-12-03T00:00:00", "2027-01-01T08:00"),
    ("cron(0 0 L * ? *)", "2027-02-01T00:00:00", "2027-02-28T00:00"),
    ("cron(0 0 L * ? *)", "2028-02-01T00:00:00", "2028-02-29T00:00"),  # leap year
    ("cron(0 0 LW * ? *)", "2027-01-01T00:00:00", "2027-01-29T00:00"),  # Jan 31 2027 is a Sunday
    ("cron(0 0 1W * ? *)", "2026-07-31T00:00:00", "2026-08-03T00:00"),  # Aug 1 2026: Saturday -> Monday 3rd
    ("cron(0 0 15W * ? *)", "2026-11-01T00:00:00", "2026-11-16T00:00"),  # Nov 15 2026: Sunday -> Monday
    ("cron(0 0 ? * 6L *)", "2026-12-01T00:00:00", "2026-12-25T00:00"),  # last Friday of December
    ("cron(0 0 ? * 3#2 *)", "2026-12-01T00:00:00", "2026-12-08T00:00"),  # second Tuesday
    ("cron(0 0 ? * 1 *)", "2026-12-03T00:00:00", "2026-12-06T00:00"),  # 1 is Sunday
    ("cron(0 0 ? * L *)", "2026-12-03T00:00:00", "2026-12-05T00:00"),  # L alone: Saturday
    ("cron(0 0 ? * FRI-MON *)", "2026-12-03T00:00:00", "2026-12-04T00:00"),  # a range that wraps
    ("cron(0 12 1 JAN,JUL ? *)", "2026-12-03T00:00:00", "2027-01-01T12:00"),
    ("cron(0 0 1 1 ? 2030)", "2026-12-03T00:00:00", "2030-01-01T00:00"),
    ("cron(0 0 1 1 ? 2020-2025)", "2026-12-03T00:00:00", None),  # never again
    ("cron(0 0 31 2 ? *)", "2026-12-03T00:00:00", None),  # February has no 31st
])
def test_next_after(expression: str, after: str, due: str | None) -> None:
    assert iso(cron.parse(expression).next_after(at(after))) == due


@pytest.mark.parametrize("expression", [
    "rate(5 minutes)", "cron(0 12 * * * *)", "cron(0 12 ? * ? *)", "cron(0 12 * *)", "cron(60 * * * ? *)",
    "cron(0 24 * * ? *)", "cron(0 0 32 * ? *)", "cron(0 0 ? * 8 *)", "cron(0 0 * 13 ? *)", "cron(0 0 * * ? 1969)",
    "cron(0/0 * * * ? *)", "cron(x * * * ? *)", "cron(0 0 ? * 2#6 *)", "cron(0 0 L-3 * ? *)", "cron(0 0 * FOO ? *)",
])
def test_invalid(expression: str) -> None:
    with pytest.raises(ValueError):
        cron.parse(expression)


@pytest.mark.parametrize("expression, gap", [
    ("cron(* * * * ? *)", 1),
    ("cron(0/5 * * * ? *)", 5),
    ("cron(0/4 * * * ? *)", 4),          # 0, 4, ..., 56: 56 -> 60 is 4 too
    ("cron(0/7 * * * ? *)", 4),          # ..., 49, 56, then 0 of the next hour
    ("cron(0,3 12 * * ? *)", 3),
    ("cron(15 12 * * ? *)", 24 * 60),
    ("cron(0 */6 * * ? *)", 6 * 60),
    ("cron(58 23 ? * MON *)", 24 * 60),
    ("cron(2 0 * * ? *)", 24 * 60),
    ("cron(58 0,23 * * ? *)", 60),       # 23:58 -> 00:58 of the next day
])
def test_shortest_gap_minutes(expression: str, gap: int) -> None:
    """What AWS's 5-minute limit is checked against (service/crawlers.validate_schedule)."""
    assert cron.parse(expression).shortest_gap_minutes() == gap
