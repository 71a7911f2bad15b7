"""Who applies a Paimon commit's partition statistics when several want to
(chalicelib/service/paimon_snapshots.py, ``_apply_stats``): the head's stats lease met between two
chunks. The moment another applier takes the lease cannot be chosen from outside a running
server, so the head, its lease and the clock are kept in memory here; the integration tests
(test_paimon_stats_budget.py) drive the same code through pypaimon."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.domain.paimon.snapshots import PartitionDelta, Totals
from chalicelib.service import paimon_snapshots as ps
from chalicelib.service.table_ref import TableRef
from chalicelib.store import paimon as store

SEQ = 7
DELTAS = [PartitionDelta({"region": f"r{n:05d}"}, record_count=1, file_count=1) for n in range(5 * ps.STATS_CHUNK)]


class Stage:
    """A head whose lease ``another`` holds at first, a clock moved only by sleeping, and the
    chunks this call applied (their first partition's position)."""

    def __init__(self, another_until: float, another_reaches: int) -> None:
        self.time = 1_000.0
        self.head = store.Head("main", 2, "u", Totals(), SEQ, list(DELTAS), 2,
                               stats_lease_until=self.time + another_until)
        self.another_reaches = another_reaches  # stats_done when another's lease runs out
        self.holder = "another"
        self.applied: list[int] = []

    def take(self, uid: str, seq: int, owner: str, seconds: float, branch: str) -> bool:
        if owner != self.holder and self.head.stats_lease_until is not None \
                and self.head.stats_lease_until > self.time:
            return False
        self.holder = owner
        self.head = replace(self.head, stats_lease_until=self.time + seconds)
        return True

    def read_head(self, uid: str, branch: str) -> store.Head:
        if self.holder == "another" and self.head.stats_lease_until is not None \
                and self.head.stats_lease_until <= self.time:
            self.head = replace(self.head, stats_done=max(self.head.stats_done, self.another_reaches))
        return self.head

    def sleep(self, seconds: float) -> None:
        self.time += seconds


@pytest.fixture
def stage(monkeypatch: pytest.MonkeyPatch) -> Any:
    def make(another_until: float, another_reaches: int) -> Stage:
        stage = Stage(another_until, another_reaches)
        monkeypatch.setattr(clock, "now", lambda: stage.time)
        monkeypatch.setattr(clock, "monotonic", lambda: stage.time)
        monkeypatch.setattr(clock, "sleep", stage.sleep)
        monkeypatch.setattr(store, "take_stats_lease", stage.take)
        monkeypatch.setattr(store, "get_head", stage.read_head)
        monkeypatch.setattr(store, "mark_stats_done", lambda *args, **kwargs: True)
        monkeypatch.setattr(ps, "_apply_stats_chunk",
                            lambda table, seq, by_key: stage.applied.append(DELTAS.index(next(iter(by_key.values())))))
        return stage
    return make


def _table() -> ps.TableBranch:
    return ps.TableBranch(TableRef("123456789012", "123456789012", "db", "wide"), "0" * 32, None, "/w",
                          ["region"], ["string"], "main")


def test_a_move_with_budget_waits_for_the_applier_holding_the_lease_and_goes_on_from_where_it_got(stage: Any) -> None:
    stage = stage(another_until=1.5, another_reaches=2 * ps.STATS_CHUNK)
    assert ps._apply_stats(_table(), SEQ, DELTAS, deadline=stage.time + 120) is True
    assert stage.applied == [2 * ps.STATS_CHUNK, 3 * ps.STATS_CHUNK, 4 * ps.STATS_CHUNK]


def test_a_lease_held_past_the_deadline_is_left_to_its_holder(stage: Any) -> None:
    stage = stage(another_until=600, another_reaches=ps.STATS_CHUNK)
    began = stage.time
    assert ps._apply_stats(_table(), SEQ, DELTAS, deadline=began + 5) is False
    assert stage.applied == []
    assert stage.time - began <= 5


def test_without_a_deadline_a_held_lease_answers_at_once(stage: Any) -> None:
    stage = stage(another_until=1.5, another_reaches=ps.STATS_CHUNK)
    assert ps._apply_stats(_table(), SEQ, DELTAS) is False
    assert (stage.applied, stage.time) == ([], 1_000.0)
