"""The one clock of the service: every lease, idle limit, expiry and wait reads it here.

``now()`` is wall-clock seconds since the epoch (stored timestamps: transaction activity,
commit leases, backfill leases); ``monotonic()`` measures waits; ``sleep()`` pauses them.

Tests move the clock of a running server (a separate process) through a file: with
``GLUE_CLOCK_OFFSET_FILE`` set, ``now()`` adds the seconds written in that file (missing or
empty: 0). The file is read only then, so production pays nothing; moving the clock forward
lets a test expire a lease or an idle transaction without sleeping through it.
"""

from __future__ import annotations

import time

from chalicelib import settings

_OFFSET_FILE = settings.current().clock_offset_file


def _offset() -> float:
    try:
        with open(_OFFSET_FILE, encoding="ascii") as file:  # type: ignore[arg-type]
            return float(file.read().strip() or 0)
    except (OSError, ValueError):
        return 0.0


def now() -> float:
    """Seconds since the epoch, as leases and activity times are stored (moved in tests)."""
    if _OFFSET_FILE is None:
        return time.time()
    return time.time() + _offset()


def monotonic() -> float:
    """Seconds on a clock that never goes back: for deadlines of waits and retries."""
    return time.monotonic()


def sleep(seconds: float) -> None:
    """Pause a wait or a retry."""
    time.sleep(seconds)
