"""Pure pieces of the partition service: paging by count and bytes with plain positions, and
the checks a listing makes before it reads anything."""

from __future__ import annotations

import pytest

from chalicelib.errors import InvalidInputException
from chalicelib.service import paging
from chalicelib.service.partitions import listing

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


def test_listing_binds_the_expression_and_defaults_the_page_size() -> None:
    wanted = listing(KEYS, "  year = '2024' ", None, False, None)
    assert wanted.expression == "year = '2024'" and wanted.segment is None and wanted.limit == 1000


def test_listing_refuses_a_segment_number_out_of_range() -> None:
    with pytest.raises(InvalidInputException, match=r"SegmentNumber \(4\) must be less than .*TotalSegments \(4\)"):
        listing(KEYS, None, (4, 4), False, 10)


def test_listing_refuses_an_unknown_column() -> None:
    with pytest.raises(InvalidInputException):
        listing(KEYS, "day = 1", None, False, 10)
