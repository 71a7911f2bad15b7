"""The service's health: whether the store answers, probed at most once every CACHE_SECONDS."""

from __future__ import annotations

import threading
import time

CACHE_SECONDS = 2.0
_lock = threading.Lock()
_last: tuple[float, str] | None = None  # (monotonic time of the probe, its answer)


def store_status() -> str:
    """``"ok"``, or the name of the error the store's probe raised (cached CACHE_SECONDS, so a
    probe flood costs the store one read every two seconds per process)."""
    global _last
    now = time.monotonic()
    with _lock:
        if _last is not None and now - _last[0] < CACHE_SECONDS:
            return _last[1]
    from chalicelib.store import health  # not at app import: the store loads with the first call

    try:
        health.probe()
        answer = "ok"
    except Exception as error:  # noqa: BLE001 - any failure of the store is an unhealthy store, never a 500
        answer = type(error).__name__
    with _lock:
        _last = (time.monotonic(), answer)
    return answer
