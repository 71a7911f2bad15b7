"""The identities admin command's output (infra/identities.py): times as AWS prints them, and
help that shows the defaults."""

from __future__ import annotations

import pytest

from infra.identities import iso_time, parser


def test_created_is_an_iso_utc_time() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00Z"
    assert iso_time(1767323045.75) == "2026-01-02T03:04:05Z"


def test_tokens_create_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["tokens", "create", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "days until the token expires (default: 30.0)" in text
    assert "(default: us-east-1)" in text
