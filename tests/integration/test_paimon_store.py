"""store/paimon.py on DynamoDB Local: racing commits (one winner per base), schema append
conflicts, tags, partition statistics deltas, rollback. The scenarios
(tests/integration/paimon_store_checks.py) run in a child process on the session's store."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from infra.local.stack import REPO


@pytest.fixture
def run(stack):
    def scenario(name: str) -> dict:
        out = subprocess.run([sys.executable, "-m", "tests.integration.paimon_store_checks", name], cwd=REPO,
                             env=stack.env, check=True, capture_output=True, text=True).stdout
        return json.loads(out)
    return scenario


def test_racing_commits_from_one_base_have_exactly_one_winner(run):
    result = run("racing")
    assert result == {"winners": [1, 1, 1], "head": 3, "stale": False, "stored": 3}


def test_of_racing_schema_appends_one_wins_and_the_history_is_kept(run):
    assert run("schemas") == {"won": 1, "latest": 1, "history": [0, 1]}


def test_tags_are_created_once_listed_in_order_and_deleted(run):
    assert run("tags") == {"first": True, "again": False, "listed": ["v1", "v2"], "after": ["v2"], "got": 1,
                           "deleted": [True, False], "gone": True}


def test_partition_deltas_add_up_once_and_an_empty_partition_is_reported(run):
    result = run("stats")
    assert result["first"] == [["b\x01"], []]  # b does not exist yet: the service creates it
    assert result["retried"] == [[], []]  # a applied once only; b now counted
    assert result["emptied"] == ["b\x01"]
    assert result["rows"] == {"a\x01": [6, 60, 1, 5, 2], "b\x01": [0, 0, 0, 9, 3]}


def test_rollback_moves_the_head_back_once_with_its_totals_and_undoing_deltas(run):
    result = run("commit_and_rollback")
    assert result["totals_before"] == [6, 60, 3, 3]
    assert result["rolled"] == [True, False]
    assert result["head"] == 1 and result["uuid_ok"]
    assert result["totals"] == [1, 10, 1, 1]
    assert result["pending"] == [(-2, -1), (-3, -1)] or result["pending"] == [[-2, -1], [-3, -1]]


def test_one_applier_of_a_stats_operation_holds_its_lease_at_a_time(run):
    result = run("stats_lease")
    # A takes it; B is refused while A holds it; A renews; no lease of a stats operation not decided.
    assert result["taken"] == [True, False, True, False]
    assert result["held"]
    # Only the holder records its cursor, letting the lease go; then it is free, and one that
    # ran out is taken over.
    assert result["marked"] == [False, True] and result["cursor"] == 1
    assert result["after_release"] == [None, True, True]
    # Applied (pending removed): the lease goes with it, and there is nothing left to take.
    assert result["cleared"] == [None, False]


def test_a_key_range_resumed_past_its_end_is_empty(run):
    assert run("ranges") == {"range": ["ba\x01", "bb\x01"], "resumed": ["bb\x01"], "past": []}
