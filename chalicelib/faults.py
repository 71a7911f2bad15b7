"""Test hook for the crash-consistency tests: exit the process abruptly at a named step.

A server started with ``GLUE_FAULT_CRASH_AT=<step>`` dies (``os._exit(137)``, as a SIGKILL
would: no cleanup, no response) when it reaches that step. Unset, as everywhere but those
tests, a crash point costs one string comparison. Steps are named where they are placed.
"""

from __future__ import annotations

import os

_CRASH_AT = os.environ.get("GLUE_FAULT_CRASH_AT", "")


def armed(step: str) -> bool:
    """Whether this process will crash at ``step`` (code may make the step's timing definite)."""
    return _CRASH_AT == step


def crash_point(step: str) -> None:
    """Exit at once with status 137 if ``GLUE_FAULT_CRASH_AT`` names ``step``."""
    if _CRASH_AT == step:
        os._exit(137)
