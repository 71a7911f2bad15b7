"""The cleanup's chunk budget (store.catalog): a purge stops after its budget, having flushed what
it deleted, and every chunk deletes at least one item, so a job always progresses."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import pytest

from chalicelib import clock
from chalicelib.store import catalog
from chalicelib.store.dynamo.models import CleanupJobItem
from chalicelib.store.records import CleanupJob


class FakeModel:
    """Records what a batch_write() deleted and flushed."""

    flushed: list[Any] = []

    class _Batch:
        def __init__(self) -> None:
            self.pending: list[Any] = []

        def __enter__(self) -> "FakeModel._Batch":
            return self

        def __exit__(self, *exc: Any) -> None:
            FakeModel.flushed.extend(self.pending)

        def delete(self, item: Any) -> None:
            self.pending.append(item)

    @classmethod
    def batch_write(cls) -> "FakeModel._Batch":
        return cls._Batch()


@pytest.fixture(autouse=True)
def empty() -> Iterator[None]:
    FakeModel.flushed = []
    yield


def test_without_a_budget_everything_goes() -> None:
    catalog.delete_items(FakeModel, range(500))
    assert FakeModel.flushed == list(range(500))


def test_a_budget_stops_the_purge_after_flushing_what_it_deleted() -> None:
    with catalog.purging(catalog.Budget(100, clock.monotonic() + 60)):
        with pytest.raises(catalog.BudgetSpent):
            catalog.delete_items(FakeModel, range(500))
    assert FakeModel.flushed == list(range(100))
    catalog.delete_items(FakeModel, range(3))  # outside: no budget
    assert len(FakeModel.flushed) == 103


def test_a_chunk_past_its_deadline_still_deletes_one_item() -> None:
    with catalog.purging(catalog.Budget(100, clock.monotonic() - 1)):
        with pytest.raises(catalog.BudgetSpent):
            catalog.delete_items(FakeModel, range(500))
    assert FakeModel.flushed == [0]


def test_a_budget_that_is_not_used_up_lets_the_purge_finish() -> None:
    with catalog.purging(catalog.Budget(100, clock.monotonic() + 60)) as budget:
        catalog.delete_items(FakeModel, range(40))
    assert budget.items == 60 and len(FakeModel.flushed) == 40


def test_a_job_is_free_to_cleaners_at_once_and_to_requests_after_the_grace() -> None:
    from chalicelib.store import cleanup

    job = catalog.cleanup_job("table", "u1", db_uid="d", name="t", indexes_json=None)
    assert isinstance(job, CleanupJob) and job.owner is None and job.job.endswith("\x01table\x01u1")
    assert cleanup.claimable(job, job.created, only_expired=False)
    assert not cleanup.claimable(job, job.created, only_expired=True)
    assert cleanup.claimable(job, job.created + catalog.CLEANUP_GRACE_SECONDS + 1, only_expired=True)
    job = dataclasses.replace(job, owner="someone")
    assert not cleanup.claimable(job, job.created, only_expired=False)
    assert job.index_uids() == []


def test_the_purge_of_a_databases_functions_stops_at_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.store import catalog_entries
    from chalicelib.store.dynamo.models import CatalogEntryItem

    stored = [CatalogEntryItem("s", f"d\x01f{i}", db_uid="old" if i % 2 == 0 else "new") for i in range(20)]
    deleted: list[str] = []
    monkeypatch.setattr(CatalogEntryItem, "query", lambda *args, **kwargs: iter(stored))
    monkeypatch.setattr(catalog_entries, "delete", lambda scope, key, db_uid=None, raw=None: deleted.append(key))
    with catalog.purging(catalog.Budget(3, clock.monotonic() + 60)):
        with pytest.raises(catalog.BudgetSpent):
            catalog_entries.purge_database_functions("c", "d", "old")
    assert deleted == ["d\x01f0", "d\x01f2", "d\x01f4"]  # only the old incarnation's, three of them


def test_a_request_helping_looks_at_the_front_of_the_queue_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Helping from a request (only expired jobs) reads at most HELP_SCAN_JOBS jobs, however long
    the queue of jobs it may not take; a cleaner walks it all."""
    from chalicelib.store import cleanup

    now = clock.now()
    pulled: list[int] = []
    limits: list[object] = []

    def query(*args: Any, limit: Any = None, **kwargs: Any) -> Iterator[CleanupJobItem]:
        limits.append(limit)
        for i in range(1000):  # all leased to a live cleaner: none is anyone else's to take
            pulled.append(i)
            yield CleanupJobItem("purge", f"j{i}", owner="busy", lease_until=now + 60)

    monkeypatch.setattr(CleanupJobItem, "query", query)
    assert cleanup.next_job("me", only_expired=True) is None
    assert len(pulled) <= cleanup.HELP_SCAN_JOBS and limits == [cleanup.HELP_SCAN_JOBS]
    pulled.clear()
    assert cleanup.next_job("me", only_expired=False) is None
    assert len(pulled) == 1000


def test_every_module_that_registers_a_job_kind_is_imported_before_a_job_runs() -> None:
    """A cleaner may run in a process that served no request (the scheduled function): every
    module calling ``cleanup.register_kind`` (or ``register_deletion_kind``) must be in ``_KIND_MODULES``, or its jobs (which
    name live tables) would be unknown there."""
    import re
    from pathlib import Path

    from chalicelib.service import cleanup

    root = Path(__file__).resolve().parents[2]
    registering = {".".join(path.relative_to(root).with_suffix("").parts)
                   for path in (root / "chalicelib").rglob("*.py")
                   if re.search(r"^cleanup\.register_(deletion_)?kind\(", path.read_text(), re.MULTILINE)}
    assert registering and registering <= set(cleanup._KIND_MODULES), registering
    assert all(cleanup.known(kind) for kind in ("table", "database", "digest", "backfill", "index-entries", "commit-apply",
                                                "pending-drop"))
    assert not cleanup.known("no-such-kind")
