"""A thread pool created on first use: no threads at import (Lambda's cold start), and one pool
even when the first uses come from several request threads at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Optional


class LazyPool:
    """``pool()`` is the process's one ThreadPoolExecutor of ``workers`` threads named ``name``."""

    def __init__(self, workers: int, name: str) -> None:
        self.workers, self.name = workers, name
        self._pool: Optional[ThreadPoolExecutor] = None
        self._lock = threading.Lock()

    def __call__(self) -> ThreadPoolExecutor:
        pool = self._pool
        if pool is None:
            with self._lock:
                pool = self._pool
                if pool is None:
                    pool = self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=self.name)
        return pool
