"""LazyPool: no threads until first used, then one pool however many threads ask at once."""

from __future__ import annotations

import threading

from chalicelib.lazy_pool import LazyPool


def test_no_pool_before_first_use_then_one_pool_for_racing_callers() -> None:
    lazy = LazyPool(2, "test-lazy")
    assert lazy._pool is None
    start = threading.Barrier(8)
    seen = []

    def first_use() -> None:
        start.wait()
        seen.append(lazy())
    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(pool) for pool in seen}) == 1
    assert seen[0].submit(lambda: 41 + 1).result() == 42
    seen[0].shutdown()
