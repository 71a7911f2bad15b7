"""AWS's six-field cron expressions, as Glue schedules use them (docs/design.md, "Crawlers and
crawl runs"): ``cron(Minutes Hours Day-of-month Month Day-of-week Year)``, in UTC.

Fields and wildcards as AWS documents them ("Time-based schedules for jobs and crawlers"):

- Minutes 0-59, Hours 0-23, Month 1-12 or JAN-DEC, Year 1970-2199: ``,`` ``-`` ``*`` ``/``;
- Day-of-month 1-31: also ``?``, ``L`` (the last day), ``nW`` (the weekday nearest day n, in
  its month) and ``LW`` (the last weekday);
- Day-of-week 1-7 or SUN-SAT (1 is Sunday): also ``?``, ``L`` (Saturday), ``nL`` (the last
  weekday n of the month) and ``n#k`` (the k-th weekday n of the month);
- exactly one of Day-of-month and Day-of-week is ``?``.

``parse`` raises ValueError on anything else; ``Cron.shortest_gap_minutes()`` is what AWS's
limit is checked against (its "Limits": expressions "that lead to rates faster than 5 minutes
are not supported", ``MIN_GAP_MINUTES``); ``Cron.next_after(t)`` is the first time
strictly after ``t`` (epoch seconds) the expression matches, at a whole minute, or None when
there is none (a past year). Pure: no clock, no store.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Optional

_MONTHS = {name: i for i, name in enumerate(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
                                             "NOV", "DEC"), start=1)}
_DAYS = {name: i for i, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"), start=1)}
_YEARS = (1970, 2199)
# AWS: "the minimum precision for a schedule is 5 minutes".
MIN_GAP_MINUTES = 5
_EXPRESSION = re.compile(r"\s*cron\((.*)\)\s*", re.DOTALL)


def _number(text: str, low: int, high: int, names: dict[str, int]) -> int:
    upper = text.upper()
    if upper in names:
        return names[upper]
    if not text.isdigit():
        raise ValueError(f"not a value: {text!r}")
    value = int(text)
    if not low <= value <= high:
        raise ValueError(f"{value} is outside {low}-{high}")
    return value


def _values(spec: str, low: int, high: int, names: Optional[dict[str, int]] = None) -> frozenset[int]:
    """The values a plain field (``,`` ``-`` ``*`` ``/``) names."""
    names = names or {}
    result: set[int] = set()
    for part in spec.split(","):
        base, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ValueError(f"bad increment in {part!r}")
            step = int(step_text)
        if base == "*":
            start, end = low, high
        elif "-" in base:
            first, _, last = base.partition("-")
            start, end = _number(first, low, high, names), _number(last, low, high, names)
        else:
            start = _number(base, low, high, names)
            end = high if step_text else start
        if start <= end:
            span = list(range(start, end + 1))
        else:  # a range that wraps (FRI-MON, 22-2)
            span = list(range(start, high + 1)) + list(range(low, end + 1))
        result.update(span[::step])
    return frozenset(result)


@dataclass(frozen=True)
class _DaysOfMonth:
    days: frozenset[int] = frozenset()
    last: bool = False
    last_weekday: bool = False
    nearest_weekday: frozenset[int] = frozenset()

    def matches(self, day: date) -> bool:
        length = calendar.monthrange(day.year, day.month)[1]
        if day.day in self.days or (self.last and day.day == length):
            return True
        if self.last_weekday and day == _nearest_weekday(day.year, day.month, length):
            return True
        return any(n <= length and day == _nearest_weekday(day.year, day.month, n) for n in self.nearest_weekday)


@dataclass(frozen=True)
class _DaysOfWeek:
    days: frozenset[int] = frozenset()
    last_of_month: frozenset[int] = frozenset()
    nth: frozenset[tuple[int, int]] = frozenset()

    def matches(self, day: date) -> bool:
        weekday = _aws_weekday(day)
        if weekday in self.days:
            return True
        length = calendar.monthrange(day.year, day.month)[1]
        if weekday in self.last_of_month and day.day + 7 > length:
            return True
        return (weekday, (day.day - 1) // 7 + 1) in self.nth


def _aws_weekday(day: date) -> int:
    """1 for Sunday ... 7 for Saturday."""
    return (day.weekday() + 1) % 7 + 1


def _nearest_weekday(year: int, month: int, n: int) -> date:
    """The Monday-to-Friday day nearest day ``n``, never leaving its month."""
    day = date(year, month, n)
    length = calendar.monthrange(year, month)[1]
    if day.weekday() == 5:  # Saturday: the Friday before, or the Monday after on the 1st
        return day - timedelta(days=1) if n > 1 else day + timedelta(days=2)
    if day.weekday() == 6:  # Sunday: the Monday after, or the Friday before on the last day
        return day + timedelta(days=1) if n < length else day - timedelta(days=2)
    return day


def _days_of_month(spec: str) -> _DaysOfMonth:
    days: set[int] = set()
    nearest: set[int] = set()
    last = last_weekday = False
    for part in spec.split(","):
        upper = part.upper()
        if upper == "L":
            last = True
        elif upper == "LW":
            last_weekday = True
        elif upper.endswith("W"):
            nearest.add(_number(part[:-1], 1, 31, {}))
        else:
            days.update(_values(part, 1, 31))
    return _DaysOfMonth(frozenset(days), last, last_weekday, frozenset(nearest))


def _days_of_week(spec: str) -> _DaysOfWeek:
    days: set[int] = set()
    last: set[int] = set()
    nth: set[tuple[int, int]] = set()
    for part in spec.split(","):
        upper = part.upper()
        if upper == "L":
            days.add(7)
        elif upper.endswith("L"):
            last.add(_number(part[:-1], 1, 7, _DAYS))
        elif "#" in part:
            weekday, _, which = part.partition("#")
            nth.add((_number(weekday, 1, 7, _DAYS), _number(which, 1, 5, {})))
        else:
            days.update(_values(part, 1, 7, _DAYS))
    return _DaysOfWeek(frozenset(days), frozenset(last), frozenset(nth))


@dataclass(frozen=True)
class Cron:
    """A parsed expression (``parse``)."""

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    months: frozenset[int]
    years: frozenset[int]
    days_of_month: Optional[_DaysOfMonth] = None
    days_of_week: Optional[_DaysOfWeek] = None
    _years_sorted: tuple[int, ...] = field(default=(), compare=False)

    def _day_matches(self, day: date) -> bool:
        if self.days_of_month is not None:
            return self.days_of_month.matches(day)
        return self.days_of_week is not None and self.days_of_week.matches(day)

    def shortest_gap_minutes(self) -> int:
        """The fewest minutes between two runs on a day it runs (the last run of a day and the
        first of the next counted too, as if every day ran: a bound, never more than the truth
        for a schedule that runs every day)."""
        times = sorted(hour * 60 + minute for hour in self.hours for minute in self.minutes)
        gaps = [later - earlier for earlier, later in zip(times, times[1:])]
        return min(gaps + [times[0] + 24 * 60 - times[-1]])

    def next_after(self, seconds: float) -> Optional[float]:
        """The first matching whole minute strictly after ``seconds`` (epoch, UTC), or None."""
        start = datetime.fromtimestamp(int(seconds // 60) * 60, tz=timezone.utc) + timedelta(minutes=1)
        day = start.date()
        first_minute = (start.hour, start.minute)
        while day.year <= _YEARS[1]:
            if day.year not in self.years:
                later = [y for y in self._years_sorted if y > day.year]
                if not later:
                    return None
                day, first_minute = date(later[0], 1, 1), (0, 0)
                continue
            if day.month not in self.months:
                day = date(day.year + day.month // 12, day.month % 12 + 1, 1)
                first_minute = (0, 0)
                continue
            if self._day_matches(day):
                for hour in self.hours:
                    for minute in self.minutes:
                        if (hour, minute) >= first_minute:
                            moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=timezone.utc)
                            return moment.timestamp()
            day, first_minute = day + timedelta(days=1), (0, 0)
        return None


def parse(expression: str) -> Cron:
    """``cron(...)`` parsed; ValueError (with what is wrong) otherwise."""
    match = _EXPRESSION.fullmatch(expression)
    fields = match.group(1).split() if match else []
    if len(fields) != 6:
        raise ValueError("a schedule is cron( six fields )")
    minutes, hours, dom, month, dow, year = fields
    if (dom == "?") == (dow == "?"):
        raise ValueError("exactly one of Day-of-month and Day-of-week must be ?")
    years = _values(year, *_YEARS)
    return Cron(minutes=tuple(sorted(_values(minutes, 0, 59))), hours=tuple(sorted(_values(hours, 0, 23))),
                months=_values(month, 1, 12, _MONTHS), years=years,
                days_of_month=None if dom == "?" else _days_of_month(dom),
                days_of_week=None if dow == "?" else _days_of_week(dow), _years_sorted=tuple(sorted(years)))
