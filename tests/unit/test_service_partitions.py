"""Pure pieces of the partition service: paging by count and bytes with plain positions, and
the checks a listing makes before it reads anything."""

from __future__ import annotations

import pytest

from chalicelib.errors import InvalidInputException
from chalicelib.service import paging
from chalicelib.service.partitions import listing
from chalicelib.store.demand import Demand

KEYS = [("year", "string"), ("month", "int")]


def test_page_ends_with_a_position_only_when_more_follows() -> None:
    page, last = paging.take_page(range(5), 2, lambda n: {"n": n}, lambda n: n)
    assert page == [{"n": 0}, {"n": 1}] and last == 1
    page, last = paging.take_page(range(2), 2, lambda n: {"n": n}, lambda n: n)
    assert page == [{"n": 0}, {"n": 1}] and last is None


def test_skipped_items_still_move_the_position() -> None:
    page, last = paging.take_page(range(6), 2, lambda n: None if n % 2 else (str(n), 1), lambda n: n, sized=True)
    assert page == ["0", "2"] and last == 2


def test_page_stops_at_the_byte_budget_and_resumes_after_the_last_item_kept(monkeypatch) -> None:
    monkeypatch.setattr(paging, "MAX_PAGE_BYTES", 10)
    page, last = paging.take_page(range(10), 100, lambda n: (str(n), 4), lambda n: n, sized=True)
    assert page == ["0", "1"] and last == 1


def test_out_of_work_budget_a_page_ends_after_the_last_item_examined(monkeypatch) -> None:
    """The work budget is a monotonic deadline; here the clock reads 0, 1, 2... one tick per
    item examined, so a deadline of 4 passes once item 4 has been examined."""
    examined: list[int] = []
    clock_now = iter(range(100))
    monkeypatch.setattr(paging.clock, "monotonic", lambda: next(clock_now))

    def render(n: int):
        examined.append(n)
        return (str(n), 1) if n == 1 else None  # a selective filter: only 1 is kept

    page, last = paging.take_page(range(10), 100, render, lambda n: n, sized=True, deadline=4)
    assert page == ["1"] and last == 4 and examined == [0, 1, 2, 3, 4]
    # An empty page still carries where it stopped; at least one item is examined per call.
    page, last = paging.take_page(range(5, 10), 100, render, lambda n: n, sized=True, deadline=0)
    assert page == [] and last == 5
    # A page that is full before the deadline ends as before.
    page, last = paging.take_page(range(10), 1, lambda n: str(n), lambda n: n, deadline=10 ** 6)
    assert page == ["0"] and last == 0


def test_demand_sizes_dynamodb_pages_from_what_the_reader_keeps() -> None:
    demand = Demand(101)
    assert demand.next_page(0) == 101  # first page: what the reader means to return
    assert demand.next_page(101) is None  # nothing kept yet: DynamoDB's full 1 MB pages
    for _ in range(10):
        demand.keep()
    assert demand.next_page(1000) == 11_375  # 91 more at 1 kept in 100 read, with a 25 % margin
    for _ in range(90):
        demand.keep()
    assert demand.next_page(101) == 2  # keeps everything: just the rest (at least one)
    # The share is that of the current Query (the next key range): none kept there yet.
    assert demand.next_page(500, kept_before=100) is None


def test_listing_binds_the_expression_and_defaults_the_page_size() -> None:
    wanted = listing(KEYS, "  year = '2024' ", None, False, None)
    assert wanted.expression == "year = '2024'" and wanted.segment is None and wanted.limit == 1000


def test_listing_refuses_a_segment_number_out_of_range() -> None:
    with pytest.raises(InvalidInputException, match=r"SegmentNumber \(4\) must be less than .*TotalSegments \(4\)"):
        listing(KEYS, None, (4, 4), False, 10)


def test_listing_refuses_an_unknown_column() -> None:
    with pytest.raises(InvalidInputException):
        listing(KEYS, "day = 1", None, False, 10)
