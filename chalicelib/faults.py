"""Test hooks for the fault tests: kill or pause the process at a named step.

A server started with ``GLUE_FAULT_CRASH_AT=<step>`` dies (``os._exit(137)``, as a SIGKILL
would: no cleanup, no response) when it reaches that step; with ``GLUE_FAULT_STOP_AT=<step>``
it sends itself a real SIGSTOP there once (the test resumes it with SIGCONT), as a server
paused by the OS would be. Unset, as everywhere but those tests, a fault point costs one or
two string comparisons. Steps are named where they are placed.
"""

from __future__ import annotations

import os
import signal
import threading

from chalicelib import settings

_CRASH_AT = settings.current().fault_crash_at
_STOP_AT = settings.current().fault_stop_at
_stopped: set[str] = set()


def armed(step: str) -> bool:
    """Whether this process will crash at ``step`` (code may make the step's timing definite)."""
    return _CRASH_AT == step


def crash_point(step: str) -> None:
    """Exit at once with status 137 if ``GLUE_FAULT_CRASH_AT`` names ``step``."""
    if _CRASH_AT == step:
        os._exit(137)


def fault_point(step: str) -> None:
    """A crash point that can also pause: stop the process once at ``step`` if
    ``GLUE_FAULT_STOP_AT`` names it (once, because a step such as "mid-apply" recurs)."""
    crash_point(step)
    if _STOP_AT == step and step not in _stopped:
        _stopped.add(step)
        # Sent to this thread, not the process: a process-directed signal is taken by whichever
        # thread the kernel picks, and until that one is scheduled and starts the stop, this
        # thread runs on (under load it once ran past the commit point before the process
        # stopped). A SIGSTOP pending on this thread stops it on the way out of the call; the
        # rest of the process stops with it, as SIGSTOP always stops the whole process.
        signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)
